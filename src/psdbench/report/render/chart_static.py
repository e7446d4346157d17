"""The static drawing of a :class:`~psdbench.report.blocks.Chart`: one PNG (2x resolution) for the Markdown report.

Panels of the default selection only (the first value of each selector), at most :data:`MAX_PANELS`;
``main`` and ``summary`` series (median with its band), not per-seed lines.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from psdbench.report.blocks import Chart, Panel
from psdbench.report.render.plot import log_axes, panel_grid, shared_legend, to_png

#: Panels drawn in one static figure; the HTML report has them all.
MAX_PANELS = 9
_MARKERS = {"circle": "o", "diamond": "D", "x": "x", "circle-open": "o", "square": "s", "triangle-up": "^"}


def default_panels(chart: Chart) -> list[Panel]:
    """The panels the HTML shows before any selector changes: those matching each selector's first value."""
    dims: dict[str, str] = {}
    for p in chart.panels:
        for k, v in p.key.items():
            dims.setdefault(k, v)
    return [p for p in chart.panels if all(p.key.get(k, v) == v for k, v in dims.items())]


def _arr(v: Any) -> np.ndarray:
    return np.asarray([np.nan if x is None else x for x in v], float)


def _draw(ax: Any, panel: Panel, chart: Chart, colours: Mapping[str, str], entries: dict[str, Any]) -> None:
    drawn = False
    for s in panel.series:
        if s.role == "seed":
            continue
        x, y = _arr(s.x), _arr(s.y)
        y = np.where(np.isfinite(y), y, np.nan)
        col = colours.get(s.colour_key or s.label, "#444444")
        if s.role == "summary" and s.y_low is not None and s.y_high is not None:
            ax.fill_between(x, _arr(s.y_low), _arr(s.y_high), step="post" if s.mode == "steps" else None,
                            color=col, alpha=0.18, linewidth=0)
        if s.mode == "steps":
            (h,) = ax.step(x, y, where="post", color=col, linewidth=1.6)
        elif s.mode == "markers":
            m = _MARKERS.get(s.marker, "o")
            hollow = s.marker.endswith("open") or m == "x"
            if m == "x":
                h = ax.scatter(x, y, marker=m, s=36, color=col, linewidths=1.5)
            else:
                h = ax.scatter(x, y, marker=m, s=30, facecolors="none" if hollow else col,
                               edgecolors=col if hollow else "black", linewidths=1.5 if hollow else 0.5)
        else:
            (h,) = ax.plot(x, y, color=col, linewidth=1.6, marker="o" if "markers" in s.mode else None, markersize=4)
        drawn = drawn or bool(np.isfinite(y).any())
        if s.legend and s.label not in entries:
            entries[s.label] = h
    if not drawn:
        ax.text(0.5, 0.5, panel.empty, ha="center", va="center", wrap=True, fontsize=9, transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
        return
    if chart.log_x or chart.log_y:
        log_axes(ax)
        if not chart.log_x:
            ax.set_xscale("linear")
        if not chart.log_y:
            ax.set_yscale("linear")
    if chart.y_range is not None:
        ax.set_ylim(*chart.y_range)
    ax.set_xlabel(chart.x_label, fontsize=9)
    ax.set_ylabel(chart.y_label, fontsize=9)


def chart_png(chart: Chart, colours: Mapping[str, str]) -> tuple[bytes, str]:
    """The PNG of ``chart`` (2x resolution) and a sentence on what it leaves out (``""`` if nothing)."""
    panels = default_panels(chart)
    shown = panels[:MAX_PANELS]
    fig, axes = panel_grid(max(1, len(shown)), ncol=3 if len(shown) > 4 else max(1, len(shown)), width=5.0, height=3.6)
    entries: dict[str, Any] = {}
    for ax, p in zip(axes, shown):
        _draw(ax, p, chart, colours, entries)
        ax.set_title(p.title, fontsize=9)
    png = to_png(fig, shared_legend(fig, list(entries.values()), list(entries)), dpi=200)
    left = len(chart.panels) - len(shown)
    return png, (f"This figure shows {len(shown)} of the {len(chart.panels)} panels; `report.html` has every one "
                 "(selectors above the chart)." if left else "")
