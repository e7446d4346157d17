"""The tidy frame every report section reads: one row per cell, parameters and metrics as columns.

:func:`tidy_frame` is the only place where the store's JSON columns are unpacked for the report.
"""

from __future__ import annotations

import json
import math
from typing import Any, Mapping, Sequence

import numpy as np
import pandas as pd

from psdbench import api

from . import rules
from .fmt import MISSING
from psdbench.report.measures.gap import REF_FLOOR, relative_gap  # noqa: F401 (re-exported)
from psdbench.report.measures.references import reference_columns
from psdbench.report.measures.units import instance_sets, unit_keys

#: Columns every tidy frame has, whatever the store held.
BASE_COLUMNS = ("run_id", "cell_key", "instance_key", "problem", "dataset", "seed", "solver", "status", "message",
                "reference_kind", "instance_params", "solver_params", "metrics")
NUMERIC_COLUMNS = ("seed", "wall_time_s", "cpu_time_s", "peak_rss_mb", "iterations", "objective",
                   "reference_objective", "gap_abs", "gap_rel", "gap_scale", "gap_scaled", "feasible", "min_eig",
                   "max_residual", "time_limit_s")


def as_dict(v: Any) -> dict[str, Any]:
    """A dict column value: dicts as they are, JSON object strings decoded, anything else ``{}``."""
    if isinstance(v, dict):
        return v
    if isinstance(v, str) and v.strip():
        try:
            d = json.loads(v)
        except ValueError:
            return {}
        return d if isinstance(d, dict) else {}
    return {}


def as_points(v: Any, keys: Sequence[str]) -> list[dict[str, float]]:
    """A JSON list-of-points column value (``curve``, ``trace``) as the points that carry ``keys``
    (``[]`` when absent or malformed)."""
    if isinstance(v, str) and v.strip():
        try:
            v = json.loads(v)
        except ValueError:
            return []
    if not isinstance(v, (list, tuple)):
        return []
    return [p for p in v if isinstance(p, dict) and set(keys) <= set(p)]


def as_curve(v: Any) -> list[dict[str, float]]:
    """A ``curve`` column value as a list of points (``[]`` when absent or malformed)."""
    return as_points(v, ("t", "objective"))


def solver_label(name: str, params: Any) -> str:
    """``<solver> (k1=v1, k2=v2)``: one row per solver configuration.

    The label lists the parameters the grid set (the stored ``solver_params``), sorted by name.
    """
    params = as_dict(params)
    if not params:
        return str(name)
    return f"{name} (" + ", ".join(f"{k}={params[k]}" for k in sorted(params)) + ")"


def _defaults(objs: Mapping[str, Any], name: str) -> dict[str, Any]:
    obj = objs.get(name)
    return {} if obj is None else {k: p.default for k, p in api.param_specs(obj).items()}


def _param_columns(names: pd.Series, params: pd.Series, objs: Mapping[str, Any], prefix: str) -> pd.DataFrame:
    rows = []
    for name, p in zip(names, params):
        rows.append({f"{prefix}{k}": v for k, v in {**_defaults(objs, str(name)), **as_dict(p)}.items()})
    out = pd.DataFrame(rows, index=names.index)
    for c in out.columns:  # numeric where every present value is a number
        vals = out[c].dropna()
        if len(vals) and all(isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in vals):
            out[c] = pd.to_numeric(out[c], errors="coerce")
    return out


def _instance_references(df: pd.DataFrame, refs: pd.DataFrame | None) -> tuple[pd.Series, pd.Series]:
    """Per row: its instance's reference (first recorded on a cell, else the refs table) and kind."""
    have = df.dropna(subset=["reference_objective"])
    value = have.groupby("instance_key")["reference_objective"].first()
    kind = have.groupby("instance_key")["reference_kind"].agg(
        lambda s: ", ".join(sorted({str(k) for k in s.dropna() if str(k)})))
    if refs is not None and not refs.empty and {"instance_key", "value"} <= set(refs.columns):
        r = refs[~refs["instance_key"].isin(set(value.index))]
        r = r.assign(value=pd.to_numeric(r["value"], errors="coerce")).dropna(subset=["value"])
        if len(r):
            value = pd.concat([value, r.groupby("instance_key")["value"].first()])
            rk = r["kind"] if "kind" in r.columns else pd.Series("", index=r.index)
            kind = pd.concat([kind, rk.fillna("").astype(str).groupby(r["instance_key"]).first()])
    return df["instance_key"].map(value).astype(float), df["instance_key"].map(kind)


def canonical_json(value: Any) -> str:
    """JSON text in a canonical form (sorted keys), so that equal parameters compare equal whether
    they come as dicts or as JSON strings."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return value
    return json.dumps(value, sort_keys=True, default=str)


def drop_superseded(raw: pd.DataFrame) -> pd.DataFrame:
    """The latest row of each cell *description* (problem, dataset, seed, solver and both parameter sets).

    A cell's key also hashes the dataset's content and the library versions, so after a data file
    is corrected (or a library upgraded) the store holds the old cell beside the new one; a report
    shows only the newest, so stale results never mix into its tables.
    """
    need = ["problem", "dataset", "seed", "solver", "instance_params", "solver_params", "created_at"]
    if raw.empty or any(c not in raw.columns for c in need):
        return raw
    canon = canonical_json
    desc = (raw["problem"].astype(str) + "\0" + raw["dataset"].astype(str) + "\0" + raw["seed"].astype(str) + "\0"
            + raw["solver"].astype(str) + "\0" + raw["instance_params"].map(canon) + "\0"
            + raw["solver_params"].map(canon))
    order = raw.assign(_desc=desc).sort_values("created_at", kind="stable")
    return order.drop_duplicates("_desc", keep="last").drop(columns="_desc").sort_index()


def tidy_frame(raw: pd.DataFrame, refs: pd.DataFrame | None = None, problems: Mapping[str, Any] | None = None,
               solvers: Mapping[str, Any] | None = None,
               allowance: float = rules.DEFAULT_ALLOWANCE) -> pd.DataFrame:
    """One row per cell with parameters, metrics and derived columns.

    Parameters
    ----------
    raw : DataFrame
        ``store.results_frame()`` (or rows shaped like it; JSON columns as dicts or JSON strings).
    refs : DataFrame, optional
        ``store.references_frame()``: fills ``instance_reference`` for instances whose cells carry none.
    problems, solvers : mapping, optional
        Registered objects by name: their declared parameter defaults fill ``p_`` / ``s_`` columns and
        the problem gives ``family`` and ``sense``.  Unknown names get no defaults, ``family`` = the
        problem name and ``sense`` = ``min``.
    allowance : float
        The verification allowance of cells whose ``verify`` recorded no tolerance (report option
        ``gap_floor``; :func:`psdbench.report.rules.allowance`).

    Returns
    -------
    DataFrame
        The store's columns (numeric ones coerced, ``metric_<name>`` flattened and coerced) and

        ``p_<name>`` / ``s_<name>``
            instance / solver parameters, declared defaults filled in;
        ``solver_label``
            :func:`solver_label`;
        ``family``, ``sense``
            from :func:`psdbench.api.problem_family` / :func:`psdbench.api.problem_sense`;
        ``gap``
            :func:`relative_gap` of the final objective (sense-adjusted, NaN without reference);
        ``below_certified``, ``gap_scale``, ``gap_scaled``
            as :func:`psdbench.harness.reference.annotate` gave them (``False`` / NaN when absent);
        ``verified``
            the final point passed verification (``feasible == 1``) and has a finite objective;
        ``cert_width_rel``
            the width of the instance's certificate ``|p* - lower| / max(|p*|, REF_FLOOR)`` (NaN
            without a certified reference);
        ``reference_label``, ``reference_accuracy``, ``reference_bounded``
            the instance reference's one kind name, how accurately it is known and whether a certified
            bound lies on the other side (:func:`psdbench.report.measures.references.reference_columns`);
        ``floor``, ``ranked_gap``
            :func:`psdbench.report.rules.floor` of the cell (the reference's accuracy and the cell's
            verification allowance, repair allowance) and the gap it is ranked by (:func:`psdbench.report.rules.ranked_gap`;
            NaN unless verified, and beyond the bound);
        ``resolution``, ``set_accuracy``
            the largest floor and the largest reference accuracy over the cells with a reference of the
            row's comparable instance set (:func:`psdbench.report.measures.units.instance_sets`): targets tighter
            than ``resolution`` are not resolved (:func:`psdbench.report.rules.resolves`);
        ``unit``
            the row's independent unit (:func:`psdbench.report.measures.units.unit_keys` over the objective and
            the reference: seeds count only where they change them);
        ``instance_reference``, ``instance_reference_kind``
            the instance's reference value and kinds (cells first, then ``refs``);
        ``curve``
            the list of re-scored points (``[]`` when the store has none).
    """
    problems, solvers = problems or {}, solvers or {}
    df = raw.copy().reset_index(drop=True)
    for c in BASE_COLUMNS:
        if c not in df.columns:
            df[c] = None
    for c in NUMERIC_COLUMNS:
        df[c] = pd.to_numeric(df[c], errors="coerce") if c in df.columns else np.nan
    df["below_certified"] = (df["below_certified"].fillna(False).astype(bool) if "below_certified" in df.columns
                             else False)
    for c in ("instance_params", "solver_params", "metrics"):
        df[c] = df[c].map(as_dict)
    if not any(c.startswith("metric_") for c in df.columns) and len(df):
        met = pd.json_normalize(df["metrics"].tolist()).add_prefix("metric_")
        met.index = df.index
        df = pd.concat([df, met], axis=1)
    for c in [c for c in df.columns if c.startswith("metric_")]:
        df[c] = pd.to_numeric(df[c], errors="coerce")
    for c in ("problem", "dataset", "solver", "status"):
        df[c] = df[c].map(key_str)
    df["instance_key"] = df["instance_key"].fillna(df["cell_key"]).fillna("").astype(str)
    df["curve"] = df["curve"].map(as_curve) if "curve" in df.columns else [[] for _ in range(len(df))]
    if len(df):
        df = pd.concat([df, _param_columns(df["problem"], df["instance_params"], problems, "p_"),
                        _param_columns(df["solver"], df["solver_params"], solvers, "s_")], axis=1).copy()
    df["solver_label"] = [solver_label(n, p) for n, p in zip(df["solver"], df["solver_params"])]
    df["family"] = df["problem"].map(lambda p: api.problem_family(problems[p]) if p in problems else p)
    df["sense"] = df["problem"].map(lambda p: api.problem_sense(problems[p]) if p in problems else "min")
    df["verified"] = (df["feasible"] == 1) & np.isfinite(df["objective"].astype(float))
    # a gap only for a verified point (the store's gap_rel likewise): a rejected cell has none
    df["gap"] = [relative_gap(o, r, s) if v else math.nan
                 for o, r, s, v in zip(df["objective"], df["reference_objective"], df["sense"], df["verified"])]
    df["cert_width_rel"] = df["instance_key"].map(certificate_widths(refs)).astype(float)
    ref_cols = reference_columns(df, refs, float(allowance))
    for c in ref_cols.columns:
        df[c] = ref_cols[c]
    df["floor"] = rules.floors(df, float(allowance))
    sets = instance_sets(df)
    df["resolution"] = df["floor"].where(np.isfinite(df["reference_objective"].astype(float))).groupby(
        sets).transform("max") if len(df) else np.nan
    df["set_accuracy"] = df["reference_accuracy"].groupby(sets).transform("max") if len(df) else np.nan
    df["unit"] = unit_keys(df, ("objective", "reference_objective")) if len(df) else pd.Series(dtype=str)
    certified = df["reference_bounded"].to_numpy(bool) | df["reference_kind"].astype(str).str.contains(
        "certified").to_numpy()
    df["ranked_gap"] = np.where(df["verified"], rules.ranked_gaps(df["gap"].to_numpy(float), df["floor"].to_numpy(float),
                                                                  certified), np.nan) if len(df) else np.nan
    if len(df):
        df["instance_reference"], df["instance_reference_kind"] = _instance_references(df, refs)
    else:
        df["instance_reference"], df["instance_reference_kind"] = np.nan, None
    return df.copy()  # one block per dtype: sections add columns without fragmentation warnings


def certificate_widths(refs: pd.DataFrame | None) -> dict[str, float]:
    """Per instance with a certified reference: ``|value - lower| / max(|value|, REF_FLOOR)``."""
    if refs is None or refs.empty or not {"instance_key", "value", "lower", "kind"} <= set(refs.columns):
        return {}
    out = {}
    for k, v, lo, kind in zip(refs["instance_key"], refs["value"], refs["lower"], refs["kind"]):
        try:
            v, lo = float(v), float(lo)
        except (TypeError, ValueError):
            continue
        if kind == "certified" and math.isfinite(v) and math.isfinite(lo):
            out[str(k)] = abs(v - lo) / max(abs(v), REF_FLOOR)
    return out


def key_str(v: Any) -> str:
    """A key column value as a string (``-`` for None / NaN)."""
    return MISSING if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
