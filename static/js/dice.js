// A campaign's dice pages: the odds (a GET sent by the form's fields on every change) and a roll
// (a POST sent by a button) answer into the same panel. A roll cancels the odds request in
// flight, and no odds request starts while a roll is on its way, so an odds answer never
// replaces a roll's result. (app.js marks the form busy while its POST is in flight.)
(function () {
  "use strict";

  document.addEventListener("htmx:beforeRequest", function (event) {
    var elt = event.detail.elt;
    var form = elt && elt.closest ? elt.closest("form[data-dice-log]") : null;
    if (!form) {
      return;
    }
    var verb = event.detail.requestConfig && event.detail.requestConfig.verb;
    if (verb === "get") {
      if (form.getAttribute("aria-busy") === "true") {
        event.preventDefault();
      }
      return;
    }
    var fields = form.querySelector("[data-dice-fields]");
    if (fields) {
      htmx.trigger(fields, "htmx:abort");
    }
  });
})();
