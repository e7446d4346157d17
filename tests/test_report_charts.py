"""A figure as data (Chart) and its two drawings: plotly JSON for the HTML, a PNG for the Markdown."""

import json
import math
import re


from psdbench.report.blocks import Chart, Panel, Series
from psdbench.report.render.chart_html import chart_data, chart_html
from psdbench.report.render.chart_static import chart_png, default_panels
from psdbench.report.render.plot import PALETTE, colour_map


def _chart():
    s1 = Series("A · 2/2 ok", [1.0, 2.0, 3.0], [1.0, math.nan, 0.01], "A", "steps", "summary",
                [0.5, 0.5, 0.005], [2.0, 2.0, 0.02])
    seed = Series("A · 2/2 ok", [1.0, 3.0], [1.0, 0.02], "A", "steps", "seed", legend=False)
    s2 = Series("B: beyond the certified bound", [2.0], [1e-9], "B", "markers", marker="x", hover=["by 0.002"])
    return Chart("c", "A chart", [Panel("set a", [s1, seed, s2], "note a", key={"set": "a"}),
                                  Panel("set b", [], "", "Nothing ran here.", {"set": "b"})],
                 "time (s)", "gap", log_x=True, log_y=True)


def test_chart_data_for_plotly():
    colours = colour_map(["A", "B", "A"])
    assert colours == {"A": PALETTE[0], "B": PALETTE[1]}  # one colour per distinct key, in order
    d = chart_data(_chart(), colours)
    assert d["dims"] == {"set": ["a"]} and d["hasSeeds"] and d["hasBands"]
    (a,) = d["panels"]  # no "no data" panel: the chart names it in one sentence
    assert d["empty"] == ["set b (Nothing ran here)"]
    roles = [t["role"] for t in a["traces"]]
    assert roles == ["band", "band", "summary", "seed", "main"]  # low and high of the band, then the line
    main = a["traces"][2]["t"]
    assert main["y"] == [1.0, None, 0.01] and main["line"]["shape"] == "hv" and main["line"]["color"] == PALETTE[0]
    assert a["traces"][1]["t"]["fill"] == "tonexty"
    assert a["traces"][4]["t"]["marker"]["symbol"] == "x" and a["traces"][4]["t"]["text"] == ["by 0.002"]
    page = chart_html(_chart(), colours, "chart-1")
    assert page.count("<option") == 0 and 'data-toggle="seeds"' in page  # one drawable set: no selector
    assert "Nothing to draw for 1 panel(s): set b (Nothing ran here)." in page
    payload = re.search(r'<script type="application/json" class="chart-data">(.*)</script>', page).group(1)
    assert json.loads(payload)["panels"][0]["title"] == "set a"  # valid JSON (no NaN) inside the page


def test_static_chart_png():
    c = _chart()
    assert [p.title for p in default_panels(c)] == ["set a"]  # the first selection, as the HTML opens
    png, note = chart_png(c, colour_map(["A", "B"]))
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and "1 of the 2 panels" in note
    empty = Chart("e", "Empty", [Panel("nothing", [], empty="No cell ran.")], log_y=True)
    png, note = chart_png(empty, {})
    assert png[:8] == b"\x89PNG\r\n\x1a\n" and note == ""
