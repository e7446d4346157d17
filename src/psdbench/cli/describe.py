"""``psdbench info NAME`` and ``psdbench list``: what a plugin is, what it needs and returns.

``info PROBLEM`` prints the problem as a solver's author needs it: its ``description`` (the
optimization problem written out and the variables a solution carries), what a solver may read of
an instance (the members of its kind protocol, with their types), the objective sense and what
the certified reference's bounds mean for it, the datasets of the registered suites, the solvers
that run on it and every parameter.  ``info SOLVER`` prints its kinds, parameters and what it
returns.  Each parameter is shown with its default, the values it accepts (from its
:class:`~psdbench.api.Param` spec) and its one-line meaning.

``list`` reads names, kinds and docstrings from the plugins' source
(:class:`~psdbench.registry.plugins.StaticReader`) and imports a plugin only where its source does not
state them; ``info`` imports the one plugin it describes.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import json
import textwrap
import tomllib
from types import SimpleNamespace
from typing import Any, Mapping

from psdbench.api import (PsdbenchError, pairs_with, param_specs, problem_contract, problem_description, problem_family,
                  problem_offers, problem_sense, solver_requires, solver_returns)
from psdbench.registry.plugins import PluginMap, StaticReader, names_of
from psdbench.registry import Registry


def first_line(obj: Any) -> str:
    """The first line of an object's (or its class's) docstring."""
    doc = getattr(obj, "__doc__", None) or getattr(type(obj), "__doc__", None) or ""
    return _first(doc)


def _first(doc: str | None) -> str:
    lines = (doc or "").strip().splitlines()
    return lines[0].strip() if lines else ""


def _value(v: Any) -> str:
    try:
        return json.dumps(v)
    except (TypeError, ValueError):
        return repr(v)


def param_lines(obj: Any, indent: str = "  ") -> list[str]:
    """One line per parameter: ``name = default  (accepted values)  meaning``."""
    specs = param_specs(obj)
    if not specs:
        return [f"{indent}(no parameters)"]
    width = max(len(k) for k in specs)
    out = []
    for k in sorted(specs):
        p = specs[k]
        out.append(f"{indent}{k:<{width}} = {_value(p.default):<12} ({p.describe()})" + (f"  {p.doc}" if p.doc else ""))
    if getattr(obj, "accepts_any_params", False):
        out.append(f"{indent}(other parameters are passed on to the backend as they are)")
    return out


# ------------------------------------------------------------------------------- facts without import
def facts(plugins: Mapping[str, Any], name: str, attrs: tuple[str, ...],
          reader: StaticReader | None = None) -> dict[str, Any] | None:
    """Class attributes ``attrs`` of plugin ``name`` (``"__doc__"``: its docstring), read from its
    source where it states them (nothing imported), else from the imported plugin; ``None`` if the
    plugin is unknown or fails to import (then recorded as broken)."""
    key = plugins.resolve(name) if isinstance(plugins, PluginMap) else None
    if key is not None and key in plugins.entry_points and not plugins.is_loaded(key):
        found = (reader or StaticReader()).entry_point_attrs(plugins.entry_points[key], attrs)
        if found is not None:
            return found
    obj = plugins.get(name)
    if obj is None:
        return None
    out = {a: getattr(obj, a) for a in attrs if a != "__doc__" and hasattr(obj, a)}
    if "__doc__" in attrs:
        out["__doc__"] = getattr(obj, "__doc__", None) or getattr(type(obj), "__doc__", None)
    return out


def list_lines(plugins: Mapping[str, Any], what: str, verbose: bool = False) -> list[str]:
    """What ``psdbench list problems|solvers [-v]`` prints: one line per plugin (name, kinds for a
    solver, first docstring line), and with ``verbose`` its parameters (which imports it).  A
    broken plugin is left out (the caller reports it from ``Registry.broken``)."""
    reader = StaticReader()
    out: list[str] = []
    for n in names_of(plugins):
        if verbose:
            obj = plugins.get(n)
            f = None if obj is None else {"__doc__": first_line(obj), "kinds": getattr(obj, "kinds", ())}
        else:
            f = facts(plugins, n, ("__doc__", "kinds"), reader)
        if f is None:
            continue
        doc = _first(f.get("__doc__"))
        out.append(f"{n}\t{doc}" if what == "problems" else f"{n}\t{','.join(f.get('kinds', ()))}\t{doc}")
        if verbose:
            out += param_lines(plugins[n])
    return out


# ------------------------------------------------------------------------------------ contracts
def _classdef(cls: type) -> ast.ClassDef | None:
    try:
        node = ast.parse(textwrap.dedent(inspect.getsource(cls))).body[0]
    except (OSError, TypeError, SyntaxError, IndexError):
        return None
    return node if isinstance(node, ast.ClassDef) else None


def _protocol_lines(cls: type, indent: str = "  ") -> list[str]:
    """A protocol's docstring and its own members as written in its source, with their types."""
    out = [f"{cls.__name__} ({cls.__module__}):"]
    out += [indent + ln if ln else "" for ln in inspect.cleandoc(cls.__doc__ or "").splitlines()]
    node = _classdef(cls)
    if node is None:
        return out
    rows = []
    for item in node.body:
        if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name) and not item.target.id.startswith("_"):
            rows.append(f"{item.target.id}: {ast.unparse(item.annotation)}")
        elif isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)) and not item.name.startswith("_"):
            ret = f" -> {ast.unparse(item.returns)}" if item.returns else ""
            doc = _first(ast.get_docstring(item))
            if any(ast.unparse(d) == "property" for d in item.decorator_list):
                rows.append(f"{item.name}{ret.replace(' -> ', ': ', 1)}  (property)  {doc}".rstrip())
            else:
                args = ast.unparse(item.args).removeprefix("self, ").removeprefix("self")
                rows.append(f"{item.name}({args}){ret}  {doc}".rstrip())
    if rows:
        out += [f"{indent}members:"] + [f"{indent}  {r}" for r in rows]
    return out


def _same_package(ref: type, cls: type) -> bool:
    """``ref`` is defined in the package of ``cls`` (a plugin's own data type, not numpy's or the stdlib's)."""
    return ref.__module__.rpartition(".")[0] == cls.__module__.rpartition(".")[0] != ""


def contract_lines(problem: Any) -> list[str]:
    """What a solver may read of the problem's instances: each kind protocol, the protocols their
    annotations name, the members of the plugin's own data types they name (e.g. block splitting,
    stacking and the dense ``C`` of the SDP family's ``SdpData``, with their shapes), and the base
    :class:`~psdbench.api.Instance` members."""
    from psdbench.api import Instance

    out: list[str] = []
    seen: set[type] = {Instance, object}
    data_types: list[type] = []
    todo = list(problem_contract(problem))
    while todo:
        cls = todo.pop(0)
        if cls in seen or not isinstance(cls, type):
            continue
        seen.add(cls)
        out += _protocol_lines(cls)
        module = inspect.getmodule(cls)
        for c in cls.__mro__[1:]:  # protocol bases other than Instance
            if getattr(c, "_is_protocol", False) and c not in seen and c.__module__ != "typing":
                todo.append(c)
        for ann in getattr(cls, "__annotations__", {}).values():  # e.g. obj: PairObjectiveKind
            ref = getattr(module, str(ann), None)
            if isinstance(ref, type) and getattr(ref, "_is_protocol", False):
                todo.append(ref)
            elif isinstance(ref, type) and ref not in seen and _same_package(ref, cls):
                data_types.append(ref)  # e.g. data: SdpData: the helpers a solver reads an instance with
    for ref in data_types:
        if ref not in seen:
            seen.add(ref)
            out += ["", "helpers a solver uses to read an instance:"] + _protocol_lines(ref)
    out.append("and every member of psdbench.api.Instance: problem: str, dataset: str, params: dict, seed: int, "
               "kind: str, n: int, objective(solution) -> float, verify(solution) -> Feasibility, "
               "evaluate(solution) -> dict, reference_formulation(variant=None) -> Formulation | None")
    return out


def sense_lines(problem: Any) -> list[str]:
    """The objective sense and what ``certified_reference``'s keys mean for it."""
    if problem_sense(problem) == "max":
        return ["objective sense: maximised (the gap is reference - objective).",
                "certified reference: 'value' is the objective of an exactly feasible point, a LOWER bound on the "
                "optimum; the key 'lower' holds the bound on the other side of the optimum, here an UPPER bound "
                "(the key is named for minimisation).  Certified when they agree within 1e-5 relative."]
    return ["objective sense: minimised (the gap is objective - reference).",
            "certified reference: 'value' is the objective of an exactly feasible point, an upper bound on the "
            "optimum; 'lower' is a lower bound (e.g. a dual objective).  Certified when they agree within 1e-5 "
            "relative."]


def suite_datasets(reg: Registry, problem: str) -> list[str]:
    """The datasets the registered suites run ``problem`` on."""
    out: set[str] = set()
    for name in reg.suite_names():
        try:
            spec = tomllib.loads(reg.suites[name].read_text())
        except (OSError, tomllib.TOMLDecodeError):
            continue
        for p in spec.get("problems", []) if isinstance(spec.get("problems"), list) else []:
            if isinstance(p, dict) and p.get("name") == problem and isinstance(p.get("datasets"), list):
                out |= {d for d in p["datasets"] if isinstance(d, str)}
    return sorted(out)


def pairing_solvers(reg: Registry, problem: Any) -> list[str]:
    """Solvers ``psdbench run`` pairs with the problem and that do not need an instance member its
    contract lacks (those would only be skipped)."""
    members = problem_offers(problem)
    reader, out = StaticReader(), []
    for n in names_of(reg.solvers):
        f = facts(reg.solvers, n, ("kinds", "requires", "name"), reader)
        if f is None:
            continue
        probe = SimpleNamespace(name=n, kinds=f.get("kinds", ("*",)), requires=f.get("requires", ()))
        if pairs_with(probe, problem) and set(solver_requires(probe)) <= members:
            out.append(n)
    return out


def _problem_lines(reg: Registry, name: str, p: Any) -> list[str]:
    out = [f"problem {name}: {first_line(p)}",
           f"family: {problem_family(p)}    kind: {getattr(p, 'kind', '?')}    sense: {problem_sense(p)}", ""]
    out += problem_description(p).splitlines() + [""]
    out += sense_lines(p) + ["", "what a solver may read of an instance:"]
    out += ["  " + ln if ln else "" for ln in contract_lines(p)] + [""]
    out += [f"datasets in the registered suites: {', '.join(suite_datasets(reg, name)) or 'none'}",
            f"solvers that run on it: {', '.join(pairing_solvers(reg, p)) or 'none'}", "parameters:", *param_lines(p)]
    return out


def _solver_lines(reg: Registry, name: str, s: Any) -> list[str]:
    kinds = tuple(getattr(s, "kinds", ()))
    doc = inspect.cleandoc(getattr(s, "__doc__", None) or getattr(type(s), "__doc__", None) or "").splitlines()
    out = [f"solver {name}: {doc[0] if doc else ''}", *doc[1:], f"kinds: {', '.join(kinds)}"]
    if solver_requires(s):
        out.append(f"reads beyond Instance: {', '.join(solver_requires(s))}")
    reader = StaticReader()
    mine = [n for n in names_of(reg.problems) if (f := facts(reg.problems, n, ("kind",), reader)) is not None
            and ("*" in kinds or f.get("kind") in kinds)]
    returns = solver_returns(s) or "the variables of the problem it solves"
    out += ["returns: " + returns.splitlines()[0], *returns.splitlines()[1:]]
    if mine:
        out.append("  (what they mean: psdbench info " + " | ".join(mine) + ")")
    out += ["parameters:", *param_lines(s)]
    try:
        versions = s.library_versions()
        out.append("libraries: " + (", ".join(f"{k} {v}" for k, v in sorted(versions.items())) or "none"))
    except (Exception, SystemExit) as exc:
        out.append(f"libraries: library_versions() failed ({type(exc).__name__})")
    return out


#: What ``info PROBLEM`` reads of a problem; where the source states all of them, the problem's
#: module is not imported (only its contract's, for the types).
_PROBLEM_ATTRS = ("__doc__", "name", "kind", "kind_aliases", "family", "sense", "description", "contract",
                  "unsupported", "params")


def _static_problem(plugins: Mapping[str, Any], name: str) -> Any | None:
    """A stand-in for problem ``name`` built from its source (its contract classes imported), or
    ``None`` where the source does not state what ``info`` prints (then the problem is imported)."""
    key = plugins.resolve(name) if isinstance(plugins, PluginMap) else None
    if key is None or key not in plugins.entry_points or plugins.is_loaded(key):
        return None
    found = StaticReader().entry_point_attrs(plugins.entry_points[key], _PROBLEM_ATTRS)
    if found is None or "kind" not in found or "params" not in found:
        return None  # (``default_params`` alone is computed at import: import the problem)
    contract = found.get("contract")
    refs = contract if isinstance(contract, tuple) else () if contract is None else (contract,)
    try:
        classes = tuple(getattr(importlib.import_module(r.module), r.name) for r in refs)
    except Exception:  # not a class reference, or its module fails: import the problem instead
        return None
    attrs = {k: v for k, v in found.items() if k not in ("contract", "__doc__")}
    problem = SimpleNamespace(**attrs, __doc__=found.get("__doc__"))
    if classes:
        problem.contract = classes
    problem.name = found.get("name", name)
    return problem


def info_lines(reg: Registry, name: str) -> list[str]:
    """Everything ``psdbench info NAME`` prints; a one-line error if no plugin has that name.

    Parameters
    ----------
    reg : Registry
    name : str
        A problem, solver, dataset, dataset collection or suite name.
    """
    out: list[str] = []
    for plugins in (reg.problems, reg.solvers, reg.collections, reg.single_datasets):
        if isinstance(plugins, PluginMap) and plugins.ambiguity(name):
            plugins[name]  # raises the one-line error naming the distributions
    suite = reg.suite_key(name)
    static = _static_problem(reg.problems, name)
    if static is not None:
        out += _problem_lines(reg, name, static)
    elif name in reg.problems:
        out += _problem_lines(reg, name, reg.problems[name])
    if name in reg.solvers:
        out += ([""] if out else []) + _solver_lines(reg, name, reg.solvers[name])
    if suite is not None:
        out += [f"suite {name}: {reg.suites[suite]}", *str(reg.suites[suite].read_text()).rstrip().splitlines()]
    if name in reg.collections:
        out += [f"dataset collection {name}: {first_line(reg.collections[name])}"]
    if reg.resolve_dataset(name)[0] != "unknown":
        ds = reg.load_dataset(name)
        shape = getattr(ds.X, "shape", None)
        out += [f"dataset {name}: {ds.source or ''}".rstrip(),
                f"samples x features: {shape[0]} x {shape[1]}" if shape is not None and len(shape) == 2 else
                "payload: " + ", ".join(sorted(ds.payload or {})), f"labels: {ds.label_coding}" if ds.label_coding else ""]
        out = [line for line in out if line]
    if not out:
        known = sorted({*names_of(reg.problems), *names_of(reg.solvers), *reg.suites, *names_of(reg.collections)})
        raise PsdbenchError(f"info: no problem, solver, suite or dataset is named {name!r} (known: {', '.join(known)})")
    return out
