"""The verdict rules of every comparison, stated once: reached, tie at 0, beyond the bound, the
shifted geometric mean, the resolution of a target, the margin and its tie, and the one rule for
"better", "within the spread" and "does not hold" (units: :mod:`psdbench.report.measures.units`).

Every table and chart that says whether a configuration reached an accuracy, or how fast, calls
these functions: the winners matrix, the profiles and their SGM tables, the family sections and the
table of points beyond a certified bound.  Nothing else decides a verdict.

Definitions
-----------
gap
    ``s (objective - reference) / max(|reference|, 1)`` of a *verified* point (``s = -1`` when the
    problem maximizes): :func:`psdbench.report.measures.gap.relative_gap`.  Unverified points have none.
floor
    ``max(reference accuracy, verification allowance, repair allowance)``: stated in
    :mod:`psdbench.harness.floor` (where the harness's best-verified reference rule uses it too) and
    re-exported here (:func:`floor`, :func:`allowance`, :func:`repair_allowance`,
    :data:`DEFAULT_ALLOWANCE`); the reference's accuracy is :mod:`psdbench.report.measures.references`
    (a certificate's width ``|value - lower| / max(|value|, 1)``, a one-sided bound's distance, the
    spread of agreeing solves, else the floor of a best-verified point).  :func:`floors` applies it
    to every row of a tidy frame.
ranked gap
    :func:`ranked_gap`: the gap where it is ``>= 0``; ``0`` (a *tie at 0*) for a point below the
    reference by at most the floor; below by more the point is *beyond the bound* and has no ranked
    gap: below a **certified** reference it beats a proven bound (a tolerance, not the solver, put it
    there); below a best-verified reference it is a point the reference rule set aside because a more
    accurate point disagrees with it by more than the floor (:func:`psdbench.harness.reference.choose_reference`,
    which lists it).
reached
    A verified point reaches tolerance ``t`` when its ranked gap is ``<= t`` (:func:`reaches`); a
    cell reaches ``t`` at the first curve point that does (:func:`reach_times`), else at its wall
    time when its verified final point does.  A cell whose final point is beyond the bound reaches
    nothing.
shifted geometric mean
    :func:`shifted_geomean`: ``exp(mean(log(t_i + shift))) - shift`` over the instances of **one**
    comparable instance set, an instance not reached charged at **its own cell's recorded time
    limit** (a cell stored without one: the longest wall time of the set, said so where shown).
    The shift is :func:`set_shift`: 10 s (Mittelmann's benchmarks) scaled down to the set, the median
    over its instances of the fastest configuration's time, at least :data:`MIN_SHIFT`; so a set of
    millisecond solves is compared by its times, not by its failure count, and adding an instance
    set never changes another set's score.
resolution
    :func:`resolution`: the largest floor of a set's cells; a target tighter is not resolved
    (:func:`resolves`, :func:`unresolved_text`): no winner, no score.
margin and tie
    :func:`margin`: paired over units, those both failed left out; a tie needs a unit on which the
    runner-up reached the target at least as fast.  A winner whose margin is below 1 (the runner-up
    faster where either reached) is shown with what it won on (:func:`won_on`: the reached count, or
    the SGM), never as a tie or as faster.
better / within the spread / does not hold
    :func:`claim_verdict` of the 95 % Student-t interval of the mean paired difference over the
    units (:func:`paired_verdict`); the winners by a declared metric and every finding use it.
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Mapping, NamedTuple, Sequence

import numpy as np
import pandas as pd

from psdbench.harness.floor import DEFAULT_ALLOWANCE, allowance, floor, repair_allowance

__all__ = ["DEFAULT_ALLOWANCE", "FAILS", "HOLDS", "LEVEL", "MAX_SHIFT", "MIN_SHIFT", "Margin", "NOT_MEASURED",
           "TOLERANCES", "VERDICTS", "WITHIN", "allowance", "claim_verdict", "configured_for", "floor", "floors", "repair_allowance",
           "margin", "paired_verdict", "ranked_gap", "ranked_gaps", "reach_times_of_curve", "reaches",
           "resolution", "resolves", "set_shift", "shifted_geomean", "stopping_tolerance", "unresolved_text",
           "verdict", "won_on"]

#: The target accuracies (ranked gap) of the winners matrix and the profiles.
TOLERANCES: tuple[float, ...] = (1e-2, 1e-4, 1e-6)
#: The shift of a set whose times are long (Mittelmann's benchmarks, the SCS benchmark pages): seconds.
MAX_SHIFT = 10.0
#: The smallest shift (seconds): the resolution of the wall-clock times compared.
MIN_SHIFT = 1e-3

#: What each verdict word means, in display order.
VERDICTS: dict[str, str] = {
    "reached": "verified, ranked gap at most the target",
    "tie at 0": "verified, below the reference by at most the floor: counted as gap 0 (reached)",
    "not reached": "verified, ranked gap above the target",
    "beyond the bound": "verified, below a certified bound by more than the floor: marked, never reached",
    "below a more accurate point": "verified, below a best-verified reference by more than the floor (a more "
                                   "accurate point disagrees with it): marked, never reached",
    "no gap": "no verified point, or no reference",
}


def floors(frame: pd.DataFrame, default: float = DEFAULT_ALLOWANCE) -> pd.Series:
    """:func:`floor` of every row of a tidy frame: its ``reference_accuracy`` (older frames:
    ``cert_width_rel``), the allowance of its ``metrics`` and their repair allowance against its
    ``reference_objective``."""
    if frame.empty:
        return pd.Series([], dtype=float, index=frame.index)
    col = "reference_accuracy" if "reference_accuracy" in frame.columns else "cert_width_rel"
    width = pd.to_numeric(frame[col], errors="coerce") if col in frame.columns \
        else pd.Series(np.nan, index=frame.index)
    mets = frame["metrics"] if "metrics" in frame.columns else pd.Series([{}] * len(frame), index=frame.index)
    refs = pd.to_numeric(frame["reference_objective"], errors="coerce") if "reference_objective" in frame.columns \
        else pd.Series(np.nan, index=frame.index)
    return pd.Series([floor(w, allowance(m.get("tolerances") if isinstance(m, Mapping) else None, default),
                            repair_allowance(m if isinstance(m, Mapping) else None, r))
                      for w, m, r in zip(width, mets, refs)], index=frame.index, dtype=float)


def ranked_gaps(gap: Any, floor_: Any, certified: Any) -> np.ndarray:
    """:func:`ranked_gap` of arrays (broadcast): the gap, 0 for a tie, NaN beyond the bound or unknown.

    ``certified`` is accepted for symmetry with :func:`verdict` (the cut is the same for both kinds)."""
    g = np.asarray(gap, float)
    fl = np.asarray(floor_, float)
    np.asarray(certified, bool)  # the rule is the same for both kinds; the verdict's word differs
    out = np.where(g >= 0, g, 0.0)
    return np.where(np.isfinite(g) & ~(g < -fl), out, np.nan)


def ranked_gap(gap: float, floor_: float, certified: bool) -> float:
    """The gap a verified point is ranked by.

    Parameters
    ----------
    gap : float
        Its gap (NaN: unverified or no reference).
    floor_ : float
        :func:`floor` of its cell.
    certified : bool
        Whether the reference is certified (a proven bound on the other side of the optimum).

    Returns
    -------
    float
        ``gap`` when ``gap >= 0``; ``0`` when below the reference by at most ``floor_`` (a tie at 0);
        NaN when below it by more (beyond the bound) or when ``gap`` is NaN.
    """
    return float(ranked_gaps(gap, floor_, certified))


def verdict(gap: float, tol: float, floor_: float, certified: bool) -> str:
    """The verdict of one verified point at target ``tol``: a key of :data:`VERDICTS`."""
    if not math.isfinite(gap):
        return "no gap"
    r = ranked_gap(gap, floor_, certified)
    if not math.isfinite(r):
        return "beyond the bound" if certified else "below a more accurate point"
    if r > tol:
        return "not reached"
    return "tie at 0" if gap < 0 else "reached"


def reaches(gap: float, tol: float, floor_: float, certified: bool) -> bool:
    """Whether a verified point with this gap reaches ``tol``: its :func:`ranked_gap` is ``<= tol``."""
    r = ranked_gap(gap, floor_, certified)
    return math.isfinite(r) and r <= tol


def reach_times_of_curve(t: np.ndarray, gap: np.ndarray, feasible: np.ndarray, tols: Sequence[float],
                         floor_: float, certified: bool, wall_time: float, final_gap: float,
                         final_verified: bool) -> list[float]:
    """Seconds until a cell reaches each of ``tols`` (``inf``: never).

    Parameters
    ----------
    t, gap, feasible : array
        The cell's re-scored curve: times, gaps, whether each point verified.
    tols : sequence of float
    floor_ : float
        :func:`floor` of the cell.
    certified : bool
        Whether the instance's reference is certified.
    wall_time, final_gap : float
        The cell's wall time and its final point's gap.
    final_verified : bool
        Whether the final point verified.

    Returns
    -------
    list of float
        Per tolerance, the first curve time whose point :func:`reaches` it, else ``wall_time`` when the
        final point does, else ``inf``.  A cell whose final point is beyond the bound reaches nothing.
    """
    if final_verified and math.isfinite(final_gap) and not math.isfinite(ranked_gap(final_gap, floor_, certified)):
        return [math.inf] * len(tols)
    r = ranked_gaps(gap, floor_, certified)
    ok = np.asarray(feasible, bool) & np.isfinite(r) & np.isfinite(np.asarray(t, float))
    order = np.argsort(np.asarray(t, float)[ok], kind="stable")
    tt, rr = np.asarray(t, float)[ok][order], r[ok][order]
    fr = ranked_gap(final_gap, floor_, certified) if final_verified else math.nan
    out = []
    for tol in tols:
        hit = np.flatnonzero(rr <= tol)
        if len(hit):
            out.append(float(tt[hit[0]]))
        elif math.isfinite(fr) and fr <= tol and math.isfinite(wall_time):
            out.append(float(wall_time))
        else:
            out.append(math.inf)
    return out


def shifted_geomean(times: Iterable[float], limits: Any, shift: float) -> float:
    """The shifted geometric mean of one instance set's times, failures charged at their time limits.

    Parameters
    ----------
    times : iterable of float
        Seconds to reach the target, one per instance (``inf`` / NaN: not reached).
    limits : float or iterable of float
        The time limit of each instance's cell (one number: the same for all).  A time above its
        limit counts as the limit.
    shift : float
        Seconds (:func:`set_shift`).

    Returns
    -------
    float
        ``exp(mean(log(min(t_i, L_i) + shift))) - shift``, ``t_i`` not reached counted as ``L_i``;
        NaN for no instance.
    """
    t = np.asarray(list(times), float)
    if not len(t):
        return math.nan
    lim = np.broadcast_to(np.asarray(list(limits) if not np.isscalar(limits) else limits, float), t.shape)
    t = np.where(np.isfinite(t), np.minimum(t, lim), lim)
    return float(np.exp(np.mean(np.log(t + shift))) - shift)


def set_shift(best_times: Iterable[float]) -> float:
    """The shift of one instance set's geometric means.

    Parameters
    ----------
    best_times : iterable of float
        Per instance of the set, the fastest configuration's time (to the target, or its wall time).

    Returns
    -------
    float
        The median of the finite ones, clipped to ``[MIN_SHIFT, MAX_SHIFT]``: Mittelmann's 10 s for
        sets that take minutes, the set's own scale below (``MAX_SHIFT`` when none is finite).
    """
    b = np.asarray(list(best_times), float)
    b = b[np.isfinite(b)]
    if not len(b):
        return MAX_SHIFT
    return float(np.clip(np.median(b), MIN_SHIFT, MAX_SHIFT))


class Margin(NamedTuple):
    """How much faster a winner is than its runner-up (:func:`margin`)."""

    ratio: float
    low: float
    high: float
    tie: bool
    shared_failures: int


def margin(winner: Sequence[float], runner_up: Sequence[float], limits: Any) -> Margin:
    """How much faster the winner is than the runner-up, paired over the set's units.

    Parameters
    ----------
    winner, runner_up : sequence of float
        Their times per unit (same order; ``inf``: not reached, charged at the limit).
    limits : float or sequence of float
        The units' time limits.

    Returns
    -------
    Margin
        ``ratio``, ``low``, ``high``: geometric mean, min and max of ``runner_up / winner`` (times
        clipped to their limit, at least :data:`MIN_SHIFT`) over the units on which at least one of
        the two reached the target; a unit both failed (both charged the limit) says nothing about
        which is faster and is left out (``shared_failures`` counts them; NaN ratios when no unit is
        left).  ``tie``: the evidence of a tie, a unit on which the runner-up **reached** the target at
        least as fast as the winner (a winner that failed there counts its limit).
    """
    w0 = np.asarray(list(winner), float)
    r0 = np.asarray(list(runner_up), float)
    if not len(w0):
        return Margin(math.nan, math.nan, math.nan, False, 0)
    lim = np.broadcast_to(np.asarray(list(limits) if not np.isscalar(limits) else limits, float), w0.shape)
    w = np.maximum(np.where(np.isfinite(w0), np.minimum(w0, lim), lim), MIN_SHIFT)
    r = np.maximum(np.where(np.isfinite(r0), np.minimum(r0, lim), lim), MIN_SHIFT)
    informative = np.isfinite(w0) | np.isfinite(r0)
    shared = int((~informative).sum())
    tie = bool(np.any(np.isfinite(r0) & (r <= w)))
    if not informative.any():
        return Margin(math.nan, math.nan, math.nan, tie, shared)
    q = r[informative] / w[informative]
    return Margin(float(np.exp(np.mean(np.log(q)))), float(q.min()), float(q.max()), tie, shared)


def won_on(m: Margin, reached: int, runner_reached: int) -> str:
    """What a winner won on, when its own margin calls it slower (``""`` otherwise).

    The winner is the smallest SGM, which charges a unit not reached at its time limit; the margin
    compares the two on the units either reached.  When the margin is below 1 (the runner-up is
    faster there) the winner is never shown as simply faster: it ``"won on reached count"`` when it
    reached the target on more units, else ``"won on SGM"`` (the shift and the limits decided).

    Parameters
    ----------
    m : Margin
        :func:`margin` of the runner-up's times over the winner's.
    reached, runner_reached : int
        Units on which the winner and the runner-up reached the target.

    Returns
    -------
    str
    """
    if not (math.isfinite(m.ratio) and m.ratio < 1):
        return ""
    return "won on reached count" if reached > runner_reached else "won on SGM"


def resolution(floors_: Iterable[float]) -> float:
    """The finest target a set of cells resolves: the largest of their floors (:func:`floor`: the
    reference's accuracy, the verification and the repair allowance); NaN when none is known."""
    f = np.asarray([float(x) for x in floors_], float)
    f = f[np.isfinite(f)]
    return float(f.max()) if len(f) else math.nan


def resolves(tol: float, resolution_: float) -> bool:
    """Whether target ``tol`` is resolved: not tighter than the resolution (an unknown one resolves)."""
    return not (math.isfinite(resolution_) and tol < resolution_)


def unresolved_text(known_to: float, by_reference: bool) -> str:
    """``"not resolved by the reference (known to 2.4e-2)"``, or by the verification floor."""
    return (f"not resolved by the reference (known to {known_to:.2g})" if by_reference
            else f"not resolved: verification floor {known_to:.2g}")


#: The words of a comparison's verdict (:func:`claim_verdict`).
HOLDS, FAILS, WITHIN, NOT_MEASURED = "holds", "does not hold", "within the spread", "not measured in this run"
#: The confidence level of every paired interval.
LEVEL = 0.95


def claim_verdict(low: float, high: float, threshold: float, relation: str = ">=") -> str:
    """The one rule for "better" / "within the spread" / "does not hold": a claim ``value relation
    threshold`` read from an interval ``[low, high]`` of the value.

    ``holds`` (the winner is better) when the whole interval satisfies the claim, ``does not hold``
    when none of it does, ``within the spread`` when it straddles the threshold, ``not measured in
    this run`` when the interval is missing (NaN).  A single measurement is the interval
    ``[value, value]``.

    Parameters
    ----------
    low, high : float
        Ends of the interval: the 95 % Student-t interval of the mean paired difference over the
        units (:func:`paired_verdict`), or a single value.
    threshold : float
    relation : str
        ``">="``, ``">"``, ``"<="`` or ``"<"``.

    Returns
    -------
    str
    """
    if not (math.isfinite(low) and math.isfinite(high)) or not math.isfinite(threshold):
        return NOT_MEASURED
    ok = {">=": lambda v: v >= threshold, ">": lambda v: v > threshold,
          "<=": lambda v: v <= threshold, "<": lambda v: v < threshold}[relation]
    lo_ok, hi_ok = ok(low), ok(high)
    if lo_ok and hi_ok:
        return HOLDS
    if not lo_ok and not hi_ok:
        return FAILS
    return WITHIN


def paired_verdict(mean: float, low: float, high: float, n: int, threshold: float, relation: str = ">=") -> str:
    """:func:`claim_verdict` of a paired t interval over ``n`` units (one unit: its value, no spread)."""
    if not n:
        return NOT_MEASURED
    if n < 2 or not math.isfinite(low):
        return claim_verdict(mean, mean, threshold, relation)
    return claim_verdict(low, high, threshold, relation)


#: Solver parameters that set a configuration's own stopping tolerance, the first present wins.
STOP_PARAMS: tuple[str, ...] = ("tol", "eps_abs", "eps", "gap_tol", "tol_gap_rel", "reltol", "epsilonStar",
                                "convergence_tol")


def stopping_tolerance(params: Mapping[str, Any]) -> float | None:
    """A configuration's own stopping tolerance: the first of :data:`STOP_PARAMS` among its parameters
    (defaults filled in) that is a positive number; ``None`` when it has none."""
    for k in STOP_PARAMS:
        v = params.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) and v > 0:
            return float(v)
    return None


def configured_for(stop_tol: float | None, allowance_: float) -> str:
    """``"configured for 1e-4"`` when a configuration asked for less than its verification allows
    (its stopping tolerance looser than the allowance), else ``""``: a point such a configuration
    returns and verification rejects asked for less, it did not fail."""
    return f"configured for {stop_tol:g}" if stop_tol is not None and stop_tol > allowance_ else ""
