"""What each instance's reference is, and how accurately it is known: one kind name and one accuracy
per reference, computed here once for every table.

Kinds (:data:`REFERENCE_KINDS`), from the store's ``refs`` row and the instance's chosen reference
objective (:func:`psdbench.harness.reference.choose_reference`):

``certified interval``
    the reference solve's exactly feasible point and a certified bound on the other side of the
    optimum, narrower than the certification tolerance;
``wide certified interval``
    the same, wider than that tolerance (a solve that ended inaccurate);
``certified one-sided bound``
    the reference solve's point (not exactly feasible) with a certified bound on the other side
    (the ``bound`` column; SDPLIB's gpp and qap);
``independent reference solve``
    the reference solve's own point without a bound;
``best verified: <configurations>``
    a competitor's own verified objective;
``none``
    no reference.

**Accuracy** (``known to``, :func:`accuracies`): how far the optimum may lie from the reference,
relative to ``max(|reference|, 1)``: the distance to the certified bound (an interval's width, a
one-sided bound's distance), else the relative spread of the reference's agreeing solves (the
``spread`` column), else the floor of a best-verified point (the largest verification allowance of
the instance's cells, :func:`psdbench.report.rules.allowance`).  A target tighter than it cannot be
resolved (:func:`psdbench.report.rules.resolution`).
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np
import pandas as pd

from psdbench.report import rules

__all__ = ["REFERENCE_KINDS", "reference_columns"]

#: What each reference kind shown beside a verdict means (the glossary's lines).
REFERENCE_KINDS: dict[str, str] = {
    "certified interval": "an exactly feasible point and a certified bound on the other side of the optimum, "
                          "narrower than the certification tolerance (known to its width)",
    "wide certified interval": "an exactly feasible point and a certified bound on the other side, wider than "
                               "the certification tolerance (known to its width: targets tighter are not resolved)",
    "certified one-sided bound": "the reference solve's point with a certified bound on the other side of the "
                                 "optimum and none on its own side (known to its distance from the bound)",
    "independent reference solve": "the reference solve's own point (not a competitor's), without a bound (known "
                                   "to the spread of its agreeing solves, else to the verification floor)",
    "best verified": "a competitor's own verified objective (known to the verification floor): no winner is "
                     "declared by gap against it",
    "none": "no reference: no gap",
}


def _num(v: Any) -> float:
    try:
        x = float(v)
    except (TypeError, ValueError):
        return math.nan
    return x if math.isfinite(x) else math.nan


def _refs_by_instance(refs: pd.DataFrame | None) -> dict[str, Mapping[str, Any]]:
    if refs is None or refs.empty or "instance_key" not in refs.columns:
        return {}
    return {str(r["instance_key"]): r for r in refs.to_dict("records")}


def reference_columns(frame: pd.DataFrame, refs: pd.DataFrame | None,
                      default: float = rules.DEFAULT_ALLOWANCE) -> pd.DataFrame:
    """Per row of a tidy frame, its instance's reference kind, accuracy and whether it is bounded.

    Parameters
    ----------
    frame : DataFrame
        Rows with ``instance_key``, ``reference_objective``, ``verified``, ``objective``,
        ``solver_label`` and ``metrics``.
    refs : DataFrame or None
        The store's ``refs`` table (``value``, ``lower``, ``bound``, ``spread``, ``kind``).
    default : float
        The verification allowance of cells that recorded none.

    Returns
    -------
    DataFrame
        ``reference_label`` (a key of :data:`REFERENCE_KINDS`, ``best verified: <labels>`` naming the
        configurations whose point it is), ``reference_accuracy`` (relative; NaN without a reference)
        and ``reference_bounded`` (a certified bound lies on the other side: a point below the
        reference by more than the accuracy is beyond it).
    """
    by_key = _refs_by_instance(refs)
    label = pd.Series("none", index=frame.index, dtype=object)
    acc = pd.Series(math.nan, index=frame.index, dtype=float)
    bounded = pd.Series(False, index=frame.index, dtype=bool)
    if frame.empty:
        return pd.DataFrame({"reference_label": label, "reference_accuracy": acc, "reference_bounded": bounded})
    ref = pd.to_numeric(frame["reference_objective"], errors="coerce").astype(float)
    allow = frame["metrics"].map(lambda m: rules.allowance(m.get("tolerances") if isinstance(m, Mapping) else None,
                                                           default))
    for key, g in frame.groupby("instance_key", sort=False):
        r = ref[g.index].dropna()
        if r.empty:
            continue
        v = float(r.iloc[0])
        row = by_key.get(str(key), {})
        solve, lower, bound, spread = (_num(row.get(c)) for c in ("value", "lower", "bound", "spread"))
        stored = str(g["reference_kind"].dropna().iloc[0]) if g["reference_kind"].notna().any() else ""
        scale = max(abs(v), 1.0)
        own = math.isfinite(solve) and math.isclose(solve, v, rel_tol=1e-12, abs_tol=1e-300)
        floor = float(allow[g.index].max())
        if math.isfinite(lower):
            a, b = abs(v - lower) / scale, True
        elif math.isfinite(bound):
            a, b = abs(v - bound) / scale, True
        elif own and math.isfinite(spread):
            a, b = abs(spread), False
        elif stored == "certified":
            a, b = math.nan, True  # certified, its interval not at hand (no refs row): the cell's own floor
        else:
            a, b = floor, False
        if stored == "certified" or (own and math.isfinite(lower)):
            name = "certified interval" if stored == "certified" or a <= _certified_rtol() else "wide certified interval"
        elif own and math.isfinite(bound):
            name = "certified one-sided bound"
        elif own:
            name = "independent reference solve"
        else:
            mine = g[g["verified"].astype(bool) & np.isclose(pd.to_numeric(g["objective"], errors="coerce")
                                                             .astype(float), v, rtol=1e-12, atol=0)]
            name = "best verified: " + ", ".join(sorted(mine["solver_label"].unique())) if len(mine) \
                else "best verified"
        label[g.index], acc[g.index], bounded[g.index] = name, a, b
    return pd.DataFrame({"reference_label": label, "reference_accuracy": acc, "reference_bounded": bounded})


def _certified_rtol() -> float:
    from psdbench.harness.floor import CERTIFIED_RTOL

    return CERTIFIED_RTOL
