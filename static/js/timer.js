// The turn timer: counts down from the seconds left the server drew (not a deadline, so a
// screen whose clock is wrong still counts right), says so in its last seconds and when time
// is up. It only shows: nothing is sent, nothing in the fight changes. A redrawn tracker
// brings a fresh element, counted from when it arrived.
(function () {
  "use strict";

  function tick() {
    var now = performance.now();
    document.querySelectorAll("[data-turn-timer]").forEach(function (timer) {
      if (!timer.dataset.seenAt) timer.dataset.seenAt = String(now);
      var left = parseFloat(timer.dataset.left) - (now - parseFloat(timer.dataset.seenAt)) / 1000;
      var warn = parseFloat(timer.dataset.warn || "10");
      var out = timer.querySelector("[data-turn-timer-left]");
      if (left <= 0) {
        out.textContent = "time's up";
      } else {
        out.textContent = Math.ceil(left) + " s";
      }
      timer.classList.toggle("turn-timer-warning", left > 0 && left <= warn);
      timer.classList.toggle("turn-timer-up", left <= 0);
    });
  }

  tick();
  window.setInterval(tick, 250);
})();
