// memadmin's only script: small progressive enhancements; pages work without it.
"use strict";

const focusable = "textarea, input:not([type=hidden]), select, button, a[href], [tabindex]";

// Pause htmx polling while the tab is hidden, and while focus is inside the refreshed part, so
// a refresh never takes the keyboard user's place away (trigger filters would need eval, which
// CSP forbids).
document.addEventListener("htmx:beforeRequest", (event) => {
  const source = event.detail && event.detail.elt;
  if (!source || !source.hasAttribute("data-poll")) return;
  if (document.hidden || source.contains(document.activeElement)) {
    event.preventDefault();
  }
});

// Keep focus across a swap: when the focused element was inside the part being replaced (or
// sent the request), focus moves to the first invalid field of the new content, else its first
// control, else the new content itself, instead of dropping to <body>.
let focusWasIn = null;
document.addEventListener("htmx:beforeSwap", (event) => {
  const target = event.detail.target;
  const active = document.activeElement;
  const sender = event.detail.requestConfig && event.detail.requestConfig.elt;
  const had = active && active !== document.body &&
    (target.contains(active) || active === sender || (sender && sender.contains(active)));
  focusWasIn = had ? target.id || true : null;
});
document.addEventListener("htmx:afterSettle", (event) => {
  if (focusWasIn === null) return;
  const kept = focusWasIn;
  focusWasIn = null;
  const active = document.activeElement;
  if (active && active !== document.body && document.contains(active)) return;
  let root = event.detail.target;
  if (!document.contains(root) && typeof kept === "string") root = document.getElementById(kept);
  if (!root || !document.contains(root)) root = event.detail.elt;
  if (!root || !document.contains(root)) return;
  const next = root.querySelector("[aria-invalid=true]") || root.querySelector(focusable);
  if (next) {
    next.focus();
  } else {
    if (!root.hasAttribute("tabindex")) root.setAttribute("tabindex", "-1");
    root.focus();
  }
});

// A page that comes back with form errors puts focus on the first invalid field (the errors
// themselves are in role="alert" regions, so they are announced).
document.addEventListener("DOMContentLoaded", () => {
  const invalid = document.querySelector("main [aria-invalid=true]");
  if (invalid) invalid.focus();
});

// Buttons with data-confirm ask first (a declined confirm sends nothing).
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-confirm]");
  if (button && !window.confirm(button.dataset.confirm)) {
    event.preventDefault();
  }
});

// The review queue's keyboard shortcuts (j/k move between entries, x selects, r/a/e/p decide)
// act only while focus is inside the queue, and can be switched off (WCAG 2.1.4); the choice
// is remembered in this browser.
const SHORTCUTS_KEY = "memadmin.queue-shortcuts";
document.addEventListener("DOMContentLoaded", () => {
  const toggle = document.querySelector("[data-shortcuts-toggle]");
  if (!toggle) return;
  toggle.checked = window.localStorage.getItem(SHORTCUTS_KEY) !== "off";
  toggle.addEventListener("change", () => {
    window.localStorage.setItem(SHORTCUTS_KEY, toggle.checked ? "on" : "off");
  });
});
document.addEventListener("keydown", (event) => {
  if (event.ctrlKey || event.metaKey || event.altKey) return;
  const queue = event.target.closest && event.target.closest("[data-review-queue]");
  if (!queue) return;
  const toggle = document.querySelector("[data-shortcuts-toggle]");
  if (!toggle || !toggle.checked) return;
  if (event.target.closest("input:not([type=checkbox]), textarea, select")) return;
  const entries = Array.from(queue.querySelectorAll("[data-entry]"));
  if (!entries.length) return;
  const current = event.target.closest("[data-entry]");
  const index = entries.indexOf(current);
  const focus = (i) => {
    const entry = entries[Math.max(0, Math.min(entries.length - 1, i))];
    entry.focus();
    entry.scrollIntoView({block: "nearest"});
  };
  if (event.key === "j") { focus(index + 1); event.preventDefault(); return; }
  if (event.key === "k") { focus(index < 0 ? 0 : index - 1); event.preventDefault(); return; }
  if (!current) return;
  if (event.key === "x") {
    const box = current.querySelector("input[type=checkbox][name=ids]");
    if (box) box.checked = !box.checked;
    event.preventDefault();
    return;
  }
  const button = current.querySelector(`button[data-key="${event.key}"]`);
  if (!button) return;
  event.preventDefault();
  button.click();
});

// The item list's selection: "select all on this page", a count, and "select all N matching"
// (then the delete posts the filters, scope=matching, and the items unticked afterwards as
// "keep"; the server runs it as a job). Without this script each box is ticked by hand and
// "Delete all matching" still works.
function selectionUpdate(form) {
  const boxes = Array.from(form.querySelectorAll("[data-select-item]"));
  const ticked = boxes.filter((box) => box.checked).length;
  const scope = form.querySelector("[data-selection-scope]");
  const count = form.querySelector("[data-selection-count]");
  const all = form.querySelector("[data-select-page]");
  const matching = form.querySelector("[data-select-matching]");
  if (scope && scope.value === "matching" && ticked < boxes.length) {
    const kept = boxes.length - ticked;
    count.textContent = `All ${form.dataset.totalLabel} matching selected, ${kept} kept`;
  } else if (scope && scope.value === "matching") {
    count.textContent = `All ${form.dataset.totalLabel} matching selected`;
  } else if (count) {
    count.textContent = `${ticked} selected`;
  }
  if (all) {
    all.checked = boxes.length > 0 && ticked === boxes.length;
    all.indeterminate = ticked > 0 && ticked < boxes.length;
  }
  if (matching) matching.hidden = !(ticked === boxes.length && boxes.length > 0) || scope.value === "matching";
}
document.addEventListener("change", (event) => {
  const form = event.target.closest && event.target.closest("form[data-selection]");
  if (!form) return;
  const scope = form.querySelector("[data-selection-scope]");
  if (event.target.matches("[data-select-page]")) {
    form.querySelectorAll("[data-select-item]").forEach((box) => { box.checked = event.target.checked; });
    if (!event.target.checked && scope) scope.value = "";
  }
  if (event.target.matches("[data-select-item]") && scope && scope.value === "matching" &&
      !form.querySelector("[data-select-item]:checked")) {
    scope.value = "";
  }
  selectionUpdate(form);
});
document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest("[data-select-matching]");
  if (!button) return;
  const form = button.closest("form[data-selection]");
  form.querySelector("[data-selection-scope]").value = "matching";
  selectionUpdate(form);
});
document.addEventListener("submit", (event) => {
  const form = event.target;
  if (!form.matches || !form.matches("form[data-selection]")) return;
  form.querySelectorAll("input[name=keep]").forEach((input) => input.remove());
  const scope = form.querySelector("[data-selection-scope]");
  if (!scope || scope.value !== "matching") return;
  form.querySelectorAll("[data-select-item]:not(:checked)").forEach((box) => {
    const keep = document.createElement("input");
    keep.type = "hidden";
    keep.name = "keep";
    keep.value = box.value;
    form.appendChild(keep);
  });
});
// Rows appended by "Load more" while everything is selected arrive selected.
document.addEventListener("htmx:afterSettle", () => {
  document.querySelectorAll("form[data-selection]").forEach((form) => {
    const all = form.querySelector("[data-select-page]");
    const scope = form.querySelector("[data-selection-scope]");
    if (all && all.checked && scope && scope.value === "matching") {
      form.querySelectorAll("[data-select-item]").forEach((box) => { box.checked = true; });
    }
    selectionUpdate(form);
  });
});

// Copy buttons (data-copy="id of the element whose text is copied"), for the token reveal.
document.addEventListener("click", (event) => {
  const button = event.target.closest && event.target.closest("button[data-copy]");
  if (!button) return;
  const source = document.getElementById(button.dataset.copy);
  const status = document.querySelector("[data-copy-status]");
  if (!source || !navigator.clipboard) return;
  navigator.clipboard.writeText(source.textContent).then(() => {
    button.textContent = "Copied";
    if (status) status.textContent = "Copied to the clipboard.";
  });
});
