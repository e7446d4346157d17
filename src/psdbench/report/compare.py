"""``psdbench compare A B``: two stores cell by cell and solver by solver (as ``asv compare``).

Cells are matched on what they are, not on their key (the key also hashes psdbench's and the
libraries' versions, which is what a branch-against-main comparison changes): problem, dataset,
instance parameters, seed, solver and solver parameters.  For each matched cell the table gives
the wall time of both sides and their ratio ``B / A``, ``gap_rel`` of both sides, the status
change and the change of every task metric.  The table shows what happened in the page's words
(``outcome_a`` / ``outcome_b``, :func:`psdbench.harness.store.results.outcome`: ``ok>rejected``, never
the store's shared ``infeasible``); CSV and JSON carry both the words and the store's
``status_a`` / ``status_b``.  A cell is flagged

* ``status`` when A finished (``ok`` / ``max_iter``) and B did not;
* ``slower`` when ``time_ratio > factor`` (default 1.1, ``asv compare``'s) and A's time is
  above ``min_time`` (default 0.05 s: shorter times are mostly noise);
* ``gap`` when B's ``gap_rel`` exceeds A's by more than ``gap_tol`` (or B has no gap where A had);
* ``metric_<name>`` when a metric with a declared direction got worse by more than
  ``metric_tol``: the direction is read from the declaration asv reads too (a tracked suite's
  ``[asv] metric`` / ``metric_best``: its cost ``|metric - metric_best|`` rose; else the family's
  ranking metric and its sense), per problem: :func:`psdbench.harness.asvspec.declared_directions`
  (the one rule, stated there).  A metric declared nowhere is reported, never flagged.

The per-solver table aggregates: matched cells, geometric mean of the time ratios, median
``gap_rel`` change, and the number of flagged cells.

:func:`compare_configs` names the *regressions*: per instance set (the report's: problem, dataset,
instance parameters that are not replicates) and solver configuration (the report's label), over
its matched cells (seeds, folds), what got worse beyond its spread, A's range over those cells
(``max - min``, 0 for a single cell):

* ``time`` when B's median wall time exceeds ``factor`` times A's, A's is at least ``min_time``,
  and the increase exceeds A's spread;
* ``gap`` when the median of the gap the report ranks by (``gap_abs / max(|p*|, 1)``) grew by
  more than ``max(gap_tol, spread)``, or a cell with a gap in A has none in B (not verified);
* ``metric_<name>`` when a declared metric's median cost got worse by more than
  ``max(metric_tol, spread)``;
* ``status`` when a cell finished in A and not in B.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from psdbench.harness.asvspec import Direction
from psdbench.harness.store.results import outcome

Directions = Mapping[tuple[str, str], Direction]

FINISHED = ("ok", "max_iter")
IDENTITY = ["problem", "dataset", "instance_params", "seed", "solver", "solver_params"]


def _matched(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """The cells of both frames, matched on what they are (columns suffixed ``_a`` / ``_b``)."""
    a, b = a.copy(), b.copy()
    a["_k"], b["_k"] = _key(a), _key(b)
    return a.merge(b, on="_k", suffixes=("_a", "_b"))


def _key(df: pd.DataFrame) -> pd.Series:
    return df.apply(lambda r: json.dumps([r[c] for c in IDENTITY], sort_keys=True, default=str), axis=1)


def _num(v: Any) -> float:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return math.nan
    return f


def _worse(direction: Direction | None, va: float, vb: float, tol: float) -> bool:
    """Whether ``vb`` is worse than ``va`` by more than ``tol`` (in cost) under ``direction``."""
    if direction is None or math.isnan(va) or math.isnan(vb):
        return False
    return direction.cost(vb) - direction.cost(va) > tol


def compare_cells(a: pd.DataFrame, b: pd.DataFrame, factor: float = 1.1, gap_tol: float = 1e-6,
                  metric_tol: float = 1e-9, min_time: float = 0.05,
                  directions: Directions | None = None) -> pd.DataFrame:
    """One row per cell present in both results frames, with differences and regression flags.

    Parameters
    ----------
    a, b : DataFrame
        ``Store.results_frame()`` of the baseline (A) and of the candidate (B).
    factor : float
        Time ratio above which a cell is ``slower``.
    gap_tol : float
        Increase of ``gap_rel`` above which a cell is flagged ``gap``.
    metric_tol : float
        Worsening of a directional metric above which it is flagged.
    min_time : float
        A's wall time below which the time ratio is not flagged.
    directions : mapping, optional
        ``(problem, metric) -> Direction``: the declared directions
        (:func:`~psdbench.harness.asvspec.declared_directions`); a metric without one is never flagged.

    Returns
    -------
    DataFrame
        Identity columns, ``status_a``, ``status_b``, ``outcome_a``, ``outcome_b``, ``time_a``, ``time_b``, ``time_ratio``,
        ``gap_a``, ``gap_b``, ``gap_change``, ``d_metric_<name>`` and ``flags`` (comma-separated).
    """
    if not len(a) or not len(b):
        return pd.DataFrame(columns=[*IDENTITY, "status_a", "status_b", "outcome_a", "outcome_b", "time_ratio",
                                     "flags"])
    m = _matched(a, b)
    metrics = sorted({c for c in a.columns if c.startswith("metric_")} & {c for c in b.columns if c.startswith("metric_")})
    rows = []
    for _, r in m.iterrows():
        row: dict[str, Any] = {c: r[f"{c}_a"] for c in IDENTITY}
        row.update(status_a=r["status_a"], status_b=r["status_b"], outcome_a=outcome(r["status_a"], r.get("message_a")),
                   outcome_b=outcome(r["status_b"], r.get("message_b")))
        ta, tb = _num(r["wall_time_s_a"]), _num(r["wall_time_s_b"])
        ga, gb = _num(r["gap_rel_a"]), _num(r["gap_rel_b"])
        row.update(time_a=ta, time_b=tb, time_ratio=tb / ta if ta > 0 else math.nan, gap_a=ga, gap_b=gb,
                   gap_change=gb - ga)
        flags = []
        if r["status_a"] in FINISHED and r["status_b"] not in FINISHED:
            flags.append("status")
        if ta >= min_time and row["time_ratio"] > factor:
            flags.append("slower")
        if (not math.isnan(ga) and math.isnan(gb)) or gb - ga > gap_tol:
            flags.append("gap")
        for c in metrics:
            va, vb = _num(r[f"{c}_a"]), _num(r[f"{c}_b"])
            row[f"d_{c}"] = vb - va
            if _worse((directions or {}).get((r["problem_a"], c[len("metric_"):])), va, vb, metric_tol):
                flags.append(c)
        row["flags"] = ",".join(flags)
        rows.append(row)
    if not rows:  # the stores share no cell: the columns still exist
        return pd.DataFrame(columns=[*IDENTITY, "status_a", "status_b", "outcome_a", "outcome_b", "time_a", "time_b",
                                     "time_ratio", "gap_a", "gap_b", "gap_change", *(f"d_{c}" for c in metrics),
                                     "flags"])
    return pd.DataFrame(rows)


def compare_solvers(cells: pd.DataFrame) -> pd.DataFrame:
    """Per solver: matched cells, geometric-mean time ratio, median gap change, flagged cells."""
    out = []
    for solver, g in cells.groupby("solver", sort=True):
        ratios = g["time_ratio"].astype(float)
        ratios = ratios[np.isfinite(ratios) & (ratios > 0)]
        out.append({"solver": solver, "cells": len(g),
                    "time_ratio_gmean": float(np.exp(np.log(ratios).mean())) if len(ratios) else math.nan,
                    "gap_change_median": float(g["gap_change"].astype(float).median()),
                    "regressions": int((g["flags"] != "").sum()),
                    "status_regressions": int(g["flags"].str.contains("status").sum())})
    return pd.DataFrame(out, columns=["solver", "cells", "time_ratio_gmean", "gap_change_median", "regressions",
                                      "status_regressions"])


def unmatched(a: pd.DataFrame, b: pd.DataFrame) -> tuple[int, int]:
    """How many cells only A has, and how many only B has."""
    if not len(a) or not len(b):
        return len(a), len(b)
    ka, kb = set(_key(a)), set(_key(b))
    return len(ka - kb), len(kb - ka)


def _ranked_gap(gap_abs: pd.Series, reference: pd.Series) -> pd.Series:
    """The gap the report ranks by: ``gap_abs / max(|p*|, 1)`` (``report.measures.gap.relative_gap``)."""
    ref = pd.to_numeric(reference, errors="coerce").abs().clip(lower=1.0)
    return pd.to_numeric(gap_abs, errors="coerce") / ref


def _spread(v: pd.Series) -> float:
    v = v.dropna()
    return float(v.max() - v.min()) if len(v) else 0.0


CONFIG_COLUMNS = ["instance_set", "config", "cells", "time_a", "time_b", "time_ratio", "gap_a", "gap_b", "worse"]


def compare_configs(a: pd.DataFrame, b: pd.DataFrame, factor: float = 1.1, gap_tol: float = 1e-6,
                    metric_tol: float = 1e-9, min_time: float = 0.05,
                    directions: Directions | None = None) -> pd.DataFrame:
    """One row per instance set and solver configuration present in both frames; ``worse`` names
    what got worse beyond its spread (module docstring), comma-separated, ``""`` if nothing.

    Parameters are those of :func:`compare_cells`; medians are over the configuration's matched cells.
    """
    from psdbench.report.measures.analysis import set_key
    from psdbench.report.frame import as_dict, solver_label

    if not len(a) or not len(b):
        return pd.DataFrame(columns=CONFIG_COLUMNS)
    m = _matched(a, b)
    if m.empty:
        return pd.DataFrame(columns=CONFIG_COLUMNS)
    m["_set"] = [f"{p}: {d}" + (f" ({k})" if (k := set_key(as_dict(ip))) else "")
                 for p, d, ip in zip(m["problem_a"], m["dataset_a"], m["instance_params_a"])]
    m["_config"] = [solver_label(s, sp) for s, sp in zip(m["solver_a"], m["solver_params_a"])]
    metrics = sorted(c[:-2] for c in m.columns if c.startswith("metric_") and c.endswith("_a")
                     and f"{c[:-2]}_b" in m.columns)
    rows = []
    for (iset, config), g in m.groupby(["_set", "_config"], sort=True):
        ta, tb = (pd.to_numeric(g[f"wall_time_s_{s}"], errors="coerce") for s in "ab")
        ga, gb = (_ranked_gap(g[f"gap_abs_{s}"], g[f"reference_objective_{s}"]) for s in "ab")
        worse = []
        if (g["status_a"].isin(FINISHED) & ~g["status_b"].isin(FINISHED)).any():
            worse.append("status")
        med_a, med_b = float(ta.median()), float(tb.median())
        if med_a >= min_time and med_b > factor * med_a and med_b - med_a > _spread(ta):
            worse.append("time")
        lost = (ga.notna() & gb.isna()).any()
        if lost or (ga.notna().any() and gb.notna().any()
                    and float(gb.median()) - float(ga.median()) > max(gap_tol, _spread(ga))):
            worse.append("gap")
        for c in metrics:
            direction = (directions or {}).get((g["problem_a"].iloc[0], c[len("metric_"):]))
            if direction is None:
                continue
            va, vb = (pd.to_numeric(g[f"{c}_{s}"], errors="coerce").map(direction.cost) for s in "ab")
            if va.notna().any() and vb.notna().any():
                if float(vb.median()) - float(va.median()) > max(metric_tol, _spread(va)):
                    worse.append(c)
        rows.append({"instance_set": iset, "config": config, "cells": len(g), "time_a": med_a, "time_b": med_b,
                     "time_ratio": med_b / med_a if med_a > 0 else math.nan,
                     "gap_a": float(ga.median()), "gap_b": float(gb.median()), "worse": ",".join(worse)})
    return pd.DataFrame(rows, columns=CONFIG_COLUMNS)


#: The width ``psdbench compare`` fits its per-cell table to (``--format csv`` / ``json``: every column).
TABLE_WIDTH = 120


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)] + "~"


def cell_table(cells: pd.DataFrame, metrics: list[str] | None = None, width: int = TABLE_WIDTH) -> str:
    """The per-cell table in at most ``width`` columns: configuration, instance, seed, outcome (``ok>rejected``),
    times and their ratio, gap change, the change of each metric in ``metrics`` (``d_<name>``) and
    the flags; the configuration and instance columns are shortened (``~``) to fit."""
    from psdbench.report.measures.analysis import set_key
    from psdbench.report.frame import as_dict, solver_label

    if not len(cells):
        return "(no cells)"
    def num(v: Any) -> str:
        return "" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{float(v):.3g}"

    rows = []
    for _, r in cells.iterrows():
        k = set_key(as_dict(r["instance_params"]))
        row = {"config": solver_label(r["solver"], as_dict(r["solver_params"])),
               "instance": f"{r['problem']}: {r['dataset']}" + (f" ({k})" if k else ""), "seed": str(r["seed"]),
               "outcome": r["outcome_a"] if r["outcome_a"] == r["outcome_b"] else f"{r['outcome_a']}>{r['outcome_b']}",
               "time_a": num(r["time_a"]), "time_b": num(r["time_b"]), "ratio": num(r["time_ratio"]),
               "d_gap": num(r["gap_change"])}
        for m in metrics or []:
            row[f"d_{m}"] = num(r.get(f"d_metric_{m}", math.nan))
        row["flags"] = str(r["flags"])
        rows.append(row)
    cols = list(rows[0])
    widths = {c: max(len(c), *(len(x[c]) for x in rows)) for c in cols}
    spare = width - sum(widths.values()) - (len(cols) - 1) * 2
    for c in ("instance", "config", "flags"):  # shortened first, down to 12 characters each
        if spare < 0:
            cut = min(-spare, max(widths[c] - 12, 0))
            widths[c] -= cut
            spare += cut
    right = {"seed", "time_a", "time_b", "ratio", "d_gap", *(f"d_{m}" for m in metrics or [])}
    def fmt(c: str, v: str) -> str:
        return _fit(v, widths[c]).rjust(widths[c]) if c in right else _fit(v, widths[c]).ljust(widths[c])

    lines = ["  ".join(fmt(c, c) for c in cols).rstrip()]
    lines += ["  ".join(fmt(c, x[c]) for c in cols).rstrip() for x in rows]
    return "\n".join(_fit(line, width) for line in lines)
