// The campaign's live feed for checks (templates/checks/_dock.html, checks/call.html): htmx's
// SSE extension connects, and htmx fetches the prompts or the GM's results again on each
// event. This file only:
// - marks the feed open or lost (data-state), and while it is lost fetches them now and then
//   (when it comes back, its "hello" fetches them at once);
// - buzzes the phone once for each new call that reaches the prompts while the page is open.
(function () {
  "use strict";

  var SLOW_POLL = 30000; // ms between fetches while the stream is lost
  var KEY = "omg-buzzed-calls";

  function callsIn(root) {
    return Array.prototype.map.call(root.querySelectorAll("[data-call]"), function (el) {
      return el.getAttribute("data-call");
    });
  }

  // The calls this tab has shown already: those on the page as it opened, and those it
  // buzzed for on an earlier page (the player moving from the sheet to the fight).
  var known;
  try {
    known = JSON.parse(window.sessionStorage.getItem(KEY) || "[]");
  } catch (e) {
    known = [];
  }
  function remember(ids) {
    ids.forEach(function (id) {
      if (known.indexOf(id) < 0) {
        known.push(id);
      }
    });
    try {
      window.sessionStorage.setItem(KEY, JSON.stringify(known.slice(-50)));
    } catch (e) {
      // Not kept: a later page may buzz once more for the same call.
    }
  }

  document.querySelectorAll("[data-check-live]").forEach(function (live) {
    remember(callsIn(live));
    var timer = null;

    function refresh() {
      live.querySelectorAll("[hx-get]").forEach(function (el) {
        htmx.trigger(el, "refresh");
      });
    }

    live.addEventListener("htmx:sseOpen", function () {
      live.setAttribute("data-state", "open");
      if (timer) {
        window.clearInterval(timer);
        timer = null;
      }
    });
    live.addEventListener("htmx:sseError", function () {
      live.setAttribute("data-state", "lost");
      if (!timer) {
        refresh();
        timer = window.setInterval(refresh, SLOW_POLL);
      }
    });

    live.addEventListener("htmx:afterSettle", function (event) {
      var fresh = callsIn(event.detail.target).filter(function (id) {
        return known.indexOf(id) < 0;
      });
      if (!fresh.length) {
        return;
      }
      remember(fresh);
      // As an attack on one's character does in a fight (static/js/live.js).
      if (navigator.vibrate) {
        try {
          navigator.vibrate([120, 60, 120]);
        } catch (e) {
          // Some browsers refuse without a recent tap; the prompt is there all the same.
        }
      }
    });
  });
})();
