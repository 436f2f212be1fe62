"use strict";
(function () {
  var table = document.getElementById("urls");
  if (!table) {
    return;
  }
  var body = table.tBodies[0];
  var rows = Array.prototype.slice.call(body.rows);
  var filter = document.getElementById("filter");
  var verdict = document.getElementById("verdict");
  var onlyNew = document.getElementById("only-new");
  var shown = document.getElementById("shown");
  var expand = document.getElementById("expand");
  var headers = Array.prototype.slice.call(table.tHead.rows[0].cells);
  var texts = rows.map(function (row) { return row.textContent.toLowerCase(); });

  // The filter and the order live in the address's fragment
  // (#verdict=broken&q=blog&new=1&sort=pages&dir=descending), so a filtered
  // view can be bookmarked or sent to someone.
  function decode(s) {
    try {
      return decodeURIComponent(s);
    } catch (e) {
      return s; // a hand-typed "%" is just a percent sign
    }
  }

  function readState() {
    var state = {};
    location.hash.replace(/^#/, "").split("&").forEach(function (pair) {
      var i = pair.indexOf("=");
      if (i > 0) {
        state[decode(pair.slice(0, i))] = decode(pair.slice(i + 1).replace(/\+/g, " "));
      }
    });
    return state;
  }

  function writeState() {
    var parts = [];
    var sorted = headers.filter(function (h) { return h.hasAttribute("aria-sort"); })[0];
    if (verdict.value) {
      parts.push("verdict=" + encodeURIComponent(verdict.value));
    }
    if (filter.value) {
      parts.push("q=" + encodeURIComponent(filter.value));
    }
    if (onlyNew && onlyNew.checked) {
      parts.push("new=1");
    }
    if (sorted && !(sorted.dataset.key === "rank" && sorted.getAttribute("aria-sort") === "ascending")) {
      parts.push("sort=" + sorted.dataset.key, "dir=" + sorted.getAttribute("aria-sort"));
    }
    history.replaceState(null, "", parts.length ? "#" + parts.join("&") : location.pathname + location.search);
  }

  function apply() {
    var words = filter.value.toLowerCase().split(/\s+/).filter(Boolean);
    var want = verdict.value;
    var n = 0;
    rows.forEach(function (row, i) {
      var visible = (!want || row.dataset.verdict === want) &&
        (!onlyNew || !onlyNew.checked || row.dataset.change === "new") &&
        words.every(function (w) { return texts[i].indexOf(w) !== -1; });
      row.hidden = !visible;
      if (visible) {
        n++;
      }
    });
    shown.textContent = n + " of " + rows.length + " shown";
  }

  function sortBy(th, dir) {
    var key = th.dataset.key;
    var numeric = th.dataset.type === "number";
    var sign = dir === "ascending" ? 1 : -1;
    headers.forEach(function (h) { h.removeAttribute("aria-sort"); });
    th.setAttribute("aria-sort", dir);
    var order = rows.map(function (row, i) { return i; });
    order.sort(function (a, b) {
      var x = rows[a].dataset[key], y = rows[b].dataset[key];
      var c = numeric ? Number(x) - Number(y) : (x < y ? -1 : x > y ? 1 : 0);
      return c * sign || Number(rows[a].dataset.rank) - Number(rows[b].dataset.rank);
    });
    var sorted = order.map(function (i) { return rows[i]; });
    texts = order.map(function (i) { return texts[i]; });
    rows = sorted;
    rows.forEach(function (row) { body.appendChild(row); });
  }

  headers.forEach(function (th) {
    var button = th.querySelector("button");
    if (button) {
      button.addEventListener("click", function () {
        sortBy(th, th.getAttribute("aria-sort") === "ascending" ? "descending" : "ascending");
        writeState();
      });
    }
  });
  function changed() {
    apply();
    writeState();
  }
  filter.addEventListener("input", changed);
  verdict.addEventListener("change", changed);
  if (onlyNew) {
    onlyNew.addEventListener("change", changed);
  }
  document.getElementById("controls").addEventListener("submit", function (e) { e.preventDefault(); });
  expand.addEventListener("click", function () {
    var open = expand.textContent === "Expand all";
    table.querySelectorAll("details").forEach(function (d) { d.open = open; });
    expand.textContent = open ? "Collapse all" : "Expand all";
  });
  var state = readState();
  if (Array.prototype.some.call(verdict.options, function (o) { return o.value === state.verdict; })) {
    verdict.value = state.verdict;
  }
  filter.value = state.q || "";
  if (onlyNew) {
    onlyNew.checked = state["new"] === "1";
  }
  var sortHeader = headers.filter(function (h) { return h.dataset.key === state.sort; })[0];
  if (sortHeader) {
    sortBy(sortHeader, state.dir === "descending" ? "descending" : "ascending");
  }
  apply();
}());
