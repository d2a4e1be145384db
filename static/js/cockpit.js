// The tracker's loop by hand and by keyboard (every control is a plain form on the page; this
// only saves steps):
// - a click on a fighter's row or one of its zone chips chooses it as the declare form's
//   target (the picker, grouped by fighter, does the same by keyboard);
// - after an action, focus goes to the next thing to do: the roll button after declaring, the
//   next-turn button after rolling, the declare form after passing the turn; a tracker redrawn
//   by the live feed keeps focus on the same control;
// - 1, 2, 3 choose dodge, parry, block for the attack waiting for your defense.
(function () {
  "use strict";

  var slot = document.getElementById("tracker-slot");
  if (!slot) {
    return;
  }

  function visible(el) {
    return el && !el.hidden && el.offsetParent !== null;
  }

  function first(selector) {
    var found = slot.querySelectorAll(selector);
    for (var i = 0; i < found.length; i++) {
      if (visible(found[i])) {
        return found[i];
      }
    }
    return null;
  }

  // --- Targets by click ---------------------------------------------------------------------
  function targetSelect() {
    return first("#declare-form select[name=target_zone]") ||
      first("[data-testid=turn-dock-form] select[name=target_zone]");
  }

  slot.addEventListener("click", function (event) {
    var el = event.target;
    if (!el.closest || el.closest("a, button, input, select, summary, label, details, form")) {
      return;
    }
    var row = el.closest("tr[data-participant]");
    var select = targetSelect();
    if (!row || !select) {
      return;
    }
    var who = row.getAttribute("data-participant");
    var chip = el.closest("li[data-testid^='zone-']");
    var wanted = chip ? who + ":" + chip.getAttribute("data-testid").slice(5) : null;
    var option = null;
    for (var i = 0; i < select.options.length; i++) {
      var value = select.options[i].value;
      if (value === wanted || (!wanted && value.indexOf(who + ":") === 0)) {
        option = select.options[i];
        break;
      }
    }
    if (!option) {
      return;
    }
    select.value = option.value;
    select.dispatchEvent(new Event("change", { bubbles: true }));
    select.classList.remove("picked");
    void select.offsetWidth; // restart the highlight
    select.classList.add("picked");
  });

  // The turn dock's chances follow the target chosen (none for a hidden one).
  slot.addEventListener("change", function (event) {
    var select = event.target;
    var form = select.closest && select.closest("[data-chances]");
    if (!form || select.name !== "target_zone") {
      return;
    }
    var chances = JSON.parse(form.getAttribute("data-chances") || "{}");
    var mine = chances[select.value.split(":")[0]] || null;
    form.querySelectorAll("[data-chance]").forEach(function (el) {
      var mode = el.getAttribute("data-chance");
      el.textContent = mine && mine[mode] !== undefined ? mine[mode] + "%" : "hidden";
    });
  });

  // --- Focus on the next thing to do --------------------------------------------------------
  var NEXT = {
    declare: ["[data-testid=roll]", "[data-testid^=defend-]", "[data-testid^=declaration-]"],
    roll: ["[data-testid=next-turn]"],
    defense: ["[data-testid=roll]"],
    next: ["[data-testid=declare]", "[data-testid=dock-fast]", "[data-testid=next-turn]"],
    undo: ["[data-testid=next-turn]", "[data-testid=declare]"]
  };
  var want = null; // the action whose answer moves focus on
  var wantAt = 0;
  var held = null; // the control focused before a swap or a live redraw
  var userAt = 0; // when the user last moved focus (a click, Tab, a shortcut), not this script
  var ours = false;

  function actionOf(form) {
    var url = form.getAttribute("hx-post") || "";
    if (/\/attacks\/$/.test(url)) { return "declare"; }
    if (/\/roll\/$/.test(url)) { return "roll"; }
    if (/\/defense\/$/.test(url)) { return "defense"; }
    if (/\/next-turn\/$/.test(url)) { return "next"; }
    if (/\/undo\/$/.test(url)) { return "undo"; }
    return null;
  }

  function focusOn(el) {
    ours = true;
    try {
      el.focus({ preventScroll: true });
    } finally {
      ours = false;
    }
  }

  function focusFirst(selectors) {
    for (var i = 0; i < selectors.length; i++) {
      var el = first(selectors[i]);
      if (el) {
        if (!el.matches("button, input, select, a, summary")) {
          el.setAttribute("tabindex", "-1");
        }
        focusOn(el);
        return true;
      }
    }
    return false;
  }

  function keyOf(el) {
    if (!el || !slot.contains(el)) {
      return null;
    }
    var testid = el.getAttribute("data-testid");
    if (testid) { return "[data-testid='" + testid + "']"; }
    if (el.id) { return "#" + el.id; }
    // A field of a form (the declare form's selects have neither): the form's id and its name.
    if (el.name && el.form && el.form.id) {
      return "#" + el.form.id + " [name='" + el.name + "']";
    }
    return null;
  }

  // The control to find again after a redraw: the last one focused in the tracker. Focus can
  // fall to the page before a redraw comes (a button disabled while its request is out, a
  // swap that took the control away), and a redraw then still puts it back.
  function hold(el) {
    var key = keyOf(el);
    if (key) {
      held = key;
    }
  }

  document.addEventListener("focusin", function (event) {
    if (!ours) {
      userAt = Date.now();
    }
    hold(event.target);
  }, true);
  slot.addEventListener("submit", function (event) {
    want = actionOf(event.target);
    wantAt = Date.now();
  }, true);
  slot.addEventListener("htmx:beforeSwap", function () {
    hold(document.activeElement);
  });
  // Capture phase: before live.js swaps a tracker in (it does so in this same event), and a
  // moment after, put focus back where the redraw took it from.
  document.addEventListener("htmx:sseBeforeMessage", function () {
    hold(document.activeElement);
    window.setTimeout(restore, 0);
  }, true);
  slot.addEventListener("htmx:afterSettle", restore);
  document.addEventListener("htmx:sseMessage", function () {
    window.setTimeout(restore, 0);
  });

  // An action's answer and the live redraw of the same action arrive in either order. Focus
  // moves on to the next thing to do unless the user has gone somewhere since sending it; a
  // control replaced by a redraw is found again.
  function restore() {
    var active = document.activeElement;
    var lost = !active || active === document.body || !document.contains(active);
    if (want && userAt > wantAt) {
      want = null; // the user went on to something else
    }
    if (want && NEXT[want] && focusFirst(NEXT[want])) {
      // The declare step waits for the defense: it keeps wanting the roll button.
      if (want !== "declare" || first("[data-testid=roll]")) {
        want = null;
      }
      return;
    }
    if (lost && held) {
      var again = slot.querySelector(held);
      if (again && visible(again)) {
        focusOn(again);
      }
    }
  }

  // --- Keys for the defense -----------------------------------------------------------------
  var DEFENSES = { "1": "dodge", "2": "parry", "3": "block" };
  document.addEventListener("keydown", function (event) {
    if (event.ctrlKey || event.metaKey || event.altKey) {
      return;
    }
    var target = event.target;
    if (target && target.closest && target.closest("input, select, textarea, [contenteditable]")) {
      return;
    }
    var mode = DEFENSES[event.key];
    if (!mode) {
      return;
    }
    var button = first("[data-testid=defend-" + mode + "]");
    if (button && !button.disabled) {
      event.preventDefault();
      button.click();
    }
  });
})();
