// The encounter page's live feed (htmx's SSE extension does the connecting and swapping).
// This file only makes it pleasant:
// - a status line says whether the page is live or reconnecting;
// - a reconnect resumes after the last entry seen, not after the one the page was loaded with;
// - a new tracker waits while someone is typing in one of its forms, and lands when they
//   submit or leave the form, so nobody loses a half-typed roll;
// - open <details> panels stay open when the tracker is redrawn;
// - the players' tracker is one render for all of them: the controls that belong to one
//   player carry data-owner="<user id>" (and hidden) and only the viewer's own are kept
//   (data-viewer on #live); the server checks every request anyway.
(function () {
  "use strict";

  var live = document.querySelector("[data-live]");
  if (!live) {
    return;
  }
  var slot = document.getElementById("tracker-slot");
  var status = live.querySelector("[data-live-status]");
  var pending = null;
  var viewer = live.getAttribute("data-viewer");

  // Keep this viewer's controls, drop everyone else's, before the tracker enters the page.
  function personalize(html) {
    var template = document.createElement("template");
    template.innerHTML = html;
    var root = template.content;
    root.querySelectorAll("[data-owner]").forEach(function (el) {
      if (el.getAttribute("data-owner") === viewer) {
        el.removeAttribute("hidden");
      } else {
        el.remove();
      }
    });
    // data-not-owner: the players (space-separated) who get a version of their own instead.
    root.querySelectorAll("[data-not-owner]").forEach(function (el) {
      if (el.getAttribute("data-not-owner").split(" ").indexOf(viewer) >= 0) {
        el.remove();
      }
    });
    // The viewer's own rows are marked (the page drawn for them has the class already).
    root.querySelectorAll("[data-owned-by]").forEach(function (el) {
      if (el.getAttribute("data-owned-by") === viewer) {
        el.classList.add("mine-row");
      }
    });
    root.querySelectorAll("[data-owned-section]").forEach(function (el) {
      if (!el.querySelector("form")) {
        el.remove();
      }
    });
    return template.innerHTML;
  }

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

  // Row menus whose request is on its way (a tracker pushed meanwhile already shows what it
  // did) or that did their job stay shut across redraws, until opened again by hand.
  var sending = {};
  var done = {};

  function openPanels() {
    return Array.prototype.map
      .call(slot.querySelectorAll("details[id][open]"), function (d) {
        return d.id;
      })
      .filter(function (id) {
        // The declare form is the server's to open or close: closed while an attack waits
        // (the GM's pane then shows the attack, its odds and the roll), open again after.
        return !sending[id] && !done[id] && id !== "declare-panel";
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
    pending = null;
    swapTracker(html);
  }

  function swapTracker(html) {
    var panels = openPanels();
    htmx.swap(slot, personalize(html), { swapStyle: "innerHTML" });
    reopen(panels);
    announceIncoming();
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
  // A tracker is swapped in here, not by the extension: it is personalized first.
  live.addEventListener("htmx:sseBeforeMessage", function (event) {
    var message = event.detail;
    rememberLastSeen(message.lastEventId);
    if (message.type === "tracker") {
      event.preventDefault();
      if (editing()) {
        pending = message.data;
        return;
      }
      pending = null;
      swapTracker(message.data);
    }
  });

  // A new attack on one of my characters: the phone buzzes once for it (where the browser
  // can), on top of the defense panel that slides in at the bottom of the screen.
  var announced = {};
  slot.querySelectorAll("[data-incoming]").forEach(function (el) {
    announced[el.getAttribute("data-incoming")] = true;
  });
  // The turn coming to one of my characters buzzes too (once per round and character).
  slot.querySelectorAll("[data-turn]").forEach(function (el) {
    announced["turn-" + el.getAttribute("data-turn")] = true;
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
    slot.querySelectorAll("[data-turn]").forEach(function (el) {
      var id = "turn-" + el.getAttribute("data-turn");
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
  slot.addEventListener("htmx:beforeSwap", function (event) {
    panelsBefore = openPanels();
    var detail = event.detail;
    var source = detail.requestConfig && detail.requestConfig.elt;
    var menu = source && source.closest ? source.closest("details.row-menu[open]") : null;
    if (menu && detail.xhr && detail.xhr.status >= 300 && panelsBefore.indexOf(menu.id) < 0) {
      panelsBefore.push(menu.id); // refused: it stays open with the error
    }
  });
  // A row's menu whose request succeeded closes: it did its job, and left open it would
  // cover the row (a failed one stays open with its error).
  slot.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    var menu = elt && elt.closest ? elt.closest("details.row-menu") : null;
    var xhr = event.detail.xhr;
    if (!menu || !xhr) {
      return;
    }
    var id = menu.id;
    sending[id] = true;
    xhr.addEventListener("loadend", function () {
      delete sending[id];
      if (xhr.status >= 200 && xhr.status < 300) {
        done[id] = true;
        window.setTimeout(function () {
          var current = document.getElementById(id);
          if (current) {
            current.open = false;
          }
        }, 0);
      }
    });
  });
  slot.addEventListener("click", function (event) {
    var summary = event.target.closest && event.target.closest("details.row-menu > summary");
    if (summary) {
      delete done[summary.parentNode.id];
    }
  });
  slot.addEventListener("htmx:afterSwap", function () {
    pending = null;
    reopen(panelsBefore);
  });
})();
