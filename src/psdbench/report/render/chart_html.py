"""The interactive drawing of a :class:`~psdbench.report.blocks.Chart` in the HTML report (plotly).

The page embeds ``plotly.min.js`` from the installed Python package (:func:`plotly_js`, never a
CDN) and one small script (:data:`SCRIPT`); each chart is a ``<div class="chart">`` with its
controls and its data as JSON in a ``<script type="application/json">`` element.  The script draws
the panels that match the selectors, and redraws them when a control changes: selectors (one per
panel key), log / linear for each axis, median with band or one line per seed, time or the
alternative x axis.  Plotly gives hover values, zoom and click-to-hide legend entries.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any, Mapping, Sequence

from psdbench.report.blocks import Chart, Series


def plotly_js() -> str:
    """The minified plotly.js bundled with the installed ``plotly`` Python package."""
    from plotly.offline import get_plotlyjs

    return get_plotlyjs()


def _num(values: Sequence[Any] | None) -> list[float | None] | None:
    """Floats to 4 significant digits, non-finite values as ``null`` (gaps in a line)."""
    if values is None:
        return None
    out: list[float | None] = []
    for v in values:
        try:
            f = float(v)
        except (TypeError, ValueError):
            out.append(None)
            continue
        out.append(float(f"{f:.4g}") if math.isfinite(f) else None)
    return out


def _rgba(hex_colour: str, alpha: float) -> str:
    h = hex_colour.lstrip("#")
    r, g, b = (int(h[i:i + 2], 16) for i in (0, 2, 4))
    return f"rgba({r},{g},{b},{alpha})"


def _traces(s: Series, colour: str) -> list[dict[str, Any]]:
    """Plotly traces of one series, each with a ``role`` (``main``, ``summary``, ``band``, ``seed``)."""
    group = s.colour_key or s.label
    out: list[dict[str, Any]] = []
    x, y = _num(s.x), _num(s.y)
    xalt = _num(s.x_alt)
    if s.role == "summary" and s.y_low is not None and s.y_high is not None:
        shape = "hv" if s.mode == "steps" else "linear"
        for i, band in enumerate((s.y_low, s.y_high)):
            out.append({"role": "band", "xalt": xalt, "t": {
                "x": x, "y": _num(band), "mode": "lines", "line": {"width": 0, "shape": shape, "color": colour},
                "fill": "tonexty" if i else "none", "fillcolor": _rgba(colour, 0.18), "legendgroup": group,
                "showlegend": False, "hoverinfo": "skip", "name": s.label}})
    t: dict[str, Any] = {"x": x, "y": y, "name": s.label, "legendgroup": group, "showlegend": bool(s.legend)}
    if s.mode == "steps":
        t.update(mode="lines", line={"shape": "hv", "color": colour, "width": 2})
    elif s.mode == "markers":
        t.update(mode="markers", marker={"color": colour, "size": 8, "symbol": s.marker or "circle",
                                         "line": {"width": 1, "color": colour if "open" in s.marker else "#222"}})
    else:
        t.update(mode=s.mode, line={"color": colour, "width": 2}, marker={"color": colour, "size": 6})
    if s.role == "seed":
        t["line"] = {**t.get("line", {}), "width": 1}
        t["opacity"] = 0.55
    if s.role != "summary" and s.y_low is not None and s.y_high is not None:
        ys = [v if v is not None else 0.0 for v in (y or [])]
        t["error_y"] = {"type": "data", "symmetric": False, "color": colour, "thickness": 1,
                        "array": [None if h is None else h - v for h, v in zip(_num(s.y_high) or [], ys)],
                        "arrayminus": [None if lo is None else v - lo for lo, v in zip(_num(s.y_low) or [], ys)]}
    if s.hover is not None:
        t["text"] = list(s.hover)
        t["hovertemplate"] = "%{text}<extra>%{fullData.name}</extra>"
    out.append({"role": s.role, "xalt": xalt, "t": t})
    return out


def chart_data(chart: Chart, colours: Mapping[str, str]) -> dict[str, Any]:
    """The JSON the page's script draws from: axes, selectors and panels with their traces."""
    dims: dict[str, list[str]] = {}
    panels, empty = [], []
    for p in chart.panels:
        traces = [tr for s in p.series for tr in _traces(s, colours.get(s.colour_key or s.label, "#444444"))]
        if not any(v is not None for tr in traces for v in (tr["t"].get("y") or [])):
            empty.append(f"{p.title} ({p.empty.rstrip('.')})" if p.empty else p.title)
            continue  # no "no data" panel: the chart says so in one sentence
        panels.append({"title": p.title, "note": p.note, "empty": p.empty, "key": p.key, "traces": traces})
        for k, v in p.key.items():
            vals = dims.setdefault(k, [])
            if v not in vals:
                vals.append(v)
    return {"empty": empty, "xLabel": chart.x_label, "yLabel": chart.y_label, "logX": chart.log_x, "logY": chart.log_y,
            "xAltLabel": chart.x_alt_label, "yRange": list(chart.y_range) if chart.y_range else None,
            "dims": dims, "panels": panels,
            "hasSeeds": any(s.role == "seed" for p in chart.panels for s in p.series),
            "hasBands": any(s.role == "summary" for p in chart.panels for s in p.series)}


def chart_html(chart: Chart, colours: Mapping[str, str], anchor: str) -> str:
    """The ``<div>`` of one chart: controls, an empty panel grid the script fills, and its data."""
    data = chart_data(chart, colours)
    ctl = []
    for k, vals in data["dims"].items():
        if len(vals) > 1:
            opts = "".join(f'<option value="{i}">{html.escape(v)}</option>' for i, v in enumerate(vals))
            ctl.append(f'<label>{html.escape(k)} <select data-dim="{html.escape(k)}">{opts}</select></label>')
    ctl.append('<button type="button" data-toggle="logY">y: log / linear</button>')
    ctl.append('<button type="button" data-toggle="logX">x: log / linear</button>')
    if data["hasSeeds"]:
        ctl.append('<button type="button" data-toggle="seeds">lines: median + band / one per seed</button>')
    if chart.x_alt_label:
        ctl.append(f'<button type="button" data-toggle="xAlt">x: {html.escape(chart.x_label)} / '
                   f'{html.escape(chart.x_alt_label)}</button>')
    payload = json.dumps(data, separators=(",", ":"), allow_nan=False).replace("</", "<\\/")
    empty = (f'<p class="note">Nothing to draw for {len(data["empty"])} panel(s): '
             f'{html.escape("; ".join(data["empty"]))}.</p>' if data["empty"] else "")
    if not data["panels"]:
        return f'<div class="chart-none" id="{anchor}">{empty}</div>'
    return (f'<div class="chart" id="{anchor}"><div class="controls">{"".join(ctl)}</div>'
            f'<div class="panels"></div>{empty}'
            f'<script type="application/json" class="chart-data">{payload}</script></div>')


#: The page's script: draws charts (above) and makes tables sortable (click a header).
SCRIPT = r"""
(function () {
  function matches(panel, sel) {
    for (var k in sel) { if (panel.key[k] !== undefined && panel.key[k] !== sel[k]) return false; }
    return true;
  }
  function traces(d, p, st) {
    var out = [];
    p.traces.forEach(function (tr) {
      if (tr.role === 'seed' && !st.seeds) return;
      if ((tr.role === 'summary' || tr.role === 'band') && st.seeds) return;
      var t = Object.assign({}, tr.t);
      if (st.xAlt && tr.xalt) t.x = tr.xalt;
      if (tr.role === 'seed') t.showlegend = false;
      if (st.hidden[group(t)]) t.visible = 'legendonly';  // what the reader hid stays hidden on a redraw
      out.push(t);
    });
    if (st.seeds) {  // one legend entry per group in per-seed mode
      var seen = {};
      out.forEach(function (t) { if (t.showlegend !== false) seen[t.legendgroup] = 1; });
      out.forEach(function (t) { if (!seen[t.legendgroup] && t.legendgroup) { t.showlegend = true; seen[t.legendgroup] = 1; } });
    }
    return out;
  }
  function legendRows(p, st) {  // a compact horizontal legend below the plot: about three entries a line
    var groups = {};
    traces(null, p, st).forEach(function (t) { if (t.showlegend !== false) groups[t.name] = 1; });
    return Math.ceil(Object.keys(groups).length / 3);
  }
  function group(t) { return t.legendgroup || t.name; }
  function layout(d, p, st) {
    var y = {title: {text: d.yLabel}, type: st.logY ? 'log' : 'linear', automargin: true};
    if (d.yRange && !st.logY) y.range = d.yRange;
    return {title: {text: p.title, font: {size: 12}},
            xaxis: {title: {text: st.xAlt ? d.xAltLabel : d.xLabel}, type: st.logX ? 'log' : 'linear', automargin: true},
            yaxis: y, legend: {orientation: 'h', x: 0, xanchor: 'left', y: -0.3, yanchor: 'top', font: {size: 10}},
            height: 330 + 19 * legendRows(p, st), margin: {l: 60, r: 10, t: 40, b: 50}, hovermode: 'closest'};
  }
  function draw(div) {
    var d = div._data, st = div._state, grid = div.querySelector('.panels');
    grid.innerHTML = '';
    var shown = d.panels.filter(function (p) { return matches(p, st.sel); });
    if (!shown.length) { grid.innerHTML = '<p class="empty">No panel for this selection.</p>'; return; }
    var pending = [];
    shown.forEach(function (p) {  // every box in the page first, so plotly measures final widths
      var box = document.createElement('div'); box.className = 'panel';
      grid.appendChild(box);
      if (!p.traces.length) {
        var e = document.createElement('p'); e.className = 'empty';
        e.textContent = p.title + ': ' + p.empty; box.appendChild(e);
      } else {
        var plot = document.createElement('div'); plot.className = 'plot'; box.appendChild(plot);
        pending.push([plot, p]);
      }
      if (p.note) { var n = document.createElement('p'); n.className = 'note'; n.textContent = p.note; box.appendChild(n); }
    });
    pending.forEach(function (q) {
      Plotly.newPlot(q[0], traces(d, q[1], st), layout(d, q[1], st),
                     {responsive: true, displaylogo: false, showLink: false, modeBarButtonsToRemove: ['sendDataToCloud']});
      q[0].on('plotly_restyle', function () {  // a legend click: remember what is hidden for the next redraw
        q[0].data.forEach(function (t) {
          if (t.showlegend === false) return;
          if (t.visible === 'legendonly') st.hidden[group(t)] = 1; else delete st.hidden[group(t)];
        });
      });
    });
  }
  function shown(div) { var det = div.closest('details'); return (!det || det.open) && !div.closest('[hidden]'); }
  function whenOpen(div) {  // a chart in a closed <details> or a hidden slot is drawn when shown (plotly needs its width)
    var det = div.closest('details');
    if (shown(div)) draw(div);
    if (det) det.addEventListener('toggle', function () { if (shown(div)) draw(div); });
  }
  function chartArea(area) {  // one chart at a time: the "chart" selector
    var sel = area.querySelector('select.chart-kind'), slots = area.querySelectorAll(':scope > .chart-slot');
    sel.addEventListener('change', function () {
      slots.forEach(function (s, i) { s.hidden = i !== +sel.value; });
      var c = slots[+sel.value].querySelector('div.chart');
      if (c && c._data && shown(c)) draw(c);
    });
  }
  function openTarget(hash) {  // a link into a closed <details> opens it
    var el = hash && hash.length > 1 ? document.getElementById(decodeURIComponent(hash.slice(1))) : null;
    for (var e = el; e; e = e.parentElement) { if (e.tagName === 'DETAILS') e.open = true; }
    if (el) el.scrollIntoView();
  }
  function setup(div) {
    var d = JSON.parse(div.querySelector('script.chart-data').textContent);
    var sel = {};
    for (var k in d.dims) sel[k] = d.dims[k][0];
    div._data = d; div._state = {sel: sel, logX: d.logX, logY: d.logY, seeds: false, xAlt: false, hidden: {}};
    div.querySelectorAll('select[data-dim]').forEach(function (s) {
      s.addEventListener('change', function () { div._state.sel[s.dataset.dim] = d.dims[s.dataset.dim][+s.value]; draw(div); });
    });
    div.querySelectorAll('button[data-toggle]').forEach(function (b) {
      b.addEventListener('click', function () { var k = b.dataset.toggle; div._state[k] = !div._state[k]; draw(div); });
    });
    whenOpen(div);
  }
  function sortable(table) {
    table.querySelectorAll('thead th').forEach(function (th, i) {
      th.title = 'sort'; th.style.cursor = 'pointer';
      th.addEventListener('click', function () {
        var body = table.tBodies[0], rows = Array.prototype.slice.call(body.rows), asc = th.dataset.asc !== '1';
        function key(r) { var s = r.cells[i] ? r.cells[i].textContent.trim() : ''; var v = parseFloat(s);
                          return isNaN(v) ? [1, s] : [0, v]; }
        rows.sort(function (a, b) { var x = key(a), y = key(b);
          if (x[0] !== y[0]) return x[0] - y[0];
          return (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) * (asc ? 1 : -1); });
        rows.forEach(function (r) { body.appendChild(r); });
        table.querySelectorAll('thead th').forEach(function (h) { delete h.dataset.asc; });
        th.dataset.asc = asc ? '1' : '0';
      });
    });
  }
  document.addEventListener('DOMContentLoaded', function () {
    document.querySelectorAll('table.sortable').forEach(sortable);
    document.querySelectorAll('div.chart-area').forEach(chartArea);
    if (window.Plotly) document.querySelectorAll('div.chart').forEach(setup);
    document.querySelectorAll('a[href^="#"]').forEach(function (a) {
      a.addEventListener('click', function () { openTarget(a.getAttribute('href')); });
    });
    window.addEventListener('hashchange', function () { openTarget(location.hash); });
    openTarget(location.hash);
  });
})();
"""
