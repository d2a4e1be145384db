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
  // htmx forms ask through htmx:confirm (below), before their request is sent.
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

  // An htmx request the server refused (400, 403, 404, 429, a 5xx) swaps nothing: its reason
  // is told beside the control that sent it, where the person is looking, instead of being
  // lost. A plain-text answer is the reason itself (the servers' refusals are plain text);
  // anything else gets a short line with the status. The next answer that succeeds clears it.
  function errorSlot(elt, create) {
    var anchor = elt.tagName === "FORM" ? elt : elt.closest("form") || elt;
    var next = anchor.nextElementSibling;
    if (next && next.hasAttribute("data-request-error")) {
      return next;
    }
    if (!create || !anchor.parentNode) {
      return null;
    }
    var slot = document.createElement("p");
    slot.setAttribute("data-request-error", "");
    slot.setAttribute("data-testid", "request-error");
    slot.setAttribute("role", "alert");
    slot.className = "form-errors";
    anchor.insertAdjacentElement("afterend", slot);
    return slot;
  }

  document.addEventListener("htmx:responseError", function (event) {
    var xhr = event.detail.xhr;
    var type = xhr.getResponseHeader("Content-Type") || "";
    var text = type.indexOf("text/plain") === 0 ? xhr.responseText.trim() : "";
    if (!text) {
      text = "That did not go through (" + xhr.status + "). Reload the page and try again.";
    }
    if (text.length > 300) {
      text = text.slice(0, 300) + "\u2026";
    }
    var slot = errorSlot(event.detail.elt, true);
    if (slot) {
      slot.textContent = text;  // text, never markup
    }
  });

  document.addEventListener("htmx:sendError", function (event) {
    var slot = errorSlot(event.detail.elt, true);
    if (slot) {
      slot.textContent = "The server could not be reached: check the connection and try again.";
    }
  });

  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.successful) {
      var slot = errorSlot(event.detail.elt, false);
      if (slot) {
        slot.remove();
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

  // htmx forms ask before their request: the pressed button's data-confirm, or the
  // data-confirm of the element its data-confirm-from names (while that element is there),
  // or the form's own. Once answered, the pressed button's name and value still go along
  // (the dialog took the focus, and htmx forgets the button with it): htmx:configRequest
  // puts them back into the request.
  function confirmationFor(submitter, form) {
    if (submitter) {
      var from = submitter.getAttribute("data-confirm-from");
      if (from) {
        var source = document.getElementById(from);
        return source && source.getAttribute("data-confirm");
      }
      if (submitter.hasAttribute("data-confirm")) {
        return submitter.getAttribute("data-confirm");
      }
    }
    return form.getAttribute("data-confirm");
  }

  document.addEventListener("htmx:confirm", function (event) {
    var trigger = event.detail.triggeringEvent;
    var submitter = trigger && trigger.submitter;
    var message = confirmationFor(submitter, event.detail.elt);
    if (!message || event.detail.elt.omgSubmitter) {
      return;  // nothing to ask, or asked already (htmx asks again for a queued request)
    }
    event.preventDefault();
    if (!window.confirm(message)) {
      return;
    }
    if (submitter && submitter.name) {
      event.detail.elt.omgSubmitter = { name: submitter.name, value: submitter.value };
    }
    event.detail.issueRequest(true);
  });

  document.addEventListener("htmx:configRequest", function (event) {
    var carried = event.detail.elt.omgSubmitter;
    if (carried) {
      event.detail.parameters[carried.name] = carried.value;
      delete event.detail.elt.omgSubmitter;
    }
  });
})();
