// memadmin's only script: small progressive enhancements; pages work without it.
"use strict";

// Pause htmx polling while the tab is hidden (trigger filters would need eval, which CSP forbids).
document.addEventListener("htmx:beforeRequest", (event) => {
  const source = event.detail && event.detail.elt;
  if (document.hidden && source && source.hasAttribute("data-poll")) {
    event.preventDefault();
  }
});

// Buttons with data-confirm ask first (a declined confirm sends nothing).
document.addEventListener("click", (event) => {
  const button = event.target.closest("button[data-confirm]");
  if (button && !window.confirm(button.dataset.confirm)) {
    event.preventDefault();
  }
});

// The review queue's keyboard: j/k move between entries, x selects, r/a/e/p decide.
document.addEventListener("keydown", (event) => {
  const queue = document.querySelector("[data-review-queue]");
  if (!queue || event.ctrlKey || event.metaKey || event.altKey) return;
  if (event.target.closest("input, textarea, select")) return;
  const entries = Array.from(queue.querySelectorAll("[data-entry]"));
  if (!entries.length) return;
  const current = document.activeElement && document.activeElement.closest("[data-entry]");
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
