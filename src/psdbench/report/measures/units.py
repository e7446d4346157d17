"""Comparable instance sets and the independent units a comparison counts, stated once.

* A **comparable instance set** is ``problem: dataset (size and structure parameters)``: the
  instance parameters that replicate an instance (:data:`REPLICATE_PARAMS`: folds, repetitions,
  seeds) do not split it (:func:`instance_sets`).
* A **unit** is what a comparison treats as one independent replicate (:func:`unit_keys`): an
  instance (its problem, dataset and every parameter, folds included), and its seed only where
  the seed changes the result: seeds nested in a fold (or another replicate parameter) are
  repetitions within it, and seeds whose results are the same (to :data:`SAME_RTOL`) are
  repetitions of one computation; either way they count once, their mean the unit's value.  The
  reached counts, the paired intervals of the findings and the winners' margins all count units.

Nothing here depends on another report module, so the tidy frame (:mod:`psdbench.report.frame`)
and the analyses can both use it.
"""

from __future__ import annotations

import json
from typing import Any, Sequence

import numpy as np
import pandas as pd

__all__ = ["REPLICATE_PARAMS", "SAME_RTOL", "instance_sets", "param_text", "set_key", "unit_keys"]

#: Instance parameters that replicate an instance (cross-validation folds, repetitions) rather than
#: change its size or structure: they do not split comparable sets.
REPLICATE_PARAMS: tuple[str, ...] = ("fold", "folds", "rep", "repeat", "replicate", "split", "trial", "seed")
#: Values of one configuration on the seeds of one instance description that agree to this relative
#: tolerance are one result: the seeds did not change it.
SAME_RTOL = 1e-9


def _value(v: Any) -> str:
    """A parameter value for reading: an integral float as an integer (``n=20``, not ``n=20.0``)."""
    return str(int(v)) if isinstance(v, float) and v.is_integer() and abs(v) < 1e15 else str(v)


def param_text(params: dict[str, Any]) -> str:
    """``k=v, ...`` over every parameter (sorted by name), values for reading."""
    return ", ".join(f"{k}={_value(params[k])}" for k in sorted(params))


def set_key(params: dict[str, Any]) -> str:
    """``k=v, ...`` over the instance parameters that are not replicates (sorted by name)."""
    return ", ".join(f"{k}={_value(params[k])}" for k in sorted(params) if k not in REPLICATE_PARAMS)


def instance_sets(frame: pd.DataFrame) -> pd.Series:
    """Per row, its comparable instance set: ``problem: dataset`` and :func:`set_key` of its parameters."""
    if frame.empty:
        return pd.Series([], dtype=str, index=frame.index)
    keys = frame["instance_params"].map(lambda d: set_key(d if isinstance(d, dict) else {}))
    base = frame["problem"].astype(str) + ": " + frame["dataset"].astype(str)
    return base + keys.map(lambda k: f" ({k})" if k else "")


def _description(frame: pd.DataFrame) -> pd.Series:
    """Per row, its instance without the seed: problem, dataset and every instance parameter."""
    params = frame["instance_params"].map(lambda d: json.dumps(d if isinstance(d, dict) else {}, sort_keys=True,
                                                               default=str))
    return frame["problem"].astype(str) + "\0" + frame["dataset"].astype(str) + "\0" + params


def _same(values: np.ndarray) -> bool:
    """Whether finite-or-NaN values are one result (NaN only with NaN, numbers to :data:`SAME_RTOL`)."""
    nan = ~np.isfinite(values)
    if nan.any():
        return bool(nan.all())  # a value on one seed and none on another: the seed changed the result
    return bool(np.all(np.abs(values - values[0]) <= SAME_RTOL * max(1.0, float(np.abs(values).max()))))


def unit_keys(frame: pd.DataFrame, values: Sequence[str] = ("objective",)) -> pd.Series:
    """Per row, the independent unit it belongs to (see the module docstring).

    The seeds of one instance description (problem, dataset, every instance parameter) are one unit
    when

    * the description has a replicate parameter (:data:`REPLICATE_PARAMS`: a fold, a split): the
      seeds are nested in it (the fold is the replicate; a solver's random start varies within
      it), or
    * the seeds changed nothing: every configuration's ``values`` and the reference objective are
      the same on every seed (to :data:`SAME_RTOL`): repetitions of one computation.

    Else each seed is a unit of its own (a seed that draws the instance).  A unit's value is the
    mean over its cells.

    Parameters
    ----------
    frame : DataFrame
        Rows with ``problem``, ``dataset``, ``instance_params``, ``seed``, ``solver_label``, the
        ``values`` columns and (optionally) ``reference_objective``.
    values : sequence of str
        The compared columns.

    Returns
    -------
    Series of str
        ``<instance description>`` where the seeds are one unit, else that and ``\0seed=<seed>``; an
        instance with one seed keeps its seed.
    """
    if frame.empty:
        return pd.Series([], dtype=str, index=frame.index)
    desc = _description(frame)
    seed = frame["seed"].astype(str) if "seed" in frame.columns else pd.Series("", index=frame.index)
    cols = [c for c in values if c in frame.columns]
    if "reference_objective" in frame.columns and "reference_objective" not in cols:
        cols.append("reference_objective")
    out = desc + "\0seed=" + seed
    if "seed" not in frame.columns:
        return out
    for d, g in frame.groupby(desc, sort=False):
        if g["seed"].nunique() < 2:
            continue
        params = g["instance_params"].iloc[0]
        nested = isinstance(params, dict) and any(k in REPLICATE_PARAMS for k in params)
        same = nested or all(_same(pd.to_numeric(h[c], errors="coerce").to_numpy(float))
                             for _, h in (g.groupby("solver_label", sort=False) if "solver_label" in g.columns
                                          else [(None, g)]) for c in cols if len(h) > 1)
        if same:
            out[g.index] = d
    return out
