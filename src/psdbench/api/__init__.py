"""The contracts every part of psdbench relies on (``docs/architecture.md`` explains the layers).

This module holds no algorithm code and names no family.  A plugin implements one of the protocols
below and registers it through an entry point:

==========================  ==============================================================
entry-point group           what the entry point names
==========================  ==============================================================
``psdbench.problems``       a :class:`Problem` class or instance
``psdbench.solvers``        a :class:`Solver` class or instance
``psdbench.datasets``       a :class:`DatasetCollection` (name without ``/``) or a callable
                            returning a :class:`Dataset` (name ``collection/name``)
``psdbench.reports``        a :class:`ReportSection` class or instance
``psdbench.suites``         a package whose ``*.toml`` files are suites (file stem = suite name)
==========================  ==============================================================

A suite with an ``[asv]`` table (keys :data:`ASV_SUITE_KEYS`) is one its family asks asv to track:
``psdbench.asvbench.suites`` turns every such suite into benchmarks, with no asv code of the family.

* A :class:`Dataset` is a named payload: ``X`` / ``y`` arrays for sample data, or anything else
  (covariance matrices, a generator's settings, SDP data ``(C, A_i, b)``) in ``payload``.
* A :class:`Problem` builds an :class:`Instance` from a dataset, parameters and a seed.
* An :class:`Instance` owns its data and, independently of any solver, recomputes the objective of
  a returned :class:`Solution`, verifies its feasibility and evaluates the task metrics.
* A :class:`Solver` turns an instance and a :class:`Budget` into a :class:`Solution`.  Solvers do
  not time themselves for the record; the harness does.  They stop at ``budget.expired()``.

The values a solver and an instance return live beside this module and are re-exported here:
:class:`Solution`, :class:`Status` (whose message prefixes :data:`REJECTED`,
:data:`SOLVER_INFEASIBLE` and :data:`INACCURATE` are defined here), :class:`Feasibility` with its
:class:`Check` list, and :class:`Formulation` (:mod:`psdbench.api.solution`).  So do three tools of the
contract: :class:`Budget` (:mod:`psdbench.api.budget`), :class:`Param` and its constructors
(:mod:`psdbench.api.params`) and :class:`TraceRecorder` with :class:`Deferred` and
:func:`resolve_iterate` (:mod:`psdbench.api.tracing`).

Optional hooks are declared on the protocols with their defaults, and read only through the
accessor functions at the end of this module (:func:`problem_sense`, :func:`expand_params`,
:func:`skip_reason`, ...), so that a default lives in one place.

Each family states what its solvers may use of its instances in a kind protocol of its own
(``families/<family>/contract.py`` for the built-ins), derived from :class:`Instance`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from psdbench.api.budget import Budget
from psdbench.system.errors import DataError, PsdbenchError  # without NumPy: ``psdbench --version`` imports none
from psdbench.api.params import Param, choice, either, number
from psdbench.api.solution import Check, Feasibility, Formulation, Solution, Status
from psdbench.api.tracing import Deferred, TraceRecorder, resolve_iterate

__all__ = [
    "ASV_SUITE_KEYS", "Budget", "Check", "DataError", "Dataset", "DatasetCollection", "Deferred", "Feasibility", "Formulation",
    "INACCURATE", "REJECTED", "SOLVER_INFEASIBLE", "install_command", "missing_extra",
    "Instance", "Param", "Problem", "PsdbenchError", "ReportSection", "Solution", "Solver", "Status",
    "TraceRecorder", "certified_interval", "certified_reference", "choice", "dataset_stamp", "default_params", "either", "expand_params",
    "number", "pairs_with", "param_specs", "problem_contract", "problem_offers", "problem_description", "problem_family",
    "objective_allowance", "problem_sense", "repair", "resolve_iterate", "skip_reason", "solver_requires", "solver_returns",
    "validate_params", "warm_up", "variable_shapes", "point_mismatch",
]


#: Message prefix of a cell whose returned point failed the harness's verification (status ``infeasible``).
REJECTED = "rejected by verification"
#: Message prefix of a cell whose solver reported the problem infeasible (status ``infeasible``).
SOLVER_INFEASIBLE = "solver reported infeasible"
#: Message prefix of a cell whose solver returned a point it calls inaccurate (status ``max_iter``/``timeout``).
INACCURATE = "solver reported an inaccurate solution"


def install_command(extra: str) -> str:
    """The command that installs psdbench's optional ``extra``: ``pip install 'psdbench[peers]'``.

    Parameters
    ----------
    extra : str
        The extra's name in ``pyproject.toml`` (``peers``, ``sdpa``, ...).

    Returns
    -------
    str
    """
    return f"pip install 'psdbench[{extra}]'"


def missing_extra(package: str, extra: str) -> str:
    """The skip reason of a solver whose optional ``package`` is not installed:
    ``"metric-learn is not installed: pip install 'psdbench[peers]'"``.  A ``skipped`` cell whose
    message says so is counted by the run's closing line, which ends with the install command
    (:func:`psdbench.harness.store.results.missing_extras`).

    Parameters
    ----------
    package : str
        The distribution that is missing.
    extra : str
        psdbench's extra that installs it.

    Returns
    -------
    str
    """
    return f"{package} is not installed: {install_command(extra)}"


#: The keys of a suite's ``[asv]`` table (the table marks a suite asv tracks) and what each means;
#: every value asv tracks is a cost, 0 at best (the rule: :mod:`psdbench.asvbench.tracked`).
ASV_SUITE_KEYS: dict[str, str] = {
    "seeds": "the suite's seeds asv runs (a non-empty list; default: the suite's first seed)",
    "metric": "the task metric asv tracks, a key of the instances' evaluate (default: none tracked)",
    "metric_best": "the metric's best value, a number it never passes (default 0: an error or distance, lower "
                   "is better; 1 for an F-measure or a 0/1 property); asv tracks |metric - metric_best|",
}


# ------------------------------------------------------------------------------------------ data
@dataclass(frozen=True)
class Dataset:
    """A named payload.

    Attributes
    ----------
    name : str
        Full name ``<collection>/<name>``.
    X : ndarray of shape (n_samples, n_features), optional
        Sample data, where the dataset has samples.
    y : ndarray of shape (n_samples,), optional
        Labels as given by the source; ``label_coding`` says how they map to +-1 where a problem
        needs two classes.
    source : str
        Where the data came from (file path, package or generator).
    label_coding : str
        Human-readable statement of the label coding ("" without labels).
    meta : dict
        Descriptive facts (e.g. ``n_nan_replaced``).
    payload : dict
        Anything a problem reads that is not ``(X, y)``: a generator and its settings, matrices of
        an SDP given as ``(C, A_i, b)``, ...  Each problem documents the keys it reads.
    """

    name: str
    X: np.ndarray | None = None
    y: np.ndarray | None = None
    source: str = ""
    label_coding: str = ""
    meta: Mapping[str, Any] = field(default_factory=dict)
    payload: Mapping[str, Any] = field(default_factory=dict)

    @property
    def shape(self) -> tuple[int, int]:
        """``X.shape``, or ``(0, 0)`` for a dataset without samples."""
        if self.X is None:
            return (0, 0)
        return (int(self.X.shape[0]), int(self.X.shape[1]))


@runtime_checkable
class DatasetCollection(Protocol):
    """A named collection of datasets (the ``<collection>`` part of ``<collection>/<name>``).

    Optional hooks: ``check(name)``: raise a one-line :class:`DataError` if ``name`` cannot be
    loaded, without loading it (default: ``name in names()``); ``preload`` (tuple of str): modules
    ``load`` needs, imported by the fork server once (default: ``()``); ``stamp(name) -> str``: a
    cheap string that changes whenever ``load(name)`` could return other data (e.g. the version of
    the library whose bundled files it reads), read through :func:`dataset_stamp`.  With it, a run
    whose store already holds the dataset's fingerprint under the same stamp (and the same
    collection code) does not load the dataset to compute its cells' keys.  Default: none (the
    dataset is loaded and hashed by every run).
    """

    def names(self) -> list[str]:
        """Names (without the collection prefix) available right now."""

    def load(self, name: str) -> Dataset:
        """Load one dataset; raise :class:`DataError` with a one-line message if it is missing."""


# ------------------------------------------------------------------------------------ protocols
@runtime_checkable
class Instance(Protocol):
    """One problem instance; owns its data.

    Optional hooks (read through the accessors below):

    ``certified_reference(time_limit_s, rtol) -> dict``
        ``{"value", "lower", "solver", "solver_version", "status", "message"}``: an objective of
        an exactly feasible point and a bound on the other side of the optimum.  Default: none.
    ``certified_interval(solution) -> dict | None``
        For a returned point that verified, the interval it certifies by itself: ``{"value",
        "lower", "solver", "message"}`` as ``certified_reference`` gives them (``value`` the
        objective of an exactly feasible point near it, ``lower`` a certified bound on the other
        side of the optimum), or ``None`` where its bound is not certified.  The harness records it
        in the cell's metrics (``certified_value``, ``certified_lower``) and, where the cells'
        intervals are within the certification tolerance, makes the instance's reference of them
        instead of calling ``certified_reference``; so the hook should reuse what ``evaluate``
        computed for the same point.  Default: none.
    ``repair(solution) -> Solution | None``
        The problem's own map of a point to an exactly feasible one (to rounding), near it.  Used
        to draw traced iterates that do not verify, and on every verified point: the repaired
        point's objective cannot beat the optimum, so its distance from the point's objective is
        how far that point may lie beyond the optimum (:func:`objective_allowance`, recorded as
        ``metrics["objective_allowance"]``; it widens the cell's floor, :mod:`psdbench.report.rules`).
        Default: none (such iterates are not drawn; the floor is the verification tolerance).
    ``refuse_solver(solver) -> str | None``
        Why this instance will not run ``solver`` (e.g. its size is past what a conic solver
        may be given), asked before the solver's own ``skip_reason``.  Default: none.
    ``sense``
        ``"min"`` or ``"max"``; default ``"min"``.
    ``variables`` : tuple of str
        The variable names a :class:`Solution` for this instance may carry (e.g. ``("M",
        "colours")``); a solution carries a subset that ``objective`` and ``verify`` accept.
        A returned point holding another name is rejected with a line naming both
        (:func:`point_mismatch`, in a run and in :mod:`psdbench.testing` alike).  Default: undeclared.
    ``variable_shapes() -> dict of str to tuple``
        The shape each variable must have on this instance (``None`` for a free dimension), e.g.
        ``{"X": (N,), "y": (m,)}``: a point of another shape is rejected with a one-line check
        ("X has 10 entries, the instance has 15") before ``objective`` or ``verify`` sees it.
        Default: none (shapes are left to ``verify``).
    """

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

    def reference_formulation(self, variant: str | None = None) -> Formulation | None:
        """A cvxpy formulation with the same optimum, or None."""


@runtime_checkable
class Problem(Protocol):
    """A problem family member (one registered problem name).

    Optional hooks:

    ``family`` : str
        The family the problem belongs to; report sections are routed by it.  Default: ``kind``.
    ``sense`` : str
        ``"min"`` (default) or ``"max"``.
    ``kind_aliases`` : tuple of str
        Former names of ``kind`` that solvers may still declare (see :func:`pairs_with`).
    ``params`` : dict of str to :class:`Param`
        Declarative parameter specs; ``default_params`` follows from them.
    ``expand_params(load, params) -> list[dict]``
        Expand special values per dataset (e.g. ``fold = "all"``); ``load()`` returns the dataset.
        Default: ``[params]``.
    ``size_param`` : str
        The instance parameter that measures an instance's size (e.g. a dimension), the x axis of
        the report's time-versus-size plot.  Default: none (the report tries ``n``, ``n_nodes``).
    ``description`` : str
        The problem as a solver's author needs it, in plain text: the optimization problem written
        out, the variables a :class:`Solution` carries (names, shapes, meaning, layout) and the
        paper it comes from.  ``psdbench info`` and the family's documentation page print it.
        Default: the docstring (:func:`problem_description`).
    ``contract`` : type or tuple of type
        The kind protocol(s) its instances implement: everything a solver may read of an
        instance (``families/<family>/contract.py`` for the built-ins).  ``psdbench info`` prints
        their members with their types.  Default: :class:`Instance` (:func:`problem_contract`).
    ``preload`` : tuple of str
        Modules its instances need that its own module does not import (e.g. scikit-learn's
        model selection): imported with the problem in a process that runs cells, and by the fork
        server; not by the commands that only describe it.  Default: ``()``.
    ``unsupported`` : tuple of str
        Members of the contract its instances offer only as a refusal (e.g.
        ``reference_formulation`` returning ``None``): ``psdbench info`` then does not list the
        solvers that require them.  Default: ``()``.
    """

    name: str
    kind: str
    default_params: dict[str, Any]

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> Instance:
        """Build one instance."""


@runtime_checkable
class Solver(Protocol):
    """A solver.  ``kinds`` lists the problem kinds it supports (``"*"``: any).

    Optional hooks:

    ``params`` : dict of str to :class:`Param`
        Declarative parameter specs (``default_params`` follows from them).
    ``accepts_any_params`` : bool
        Parameters not in ``default_params`` are passed through (e.g. backend options); default
        False.
    ``option_names() -> set of str | None``
        With ``accepts_any_params``: the names the backend accepts (its own list, e.g. Clarabel's
        settings), so that a misspelt option is a one-line error before the run; ``None`` (or no
        hook): the backend offers no list and every name passes.
    ``skip_reason(instance, **params) -> str | None``
        Why the solver does not run on ``instance`` (``None``: it does).  The hook is given those
        of the cell's solver parameters its signature names (all with ``**kwargs``; none when it
        takes only ``instance``).  Default: from ``supports``.
    ``preload`` : tuple of str
        Modules the fork server imports once (besides the entry point's own module).
    ``warm_up(instance) -> None``
        Called once per worker process, untimed, before the solver's first timed ``solve`` there,
        with that cell's (read-only) instance: import what ``solve`` imports lazily and make a
        first small call of its hot path (a tiny factorization, a JIT compile), so that the first
        cell of a worker is not charged for start-up.  Its time counts against that cell's
        deadline, not its ``wall_time_s``; an exception fails the cell (status ``error``), and the
        hook is tried again before the next cell, so every cell it fails on fails alike.
        Default: nothing beyond the imports of ``preload`` (:func:`warm_up`).
    ``requires`` : tuple of str
        Instance members a generic solver (``kinds`` ``("*",)``) reads beyond :class:`Instance`;
        ``psdbench info PROBLEM`` lists the solver only for problems whose ``contract`` has them
        all (it would be skipped on the others).  Default: ``()`` (:func:`solver_requires`).
    ``returns`` : str
        What its :class:`Solution` carries, in plain text, for ``psdbench info``.  Default: the
        variables its problems document (:func:`solver_returns`).
    """

    name: str
    kinds: tuple[str, ...]
    default_params: dict[str, Any]

    def supports(self, instance: Instance) -> bool:
        """Whether this solver can run on ``instance`` (``skipped`` otherwise)."""

    def solve(self, instance: Instance, budget: Budget, **params: Any) -> Solution:
        """Solve; raise on error (the harness records the traceback).  Stop at ``budget.expired()``."""

    def library_versions(self) -> dict[str, str]:
        """Versions of the libraries whose behaviour the results depend on (part of the cell key)."""


@runtime_checkable
class ReportSection(Protocol):
    """A report section, registered in ``psdbench.reports``.

    ``family`` is the family whose rows the section receives (``"*"``: every family, once per
    family); ``order`` sorts sections (generic ones use 0-99, family ones 100+).  ``render``
    returns blocks (:mod:`psdbench.report.blocks`: tables, figures, text) built from the tidy
    frame in ``context``; it must not read the store itself.
    """

    name: str
    family: str
    order: int

    def render(self, context: Any) -> Sequence[Any]:
        """Blocks for this section; an empty list when there is nothing to show."""


@dataclass(frozen=True)
class RankingMetric:
    """What a family is ranked by when its solvers optimise different objectives.

    A family section (:class:`ReportSection`) declares one as its ``ranking_metric`` attribute; the
    report then ranks that family's configurations by this task metric (mean over the cells of an
    instance set whose point verified) and shows their objective gaps without ranking by them.
    Default: none, the family is ranked by the time to reach each target gap (:func:`ranking_metric`).

    Attributes
    ----------
    metric : str
        A key of the metrics ``Instance.evaluate`` returns (the tidy frame's ``metric_<metric>``).
    sense : str
        ``"max"`` (larger is better) or ``"min"``.
    label : str
        How the report names it (default: ``metric``).
    """

    metric: str
    sense: str = "max"
    label: str = ""


def ranking_metric(section: Any) -> RankingMetric | None:
    """The :class:`RankingMetric` a report section declares (``ranking_metric`` attribute), else ``None``."""
    m = getattr(section, "ranking_metric", None)
    return m if isinstance(m, RankingMetric) else None


# ------------------------------------------------------------------------------------ hook access
# Defined in psdbench/api/hooks.py (one default per hook), re-exported here.
from psdbench.api.hooks import (  # noqa: E402,F401  (the hook accessors, re-exported)
    dataset_stamp,
    problem_sense,
    problem_family,
    problem_size_param,
    problem_description,
    solver_requires,
    solver_returns,
    pairs_with,
    expand_params,
    param_specs,
    default_params,
    validate_params,
    skip_reason,
    certified_reference,
    certified_interval,
    repair,
    objective_allowance,
    warm_up,
    variable_shapes,
    unknown_variables,
    shape_mismatch,
    point_mismatch,
    unreadable_point,
)


def problem_contract(problem: Any) -> tuple[type, ...]:
    """The kind protocol(s) a problem's instances implement (``contract`` hook), default ``(Instance,)``."""
    contract = getattr(problem, "contract", None)
    if contract is None:
        return (Instance,)
    return tuple(contract) if isinstance(contract, (tuple, list)) else (contract,)


def problem_offers(problem: Any) -> set[str]:
    """Instance members a problem's instances offer: the members of its contract protocols (and
    their protocol bases) less its ``unsupported`` ones."""
    names: set[str] = set()
    for cls in problem_contract(problem):
        for c in getattr(cls, "__mro__", ()):
            if c is not object:
                names |= set(getattr(c, "__annotations__", {})) | {k for k in vars(c) if not k.startswith("_")}
    return names - set(getattr(problem, "unsupported", ()) or ())
