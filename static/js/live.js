// The encounter page's live feed (htmx's SSE extension does the connecting and swapping).
// This file only makes it pleasant:
// - a status line says whether the page is live or reconnecting;
// - a reconnect resumes after the last entry seen, not after the one the page was loaded with;
// - a new tracker waits while someone is typing in one of its forms, and lands when they
//   submit or leave the form, so nobody loses a half-typed roll;
// - open <details> panels stay open when the tracker is redrawn.
(function () {
  "use strict";

  var live = document.querySelector("[data-live]");
  if (!live) {
    return;
  }
  var slot = document.getElementById("tracker-slot");
  var status = live.querySelector("[data-live-status]");
  var pending = null;

  function say(text, state) {
    if (status) {
      status.textContent = text;
      status.setAttribute("data-state", state);
    }
  }

  function rememberLastSeen(id) {
    if (!id) {
      return;
    }
    var url = new URL(live.getAttribute("sse-connect"), window.location.href);
    url.searchParams.set("after", id);
    live.setAttribute("sse-connect", url.pathname + url.search);
  }

  function editing() {
    var active = document.activeElement;
    if (!active || !slot.contains(active)) {
      return false;
    }
    var form = active.closest("form");
    return Boolean(form && form.hasAttribute("data-dirty"));
  }

  function openPanels() {
    return Array.prototype.map.call(slot.querySelectorAll("details[id][open]"), function (d) {
      return d.id;
    });
  }

  function reopen(ids) {
    ids.forEach(function (id) {
      var panel = document.getElementById(id);
      if (panel) {
        panel.open = true;
      }
    });
  }

  function applyPending() {
    if (pending === null) {
      return;
    }
    var html = pending;
    var panels = openPanels();
    pending = null;
    htmx.swap(slot, html, { swapStyle: "innerHTML" });
    reopen(panels);
  }

  live.addEventListener("htmx:sseOpen", function () {
    say("Live: changes appear as they happen.", "open");
  });
  live.addEventListener("htmx:sseError", function () {
    say("Connection lost: reconnecting…", "lost");
  });
  live.addEventListener("htmx:sseClose", function (event) {
    if (event.detail && event.detail.type === "message") {
      say("This encounter is no longer open to you.", "lost");
    }
  });

  var panelsBefore = [];
  live.addEventListener("htmx:sseBeforeMessage", function (event) {
    var message = event.detail;
    rememberLastSeen(message.lastEventId);
    if (message.type === "tracker") {
      if (editing()) {
        event.preventDefault();
        pending = message.data;
        return;
      }
      pending = null;
      panelsBefore = openPanels();
    }
  });
  live.addEventListener("htmx:sseMessage", function (event) {
    if (event.detail.type === "tracker") {
      reopen(panelsBefore);
    }
  });

  // A new attack on one of my characters: the phone buzzes once for it (where the browser
  // can), on top of the defense panel that slides in at the bottom of the screen.
  var announced = {};
  slot.querySelectorAll("[data-incoming]").forEach(function (el) {
    announced[el.getAttribute("data-incoming")] = true;
  });
  function announceIncoming() {
    var fresh = false;
    slot.querySelectorAll("[data-incoming]").forEach(function (el) {
      var id = el.getAttribute("data-incoming");
      if (!announced[id]) {
        announced[id] = true;
        fresh = true;
      }
    });
    if (fresh && navigator.vibrate) {
      try {
        navigator.vibrate([120, 60, 120]);
      } catch (e) {
        // Some browsers refuse without a recent tap; the panel is there all the same.
      }
    }
  }
  slot.addEventListener("htmx:afterSettle", announceIncoming);
  live.addEventListener("htmx:sseMessage", announceIncoming);

  // Typing marks the form; the mark goes with the form when the tracker is redrawn.
  slot.addEventListener("input", function (event) {
    var form = event.target.closest && event.target.closest("form");
    if (form) {
      form.setAttribute("data-dirty", "");
    }
  });
  slot.addEventListener("focusout", function (event) {
    if (!event.relatedTarget || !slot.contains(event.relatedTarget)) {
      window.setTimeout(function () {
        if (!editing()) {
          applyPending();
        }
      }, 0);
    }
  });

  // The viewer's own post answers with a fresh tracker: a held one is older, drop it. Keep
  // open panels open across that swap too.
  slot.addEventListener("htmx:beforeSwap", function () {
    panelsBefore = openPanels();
  });
  slot.addEventListener("htmx:afterSwap", function () {
    pending = null;
    reopen(panelsBefore);
  });
})();
