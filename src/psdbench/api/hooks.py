"""Hook access: the one place where each optional hook of the contracts gets its default.

The hooks are declared on the protocols of :mod:`psdbench.api` (which re-exports these accessors);
callers read an optional hook only through them, so each default lives here once.  (The two that
default to the protocols themselves, ``problem_contract`` and ``problem_offers``, stay in ``api``.)
This module imports nothing of ``api``: a dataset loader returns a :class:`psdbench.api.Dataset`
and ``repair`` takes and returns a :class:`psdbench.api.Solution`.
"""

from __future__ import annotations

import inspect
import math
from typing import Any, Callable, Mapping

from psdbench.system.errors import PsdbenchError
from psdbench.api.params import Param


__all__ = ["problem_sense", "problem_family", "problem_size_param", "problem_description", "solver_requires", "solver_returns", "pairs_with", "expand_params", "param_specs", "default_params", "validate_params", "skip_reason", "certified_reference", "certified_interval", "repair", "objective_allowance", "warm_up", "variable_shapes", "unknown_variables", "shape_mismatch", "point_mismatch", "unreadable_point"]


def problem_sense(problem: Any) -> str:
    """``"min"`` or ``"max"`` (default ``"min"``)."""
    sense = getattr(problem, "sense", "min")
    if sense not in ("min", "max"):
        raise PsdbenchError(f"problem {getattr(problem, 'name', problem)!r}: sense must be 'min' or 'max'")
    return sense


def problem_family(problem: Any) -> str:
    """The family a problem reports under (default: its ``kind``)."""
    return str(getattr(problem, "family", None) or getattr(problem, "kind", "") or getattr(problem, "name", ""))


def problem_size_param(problem: Any) -> str | None:
    """The instance parameter a problem names as its size (``size_param`` hook), or ``None``."""
    name = getattr(problem, "size_param", None)
    return None if name is None else str(name)


def problem_description(problem: Any) -> str:
    """The problem's ``description`` text, or its docstring (dedented, stripped)."""
    import inspect

    text = getattr(problem, "description", None)
    if not isinstance(text, str) or not text.strip():
        text = getattr(problem, "__doc__", None) or getattr(type(problem), "__doc__", None) or ""
    return inspect.cleandoc(text)


def solver_requires(solver: Any) -> tuple[str, ...]:
    """Instance members a generic solver needs beyond :class:`Instance` (``requires`` hook), default ``()``."""
    return tuple(str(m) for m in getattr(solver, "requires", ()) or ())


def solver_returns(solver: Any) -> str | None:
    """The solver's ``returns`` text, or ``None`` (its problems' variables then say it)."""
    text = getattr(solver, "returns", None)
    return text.strip() if isinstance(text, str) and text.strip() else None


def pairs_with(solver: Any, problem: Any) -> bool:
    """Whether ``solver`` runs on ``problem``'s instances: one of its ``kinds`` is ``"*"``, the
    problem's ``kind``, or one of the problem's deprecated ``kind_aliases`` (a renamed kind keeps
    pairing with plugins that still name the old one; a :class:`DeprecationWarning` says so)."""
    kinds = tuple(getattr(solver, "kinds", ("*",)))
    if "*" in kinds or getattr(problem, "kind", None) in kinds:
        return True
    old = [k for k in getattr(problem, "kind_aliases", ()) if k in kinds]
    if old:
        import warnings

        warnings.warn(f"solver {getattr(solver, 'name', solver)!r} names the problem kind {old[0]!r}, now "
                      f"{getattr(problem, 'kind', '?')!r}: update its kinds", DeprecationWarning, stacklevel=2)
    return bool(old)


def expand_params(problem: Any, load: Callable[[], Any], params: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The problem's ``expand_params`` hook, or ``[params]``."""
    hook = getattr(problem, "expand_params", None)
    return [dict(params)] if hook is None else [dict(p) for p in hook(load, params)]


def param_specs(obj: Any) -> dict[str, Param]:
    """Declared :class:`Param` specs, or specs with only defaults from ``default_params``."""
    specs = getattr(obj, "params", None)
    if isinstance(specs, Mapping) and all(isinstance(v, Param) for v in specs.values()):
        return dict(specs)
    return {k: Param(default=v) for k, v in dict(getattr(obj, "default_params", {}) or {}).items()}


def default_params(specs: Mapping[str, Param]) -> dict[str, Any]:
    """The defaults of declared specs (for ``default_params = default_params(params)``)."""
    return {k: p.default for k, p in specs.items()}


def validate_params(obj: Any, values: Mapping[str, Any], where: str, undeclared_ok: bool = False) -> None:
    """Raise a one-line :class:`PsdbenchError` for an unknown name or a value its spec rejects.

    Unknown names pass when the object sets ``accepts_any_params``, or when it declares no
    parameters at all and ``undeclared_ok`` (problems from plugins that predate specs).
    """
    specs = param_specs(obj)
    bad = set(values) - set(specs)
    if bad and not getattr(obj, "accepts_any_params", False) and not (undeclared_ok and not specs):
        raise PsdbenchError(f"{where}: {getattr(obj, 'name', obj)!r} has no parameter(s) {', '.join(sorted(bad))}")
    hook = getattr(obj, "option_names", None) if bad else None
    known = hook() if callable(hook) else None
    if known is not None and bad - set(known):
        raise PsdbenchError(f"{where}: {getattr(obj, 'name', obj)!r} has no parameter or backend option(s) "
                            f"{', '.join(sorted(bad - set(known)))[:200]} (its backend accepts: "
                            f"{', '.join(sorted(known))[:300]})")
    for k, v in values.items():
        why = specs[k].error(v) if k in specs else None
        if why:
            raise PsdbenchError(f"{where}: {getattr(obj, 'name', obj)!r} parameter {k} {why}")


def skip_reason(solver: Any, instance: Any, params: Mapping[str, Any] | None = None) -> str | None:
    """Why ``solver`` does not run on ``instance`` with the cell's ``params`` (the instance's
    ``refuse_solver`` first), or ``None``.

    The solver's ``skip_reason`` hook is given those of ``params`` its signature names (all of them
    when it takes ``**kwargs``): a solver whose reach depends on a parameter (SketchyCGAL's trace
    bound ``alpha``) decides with the value the cell runs with, not its default.
    """
    refuse = getattr(instance, "refuse_solver", None)
    why = refuse(solver) if refuse is not None else None
    if why is not None:
        return why
    hook = getattr(solver, "skip_reason", None)
    if hook is not None:
        return hook(instance, **_named_in(hook, params or {}))
    if solver.supports(instance):
        return None
    return f"{getattr(solver, 'name', solver)} does not support this instance (kind {getattr(instance, 'kind', '?')!r})"


def _named_in(fn: Callable[..., Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``params`` that ``fn``'s signature accepts as keywords."""
    if not params:
        return {}
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in sig.parameters.values()):
        return dict(params)
    names = {n for n, p in sig.parameters.items()
             if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)}
    return {k: v for k, v in params.items() if k in names}


def dataset_stamp(collection: Any, name: str) -> str | None:
    """A dataset collection's ``stamp(name)`` hook (what changes when its data may), ``None`` without one."""
    hook = getattr(collection, "stamp", None)
    return None if hook is None else str(hook(name))


def certified_reference(instance: Any, time_limit_s: float | None, rtol: float) -> dict[str, Any] | None:
    """The instance's ``certified_reference`` hook, or ``None`` when it offers none."""
    hook = getattr(instance, "certified_reference", None)
    return None if hook is None else hook(time_limit_s=time_limit_s, rtol=rtol)


def certified_interval(instance: Any, solution: Any) -> dict[str, Any] | None:
    """The interval a verified point certifies by itself: the instance's ``certified_interval`` hook.

    Parameters
    ----------
    instance : Instance
        The instance that verified ``solution``.
    solution : Solution
        A returned point that verified.

    Returns
    -------
    dict or None
        ``{"value", "lower", "solver", "message"}`` with the meaning of :func:`certified_reference`'s
        (``value`` the objective of an exactly feasible point near ``solution``, ``lower`` a certified
        bound on the other side of the optimum); ``None`` without the hook, when it returns ``None``
        (no certified bound for this point), or when either number is not finite.
    """
    hook = getattr(instance, "certified_interval", None)
    out = None if hook is None else hook(solution)
    if not isinstance(out, Mapping):
        return None
    value, lower = out.get("value"), out.get("lower")
    if not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v) for v in (value, lower)):
        return None
    return {"solver": "", "message": "", **dict(out), "value": float(value), "lower": float(lower)}


def repair(instance: Any, solution: Any) -> Any:
    """The instance's ``repair`` hook (a feasible point from an infeasible iterate), or ``None``."""
    hook = getattr(instance, "repair", None)
    return None if hook is None else hook(solution)


def objective_allowance(instance: Any, solution: Any, objective: float, sense: str) -> float | None:
    """How far a verified point's ``objective`` may lie beyond the optimum, measured by its repair.

    The instance's ``repair`` hook maps the point to an exactly feasible one, whose objective cannot
    be better than the optimum; so the point is at most ``s (objective(repaired) - objective)``
    (``s = -1`` when the problem maximizes) better than the optimum.  ``None`` without a ``repair``
    hook, or when the repaired point does not verify or has no finite objective.

    Parameters
    ----------
    instance : Instance
        The instance that verified ``solution``.
    solution : Solution
        The verified point.
    objective : float
        Its objective.
    sense : str
        ``"min"`` or ``"max"``.

    Returns
    -------
    float or None
        The allowance, ``>= 0``, in the objective's units.
    """
    fixed = repair(instance, solution)
    if fixed is None:
        return None
    if not instance.verify(fixed).ok:
        return None
    value = float(instance.objective(fixed))
    if not math.isfinite(value):
        return None
    return max(0.0, (objective - value) if sense == "max" else (value - objective))


def warm_up(solver: Any, instance: Any) -> None:
    """Untimed warm-up before a worker's first timed solve: import the solver's ``preload`` modules,
    then call its ``warm_up(instance)`` hook if it has one (default: nothing more)."""
    import importlib

    for module in getattr(solver, "preload", ()):
        importlib.import_module(module)
    hook = getattr(solver, "warm_up", None)
    if hook is not None:
        hook(instance)


def variable_shapes(instance: Any) -> dict[str, tuple[int | None, ...]]:
    """The instance's ``variable_shapes()`` hook: the shape each variable it names must have
    (``None`` for a free dimension), or ``{}`` when it declares none."""
    hook = getattr(instance, "variable_shapes", None)
    if hook is None:
        return {}
    shapes = hook() if callable(hook) else hook
    return {str(k): tuple(None if d is None else int(d) for d in v) for k, v in dict(shapes or {}).items()}


def unknown_variables(instance: Any, variables: Mapping[str, Any]) -> str | None:
    """``"returned x; expected X, y, Z"`` when ``variables`` holds a name the instance's
    ``variables`` hook does not list (with the listed name it most likely meant), else ``None``."""
    declared = getattr(instance, "variables", None)
    if declared is None:
        return None
    declared = [str(d) for d in declared]
    unknown = [str(n) for n in variables if str(n) not in declared]
    if not unknown and variables:
        return None
    import difflib

    folded = {d.lower(): d for d in declared}
    meant = {n: folded.get(n.lower()) or next(iter(difflib.get_close_matches(n, declared, n=1)), None) for n in unknown}
    hint = "; ".join(f"did you mean {m} for {n}?" for n, m in meant.items() if m)
    return (f"returned {', '.join(map(str, variables)) or 'no variables'}; expected {', '.join(declared)}"
            + (f" ({hint})" if hint else ""))


def shape_mismatch(instance: Any, variables: Mapping[str, Any]) -> str | None:
    """``"X has 10 entries, the instance has 15"`` (or ``"M has shape (3, 3), the instance needs
    (4, 4)"``) for the first variable whose shape differs from the instance's
    ``variable_shapes()``, else ``None``."""
    import numpy as np

    shapes = variable_shapes(instance)
    for name, value in variables.items():
        want = shapes.get(str(name))
        if want is None:
            continue
        got = np.shape(value)
        if len(got) == len(want) and all(w is None or g == w for g, w in zip(got, want)):
            continue
        if len(want) == 1 and len(got) == 1:
            return f"{name} has {got[0]} entries, the instance has {want[0]}"
        need = "(" + ", ".join("any" if w is None else str(w) for w in want) + ("," if len(want) == 1 else "") + ")"
        return f"{name} has shape {tuple(got)}, the instance needs {need}"
    return None


def point_mismatch(instance: Any, variables: Mapping[str, Any]) -> str | None:
    """The one check of a returned point's names and shapes before the instance scores it, shared
    by the harness (``harness/workers/worker.py``) and the conformance kit (:mod:`psdbench.testing`): the
    line of :func:`unknown_variables`, else of :func:`shape_mismatch`, else ``None``."""
    return unknown_variables(instance, variables) or shape_mismatch(instance, variables)


def unreadable_point(exc: BaseException) -> str:
    """The one line for a point the instance's ``verify``, ``objective`` or ``evaluate`` raised on
    (a shape it does not declare, a missing variable): the harness rejects it, the kit fails on it."""
    first = (str(exc).strip().splitlines() or [""])[0][:300]
    return f"the instance could not check the point ({type(exc).__name__}: {first})"
