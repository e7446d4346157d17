"""The floor of a verified point: how far below its reference it may lie and still be the optimum.

The rule is stated here once, where both its users can import it: the harness, which picks a
best-verified reference among points (:mod:`psdbench.harness.reference`), and the report, whose
verdicts rank gaps against it (:mod:`psdbench.report.rules` re-exports these and states the verdicts
built on them: tie at 0, beyond the bound, resolution).

``floor = max(reference accuracy, verification allowance, repair allowance)``:

* the reference's accuracy, relative (a certificate's width, a one-sided bound's distance); a
  reference whose interval is narrower than :data:`CERTIFIED_RTOL` is certified;
* the verification allowance: the largest tolerance the cell's ``verify`` recorded
  (``metrics["tolerances"]``), :data:`DEFAULT_ALLOWANCE` where it recorded none.  A point that
  passes at tolerance ``eps`` may sit about ``eps`` below the optimum; this is not a bound, since the
  objective can move with the square root of a violation;
* the repair allowance: where a family repairs points (``api.repair``), the harness repairs every
  verified point to an exactly feasible one, which cannot beat the optimum, and records how much worse
  its objective is (``metrics["objective_allowance"]``): a measured bound on how far the point may lie
  beyond the optimum, relative to ``max(|reference|, 1)`` as gaps are.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

__all__ = ["CERTIFIED_RTOL", "DEFAULT_ALLOWANCE", "allowance", "floor", "repair_allowance"]

#: A reference interval [lower, upper] narrower than this, relative to max(1, |upper|), is certified.
CERTIFIED_RTOL = 1e-5
#: Verification allowance of a cell whose ``verify`` recorded no tolerance (report option ``gap_floor``).
DEFAULT_ALLOWANCE = 1e-7


def allowance(tolerances: Mapping[str, Any] | None, default: float = DEFAULT_ALLOWANCE) -> float:
    """The verification allowance of one cell: the largest absolute tolerance its ``verify`` recorded.

    Parameters
    ----------
    tolerances : mapping or None
        ``metrics["tolerances"]`` of the cell (name to number; non-numbers are ignored).
    default : float
        Returned when no finite positive tolerance is recorded.

    Returns
    -------
    float
    """
    vals = []
    for v in (tolerances or {}).values() if isinstance(tolerances, Mapping) else ():
        try:
            x = abs(float(v))
        except (TypeError, ValueError):
            continue
        if math.isfinite(x) and x > 0:
            vals.append(x)
    return max(vals) if vals else float(default)


def _known(x: float | None) -> float:
    """``|x|``, 0 for a missing or NaN value."""
    return 0.0 if x is None or not math.isfinite(float(x)) else abs(float(x))


def floor(cert_width: float | None, allowance_: float, repaired: float | None = None) -> float:
    """``max(certificate width, verification allowance, repair allowance)``; a missing or NaN
    width or repair allowance counts as 0.

    Parameters
    ----------
    cert_width : float or None
        ``|value - lower| / max(|value|, 1)`` of the instance's certified reference.
    allowance_ : float
        :func:`allowance` of the cell.
    repaired : float or None
        :func:`repair_allowance` of the cell: how far its point may lie beyond the optimum,
        measured by its repair (relative).

    Returns
    -------
    float
    """
    return max(_known(cert_width), float(allowance_), _known(repaired))


def repair_allowance(metrics: Mapping[str, Any] | None, reference: float) -> float:
    """``metrics["objective_allowance"] / max(|reference|, 1)``: the repair allowance of one cell,
    relative as gaps are; NaN where the harness recorded none or the reference is unknown."""
    try:
        a, r = float((metrics or {}).get("objective_allowance")), float(reference)
    except (TypeError, ValueError):
        return math.nan
    return a / max(abs(r), 1.0) if math.isfinite(a) and math.isfinite(r) else math.nan
