// Adds what needs a script: the filters, and opening the case a link points at. The page reads
// the same without it. No network, no storage, no eval.
(function () {
  "use strict";
  document.documentElement.setAttribute("data-js", "on");
  var nav = document.getElementById("filters");
  var results = Array.prototype.slice.call(document.querySelectorAll("details.result"));
  if (nav) {
    nav.hidden = false;
    var selects = Array.prototype.slice.call(nav.querySelectorAll("select"));
    var shown = document.getElementById("shown");
    var apply = function () {
      var want = {};
      selects.forEach(function (s) { want[s.name] = s.value; });
      var n = 0;
      results.forEach(function (r) {
        var causes = " " + (r.getAttribute("data-causes") || "") + " ";
        var show = (!want.agent || r.getAttribute("data-agent") === want.agent) &&
          (!want.outcome || r.getAttribute("data-outcome") === want.outcome ||
            (want.outcome === "unexpected" && r.classList.contains("unexpected"))) &&
          (!want.cause || causes.indexOf(" " + want.cause + " ") >= 0);
        r.hidden = !show;
        if (show) { n += 1; }
      });
      if (shown) { shown.textContent = n + " of " + results.length + " shown"; }
    };
    selects.forEach(function (s) { s.addEventListener("change", apply); });
    // A count's link, or "unexpected only", filters to its cases too; the link still lands.
    var filter = function (agent, outcome) {
      selects.forEach(function (s) {
        if (s.name === "agent") { s.value = agent; }
        if (s.name === "outcome") { s.value = outcome; }
      });
      apply();
    };
    Array.prototype.forEach.call(document.querySelectorAll("a[data-filter-outcome]"), function (a) {
      a.addEventListener("click", function () {
        filter(a.getAttribute("data-filter-agent") || "", a.getAttribute("data-filter-outcome"));
      });
    });
    var unexpectedOnly = function () {
      if (location.hash === "#only-unexpected") { filter("", "unexpected"); }
    };
    window.addEventListener("hashchange", unexpectedOnly);
    unexpectedOnly();
    apply();
  }
  var open = function () {
    var id = decodeURIComponent(location.hash.slice(1));
    var target = id && document.getElementById(id);
    for (var el = target; el; el = el.parentElement) {
      if (el.tagName === "DETAILS") { el.open = true; }
    }
    if (target) { target.scrollIntoView(); }
  };
  window.addEventListener("hashchange", open);
  open();
})();
