// The console's only script: keeps the approvals table live (short polling) and counts down.
// Served from this origin (the Content-Security-Policy allows no other script and no inline one).
"use strict";
(function () {
  var POLL_MS = 2000;

  function countDown() {
    var cells = document.querySelectorAll("[data-left]");
    for (var i = 0; i < cells.length; i++) {
      var cell = cells[i];
      if (!cell.dataset.since) cell.dataset.since = String(Date.now());
      var left = Number(cell.dataset.left) - Math.floor((Date.now() - Number(cell.dataset.since)) / 1000);
      cell.textContent = Math.max(0, left) + " s";
    }
  }

  function uncheckedWrites(body) {
    var keys = {};
    var boxes = body.querySelectorAll("input[type=checkbox][data-key]");
    for (var i = 0; i < boxes.length; i++) if (!boxes[i].checked) keys[boxes[i].dataset.key] = true;
    return keys;
  }

  function keepUnchecked(body, keys) {
    var boxes = body.querySelectorAll("input[type=checkbox][data-key]");
    for (var i = 0; i < boxes.length; i++) if (keys[boxes[i].dataset.key]) boxes[i].checked = false;
  }

  function poll(body) {
    fetch(body.dataset.src, { credentials: "same-origin", headers: { Accept: "text/html" }, redirect: "manual" })
      .then(function (response) {
        if (response.type === "opaqueredirect" || response.status === 401) {
          window.location.reload(); // signed out: the page itself redirects to the login page
          return null;
        }
        return response.ok ? response.text() : null;
      })
      .then(function (html) {
        // The fragment is rendered and escaped by the server, like the page it replaces.
        if (html !== null && html !== body.dataset.last) {
          body.dataset.last = html;
          var unchecked = uncheckedWrites(body);
          body.innerHTML = html;
          keepUnchecked(body, unchecked); // a person's choice in a plan outlives the refresh
        }
      })
      .catch(function () {})
      .then(function () { window.setTimeout(function () { poll(body); }, POLL_MS); });
  }

  document.addEventListener("DOMContentLoaded", function () {
    var body = document.getElementById("pending-rows");
    if (body && body.dataset.src) window.setTimeout(function () { poll(body); }, POLL_MS);
    countDown();
    window.setInterval(countDown, 1000);
  });
})();
