"""Objective gap versus time: one panel per comparable instance set, one line per solver configuration."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from psdbench.report.measures import analysis as an
from psdbench.report import rules
from psdbench.report.blocks import Chart, Panel, SectionContext, Series, Text
from psdbench.report.measures.curves import CellCurve, aggregate, cell_curve, time_grid
from psdbench.report.fmt import fmt_num

#: Quantiles of the shaded band.
BAND = (0.25, 0.75)
#: Per-seed lines drawn per configuration and panel (the HTML's "one per seed" mode), points per line.
MAX_SEED_LINES, SEED_POINTS = 40, 60


def display_floor(floor: float) -> float:
    """Where a log axis draws a gap of 0 (a tie): ``min(floor, DEFAULT_ALLOWANCE)``; positive gaps
    above it are drawn as they are (the floor cuts below the reference only)."""
    return min(floor, rules.DEFAULT_ALLOWANCE)


def split_curve(r: Any, floor: float) -> tuple[CellCurve, list[tuple[float, float]]]:
    """A cell's drawable curve (gaps floored at ``floor``) and its points beyond the certified bound
    as ``(time, gap)`` (negative gaps, never drawn as reached)."""
    raw = cell_curve(r.curve, float(r.reference_objective), r.sense, floor=-np.inf)
    beyond = np.isfinite(raw.gap) & (raw.gap < -floor)  # the rules' cut (report/rules.py)
    keep = ~beyond
    return (CellCurve(raw.t[keep], np.maximum(raw.gap[keep], display_floor(floor)), raw.repaired),
            list(zip(raw.t[beyond].tolist(), raw.gap[beyond].tolist())))


def config_series(g: pd.DataFrame, label: str, key: str, floors: pd.Series) -> list[Series]:
    """The series of one configuration in one panel: median with band, per-seed lines, final points
    of cells without a curve (diamonds) and points beyond the certified bound (crosses)."""
    curves, finals, beyond = [], [], []
    for i, r in zip(g.index, g.itertuples(index=False)):
        fl = float(floors[i])
        if r.curve:
            c, b = split_curve(r, fl)
            if len(c.t) > 1:
                curves.append(c)
            elif len(c.t):  # one point (a conic solver's answer): a marker, not an invisible line
                finals.append((float(c.t[0]), float(c.gap[0])))
            beyond += b
        elif bool(r.verified) and np.isfinite(r.gap) and np.isfinite(r.wall_time_s) and r.wall_time_s > 0:
            if float(r.gap) < -fl:  # beyond the bound by the rules
                beyond.append((float(r.wall_time_s), float(r.gap)))
            else:
                finals.append((float(r.wall_time_s), max(float(r.gap), display_floor(fl))))
    out: list[Series] = []
    floor = display_floor(float(floors[g.index].max())) if len(g) else 0.0
    if curves:
        grid = time_grid(curves)
        med, lo, hi = aggregate(curves, grid, *BAND)
        clean = lambda a: np.where(np.isfinite(a), a, np.nan)  # noqa: E731
        tag = " (repaired)" if any(c.repaired for c in curves) else ""
        out.append(Series(label + tag, grid, clean(med), key, "steps", "summary", clean(lo), clean(hi)))
        for c in curves[:MAX_SEED_LINES]:
            x, y = an.decimate(c.t, np.minimum.accumulate(c.gap), SEED_POINTS)
            out.append(Series(label + tag, x, y, key, "steps", "seed", legend=False))
    if finals:
        t, y = zip(*finals)
        out.append(Series(label if not curves else label + " final point", t, y, key, "markers", "main",
                          marker="diamond", legend=not curves,
                          hover=[f"one point: gap {fmt_num(v)} at {fmt_num(s)} s" for s, v in finals]))
    if beyond:
        t, gaps = zip(*beyond)
        out.append(Series(f"{label}: beyond the certified bound", t, [floor] * len(t), key, "markers", "main",
                          marker="x", hover=[f"beyond the certified bound by {fmt_num(-v)} (relative) at "
                                             f"{fmt_num(s)} s; drawn at the floor, not counted as reached"
                                             for s, v in beyond]))
    return out


class GapVersusTime:
    """Relative objective gap to the instance's reference against time (both log scale), per instance set.

    Each line is the median over the set's cells (seeds, folds) of the best gap a cell had reached
    by that time, on a common log-spaced time grid, with the 25-75 % band shaded (or one line per
    cell); legends say how many of the configuration's cells in the set are ``ok``.
    """

    name = "gap-vs-time"
    title = "Objective gap versus time"
    family = "*"
    order = 30

    def render(self, context: SectionContext) -> list[Any]:
        f = context.frame[np.isfinite(context.frame["reference_objective"].astype(float))]
        if f.empty:
            return [Text("No cell has a reference objective: no gap to draw.")]
        f = f.assign(_set=an.instance_sets(f))
        sources = an.reference_sources(f, context.refs)
        every = context.frame.assign(_set=an.instance_sets(context.frame))  # k/n ok counts every cell
        counts = every.groupby(["_set", "solver_label"])["status"].agg(lambda st: (int((st == "ok").sum()), len(st)))
        floors = rules.floors(f, float(context.options.get("gap_floor", rules.DEFAULT_ALLOWANCE)))
        short = an.tolerance_labels(context.frame, an.short_labels(sorted(context.frame["solver_label"].unique())))
        panels = []
        for s, sub in sorted(f.groupby("_set"), key=lambda kv: an.natural_key(kv[0])):
            series = []
            ran = sub.groupby("solver_label")["instance_key"].nunique()
            n_inst = sub["instance_key"].nunique()
            for lab, g in sorted(sub.groupby("solver_label"), key=lambda kv: kv[0]):
                k, n = counts[(s, lab)]
                series += config_series(g, f"{short[lab]} · {k}/{n} ok", lab, floors)
            partial = [f"{short[lab]} ({int(m)}/{n_inst})" for lab, m in ran.items() if m < n_inst]
            kinds = "; ".join(sorted(set(sources[sub.index])))
            note = (f"{n_inst} instance(s); reference: {kinds}; floor {fmt_num(float(floors[sub.index].max()))}"
                    + (f"; ran on only some instances: {', '.join(partial)}" if partial else ""))
            panels.append(Panel(s, series, note, "No verified point in this set: nothing to draw.",
                                {"instance set": s}))
        caption = ("Median over the set's cells of the best gap reached by each time (steps on a common "
                   f"log-spaced grid; a cell without a point yet counts as an infinite gap), {int(BAND[0] * 100)}-"
                   f"{int(BAND[1] * 100)} % band shaded; the HTML's `lines` button shows one line per cell instead.  "
                   "Only verified points are drawn; `(repaired)`: some were mapped to feasible points by the "
                   "problem's repair.  Diamonds: verified cells with one point (no curve), at (time, gap).  "
                   "Crosses: points beyond the bound (below the reference by more than the floor), drawn at the "
                   "bottom (hover: by how much).  Points below the reference by at most the floor are ties at 0, "
                   "drawn at min(floor, 1e-7); the glossary states the rules.")
        return [Chart(f"gap_vs_time_{context.family}", "Relative objective gap versus time", panels,
                      "time since solve start (s)", "gap / max(|ref|, 1)", log_x=True, log_y=True, caption=caption)]

