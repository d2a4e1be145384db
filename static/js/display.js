// The table display: says whether it is live, and goes back to the server when the fight it
// follows is over (the idle screen, or the next fight) or the display was turned off (the
// stream sends "gone"; the page then says so). Nothing else: a display has no controls.
(function () {
  "use strict";
  var live = document.querySelector("[data-display]");
  if (!live) return;
  var status = live.querySelector("[data-display-status]");
  var OVER_SECONDS = 8; // the final board stays up this long before the idle screen

  function say(text, state) {
    status.textContent = text;
    status.dataset.state = state;
  }

  function checkOver() {
    if (live.querySelector("[data-display-over]")) {
      window.setTimeout(function () { window.location.reload(); }, OVER_SECONDS * 1000);
    }
  }

  live.addEventListener("htmx:sseOpen", function () { say("Live", "open"); });
  live.addEventListener("htmx:sseError", function () { say("Reconnecting…", "lost"); });
  live.addEventListener("htmx:sseClose", function (event) {
    if (event.detail && event.detail.type === "message") window.location.reload();
  });
  live.addEventListener("htmx:afterSettle", checkOver);
  checkOver();
})();
