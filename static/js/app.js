// Small progressive enhancements. Every page works without this file.
(function () {
  "use strict";

  function currentTheme() {
    var explicit = document.documentElement.getAttribute("data-theme");
    if (explicit) {
      return explicit;
    }
    return window.matchMedia("(prefers-color-scheme: dark)").matches ? "dark" : "light";
  }

  document.addEventListener("click", function (event) {
    var toggle = event.target.closest("[data-theme-toggle]");
    if (toggle) {
      var next = currentTheme() === "dark" ? "light" : "dark";
      document.documentElement.setAttribute("data-theme", next);
      try {
        window.localStorage.setItem("omg-theme", next);
      } catch (e) {
        // Not saved; the choice still holds for this page.
      }
      return;
    }
    var copy = event.target.closest("[data-copy]");
    if (copy && navigator.clipboard) {
      navigator.clipboard.writeText(copy.getAttribute("data-copy")).then(function () {
        copy.textContent = "Copied";
      });
    }
  });

  // Buttons marked data-confirm ask before submitting their form (the server still requires POST).
  // htmx forms ask on the click (below), before their request is sent.
  document.addEventListener("submit", function (event) {
    if (event.target.hasAttribute("hx-post")) {
      return;
    }
    var message = event.submitter && event.submitter.getAttribute("data-confirm");
    if (message && !window.confirm(message)) {
      event.preventDefault();
    }
  });

  // A double click submits a form once. A plain POST form is marked busy until the next page
  // replaces this one; its buttons are disabled a moment later, once the browser has read the
  // clicked button's name and value. (htmx forms are handled below.)
  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (event.defaultPrevented || form.hasAttribute("hx-post") ||
        (form.getAttribute("method") || "get").toLowerCase() !== "post") {
      return;
    }
    if (form.getAttribute("aria-busy") === "true") {
      event.preventDefault();
      return;
    }
    form.setAttribute("aria-busy", "true");
    window.setTimeout(function () { setButtons(form, true); }, 0);
  });

  // Coming back with the Back button shows the page as it was left: make its forms usable.
  window.addEventListener("pageshow", function () {
    document.querySelectorAll("form[aria-busy='true']").forEach(function (form) {
      form.removeAttribute("aria-busy");
      setButtons(form, false);
    });
  });

  function setButtons(form, disabled) {
    form.querySelectorAll("button[type='submit'], button:not([type]), input[type='submit']")
      .forEach(function (button) { button.disabled = disabled; });
  }

  // htmx submissions and button posts: while one is in flight, the same control does not send
  // another. Controls that declare their own hx-sync (the wizard's live checks) keep it.
  function busyTarget(elt) {
    if (elt.closest("[hx-sync]")) {
      return null;
    }
    return elt.tagName === "FORM" ? elt : elt.closest("form") || elt;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var verb = event.detail.requestConfig && event.detail.requestConfig.verb;
    var target = busyTarget(event.detail.elt);
    if (!target || verb === "get") {
      return;
    }
    if (target.getAttribute("aria-busy") === "true") {
      event.preventDefault();
      return;
    }
    target.setAttribute("aria-busy", "true");
    if (target.tagName === "FORM") {
      setButtons(target, true);
    }
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    var target = busyTarget(event.detail.elt);
    if (target && target.getAttribute("aria-busy") === "true") {
      target.removeAttribute("aria-busy");
      if (target.tagName === "FORM") {
        setButtons(target, false);
      }
    }
  });

  // Sheet panels open as they were left, per browser: a player who keeps "Disciplines" open
  // finds it open next time. A panel the server opened (a reserve call) stays open.
  var PANELS_KEY = "omg-open-panels";
  function openPanels() {
    try {
      return JSON.parse(window.localStorage.getItem(PANELS_KEY) || "[]");
    } catch (e) {
      return [];
    }
  }
  document.querySelectorAll("details.panel[id]").forEach(function (panel) {
    if (openPanels().indexOf(panel.id) !== -1) {
      panel.open = true;
    }
    panel.addEventListener("toggle", function () {
      var ids = openPanels().filter(function (id) { return id !== panel.id; });
      if (panel.open) {
        ids.push(panel.id);
      }
      try {
        window.localStorage.setItem(PANELS_KEY, JSON.stringify(ids));
      } catch (e) {
        // Not remembered; the panel still opens.
      }
    });
  });

  // A button with data-confirm in an htmx form asks on the click itself, before htmx sees the
  // submit (a question asked later would lose which button was pressed).
  // data-confirm-from names an element whose data-confirm asks, while that element is there.
  document.addEventListener("click", function (event) {
    var button = event.target.closest &&
      event.target.closest("button[data-confirm], button[data-confirm-from]");
    if (!button || !button.form || !button.form.hasAttribute("hx-post")) {
      return;
    }
    var message = button.getAttribute("data-confirm");
    var from = button.getAttribute("data-confirm-from");
    if (from) {
      var source = document.getElementById(from);
      message = source && source.getAttribute("data-confirm");
    }
    if (message && !window.confirm(message)) {
      event.preventDefault();
      event.stopImmediatePropagation();
    }
  }, true);

  // htmx-driven forms with data-confirm on the form itself also ask.
  document.addEventListener("htmx:confirm", function (event) {
    var message = event.detail.elt.getAttribute("data-confirm");
    if (message) {
      event.preventDefault();
      if (window.confirm(message)) {
        event.detail.issueRequest(true);
      }
    }
  });
})();
