"""Pure computations behind the generic comparisons: comparable instance sets, times to a tolerance,
performance and data profiles, shifted geometric means and the winners of a family.

Every function takes a tidy frame (:func:`psdbench.report.frame.tidy_frame`) or tables built from
it and returns frames; nothing here draws or formats.

Conventions
-----------
* A cell *reaches* a relative-gap tolerance ``tol`` at the first verified curve point whose gap is
  ``<= tol`` (or at its wall time when only the verified final point does).  A point *below a
  certified bound* (gap ``< -floor``, the reference certified) is never counted: the tolerance of
  its verification, not the solver, put it there.  A cell the frame flags ``below_certified``
  reaches nothing.
* The *gap floor* of an instance is ``max(option gap_floor, certificate width / max(|p*|, 1))``:
  gaps below it cannot be told apart, so they are ties (:func:`floored_gap`).  The option's
  default, :data:`GAP_FLOOR` = 1e-7, is the order of the families' verification tolerances (a
  point verified to feasibility 1e-7 can sit that far below the optimum): one decade below the
  tightest target accuracy, so the 1e-6 column still tells solvers apart.  A cell the store flags
  ``below_certified`` (beyond the certificate's width alone) is beyond the bound here only when its
  gap is also below minus the floor.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from .curves import curve_arrays, gaps
from .frame import relative_gap

#: Default gap floor (report option ``gap_floor``): gaps within it of a certified optimum are ties.
GAP_FLOOR = 1e-7

#: Instance parameters that replicate an instance (cross-validation folds, repetitions) rather than
#: change its size or structure: they do not split comparable sets.
REPLICATE_PARAMS: tuple[str, ...] = ("fold", "folds", "rep", "repeat", "replicate", "split", "trial", "seed")
#: The target accuracies of the profiles and the winners matrix (relative gap).
TOLERANCES: tuple[float, ...] = (1e-2, 1e-4, 1e-6)


def set_key(params: dict[str, Any]) -> str:
    """``k=v, ...`` over the instance parameters that are not replicates (sorted by name)."""
    return ", ".join(f"{k}={params[k]}" for k in sorted(params) if k not in REPLICATE_PARAMS)


def instance_sets(frame: pd.DataFrame) -> pd.Series:
    """Per row, its comparable instance set: ``problem: dataset`` and :func:`set_key` of its parameters."""
    if frame.empty:
        return pd.Series([], dtype=str, index=frame.index)
    keys = frame["instance_params"].map(lambda d: set_key(d if isinstance(d, dict) else {}))
    base = frame["problem"].astype(str) + ": " + frame["dataset"].astype(str)
    return base + keys.map(lambda k: f" ({k})" if k else "")


def natural_key(text: str) -> tuple:
    """Sort key that orders the numbers inside a string by value (``n=50`` before ``n=100``)."""
    parts = re.split(r"(\d+(?:\.\d+)?)", str(text))
    return tuple((0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts))


def floored_gap(gap: float, floor: float) -> float:
    """``max(gap, floor)``; NaN stays NaN (a gap below the floor is a tie with the floor)."""
    return gap if not math.isfinite(gap) else max(gap, floor)


def cell_floor(frame: pd.DataFrame, default: float) -> pd.Series:
    """Per row, the gap floor: ``max(default, cert_width_rel)`` (``cert_width_rel`` NaN counts as 0)."""
    w = pd.to_numeric(frame.get("cert_width_rel", pd.Series(np.nan, index=frame.index)), errors="coerce")
    return w.fillna(0.0).clip(lower=default)


def beyond_bound(gap: float, floor: float, certified: bool) -> bool:
    """Whether a point's gap is below a certified bound by more than the floor."""
    return bool(certified and math.isfinite(gap) and gap < -floor)


def reach_time(curve: Sequence[dict[str, Any]], reference: float, sense: str, tol: float, floor: float,
               certified: bool, wall_time: float, final_gap: float, final_ok: bool) -> float:
    """Seconds until a cell reaches ``tol`` (``inf``: never).

    The first feasible curve point with ``gap <= tol`` that is not beyond the certified bound, else
    ``wall_time`` when the final point is acceptable (``final_ok``: verified and not below the bound)
    and its gap is ``<= tol``.
    """
    for p in sorted(curve, key=lambda p: float(p.get("t", math.inf))):
        if not int(p.get("feasible", 1) or 0):
            continue
        g = relative_gap(p.get("objective"), reference, sense)
        if math.isfinite(g) and g <= tol and not beyond_bound(g, floor, certified):
            return float(p["t"])
    if final_ok and math.isfinite(final_gap) and final_gap <= tol and math.isfinite(wall_time):
        return float(wall_time)
    return math.inf


def cell_reach_times(curve: Sequence[dict[str, Any]], reference: float, sense: str, tols: Sequence[float],
                     floor: float, certified: bool, wall_time: float, final_gap: float,
                     final_ok: bool) -> list[float]:
    """:func:`reach_time` for several tolerances at once (vectorized over the curve's points)."""
    t, obj, feas, _ = curve_arrays(curve)
    g = gaps(obj, float(reference), sense)
    ok = feas & np.isfinite(g) & np.isfinite(t)
    if certified:
        ok &= ~(g < -floor)
    order = np.argsort(t[ok], kind="stable")
    tt, gg = t[ok][order], g[ok][order]
    out = []
    for tol in tols:
        hit = np.flatnonzero(gg <= tol)
        if len(hit):
            out.append(float(tt[hit[0]]))
        elif final_ok and math.isfinite(final_gap) and final_gap <= tol and math.isfinite(wall_time):
            out.append(float(wall_time))
        else:
            out.append(math.inf)
    return out


def reach_times(frame: pd.DataFrame, tols: Iterable[float] = TOLERANCES,
                default_floor: float = GAP_FLOOR) -> pd.DataFrame:
    """One row per cell with a reference: ``set``, ``instance_key``, ``solver_label``, ``wall_time_s`` and
    ``t_<tol>`` (seconds to reach each tolerance, ``inf`` when not reached; :func:`reach_time`)."""
    tols = list(tols)
    f = frame[np.isfinite(pd.to_numeric(frame["reference_objective"], errors="coerce").astype(float))]
    cols = ["set", "instance_key", "solver_label", "wall_time_s"] + [f"t_{t:g}" for t in tols]
    if f.empty:
        return pd.DataFrame(columns=cols)
    certified = f["reference_kind"].astype(str).str.contains("certified").to_numpy()
    below = f["below_certified"].fillna(False).astype(bool).to_numpy()
    wall = pd.to_numeric(f["wall_time_s"], errors="coerce").to_numpy(float)
    rows = []
    for j, (curve, ref, sense, fl, gap, verified) in enumerate(zip(
            f["curve"], f["reference_objective"].astype(float), f["sense"], cell_floor(f, default_floor),
            f["gap"].astype(float), f["verified"])):
        beyond = below[j] and beyond_bound(gap, fl, True)  # flagged by the width alone, and beyond the floor
        times = [math.inf] * len(tols) if beyond else cell_reach_times(
            curve or [], ref, sense, tols, fl, bool(certified[j]), wall[j], gap, bool(verified))
        rows.append(times)
    out = pd.DataFrame(rows, columns=cols[4:], index=f.index)
    out.insert(0, "wall_time_s", wall)
    out.insert(0, "solver_label", f["solver_label"].to_numpy())
    out.insert(0, "instance_key", f["instance_key"].to_numpy())
    out.insert(0, "set", instance_sets(f).to_numpy())
    return out.reset_index(drop=True)


def cost_table(times: pd.DataFrame, column: str, labels: Sequence[str] | None = None,
               instances: Sequence[str] | None = None) -> pd.DataFrame:
    """Instances x configurations of ``column`` (the smallest per pair; NaN where a pair has no cell)."""
    t = times.pivot_table(index="instance_key", columns="solver_label", values=column, aggfunc="min")
    t = t.reindex(columns=sorted(times["solver_label"].unique()) if labels is None else list(labels))
    if instances is not None:
        t = t.reindex(index=list(instances))
    t.columns.name = None
    return t.astype(float)


def common_instances(times: pd.DataFrame) -> tuple[list[str], list[str]]:
    """Instances every configuration of ``times`` ran (sorted), and those left out."""
    ran = times.groupby("instance_key")["solver_label"].nunique()
    n = times["solver_label"].nunique()
    return sorted(ran.index[ran == n]), sorted(ran.index[ran < n])


def data_profile(cost: pd.DataFrame, grid: np.ndarray) -> pd.DataFrame:
    """Moré-Wild data profile: per configuration, the fraction of instances solved by each time of ``grid``
    (``d_s(t) = #{p : t_{p,s} <= t} / #P``; NaN costs are unsolved)."""
    c = cost.astype(float).fillna(np.inf).to_numpy()
    if c.shape[0] == 0:
        return pd.DataFrame(index=grid, columns=cost.columns, dtype=float)
    return pd.DataFrame({s: (c[:, j][None, :] <= grid[:, None]).mean(axis=1) for j, s in enumerate(cost.columns)},
                        index=grid)


def shifted_geomean(times: Sequence[float], limit: float, shift: float = 10.0) -> float:
    """Shifted geometric mean ``exp(mean(log(t_i + shift))) - shift`` with failures charged at ``limit``.

    ``t_i`` above ``limit`` (or not finite) count as ``limit`` (Mittelmann's benchmarks; the SCS
    benchmark pages).  NaN for an empty sequence.
    """
    t = np.asarray(list(times), float)
    if not len(t):
        return math.nan
    t = np.where(np.isfinite(t), np.minimum(t, limit), limit)
    return float(np.exp(np.mean(np.log(t + shift))) - shift)


def sgm_table(cost: pd.DataFrame, limit: float, shift: float = 10.0) -> pd.DataFrame:
    """Per configuration: ``sgm`` (:func:`shifted_geomean` over the rows of ``cost``), ``scaled`` (``sgm``
    over the best configuration's), ``solved`` (fraction of finite costs) and ``instances``."""
    rows = {}
    for s in cost.columns:
        x = cost[s].to_numpy(float)
        rows[s] = {"sgm": shifted_geomean(x, limit, shift), "solved": float(np.isfinite(x).mean()) if len(x) else
                   math.nan, "instances": len(x)}
    out = pd.DataFrame.from_dict(rows, orient="index", columns=["sgm", "solved", "instances"])
    best = out["sgm"].min()
    out.insert(1, "scaled", out["sgm"] / best if best > 0 else np.where(out["sgm"] == best, 1.0, np.inf))
    return out


def time_limit(times: pd.DataFrame, given: float | None = None) -> float:
    """The time failures are charged at: ``given``, else the largest wall time in ``times`` (at least 1 s)."""
    if given is not None and math.isfinite(given) and given > 0:
        return float(given)
    w = pd.to_numeric(times["wall_time_s"], errors="coerce")
    w = w[np.isfinite(w)]
    return max(float(w.max()) if len(w) else 1.0, 1.0)


def winners(times: pd.DataFrame, tols: Iterable[float] = TOLERANCES, shift: float = 10.0,
            limit: float | None = None) -> pd.DataFrame:
    """Per tolerance, the fastest configuration over the instances every configuration ran.

    Fastest: the smallest :func:`shifted_geomean` of the times to reach the tolerance (failures
    charged at :func:`time_limit`) among configurations that reached it at least once.

    Returns
    -------
    DataFrame
        Columns ``tol``, ``winner`` (``""`` when none reached it), ``reached``, ``instances``, ``sgm``,
        ``median``, ``min``, ``max`` (seconds over the reached instances), ``left_out`` (instances
        some configuration did not run).
    """
    rows = []
    common, left = common_instances(times) if len(times) else ([], [])
    lim = time_limit(times, limit) if len(times) else 1.0
    for tol in tols:
        row = {"tol": tol, "winner": "", "reached": 0, "instances": len(common), "sgm": math.nan,
               "median": math.nan, "min": math.nan, "max": math.nan, "left_out": len(left)}
        if common:
            cost = cost_table(times, f"t_{tol:g}", instances=common)
            tab = sgm_table(cost, lim, shift)
            tab = tab[tab["solved"] > 0]
            if len(tab):
                w = str(tab["sgm"].idxmin())
                x = cost[w].to_numpy(float)
                x = x[np.isfinite(x)]
                row.update(winner=w, reached=len(x), sgm=float(tab.loc[w, "sgm"]), median=float(np.median(x)),
                           min=float(x.min()), max=float(x.max()))
        rows.append(row)
    return pd.DataFrame(rows)


def short_labels(labels: Sequence[str]) -> dict[str, str]:
    """Labels ``solver (k=v, ...)`` without the parameters every configuration of that solver in
    ``labels`` shares (``solver`` alone when nothing differs)."""
    parsed: dict[str, tuple[str, list[str]]] = {}
    for lab in labels:
        name, _, rest = lab.partition(" (")
        parsed[lab] = (name, [p for p in rest[:-1].split(", ") if p] if rest.endswith(")") else [])
    out = {}
    for lab, (name, params) in parsed.items():
        same = [ps for n, ps in parsed.values() if n == name]
        shared = set(params).intersection(*map(set, same)) if len(same) > 1 else set(params)
        keep = [p for p in params if p not in shared]
        out[lab] = f"{name} ({', '.join(keep)})" if keep else name
    return out


def decimate(x: np.ndarray, y: np.ndarray, n: int = 60) -> tuple[np.ndarray, np.ndarray]:
    """At most ``n`` points of a time series, log-spaced in the index (first and last kept), for drawing."""
    if len(x) <= n:
        return x, y
    idx = np.unique(np.concatenate([[0], np.round(np.geomspace(1, len(x) - 1, n - 1)).astype(int)]))
    return x[idx], y[idx]
