// The PvD calculator works from scores or from PRO and DIF typed in: whichever side the player
// touches last is the one it uses, so typing a PRO never answers with the scores' PvD. (Without
// JavaScript the "Work from" choice does the same.)
(function () {
  "use strict";

  var PVD_FIELDS = ["pro", "dif", "fast"];

  document.addEventListener("input", function (event) {
    var field = event.target;
    var form = field.form;
    if (!form || !form.querySelector("input[name=use]") || field.name === "use" ||
        field.name === "roll" || field.name === "note") {
      return;
    }
    var wanted = PVD_FIELDS.indexOf(field.name) !== -1 ? "pvd" : "scores";
    var radio = form.querySelector("input[name=use][value=" + wanted + "]");
    if (radio && !radio.checked) {
      radio.checked = true;
    }
  }, true);
})();
