// psdbench site: sortable tables, and row filters kept in the address (a view is a link).
(function () {
  function key(td) {
    var t = td.textContent.trim(), n = parseFloat(t);
    return isNaN(n) ? [1, t.toLowerCase()] : [0, n];
  }
  document.querySelectorAll('table.sortable').forEach(function (table) {
    table.querySelectorAll('thead th').forEach(function (th, col) {
      th.addEventListener('click', function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows);
        var asc = th.dataset.order !== 'asc';
        rows.sort(function (a, b) {
          var x = key(a.cells[col] || a), y = key(b.cells[col] || b);
          if (x[0] !== y[0]) return x[0] - y[0];
          return (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) * (asc ? 1 : -1);
        });
        rows.forEach(function (r) { body.appendChild(r); });
        th.dataset.order = asc ? 'asc' : 'desc';
      });
    });
  });
  function params() {
    var out = {}, h = location.hash.replace(/^#/, '');
    if (h.indexOf('=') < 0) return out;  // a row anchor, not a view
    h.split('&').forEach(function (kv) {
      var p = kv.split('='); if (p.length === 2) out[decodeURIComponent(p[0])] = decodeURIComponent(p[1]);
    });
    return out;
  }
  document.querySelectorAll('form.filters').forEach(function (form) {
    var table = document.getElementById(form.dataset.table), selects = form.querySelectorAll('select');
    function apply(write) {
      var want = {}, shown = 0, total = 0;
      selects.forEach(function (s) { if (s.value) want[s.name] = s.value; });
      Array.prototype.forEach.call(table.tBodies[0].rows, function (r) {
        var ok = true;
        for (var k in want) { if (r.dataset[k] !== want[k]) ok = false; }
        r.classList.toggle('hidden', !ok); total += 1; if (ok) shown += 1;
      });
      form.querySelector('.count').textContent = shown + ' of ' + total + ' rows';
      if (write) {
        var parts = Object.keys(want).map(function (k) { return encodeURIComponent(k) + '=' + encodeURIComponent(want[k]); });
        history.replaceState(null, '', parts.length ? '#' + parts.join('&') : location.pathname);
      }
    }
    function read() {
      var p = params();
      selects.forEach(function (s) { s.value = p[s.name] || ''; if (s.value !== (p[s.name] || '')) s.value = ''; });
      apply(false);
    }
    selects.forEach(function (s) { s.addEventListener('change', function () { apply(true); }); });
    window.addEventListener('hashchange', read);
    read();
  });
})();
