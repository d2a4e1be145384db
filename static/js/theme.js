// Apply the saved theme before the page paints (no inline script: the CSP forbids it).
(function () {
  "use strict";
  try {
    var saved = window.localStorage.getItem("omg-theme");
    if (saved === "light" || saved === "dark") {
      document.documentElement.setAttribute("data-theme", saved);
    }
  } catch (e) {
    // Storage may be disabled; the system preference then decides.
  }
})();
