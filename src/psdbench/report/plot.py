"""Matplotlib helpers (Figure API, no pyplot): panel grids, stable colours, PNG bytes."""

from __future__ import annotations

import io
import math
from typing import Any, Iterable, Sequence

from matplotlib.figure import Figure as MplFigure

PANEL_W, PANEL_H = 5.2, 3.9
DPI = 100


def colours(labels: Iterable[str]) -> dict[str, Any]:
    """One colour per label (sorted), the same in every panel of a figure."""
    from matplotlib import colormaps

    labs = sorted(set(labels))
    cmap = colormaps["tab10" if len(labs) <= 10 else "tab20"]
    return {lab: cmap(i % cmap.N) for i, lab in enumerate(labs)}


def panel_grid(n: int, ncol: int = 3, width: float = PANEL_W,
               height: float = PANEL_H) -> tuple[MplFigure, list[Any]]:
    """A figure with ``n`` panels in rows of ``ncol`` (extra axes hidden)."""
    ncol = max(1, min(ncol, n))
    nrow = max(1, math.ceil(n / ncol))
    fig = MplFigure(figsize=(width * ncol, height * nrow))
    axes = list(fig.subplots(nrow, ncol, squeeze=False).flat)
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def shared_legend(fig: MplFigure, handles: Sequence[Any], labels: Sequence[str], ncol: int = 3) -> int:
    """A legend below the panels; returns its number of rows (for :func:`to_png`)."""
    if not handles:
        return 0
    ncol = max(1, min(ncol, len(labels)))
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=9, frameon=False)
    return math.ceil(len(labels) / ncol)


def to_png(fig: MplFigure, legend_rows: int = 0) -> bytes:
    """The figure as PNG bytes; the figure grows by the height of a ``legend_rows``-row legend below."""
    w, h = fig.get_size_inches()
    extra = 0.25 * legend_rows + 0.25 if legend_rows else 0.0
    fig.set_size_inches(w, h + extra)
    fig.tight_layout(rect=(0, extra / (h + extra), 1, 1))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    return buf.getvalue()


def panel_title(problem: str, dataset: str) -> str:
    """``problem: dataset``."""
    return f"{problem}: {dataset}"
