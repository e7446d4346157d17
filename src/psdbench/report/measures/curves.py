"""Objective-gap curves: per-cell best-gap step functions and their median / quantile band.

A cell's curve is the store's ``curve`` column: points ``{"t", "objective", "feasible", "repaired"}``
re-scored by the harness.  Points with ``feasible = 0`` are dropped; the gap of a point is the
sense-adjusted relative gap to the instance's reference (:func:`psdbench.report.measures.gap.relative_gap`)
floored at ``floor`` so that it can be drawn on a log axis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from psdbench.report.measures.gap import gaps

#: Values at or above this stand for "no point yet" inside quantile computations.
_HUGE = 1e300


@dataclass(frozen=True)
class CellCurve:
    """The drawable points of one cell: times, floored gaps, and whether any point was repaired."""

    t: np.ndarray
    gap: np.ndarray
    repaired: bool


def curve_arrays(curve: Sequence[dict[str, Any]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """A curve's points as arrays ``t``, ``objective``, ``feasible`` (bool; default true) and
    ``repaired`` (bool; default false); values that are not numbers become NaN."""
    def num(v: Any) -> float:
        try:
            return float(v)
        except (TypeError, ValueError):
            return float("nan")

    t = np.array([num(p.get("t")) for p in curve], float)
    obj = np.array([num(p.get("objective")) for p in curve], float)
    feas = np.array([bool(int(p.get("feasible", 1) or 0)) for p in curve], bool)
    rep = np.array([bool(int(p.get("repaired", 0) or 0)) for p in curve], bool)
    return t, obj, feas, rep


def cell_curve(curve: Sequence[dict[str, Any]], reference: float, sense: str, floor: float = 1e-12) -> CellCurve:
    """The feasible points of ``curve`` as (time, gap), sorted by time.

    Parameters
    ----------
    curve : sequence of dict
        Points with ``t``, ``objective``, ``feasible`` (0/1, default 1) and ``repaired`` (0/1, default 0).
    reference : float
        The instance's reference objective; NaN gives an empty curve.
    sense : str
        ``"min"`` or ``"max"``.
    floor : float
        Gaps below it (including negative ones: better than the reference) are drawn at ``floor``.
    """
    t, obj, feas, rep = curve_arrays(curve)
    g = gaps(obj, float(reference), sense)
    keep = feas & np.isfinite(g) & np.isfinite(t)
    t, g = t[keep], g[keep]
    order = np.argsort(t, kind="stable")
    return CellCurve(t[order], np.maximum(g[order], floor), bool(rep[keep].any()))


def best_so_far(t: np.ndarray, gap: np.ndarray, grid: np.ndarray) -> np.ndarray:
    """The best (smallest) gap reached by each grid time (``inf`` before the first point)."""
    out = np.full(len(grid), np.inf)
    if len(t) == 0:
        return out
    best = np.minimum.accumulate(gap)
    idx = np.searchsorted(t, grid, side="right") - 1
    have = idx >= 0
    out[have] = best[idx[have]]
    return out


def time_grid(curves: Sequence[CellCurve], n: int = 120) -> np.ndarray:
    """``n`` log-spaced times from the earliest positive to the latest point time (empty without points)."""
    ts = np.concatenate([c.t for c in curves]) if curves else np.array([])
    ts = ts[np.isfinite(ts) & (ts > 0)]
    if not len(ts):
        return np.array([])
    lo, hi = float(ts.min()), float(ts.max())
    return np.array([lo]) if hi <= lo else np.geomspace(lo, hi, n)


def aggregate(curves: Sequence[CellCurve], grid: np.ndarray, low: float = 0.25,
              high: float = 0.75) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Median and the ``low`` / ``high`` quantiles over cells of the best gap reached by each grid time.

    A cell without a point yet counts as an infinite gap, so the median is finite only once more than
    half of the cells have a point; quantiles that involve such cells are ``inf`` (not drawn).
    """
    if not curves or not len(grid):
        empty = np.full(len(grid), np.inf)
        return empty, empty.copy(), empty.copy()
    m = np.vstack([best_so_far(c.t, c.gap, grid) for c in curves])
    m = np.where(np.isfinite(m), m, _HUGE)
    q = np.quantile(m, [0.5, low, high], axis=0)
    q = np.where(q >= _HUGE / 10, np.inf, q)
    return q[0], q[1], q[2]
