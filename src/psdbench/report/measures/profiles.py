"""Dolan-More performance profiles.

For a cost ``c[p, s] > 0`` of solver ``s`` on instance ``p`` (``inf``: not solved), the ratio is
``r[p, s] = c[p, s] / min_s c[p, s]`` (``inf`` when no solver solved ``p``) and the profile
``rho_s(tau) = #{p : r[p, s] <= tau} / #p``.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np
import pandas as pd

from psdbench.report.measures.gap import relative_gap


def time_to_tolerance(curve: Sequence[dict[str, Any]], reference: float, sense: str, tol: float,
                      wall_time: float, final_gap: float, verified: bool) -> float:
    """Seconds until the relative gap first reaches ``tol``: the first feasible curve point with gap
    <= ``tol``, else ``wall_time`` if the verified final point reaches it, else ``inf``."""
    for p in sorted(curve, key=lambda p: float(p.get("t", math.inf))):
        if int(p.get("feasible", 1) or 0) and relative_gap(p.get("objective"), reference, sense) <= tol:
            return float(p["t"])
    if verified and math.isfinite(final_gap) and final_gap <= tol and math.isfinite(wall_time):
        return float(wall_time)
    return math.inf


def ratios(costs: pd.DataFrame, floor: float = 0.0) -> pd.DataFrame:
    """Performance ratios of a cost table (rows: instances, columns: solvers; NaN counts as ``inf``).

    Costs are raised to ``floor`` first (so that a zero cost does not divide by zero).
    """
    c = costs.astype(float).fillna(np.inf)
    c = c.where(~np.isfinite(c) | (c >= floor), floor)
    best = c.min(axis=1)
    r = c.div(best.where(np.isfinite(best) & (best > 0)), axis=0)
    r[~np.isfinite(best) | (best <= 0)] = np.inf
    return r.where(np.isfinite(c), np.inf)


def profile(r: pd.DataFrame, taus: np.ndarray) -> pd.DataFrame:
    """``rho_s(tau)`` for each ``tau`` (rows) and solver (columns)."""
    if r.empty:
        return pd.DataFrame(index=taus, columns=r.columns, dtype=float)
    return pd.DataFrame({s: [(r[s] <= t).mean() for t in taus] for s in r.columns}, index=taus)


def summary(r: pd.DataFrame) -> pd.DataFrame:
    """Per solver: ``instances``, ``solved`` (fraction with a finite ratio), ``rho(1)`` (fraction where it
    is the best or tied) and ``area``: the mean of ``rho`` over ``log2 tau`` in ``[0, L]`` where ``L``
    is the largest finite ``log2`` ratio of the table (``solved`` when ``L = 0``; larger is better)."""
    fin = r.to_numpy()[np.isfinite(r.to_numpy())]
    top = max(float(np.log2(fin.max())) if fin.size else 0.0, 0.0)
    rows = {}
    for s in r.columns:
        x = r[s].to_numpy(float)
        lx = np.log2(x[np.isfinite(x)])
        if not len(x):
            area = math.nan
        elif top == 0:
            area = len(lx) / len(x)
        else:
            area = float(np.sum(np.clip(top - lx, 0, None)) / top / len(x))
        rows[s] = {"instances": len(x), "solved": float(np.isfinite(x).mean()) if len(x) else math.nan,
                   "rho(1)": float((x <= 1.0).mean()) if len(x) else math.nan, "area": area}
    return pd.DataFrame.from_dict(rows, orient="index", columns=["instances", "solved", "rho(1)", "area"])
