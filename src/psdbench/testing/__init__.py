"""Conformance kit for plugin authors: does a problem or a solver keep psdbench's contracts?

Run it in your own tests, like scikit-learn's ``check_estimator``::

    from psdbench.testing import check_problem, check_solver

    def test_my_solver_conforms(registry):
        problem = registry.problem("graph-classification")
        instance = check_problem(problem, registry.load_dataset("sklearn/breast-cancer"), {"n": 30})
        check_solver(MySolver(), [instance], deadline_s=5.0, grace_s=2.0)

Every failure is an :class:`AssertionError` subclass (:class:`ConformanceError` and the specific
classes below) with a one-line message naming the object, the instance and what is wrong.

The deadline check runs ``solve`` under ``Budget.seconds(deadline_s)`` in a daemon thread (or, with
``isolation="process"``, a spawned child that is killed) and stops waiting at ``deadline_s +
grace_s``: a solver that has not returned by then ignored the deadline.  A thread cannot be
killed, so such a solver keeps running in the background until it returns.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from psdbench import api
from psdbench.testing.watchdog import solve_in_process, solve_in_thread
from psdbench.api import Budget, Dataset, Feasibility, Instance, PsdbenchError, Solution, Status

__all__ = [
    "ConformanceError",
    "DeadlineError",
    "InfeasiblePointError",
    "ObjectiveError",
    "ParamSpecError",
    "SolverReport",
    "VariableNamesError",
    "check_problem",
    "check_solver",
]


class ConformanceError(AssertionError):
    """A problem, instance or solver breaks a psdbench contract."""


class ParamSpecError(ConformanceError):
    """``params`` / ``default_params`` are inconsistent, or a parameter value is rejected."""


class VariableNamesError(ConformanceError):
    """A solution's variable names are not the ones the instance documents."""


class InfeasiblePointError(ConformanceError):
    """A returned point fails the instance's own verification."""


class ObjectiveError(ConformanceError):
    """An objective, verification or evaluation is missing, not finite or of the wrong type."""


class DeadlineError(ConformanceError):
    """A solver returned later than ``deadline_s + grace_s`` under ``Budget.seconds(deadline_s)``."""


@dataclass
class SolverReport:
    """What :func:`check_solver` saw.

    Attributes
    ----------
    solutions : list of (Instance, Solution, float)
        Each instance the solver ran on, its solution and the wall time in seconds.
    skipped : list of (Instance, str)
        Instances the solver declined, with its reason.
    """

    solutions: list[tuple[Any, Solution, float]] = field(default_factory=list)
    skipped: list[tuple[Any, str]] = field(default_factory=list)


# ------------------------------------------------------------------------------------ helpers
def _name(obj: Any) -> str:
    return repr(getattr(obj, "name", None) or type(obj).__name__)


def _label(instance: Any) -> str:
    return (f"{getattr(instance, 'problem', '?')} on {getattr(instance, 'dataset', '?')} "
            f"(seed {getattr(instance, 'seed', '?')})")


def _first(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [""])[0][:300]


def _names(names: Iterable[str]) -> str:
    return "{" + ", ".join(repr(n) for n in sorted(names)) + "}"


def _check_specs(obj: Any, what: str) -> None:
    """``name``, ``default_params`` and, when declared, ``params`` specs agree."""
    name = getattr(obj, "name", None)
    if not isinstance(name, str) or not name:
        raise ConformanceError(f"{what} {type(obj).__name__}: 'name' must be a non-empty string, not {name!r}")
    defaults = getattr(obj, "default_params", None)
    if not isinstance(defaults, Mapping):
        raise ParamSpecError(f"{what} {name!r}: 'default_params' must be a dict, not {type(defaults).__name__}")
    specs = getattr(obj, "params", None)
    if specs is None:
        return
    if not isinstance(specs, Mapping) or not all(isinstance(v, api.Param) for v in specs.values()):
        raise ParamSpecError(f"{what} {name!r}: 'params' must map names to psdbench.api.Param")
    expected = api.default_params(specs)
    if set(expected) != set(defaults):
        raise ParamSpecError(f"{what} {name!r}: default_params names {_names(defaults)} differ from "
                             f"params {_names(expected)}; use default_params = api.default_params(params)")
    for k, spec in specs.items():
        if defaults[k] != spec.default or type(defaults[k]) is not type(spec.default):
            raise ParamSpecError(f"{what} {name!r}: default_params[{k!r}] = {defaults[k]!r} but params[{k!r}] "
                                 f"defaults to {spec.default!r}")
        why = spec.error(spec.default)
        if why:
            raise ParamSpecError(f"{what} {name!r}: the default of parameter {k} is rejected by its own spec: {why}")


def _validate(obj: Any, values: Mapping[str, Any], what: str, undeclared_ok: bool = False) -> None:
    try:
        api.validate_params(obj, values, f"{what} {getattr(obj, 'name', '?')!r}", undeclared_ok=undeclared_ok)
    except PsdbenchError as exc:
        raise ParamSpecError(str(exc)) from exc


def _missing_members(instance: Any) -> list[str]:
    members = ["problem", "dataset", "params", "seed", "kind", "n", "objective", "verify", "evaluate",
               "reference_formulation"]
    return [m for m in members if not hasattr(instance, m)]


def _as_solution(point: Solution | Mapping[str, Any]) -> Solution:
    return point if isinstance(point, Solution) else Solution(variables={k: np.asarray(v) for k, v in point.items()})


def _score(owner: str, instance: Any, solution: Solution) -> tuple[float, Feasibility, dict[str, Any]]:
    """Objective, verification and metrics of ``solution``; variable-name trouble is named as such."""
    names = api.unknown_variables(instance, solution.variables)  # the checks a run makes (api.point_mismatch)
    if names is not None:
        raise VariableNamesError(f"{owner} on {_label(instance)}: {names}")
    shape = api.shape_mismatch(instance, solution.variables)
    if shape is not None:
        raise InfeasiblePointError(f"{owner} returned a point that fails verification on {_label(instance)}: {shape}")
    results: list[Any] = []
    for step in ("verify", "objective", "evaluate"):
        try:
            results.append(getattr(instance, step)(solution))
        except (KeyError, PsdbenchError) as exc:
            raise VariableNamesError(f"{owner} on {_label(instance)}: returned {', '.join(solution.variables)}, which "
                                     f"{step} cannot read ({type(exc).__name__}: {_first(exc)})") from exc
        except (ValueError, IndexError, TypeError) as exc:  # what a run rejects: a point the instance cannot read
            raise InfeasiblePointError(f"{owner} returned a point that fails verification on {_label(instance)}: "
                                       f"{api.unreadable_point(exc)}") from exc
    feas, value, metrics = results
    if not isinstance(feas, Feasibility):
        raise ObjectiveError(f"{_label(instance)}: verify returned {type(feas).__name__}, not Feasibility")
    if feas.checks and feas.ok != all(c.ok for c in feas.checks):
        raise ObjectiveError(f"{_label(instance)}: verify says ok={feas.ok} but its checks say "
                             f"{'; '.join(c.describe() + (' (holds)' if c.ok else ' (fails)') for c in feas.checks)}")
    if not isinstance(metrics, Mapping) or not all(isinstance(k, str) for k in metrics):
        raise ObjectiveError(f"{_label(instance)}: evaluate must return a dict of str to numbers")
    try:
        value = float(value)
    except (TypeError, ValueError):
        raise ObjectiveError(f"{_label(instance)}: objective returned {value!r}, not a number") from None
    return value, feas, dict(metrics)


def _require_feasible(owner: str, instance: Any, value: float, feas: Feasibility) -> None:
    if not feas.ok:
        raise InfeasiblePointError(
            f"{owner} returned a point that fails verification on {_label(instance)}: {feas.reason()} "
            f"(min_eig={feas.min_eig:.3g}, max_residual={feas.max_residual:.3g})")
    if not math.isfinite(value):
        raise ObjectiveError(f"{owner}: objective {value!r} on {_label(instance)} is not finite")


# ------------------------------------------------------------------------------------ problems
def _reference_point(instance: Any) -> Solution | None:
    """The reference formulation's solution by Clarabel, or None when there is none."""
    from psdbench.solvers.conic import Clarabel

    solver = Clarabel()
    if solver.skip_reason(instance) is not None:
        return None
    sol = solver.solve(instance, Budget())
    return sol if sol.variables else None


def check_problem(problem: Any, dataset: Dataset, params: Mapping[str, Any] | None = None, seed: int = 0, *,
                  point: Solution | Mapping[str, Any] | None = None, kind: type | None = None,
                  solve_reference: bool = False) -> Instance:
    """Check that ``problem`` keeps the :class:`~psdbench.api.Problem` contract on ``dataset``.

    Checks: ``name`` / ``kind`` / ``default_params`` consistent with the ``params`` specs (each
    default passes its own spec); ``params`` validate; ``sense`` is ``"min"`` or ``"max"``;
    ``expand_params`` returns a non-empty list of dicts of valid parameters; ``build`` returns an
    :class:`~psdbench.api.Instance` (and an instance of ``kind``, the family's kind protocol, if
    given) carrying the problem's name, kind, seed and sense; and, on a feasible point,
    ``objective`` / ``verify`` / ``evaluate`` work and building twice gives the same objective.
    The point is ``point`` if given, else, only with ``solve_reference=True``, the reference
    formulation's solution by Clarabel (an interior-point solve: seconds to minutes as the
    instance grows).  Without either, the point checks are left out (:func:`check_solver` runs
    ``objective`` / ``verify`` / ``evaluate`` on every point a solver returns).

    Parameters
    ----------
    problem : Problem
    dataset : Dataset
    params : dict, optional
        Instance parameters (default: the problem's defaults).
    seed : int
    point : Solution or dict of str to array, optional
        A feasible point (variables in the instance's documented names).
    kind : Protocol class, optional
        The kind protocol (e.g. ``GraphClassificationKind``) the instance must satisfy.
    solve_reference : bool
        Without ``point``, solve the instance's reference formulation with Clarabel for a point to
        check with (default False: no solve).

    Returns
    -------
    Instance
        The instance built from the first expanded parameter set (reuse it for :func:`check_solver`).

    Raises
    ------
    ConformanceError
        (an ``AssertionError``) with a one-line message on the first violation.
    """
    _check_specs(problem, "problem")
    pname = problem.name
    pkind = getattr(problem, "kind", None)
    if not isinstance(pkind, str) or not pkind:
        raise ConformanceError(f"problem {pname!r}: 'kind' must be a non-empty string, not {pkind!r}")
    try:
        sense = api.problem_sense(problem)
    except PsdbenchError as exc:
        raise ConformanceError(str(exc)) from None
    values = dict(params or {})
    _validate(problem, values, "problem", undeclared_ok=True)
    expanded = api.expand_params(problem, lambda: dataset, values)
    if not expanded or not all(isinstance(e, dict) for e in expanded):
        raise ConformanceError(f"problem {pname!r}: expand_params must return a non-empty list of dicts, "
                               f"not {expanded!r}")
    for e in expanded:
        _validate(problem, e, "problem (expand_params output)", undeclared_ok=True)
    instance = problem.build(dataset, expanded[0], seed)
    if not isinstance(instance, Instance):
        raise ConformanceError(f"problem {pname!r}: build returned {type(instance).__name__}, which lacks "
                               f"{', '.join(_missing_members(instance))} of psdbench.api.Instance")
    if kind is not None and not isinstance(instance, kind):
        missing = [m for m in dir(kind) if not m.startswith("_") and not hasattr(instance, m)]
        raise ConformanceError(f"problem {pname!r}: instance is not a {kind.__name__} (missing {', '.join(missing)})")
    for attr, want in (("problem", pname), ("kind", pkind), ("seed", seed), ("sense", sense)):
        if getattr(instance, attr, want) != want:  # an instance need not state its sense
            raise ConformanceError(f"problem {pname!r}: instance.{attr} is {getattr(instance, attr)!r}, not {want!r}")
    if point is None and not solve_reference:
        return instance
    if point is None:
        sol = _reference_point(instance)
        if sol is None:
            raise ConformanceError(f"problem {pname!r}: the instance has no cvxpy reference formulation Clarabel "
                                   "can solve; pass point=... (a feasible point) to check objective/verify/evaluate")
        owner = "clarabel on the reference formulation"
    else:
        sol, owner = _as_solution(point), "the given point"
    value, feas, _ = _score(owner, instance, sol)
    _require_feasible(owner, instance, value, feas)
    again = problem.build(dataset, expanded[0], seed).objective(sol)
    if not (again == value or (math.isnan(again) and math.isnan(value))):
        raise ConformanceError(f"problem {pname!r}: two builds with seed {seed} give objectives {value!r} and "
                               f"{again!r} for the same point (build must be deterministic)")
    return instance


# ------------------------------------------------------------------------------------ solvers
def _instances(source: Any) -> list[Any]:
    if callable(source) and not isinstance(source, Instance):
        source = source()
    if isinstance(source, Instance) or not isinstance(source, Iterable):
        return [source]
    return list(source)


def _solve_with_watchdog(solver: Any, instance: Any, params: Mapping[str, Any], deadline_s: float,
                         grace_s: float, isolation: str) -> tuple[Solution, float]:
    """``solve`` under ``Budget.seconds(deadline_s)``; fails if it returns after deadline + grace."""
    budget = Budget.seconds(deadline_s, grace_s=grace_s)
    t0 = time.monotonic()
    run = solve_in_process if isolation == "process" else solve_in_thread
    box = run(solver, instance, params, budget)
    t0 = box.get("started", t0)
    late = float(box.get("deadline", budget.deadline)) + grace_s
    if not box or box["returned"] > late:  # a GIL-holding solver can delay the watchdog: check the time too
        raise DeadlineError(
            f"solver {_name(solver)} ignored the deadline on {_label(instance)}: still running "
            f"{deadline_s + grace_s:.3g} s after Budget.seconds({deadline_s:g}) (grace {grace_s:g} s); "
            "check budget.expired() between iterations and return the current point")
    if "error" in box:
        kind, text = box["error"]
        raise ConformanceError(f"solver {_name(solver)} raised {kind} on {_label(instance)}: "
                               f"{text.splitlines()[0] if text else ''}")
    return box["solution"], box["returned"] - t0


def check_solver(solver: Any, instances: Any, *, deadline_s: float = 10.0, grace_s: float = 5.0,
                 params: Mapping[str, Any] | None = None, require_run: bool = True,
                 isolation: str = "thread") -> SolverReport:
    """Check that ``solver`` keeps the :class:`~psdbench.api.Solver` contract on ``instances``.

    Checks: ``name`` / ``kinds`` / ``default_params`` / ``params`` specs / ``library_versions()``
    are declared and consistent (a missing or failing ``library_versions`` is named as such); ``params`` validate; on each instance of a kind it declares and
    does not skip (:func:`psdbench.api.skip_reason`), ``solve`` returns a
    :class:`~psdbench.api.Solution` with a :class:`~psdbench.api.Status`, by
    ``deadline_s + grace_s`` under ``Budget.seconds(deadline_s)``, whose variables are names the
    instance documents (its optional ``variables`` attribute) and accepted by ``objective`` /
    ``verify`` / ``evaluate``, with finite entries, a point that verifies and a finite objective.

    Parameters
    ----------
    solver : Solver
    instances : Instance, iterable of Instance, or callable returning either
        Small instances (each solve should take well under ``deadline_s``).
    deadline_s, grace_s : float
        The budget's deadline, and how late after it the solver may still return.
    params : dict, optional
        Solver parameters passed to every ``solve``.
    require_run : bool
        Fail when the solver skips every instance (default True).
    isolation : {"thread", "process"}
        Where ``solve`` runs.  ``"thread"`` (default): a daemon thread; a late solver keeps running
        in the background, and one holding the GIL in C code delays the verdict (its return time
        still decides it).  ``"process"``: a spawned child, killed at the deadline plus grace; the
        solver, the instances and the solution must pickle (classes importable by module name).

    Returns
    -------
    SolverReport

    Raises
    ------
    ConformanceError
        (an ``AssertionError``) with a one-line message on the first violation:
        :class:`ParamSpecError`, :class:`VariableNamesError`, :class:`InfeasiblePointError`,
        :class:`ObjectiveError` or :class:`DeadlineError`.
    """
    _check_specs(solver, "solver")
    sname = solver.name
    kinds = getattr(solver, "kinds", None)
    if not isinstance(kinds, tuple) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise ConformanceError(f"solver {sname!r}: 'kinds' must be a non-empty tuple of str, not {kinds!r}")
    hook = getattr(solver, "library_versions", None)
    if not callable(hook):
        raise ConformanceError(f"solver {sname!r}: no library_versions() method; declare "
                               "library_versions() -> dict[str, str], the versions of the libraries its results "
                               "depend on (part of every cell key), e.g. {'numpy': version('numpy')}")
    try:
        versions = hook()
    except Exception as exc:
        raise ConformanceError(f"solver {sname!r}: library_versions() raised {type(exc).__name__}: "
                               f"{(str(exc).splitlines() or [''])[0]}") from None
    if not isinstance(versions, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                    for k, v in versions.items()):
        raise ConformanceError(f"solver {sname!r}: library_versions() must return a dict of str to str")
    values = dict(params or {})
    _validate(solver, values, "solver")
    if isolation not in ("process", "thread"):
        raise ValueError(f"isolation must be 'process' or 'thread', not {isolation!r}")
    report = SolverReport()
    for instance in _instances(instances):
        if "*" not in kinds and getattr(instance, "kind", None) not in kinds:
            report.skipped.append((instance, f"kind {getattr(instance, 'kind', None)!r} not in {kinds}"))
            continue
        reason = api.skip_reason(solver, instance, values)
        if reason is not None:
            report.skipped.append((instance, reason))
            continue
        sol, wall = _solve_with_watchdog(solver, instance, values, deadline_s, grace_s, isolation)
        owner = f"solver {sname!r}"
        if not isinstance(sol, Solution):
            raise ConformanceError(f"{owner} returned {type(sol).__name__}, not psdbench.api.Solution")
        if not isinstance(sol.status, Status):
            raise ConformanceError(f"{owner} returned status {sol.status!r}, not a psdbench.api.Status")
        if sol.status is Status.SKIPPED:
            raise ConformanceError(f"{owner} returned status skipped on {_label(instance)} although skip_reason "
                                   f"is None; decline in supports/skip_reason instead ({sol.message})")
        if not sol.variables:
            raise VariableNamesError(f"{owner} returned no variables on {_label(instance)} "
                                     f"(status {sol.status.value}: {sol.message})")
        bad = [k for k, v in sol.variables.items() if not np.all(np.isfinite(np.asarray(v, dtype=float)))]
        if bad:
            raise ObjectiveError(f"{owner} returned NaN or inf in {_names(bad)} on {_label(instance)}")
        value, feas, _ = _score(owner, instance, sol)
        _require_feasible(owner, instance, value, feas)
        report.solutions.append((instance, sol, wall))
    if require_run and not report.solutions:
        why = "; ".join(dict.fromkeys(r for _, r in report.skipped)) or "no instances given"
        raise ConformanceError(f"solver {sname!r} ran on none of the instances ({why})")
    return report
