"""Objective gap versus time: one panel per problem and dataset, one line per solver configuration."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from psdbench.report.blocks import Figure, SectionContext, Text
from psdbench.report.curves import CellCurve, aggregate, cell_curve, time_grid
from psdbench.report.plot import colours, log_axes, panel_grid, panel_title, shared_legend, to_png

#: Quantiles of the shaded band.
BAND = (0.25, 0.75)


def panel_curves(sub: pd.DataFrame, floor: float) -> dict[str, tuple[list[CellCurve], list[tuple[float, float]]]]:
    """Per solver configuration: the cells' curves, and the final points of verified cells without one."""
    out: dict[str, tuple[list[CellCurve], list[tuple[float, float]]]] = {}
    for lab, g in sub.groupby("solver_label"):
        curves, finals = [], []
        for r in g.itertuples(index=False):
            ref = float(r.reference_objective)
            if not np.isfinite(ref):
                continue
            c = cell_curve(r.curve, ref, r.sense, floor) if r.curve else None
            if c is not None and len(c.t):
                curves.append(c)
            elif bool(r.verified) and np.isfinite(r.gap) and np.isfinite(r.wall_time_s) and r.wall_time_s > 0:
                finals.append((float(r.wall_time_s), max(float(r.gap), floor)))
        if curves or finals:
            out[str(lab)] = (curves, finals)
    return out


class GapVersusTime:
    """Relative objective gap to the instance's reference against time (both log scale).

    Each line is the median over the panel's cells (seeds, instances) of the best gap a cell had
    reached by that time, on a common log-spaced time grid, with the 25-75 % band shaded.
    """

    name = "gap-vs-time"
    title = "Objective gap versus time"
    family = "*"
    order = 30

    def render(self, context: SectionContext) -> list[Any]:
        floor = float(context.options.get("gap_floor", 1e-12))
        f = context.frame[np.isfinite(context.frame["reference_objective"].astype(float))]
        if f.empty:
            return [Text("No cell has a reference objective: no gap to draw.")]
        panels = {k: panel_curves(g, floor) for k, g in f.groupby(["problem", "dataset"])}
        panels = {k: v for k, v in panels.items() if v}
        if not panels:
            return [Text("No verified point to draw.")]
        labels = sorted({lab for v in panels.values() for lab in v})
        col_of = colours(labels)
        entries: dict[str, Any] = {}
        fig, axes = panel_grid(len(panels))
        for ax, ((problem, dataset), per) in zip(axes, sorted(panels.items())):
            for lab, (curves, finals) in sorted(per.items()):
                if curves:
                    grid = time_grid(curves)
                    med, lo, hi = aggregate(curves, grid, *BAND)
                    band = np.isfinite(lo) & np.isfinite(hi)
                    ax.fill_between(grid, np.where(band, lo, np.nan), np.where(band, hi, np.nan),
                                    step="post", color=col_of[lab], alpha=0.18, linewidth=0)
                    tag = " (repaired)" if any(c.repaired for c in curves) else ""
                    (h,) = ax.step(grid, np.where(np.isfinite(med), med, np.nan), where="post", color=col_of[lab],
                                   linewidth=1.8)
                    entries.setdefault(f"{lab}{tag}", h)
                if finals:
                    t, g = zip(*finals)
                    h = ax.scatter(t, g, marker="D", s=28, color=col_of[lab], edgecolor="black", linewidth=0.4)
                    entries.setdefault(f"{lab} (final point only)", h)
            log_axes(ax)
            ax.set_xlabel("time since solve start (s)")
            ax.set_ylabel("gap / max(|ref|, 1)  (floored)")
            ax.set_title(panel_title(problem, dataset), fontsize=10)
        png = to_png(fig, shared_legend(fig, list(entries.values()), list(entries)))
        caption = ("Relative gap `s (objective - reference) / max(|reference|, 1)` (`s = -1` for maximized "
                   "problems; `reference` = the cell's reference objective), of the harness's re-scored points, "
                   f"against time since the solve started.  Lines: median over the panel's cells of the best gap "
                   f"reached by each time (step interpolation on a common log-spaced grid; a cell without a point "
                   f"yet counts as an infinite gap); shaded: the {int(BAND[0] * 100)}-"
                   f"{int(BAND[1] * 100)} % quantile band over cells.  Points that failed verification are not "
                   "drawn; `(repaired)`: some points were mapped to feasible ones by the problem's repair.  "
                   "Diamonds: verified cells without a curve, at (wall time, final gap) (`final point only`).  "
                   f"Gaps below {floor:g} (including points better than the reference) are drawn at {floor:g}.")
        return [Figure(f"gap_vs_time_{context.family}", "Relative objective gap versus time", png, caption)]
