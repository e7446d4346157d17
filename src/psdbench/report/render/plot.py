"""Matplotlib helpers (Figure API, no pyplot): panel grids, stable colours, PNG bytes."""

from __future__ import annotations

import io
import math
from typing import Any, Iterable, Mapping, Sequence

from matplotlib.figure import Figure as MplFigure

PANEL_W, PANEL_H = 5.2, 3.9
DPI = 100


def colours(labels: Iterable[str], fixed: Mapping[str, str] | None = None) -> dict[str, Any]:
    """One colour per label (sorted), the same in every panel of a figure.

    ``fixed``: the report's solver-to-colour map (``context.options["colours"]``); labels it holds
    take its colour, so a section's figures match the generic charts.
    """
    from matplotlib import colormaps

    labels = list(labels)
    if fixed is not None and all(lab in fixed for lab in labels):
        return {lab: fixed[lab] for lab in set(labels)}
    labs = sorted(set(labels))
    cmap = colormaps["tab10" if len(labs) <= 10 else "tab20"]
    return {lab: cmap(i % cmap.N) for i, lab in enumerate(labs)}


def panel_grid(n: int, ncol: int = 3, width: float = PANEL_W,
               height: float = PANEL_H) -> tuple[MplFigure, list[Any]]:
    """A figure with ``n`` panels in rows of ``ncol`` (extra axes hidden)."""
    ncol = max(1, min(ncol, n))
    nrow = max(1, math.ceil(n / ncol))
    fig = MplFigure(figsize=(max(width * ncol, 7.5), height * nrow))
    axes = list(fig.subplots(nrow, ncol, squeeze=False).flat)
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes[:n]


def shared_legend(fig: MplFigure, handles: Sequence[Any], labels: Sequence[str], ncol: int | None = None) -> int:
    """A legend below the panels, ``ncol`` columns (default: about one per 5 inches of width, fewer for
    long labels); returns its number of rows (for :func:`to_png`)."""
    if not handles:
        return 0
    if ncol is None:
        longest = max(len(lab) for lab in labels)
        ncol = max(1, int(fig.get_size_inches()[0] * 11 // max(longest + 4, 1)))
    ncol = max(1, min(ncol, len(labels)))
    fig.legend(handles, labels, loc="lower center", ncol=ncol, fontsize=9, frameon=False)
    return math.ceil(len(labels) / ncol)


def to_png(fig: MplFigure, legend_rows: int = 0, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes; the figure grows by the height of a ``legend_rows``-row legend below."""
    w, h = fig.get_size_inches()
    extra = 0.25 * legend_rows + 0.25 if legend_rows else 0.0
    fig.set_size_inches(w, h + extra)
    fig.tight_layout(rect=(0, extra / (h + extra), 1, 1))
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def panel_title(problem: str, dataset: str, extra: str = "") -> str:
    """``problem: dataset`` (and a second line ``extra``)."""
    return f"{problem}: {dataset}" + (f"\n{extra}" if extra else "")


def log_axes(ax: Any) -> None:
    """Log-log axes (call after plotting): labelled ticks at 1, 2, 5 x 10^k over less than two decades,
    at decades otherwise (thinned to about 8 labels); minor ticks unlabelled."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    for axis, (lo, hi) in ((ax.xaxis, ax.get_xlim()), (ax.yaxis, ax.get_ylim())):
        decades = math.log10(hi / lo) if lo > 0 and hi > lo else 1.0
        subs = (1.0, 2.0, 5.0) if decades < 2 else (1.0,)
        axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=8))
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
        axis.set_minor_formatter(NullFormatter())
    ax.grid(True, which="major", alpha=0.35)
    ax.grid(True, which="minor", alpha=0.12)


#: The report's palette: matplotlib's tab10 without its grey, then the dark and mid tones of tab20b
#: (strong colours first; no grey, which reads as "disabled").
PALETTE: tuple[str, ...] = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22",
                            "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3", "#8ca252",
                            "#bd9e39", "#ad494a", "#a55194", "#6b6ecf")


def colour_map(keys: Iterable[str]) -> dict[str, str]:
    """One colour per distinct key, in the order given, from :data:`PALETTE`: the report's one
    solver-to-colour map (keys given family by family stay distinct within a family of up to 20)."""
    return {k: PALETTE[i % len(PALETTE)] for i, k in enumerate(dict.fromkeys(keys))}
