// A campaign's dice pages: the odds (a GET sent by the form's fields on every change) and a roll
// (a POST sent by a button) answer into the same panel. No odds request starts while a roll is
// on its way, and an odds answer to a request sent before the latest roll is dropped, so it
// never replaces that roll's result. Nothing is aborted: htmx 2.0.10 reports an aborted
// request as an error. (app.js marks the form busy while its POST is in flight.)
(function () {
  "use strict";

  var rolls = 0;

  function diceForm(elt) {
    return elt && elt.closest ? elt.closest("form[data-dice-log]") : null;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    var form = diceForm(event.detail.elt);
    if (!form) {
      return;
    }
    var verb = event.detail.requestConfig && event.detail.requestConfig.verb;
    if (verb !== "get") {
      rolls += 1;
      return;
    }
    if (form.getAttribute("aria-busy") === "true") {
      event.preventDefault();
      return;
    }
    if (event.detail.xhr) {
      event.detail.xhr.omgRollsBefore = rolls;
    }
  });

  document.addEventListener("htmx:beforeSwap", function (event) {
    var xhr = event.detail.xhr;
    if (xhr && typeof xhr.omgRollsBefore === "number" && xhr.omgRollsBefore !== rolls) {
      event.detail.shouldSwap = false;
    }
  });
})();
