"""The gap of a point to its instance's reference, stated once for the report.

``gap = s (objective - reference) / max(|reference|, REF_FLOOR)``, ``s = -1`` when the problem
maximizes: relative where the optimum's magnitude exceeds 1, absolute below.  Every table, curve and
profile ranks by it (through :func:`psdbench.report.rules.ranked_gap`, which applies the floor); the
store's ``gap_abs`` / ``gap_rel`` columns are the harness's own (:mod:`psdbench.harness.reference`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

#: Gaps in curves and profiles are ``(objective - reference) / max(|reference|, REF_FLOOR)``: relative
#: where the optimum's magnitude exceeds 1, absolute below (an optimum of 0, as on many metric-learning
#: folds, would make a purely relative gap of 1e-4 mean 1e-16 in objective).  The store's ``gap_rel``
#: column keeps its own definition.
REF_FLOOR = 1.0


def relative_gap(objective: Any, reference: Any, sense: str) -> float:
    """``s * (objective - reference) / max(|reference|, REF_FLOOR)`` with ``s = -1`` for ``max``; NaN if unknown."""
    try:
        o, r = float(objective), float(reference)
    except (TypeError, ValueError):
        return float("nan")
    if not (math.isfinite(o) and math.isfinite(r)):
        return float("nan")
    return (-1.0 if sense == "max" else 1.0) * (o - r) / max(abs(r), REF_FLOOR)


def gaps(objective: np.ndarray, reference: float, sense: str) -> np.ndarray:
    """:func:`relative_gap` of an array of objectives."""
    with np.errstate(invalid="ignore"):
        return (-1.0 if sense == "max" else 1.0) * (objective - reference) / max(abs(reference), REF_FLOOR)
