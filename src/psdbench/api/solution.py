"""What a solver returns and how the harness judges it (part of the contract, re-exported by :mod:`psdbench.api`).

:class:`Solution`
    The point a solver returns, with its status, iterations, trace and sampled iterates.
:class:`Status`
    The outcome of one cell (the values the results store holds; the message prefixes that tell
    apart the outcomes sharing a status, ``REJECTED``, ``SOLVER_INFEASIBLE`` and ``INACCURATE``,
    are defined in :mod:`psdbench.api`).
:class:`Feasibility` and :class:`Check`
    What an instance's ``verify`` returns: every check made, with its value and tolerance.
:class:`Formulation`
    What an instance's ``reference_formulation`` returns: a cvxpy problem and its extractor.

Like :mod:`psdbench.api`, this module holds no algorithm code, names no family and imports nothing
of psdbench: it sits at the contract's layer (``docs/architecture.md``).  Plugins import these
names from :mod:`psdbench.api`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

__all__ = ["Check", "Feasibility", "Formulation", "Solution", "Status"]


class Status(str, enum.Enum):
    """Outcome of one cell.  The string values are what the results store holds.

    Three outcomes share a status and are told apart by the cell's ``message``, which starts with
    one of the message prefixes of :mod:`psdbench.api` (:func:`psdbench.harness.store.results.outcome`
    reads them back):
    ``infeasible`` is either :data:`REJECTED` (the harness's verification rejected the returned
    point; the message names the failed check, its value and tolerance) or
    :data:`SOLVER_INFEASIBLE` (the solver itself reported the problem infeasible, with no point);
    ``max_iter`` is either an iteration limit or :data:`INACCURATE` (the solver stopped with a
    solution it calls inaccurate, e.g. cvxpy's ``optimal_inaccurate``).
    """

    OK = "ok"
    MAX_ITER = "max_iter"  # iteration limit, or an inaccurate exit (message starts with INACCURATE)
    TIMEOUT = "timeout"
    INFEASIBLE = "infeasible"  # rejected by verification (REJECTED), or reported by the solver (SOLVER_INFEASIBLE)
    DIVERGED = "diverged"  # NaN / inf in the returned point
    ERROR = "error"  # exception, with traceback
    CRASHED = "crashed"  # the worker process died
    OUT_OF_MEMORY = "out_of_memory"  # the cell's memory cap was reached (Mittelmann's "m"); an addition to the contract
    SKIPPED = "skipped"  # the solver does not support the instance (or is unavailable)


# ------------------------------------------------------------------------------------ verification
_RELATIONS: dict[str, Callable[[float, float], bool]] = {
    "<=": lambda v, t: v <= t, "<": lambda v, t: v < t, ">=": lambda v, t: v >= t, ">": lambda v, t: v > t,
    "==": lambda v, t: v == t}


@dataclass(frozen=True)
class Check:
    """One check of a verification: ``value relation tolerance`` must hold.

    Attributes
    ----------
    name : str
        What is checked, in words (``"smallest eigenvalue of M"``, ``"asymmetry"``).
    value : float
        The measured value.
    tolerance : float
        The bound it is compared with (already scaled, as the check applies it).
    relation : str
        One of ``<=``, ``<``, ``>=``, ``>``, ``==`` (``value`` on the left).
    """

    name: str
    value: float
    tolerance: float
    relation: str = "<="

    def __post_init__(self) -> None:
        if self.relation not in _RELATIONS:
            raise ValueError(f"Check {self.name!r}: relation {self.relation!r} is not one of {list(_RELATIONS)}")

    @property
    def ok(self) -> bool:
        """Whether the check holds (a NaN value fails)."""
        return bool(_RELATIONS[self.relation](float(self.value), float(self.tolerance)))

    def describe(self) -> str:
        """``"smallest eigenvalue of M = -2.1e-05, needs >= -1e-06"``."""
        return f"{self.name} = {float(self.value):.3g}, needs {self.relation} {float(self.tolerance):.3g}"


@dataclass
class Feasibility:
    """Result of verifying a returned point.

    Attributes
    ----------
    ok : bool
        Every check passed within its tolerance (with ``checks``: ``all(c.ok for c in checks)``,
        which the conformance kit :mod:`psdbench.testing` enforces).
    min_eig : float
        Smallest eigenvalue of the matrix that must be PSD (the most negative, if several).
    max_residual : float
        Largest equality / sign / trace residual.
    tolerances : dict
        The tolerances used, by name.
    details : dict
        Per-check values (e.g. ``min_eig_Hbar``).
    checks : list of Check
        Every check made, with its value and tolerance; :meth:`reason` names the failed ones.
        Optional for plugins (default empty: :meth:`reason` then shows ``details`` and ``tolerances``).
    """

    ok: bool
    min_eig: float
    max_residual: float
    tolerances: dict[str, float] = field(default_factory=dict)
    details: dict[str, float] = field(default_factory=dict)
    checks: list[Check] = field(default_factory=list)

    @property
    def failed(self) -> list[Check]:
        """The checks that do not hold."""
        return [c for c in self.checks if not c.ok]

    def reason(self) -> str:
        """Why the point fails: each failed check with its value and tolerance ("" when ``ok``).

        Without ``checks`` (a plugin that does not list them), the details and tolerances.
        """
        if self.ok:
            return ""
        if self.failed:
            return "; ".join(c.describe() for c in self.failed)
        return f"details {self.details}, tolerances {self.tolerances}"


@dataclass
class Solution:
    """What a solver returns.

    Attributes
    ----------
    variables : dict of str to ndarray
        The returned point, in the names the problem documents (e.g. ``M`` for a primal matrix,
        ``y``, ``z``, ``x`` for GDPA-LP).
    status : Status
        The solver's own view (``ok``, ``max_iter``, or ``timeout`` when it stopped at the
        deadline); the harness may downgrade it after verification.
    iterations : int
    trace : list of dict
        Points ``{"t": seconds since the solver started, ...}`` (see :class:`TraceRecorder`).
    info : dict
        Solver-reported numbers (LP count, final lambda_min, ...); stored, never trusted for the
        objective or feasibility.  Two keys are conventional: ``"status"``, the solver's own status
        word (stored as the metric ``solver_status``), and ``"log"``, the solver's own log as text,
        which the harness writes gzipped beside the store and leaves out of the row (the metric
        ``solver_log`` names the file, :func:`psdbench.harness.store.solutions.save_log`).
    message : str
    iterates : list of (float, dict)
        Sampled iterates ``(t, variables)`` that the harness re-scores with the instance's own
        objective and verification (filled by :class:`TraceRecorder`).  An entry may be a
        :class:`Deferred`, computed by :func:`resolve_iterate` when the iterate is scored.
    """

    variables: dict[str, np.ndarray]
    status: Status = Status.OK
    iterations: int = 0
    trace: list[dict[str, float]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    message: str = ""
    iterates: list[tuple[float, dict[str, np.ndarray]]] = field(default_factory=list)


@dataclass
class Formulation:
    """A cvxpy problem plus a function that reads the solution variables after a solve.

    Returned by :meth:`Instance.reference_formulation`; every generic conic solver solves it.
    """

    problem: Any  # cvxpy.Problem
    extract: Callable[[], dict[str, np.ndarray]]
