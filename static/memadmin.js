// memadmin's only script: small progressive enhancements; pages work without it.
"use strict";

// Pause htmx polling while the tab is hidden (trigger filters would need eval, which CSP forbids).
document.addEventListener("htmx:beforeRequest", (event) => {
  const source = event.detail && event.detail.elt;
  if (document.hidden && source && source.hasAttribute("data-poll")) {
    event.preventDefault();
  }
});
