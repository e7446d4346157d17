"""Pure computations behind the generic comparisons: comparable instance sets, times to a tolerance,
performance and data profiles, shifted geometric means and the winners of a family.

Every function takes a tidy frame (:func:`psdbench.report.frame.tidy_frame`) or tables built from
it and returns frames; nothing here draws or formats.

The verdict rules (reached, tie at 0, beyond the bound, the floor, the shifted geometric mean and
its shift, the margin) are :mod:`psdbench.report.rules`; this module applies them to sets of cells.
"""

from __future__ import annotations

import math
import re
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd

from psdbench.report import rules
from psdbench.report.measures.curves import curve_arrays, gaps
from psdbench.report.rules import DEFAULT_ALLOWANCE, TOLERANCES
from psdbench.report.measures.references import REFERENCE_KINDS  # noqa: F401 (re-exported)
from psdbench.report.measures.units import REPLICATE_PARAMS, _value, instance_sets, param_text, set_key, unit_keys  # noqa: F401 (re-exported)


def natural_key(text: str) -> tuple:
    """Sort key that orders the numbers inside a string by value (``n=50`` before ``n=100``)."""
    parts = re.split(r"(\d+(?:\.\d+)?)", str(text))
    return tuple((0, float(p), "") if i % 2 else (1, 0.0, p) for i, p in enumerate(parts))


def time_limits(frame: pd.DataFrame, sets: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Per row, the time limit a failure is charged at, and whether the store recorded it.

    The cell's recorded ``time_limit_s`` (stores from schema 5 on); a cell stored without one gets the
    longest wall time among its instance set's cells (at least 1 s), flagged ``False``.
    """
    rec = pd.to_numeric(frame["time_limit_s"], errors="coerce") if "time_limit_s" in frame.columns \
        else pd.Series(np.nan, index=frame.index)
    wall = pd.to_numeric(frame["wall_time_s"], errors="coerce").where(lambda w: np.isfinite(w))
    fallback = wall.groupby(sets.to_numpy()).transform("max").fillna(1.0).clip(lower=1.0)
    ok = np.isfinite(rec) & (rec > 0)
    return rec.where(ok, fallback).astype(float), pd.Series(ok.to_numpy(), index=frame.index)


def reference_certified(frame: pd.DataFrame) -> np.ndarray:
    """Per row, whether a certified bound lies on the other side of its instance's reference (a point
    below it by more than the floor is then beyond that bound)."""
    bounded = frame["reference_bounded"].fillna(False).astype(bool).to_numpy() if "reference_bounded" in frame.columns \
        else np.zeros(len(frame), bool)
    return bounded | frame["reference_kind"].astype(str).str.contains("certified").to_numpy()


def reach_times(frame: pd.DataFrame, tols: Iterable[float] = TOLERANCES,
                default_allowance: float = DEFAULT_ALLOWANCE, by_unit: bool = True) -> pd.DataFrame:
    """One row per unit and configuration with a reference: when it reached each target accuracy (:mod:`.rules`).

    Skipped cells (status ``skipped``: the solver did not run, e.g. its extra is missing) are left out:
    they are no configuration's time, charged or not.

    Parameters
    ----------
    frame : DataFrame
        A tidy frame (:func:`psdbench.report.frame.tidy_frame`).
    tols : iterable of float
    default_allowance : float
    by_unit : bool
        Collapse the cells of one independent unit (column ``unit``,
        :func:`psdbench.report.measures.units.unit_keys`: the seeds of an instance that did not change its result)
        into one row (default); ``False``: one row per cell.

    Returns
    -------
    DataFrame
        ``set``, ``instance_key`` (the unit: an instance, or an instance description whose seeds are one
        result), ``solver_label``, ``wall_time_s``, ``limit_s`` (the time a failure is charged at,
        :func:`time_limits`), ``limit_recorded``, ``floor`` (:func:`psdbench.report.rules.floor`),
        ``ranked_gap`` of the final point, ``resolution`` and ``set_accuracy`` (the set's largest floor
        and reference accuracy: targets tighter than ``resolution`` are not resolved), ``cells`` and
        ``t_<tol>`` (seconds to reach each tolerance, ``inf`` when not reached;
        :func:`psdbench.report.rules.reach_times_of_curve`; a unit of several cells: their median).
    """
    tols = list(tols)
    f = frame[np.isfinite(pd.to_numeric(frame["reference_objective"], errors="coerce").astype(float))]
    if "status" in f.columns:
        f = f[f["status"].astype(str) != "skipped"]  # a skipped cell did not run: it is no configuration's time
    tcols = [f"t_{t:g}" for t in tols]
    cols = ["set", "instance_key", "solver_label", "wall_time_s", "limit_s", "limit_recorded", "floor",
            "ranked_gap", "resolution", "set_accuracy", "cells"] + tcols
    if f.empty:
        return pd.DataFrame(columns=cols)
    sets = instance_sets(f)
    certified = reference_certified(f)
    fl = rules.floors(f, default_allowance).to_numpy()
    wall = pd.to_numeric(f["wall_time_s"], errors="coerce").to_numpy(float)
    gap = f["gap"].astype(float).to_numpy()
    verified = f["verified"].astype(bool).to_numpy()
    rows = []
    for j, (curve, ref, sense) in enumerate(zip(f["curve"], f["reference_objective"].astype(float), f["sense"])):
        t, obj, feas, _ = curve_arrays(curve or [])
        rows.append(rules.reach_times_of_curve(t, gaps(obj, float(ref), sense), feas, tols, float(fl[j]),
                                               bool(certified[j]), wall[j], gap[j], bool(verified[j])))
    limit, recorded = time_limits(f, sets)
    out = pd.DataFrame(rows, columns=tcols, index=f.index)
    # the set's over the whole frame where the tidy frame computed it (a family table passes a part of a set)
    res = pd.Series(fl, index=f.index).groupby(sets).transform("max")
    if "resolution" in f.columns:
        res = pd.to_numeric(f["resolution"], errors="coerce").fillna(res)
    acc = (pd.to_numeric(f["set_accuracy" if "set_accuracy" in f.columns else "reference_accuracy"], errors="coerce")
           if {"set_accuracy", "reference_accuracy"} & set(f.columns) else pd.Series(np.nan, index=f.index))
    acc = acc.groupby(sets).transform("max")
    out.insert(0, "cells", 1)
    out.insert(0, "set_accuracy", acc.to_numpy(float))
    out.insert(0, "resolution", res.to_numpy(float))
    out.insert(0, "ranked_gap", np.where(verified, rules.ranked_gaps(gap, fl, certified), np.nan))
    out.insert(0, "floor", fl)
    out.insert(0, "limit_recorded", recorded.to_numpy())
    out.insert(0, "limit_s", limit.to_numpy())
    out.insert(0, "wall_time_s", wall)
    out.insert(0, "solver_label", f["solver_label"].to_numpy())
    unit = f["unit"] if by_unit and "unit" in f.columns else f["instance_key"]
    out.insert(0, "instance_key", unit.astype(str).to_numpy())
    out.insert(0, "set", sets.to_numpy())
    out = out.reset_index(drop=True)
    if not by_unit or not out.duplicated(["set", "instance_key", "solver_label"]).any():
        return out
    how = {"wall_time_s": "median", "limit_s": "max", "limit_recorded": "all", "floor": "max", "ranked_gap": "max",
           "resolution": "max", "set_accuracy": "max", "cells": "sum", **{c: "median" for c in tcols}}
    return out.groupby(["set", "instance_key", "solver_label"], sort=False, as_index=False).agg(how)[cols]


def set_resolution(times: pd.DataFrame) -> tuple[float, bool]:
    """The finest target one instance set's reach times resolve, and whether the reference (rather
    than the verification floor) sets it: :func:`psdbench.report.rules.resolution` of its floors."""
    if times.empty:
        return math.nan, False
    res = rules.resolution(times["resolution"] if "resolution" in times.columns else times["floor"])
    acc = pd.to_numeric(times["set_accuracy"], errors="coerce").max() if "set_accuracy" in times.columns else np.nan
    return res, bool(np.isfinite(acc) and acc >= res)


def unresolved(times: pd.DataFrame, tol: float) -> str:
    """``""`` when one set's reach times resolve ``tol``, else why not
    (:func:`psdbench.report.rules.unresolved_text`)."""
    res, by_ref = set_resolution(times)
    return "" if rules.resolves(tol, res) else rules.unresolved_text(res, by_ref)


def _pivot(times: pd.DataFrame, column: str, how: str) -> pd.DataFrame:
    """Instances x configurations of ``column`` aggregated by ``how`` (``pivot_table``'s result, by a
    grouped reduction: several times faster, and the shifted geometric means call it per target)."""
    g = times.groupby(["instance_key", "solver_label"], sort=True)[column]
    t = (g.min() if how == "min" else g.max()).unstack("solver_label")
    return t.dropna(axis=1, how="all").dropna(axis=0, how="all")


def cost_table(times: pd.DataFrame, column: str, labels: Sequence[str] | None = None,
               instances: Sequence[str] | None = None) -> pd.DataFrame:
    """Instances x configurations of ``column`` (the smallest per pair; NaN where a pair has no cell)."""
    t = _pivot(times, column, "min")
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


def compared(times: pd.DataFrame) -> tuple[list[str], list[str], list[str]]:
    """Of one instance set's reach times: the configurations compared, the instances they are compared
    on, and the configurations left out.

    The configurations that ran every instance of the set, over all of them; when none did, every
    configuration over the instances all of them ran.
    """
    n = times["instance_key"].nunique()
    ran = times.groupby("solver_label")["instance_key"].nunique()
    full = sorted(ran.index[ran == n])
    if full:
        return full, sorted(times["instance_key"].unique()), sorted(ran.index[ran < n])
    common, _ = common_instances(times)
    return sorted(ran.index), common, []


def set_scores(times: pd.DataFrame, tol: float) -> tuple[pd.DataFrame, float]:
    """Per compared configuration of one instance set (:func:`compared`): its shifted geometric mean
    time to reach ``tol`` and more, and the set's shift.

    Returns
    -------
    DataFrame
        Index: configuration.  Columns ``sgm`` (:func:`psdbench.report.rules.shifted_geomean`, failures
        at each cell's time limit), ``scaled`` (over the best in the set), ``reached``, ``instances``,
        ``median``, ``min``, ``max`` (seconds over the instances reached).
    float
        The shift (:func:`psdbench.report.rules.set_shift` of the per-instance fastest times).
    """
    labels, inst, _ = compared(times)
    col = f"t_{tol:g}"
    cost = cost_table(times, col, labels, inst)
    limit = _pivot(times, "limit_s", "max")
    limit = limit.reindex(index=inst, columns=labels)
    shift = rules.set_shift(cost.min(axis=1, skipna=True).replace(np.inf, np.nan))
    rows = {}
    for lab in labels:
        x, lim = cost[lab].to_numpy(float), limit[lab].fillna(limit.max(axis=1)).to_numpy(float)
        ok = x[np.isfinite(x)]
        rows[lab] = {"sgm": rules.shifted_geomean(x, lim, shift), "reached": len(ok), "instances": len(x),
                     "median": float(np.median(ok)) if len(ok) else math.nan,
                     "min": float(ok.min()) if len(ok) else math.nan, "max": float(ok.max()) if len(ok) else math.nan}
    out = pd.DataFrame.from_dict(rows, orient="index",
                                 columns=["sgm", "reached", "instances", "median", "min", "max"])
    best = out["sgm"].min() if len(out) else math.nan
    out.insert(1, "scaled", out["sgm"] / best if best > 0 else np.where(out["sgm"] == best, 1.0, np.inf))
    return out, shift


def set_winner(times: pd.DataFrame, tol: float) -> dict[str, Any]:
    """The winner of one instance set at ``tol``, its runner-up and the margin between them.

    Not resolved (``unresolved``: why, no winner) when ``tol`` is tighter than the set's resolution
    (:func:`unresolved`).  Else, among the compared configurations (:func:`compared`) that reached
    ``tol`` on at least one unit, the smallest shifted geometric mean wins; the margin is
    :func:`psdbench.report.rules.margin` of the runner-up's times over the winner's, paired by unit.

    Returns
    -------
    dict
        ``winner``, ``runner_up`` (``""`` when none), ``reached`` / ``runner_reached``, ``instances``
        (units compared), ``configurations`` (compared), ``sgm``, ``runner_sgm``, ``median``, ``min``,
        ``max`` (the winner's seconds over the units it reached), ``ratio``, ``low``, ``high``, ``tie``,
        ``shared_failures``, ``won_on`` (:func:`psdbench.report.rules.won_on`: ``""`` unless the margin is below
        1), ``shift``, ``left_out`` (configurations that ran only part of the set),
        ``unresolved`` (``""`` or why the target is not resolved).
    """
    labels, inst, left = compared(times)
    out: dict[str, Any] = {"winner": "", "runner_up": "", "reached": 0, "runner_reached": 0, "instances": len(inst),
                           "configurations": len(labels), "sgm": math.nan, "runner_sgm": math.nan,
                           "median": math.nan, "min": math.nan, "max": math.nan, "ratio": math.nan, "low": math.nan,
                           "high": math.nan, "tie": False, "shared_failures": 0, "shift": math.nan, "left_out": left,
                           "won_on": "",
                           "unresolved": unresolved(times, tol)}
    if not inst or out["unresolved"]:
        return out
    tab, shift = set_scores(times, tol)
    out["shift"] = shift
    tab = tab[tab["reached"] > 0].sort_values(["sgm", "reached"], ascending=[True, False], kind="stable")
    if not len(tab):
        return out
    w = str(tab.index[0])
    out.update(winner=w, reached=int(tab.loc[w, "reached"]), sgm=float(tab.loc[w, "sgm"]),
               median=float(tab.loc[w, "median"]), min=float(tab.loc[w, "min"]), max=float(tab.loc[w, "max"]))
    if len(tab) > 1:
        r = str(tab.index[1])
        col = f"t_{tol:g}"
        cost = cost_table(times, col, [w, r], inst)
        lim = times.groupby("instance_key")["limit_s"].max().reindex(inst).to_numpy(float)
        m = rules.margin(cost[w].to_numpy(float), cost[r].to_numpy(float), lim)
        out.update(runner_up=r, runner_reached=int(tab.loc[r, "reached"]), runner_sgm=float(tab.loc[r, "sgm"]),
                   ratio=m.ratio, low=m.low, high=m.high, tie=m.tie, shared_failures=m.shared_failures,
                   won_on=rules.won_on(m, out["reached"], int(tab.loc[r, "reached"])))
    return out


def winners(times: pd.DataFrame, tols: Iterable[float] = TOLERANCES) -> pd.DataFrame:
    """:func:`set_winner` of every comparable instance set and tolerance: one row per (set, tol),
    sets in :func:`natural_key` order."""
    rows = []
    for s, g in sorted(times.groupby("set"), key=lambda kv: natural_key(kv[0])):
        for tol in tols:
            rows.append({"set": s, "tol": tol, **set_winner(g, tol)})
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


def reference_sources(frame: pd.DataFrame, refs: pd.DataFrame | None = None) -> pd.Series:
    """Per row, the one kind name of its instance's reference (a key of :data:`REFERENCE_KINDS`,
    ``best verified: <labels>``), as the tidy frame computed it
    (:func:`psdbench.report.measures.references.reference_columns`); computed here for a frame without it."""
    if "reference_label" in frame.columns:
        return frame["reference_label"].fillna("none").astype(object)
    from psdbench.report.measures.references import reference_columns

    return reference_columns(frame, refs)["reference_label"]


def reference_text(frame: pd.DataFrame) -> str:
    """The reference kinds of some rows with their accuracy: ``wide certified interval (known to 2.4e-2)``."""
    if frame.empty:
        return ""
    parts = []
    lab = reference_sources(frame)
    acc = pd.to_numeric(frame["reference_accuracy"], errors="coerce") if "reference_accuracy" in frame.columns \
        else pd.Series(np.nan, index=frame.index)
    for name in sorted(set(lab)):
        a = acc[lab == name].max()
        parts.append(name + (f" (known to {a:.2g})" if np.isfinite(a) and name != "none" else ""))
    return "; ".join(parts)


def stop_tolerances(frame: pd.DataFrame) -> pd.Series:
    """Per row, its configuration's own stopping tolerance (:func:`psdbench.report.rules.stopping_tolerance`
    of its ``s_<name>`` columns, defaults filled in; NaN when it has none)."""
    cols = [c for c in frame.columns if c.startswith("s_")]
    vals = [rules.stopping_tolerance({c[2:]: v for c, v in zip(cols, row) if v is not None and v == v})
            for row in frame[cols].itertuples(index=False, name=None)] if cols else [None] * len(frame)
    return pd.Series([math.nan if v is None else v for v in vals], index=frame.index, dtype=float)


def tolerance_labels(frame: pd.DataFrame, short: dict[str, str]) -> dict[str, str]:
    """``short`` labels with each configuration's own stopping tolerance (``solver [tol 0.0001]``) where it
    has one, for legends and tables."""
    tol = stop_tolerances(frame).groupby(frame["solver_label"]).first() if len(frame) else pd.Series(dtype=float)
    return {lab: s + (f" [tol {tol[lab]:g}]" if lab in tol.index and np.isfinite(tol[lab]) else "")
            for lab, s in short.items()}


def configured_notes(frame: pd.DataFrame) -> dict[tuple[str, str], str]:
    """Per (instance set, configuration) with points verification rejected though the configuration
    asked for less than verification allows (:func:`psdbench.report.rules.configured_for`):
    ``"2 rejected: configured for 0.0001"``."""
    from psdbench.harness.store.results import outcome_column

    if frame.empty:
        return {}
    rej = frame[outcome_column(frame) == "rejected"]
    if rej.empty:
        return {}
    tols = stop_tolerances(rej)
    out: dict[tuple[str, str], list] = {}
    for s, lab, t, m in zip(instance_sets(rej), rej["solver_label"], tols, rej["metrics"]):
        what = rules.configured_for(None if t != t else float(t), rules.allowance(
            m.get("tolerances") if isinstance(m, dict) else None, math.inf))
        if what:
            out.setdefault((s, lab), []).append(what)
    return {k: f"{len(v)} rejected: {v[0]}" for k, v in out.items()}
