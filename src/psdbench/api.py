"""The contracts every part of psdbench relies on (see DESIGN.md).

This module holds no algorithm code.  A plugin implements one of the protocols below and registers
it through an entry point (``psdbench.problems``, ``psdbench.solvers`` or ``psdbench.datasets``).

* A :class:`Dataset` is arrays plus metadata.
* A :class:`Problem` builds an :class:`Instance` from a dataset, parameters and a seed.
* An :class:`Instance` owns its data and, independently of any solver, recomputes the objective of
  a returned :class:`Solution`, verifies its feasibility and evaluates the task metrics.
* A :class:`Solver` turns an instance and a :class:`Budget` into a :class:`Solution`.  Solvers do
  not time themselves for the record; the harness does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable

import numpy as np

__all__ = [
    "Budget",
    "DataError",
    "Dataset",
    "DatasetCollection",
    "Feasibility",
    "Instance",
    "Problem",
    "PsdbenchError",
    "Solution",
    "Solver",
    "Status",
    "TraceRecorder",
]


class PsdbenchError(Exception):
    """Bad input (configuration, plugin, data).  The command line turns it into exit status 2."""


class DataError(PsdbenchError):
    """A dataset cannot be found or read."""


class Status(str, enum.Enum):
    """Outcome of one cell.  The string values are what the results store holds."""

    OK = "ok"
    MAX_ITER = "max_iter"
    TIMEOUT = "timeout"
    INFEASIBLE = "infeasible"  # the returned point failed verification
    DIVERGED = "diverged"  # NaN / inf in the returned point
    ERROR = "error"  # exception, with traceback
    CRASHED = "crashed"  # the worker process died
    SKIPPED = "skipped"  # the solver does not support the instance (or is unavailable)


@dataclass(frozen=True)
class Dataset:
    """Arrays plus metadata.

    Attributes
    ----------
    name : str
        Full name ``<collection>/<name>``.
    X : ndarray of shape (n_samples, n_features)
    y : ndarray of shape (n_samples,)
        Labels as given by the source; ``label_coding`` says how they map to +-1 where a problem
        needs two classes.
    source : str
        Where the data came from (file path or package).
    label_coding : str
        Human-readable statement of the label coding.
    meta : dict
        Anything else (e.g. ``n_nan_replaced``).
    """

    name: str
    X: np.ndarray
    y: np.ndarray
    source: str
    label_coding: str
    meta: Mapping[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        return (int(self.X.shape[0]), int(self.X.shape[1]))


@runtime_checkable
class DatasetCollection(Protocol):
    """A named collection of datasets (the ``<collection>`` part of ``<collection>/<name>``)."""

    def names(self) -> list[str]:
        """Names (without the collection prefix) available right now."""

    def load(self, name: str) -> Dataset:
        """Load one dataset; raise :class:`DataError` with a one-line message if it is missing."""


@dataclass(frozen=True)
class Budget:
    """What a solver may spend.  ``time_limit_s`` is advisory: the harness enforces a hard limit."""

    time_limit_s: float | None = None
    max_iter: int | None = None


@dataclass
class Feasibility:
    """Result of verifying a returned point.

    Attributes
    ----------
    ok : bool
        Every check passed within its tolerance.
    min_eig : float
        Smallest eigenvalue of the matrix that must be PSD (the most negative, if several).
    max_residual : float
        Largest equality / sign / trace residual.
    tolerances : dict
        The tolerances used, by name.
    details : dict
        Per-check values (e.g. ``min_eig_Hbar``).
    """

    ok: bool
    min_eig: float
    max_residual: float
    tolerances: dict[str, float] = field(default_factory=dict)
    details: dict[str, float] = field(default_factory=dict)


@dataclass
class Solution:
    """What a solver returns.

    Attributes
    ----------
    variables : dict of str to ndarray
        The returned point, in the names the problem documents (e.g. ``M`` for a primal matrix,
        ``y``, ``z``, ``x`` for GDPA-LP).
    status : Status
        The solver's own view (``ok`` or ``max_iter``); the harness may downgrade it after
        verification.
    iterations : int
    trace : list of dict
        Points ``{"t": seconds since start, ...}`` taken by the solver itself.
    info : dict
        Solver-reported numbers (LP count, final lambda_min, ...); stored, never trusted for the
        objective or feasibility.
    message : str
    """

    variables: dict[str, np.ndarray]
    status: Status = Status.OK
    iterations: int = 0
    trace: list[dict[str, float]] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)
    message: str = ""


class TraceRecorder:
    """Collects (time, value) points for :attr:`Solution.trace` with a monotonic clock."""

    def __init__(self) -> None:
        import time

        self._clock = time.perf_counter
        self._t0 = self._clock()
        self.points: list[dict[str, float]] = []

    def elapsed(self) -> float:
        return self._clock() - self._t0

    def add(self, **values: float) -> None:
        self.points.append({"t": self.elapsed(), **{k: float(v) for k, v in values.items()}})


@runtime_checkable
class Instance(Protocol):
    """One problem instance; owns its data."""

    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    kind: str

    @property
    def n(self) -> int:
        """Problem size (number of samples / nodes)."""

    def objective(self, solution: Solution) -> float:
        """Objective recomputed from the returned variables (never the solver's report)."""

    def verify(self, solution: Solution) -> Feasibility:
        """Check the returned point: symmetry, smallest eigenvalue, residuals, with tolerances."""

    def evaluate(self, solution: Solution) -> dict[str, float]:
        """Task metrics of the paper (error rate, accuracy, ...)."""

    def reference_formulation(self) -> Any:
        """A cvxpy formulation with the same optimum (see ``psdbench.solvers.conic``), or None."""


@runtime_checkable
class Problem(Protocol):
    """A problem family."""

    name: str
    kind: str
    default_params: dict[str, Any]

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> Instance:
        """Build one instance."""


@runtime_checkable
class Solver(Protocol):
    """A solver.  ``kinds`` lists the problem kinds it supports."""

    name: str
    kinds: tuple[str, ...]
    default_params: dict[str, Any]

    def supports(self, instance: Instance) -> bool:
        """Whether this solver can run on ``instance`` (``skipped`` otherwise)."""

    def solve(self, instance: Instance, budget: Budget, **params: Any) -> Solution:
        """Solve; raise on error (the harness records the traceback)."""

    def library_versions(self) -> dict[str, str]:
        """Versions of the libraries whose behaviour the results depend on (part of the cell key)."""

