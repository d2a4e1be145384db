// The GM's keyboard shortcuts on the encounter page; "?" lists them. Each one presses a
// button or opens a panel that is on the page anyway, so the server still decides.
(function () {
  "use strict";

  var dialog = document.getElementById("shortcuts");
  if (!dialog) {
    return;
  }

  function click(selector) {
    var el = document.querySelector(selector);
    if (el && !el.disabled) {
      el.click();
      return true;
    }
    return false;
  }

  function openAndFocus(panelSelector, fieldSelector) {
    var panel = document.querySelector(panelSelector);
    if (!panel) {
      return false;
    }
    panel.open = true;
    var field = panel.querySelector(fieldSelector);
    if (field) {
      field.focus();
    }
    return true;
  }

  var keys = {
    n: function () { return click("[data-testid=next-turn]"); },
    // Undo asks first: the key opens the question, Enter on its button confirms.
    u: function () {
      var ask = document.getElementById("undo-ask");
      if (!ask) {
        return false;
      }
      ask.open = true;
      var yes = ask.querySelector("[data-testid=undo]");
      if (yes) {
        yes.focus();
      }
      return true;
    },
    d: function () { return openAndFocus("#declare-panel", "select[name=attacker]"); },
    r: function () {
      var roll = document.querySelector("[data-testid=roll-value]");
      if (roll) {
        roll.focus();
        return true;
      }
      return false;
    },
    a: function () { return openAndFocus("#add-panel", "input, select"); },
    l: function () {
      var log = document.getElementById("combat-log");
      if (log) {
        log.focus();
        return true;
      }
      return false;
    },
    "?": function () {
      if (dialog.open) {
        dialog.close();
      } else {
        dialog.showModal();
      }
      return true;
    }
  };

  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    var target = event.target;
    if (target && target.closest && target.closest("input, select, textarea, [contenteditable]")) {
      return;
    }
    var action = keys[event.key];
    if (action && action()) {
      event.preventDefault();
    }
  });

  document.addEventListener("click", function (event) {
    if (event.target.closest("[data-shortcuts-open]")) {
      dialog.showModal();
    } else if (event.target.closest("[data-shortcuts-close]")) {
      dialog.close();
    }
  });
})();
