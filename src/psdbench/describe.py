"""``psdbench info NAME`` and ``psdbench list -v``: what a plugin is and every parameter it takes.

Each parameter is shown with its default, the values it accepts (from its
:class:`~psdbench.api.Param` spec) and its one-line meaning, so a grid can be written without
reading the source.
"""

from __future__ import annotations

import json
from typing import Any

from .api import PsdbenchError, pairs_with, param_specs
from .registry import Registry


def first_line(obj: Any) -> str:
    """The first line of an object's (or its class's) docstring."""
    doc = getattr(obj, "__doc__", None) or getattr(type(obj), "__doc__", None) or ""
    lines = doc.strip().splitlines()
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


def info_lines(reg: Registry, name: str) -> list[str]:
    """Everything ``psdbench info NAME`` prints; a one-line error if no plugin has that name.

    Parameters
    ----------
    reg : Registry
    name : str
        A problem, solver, dataset, dataset collection or suite name.
    """
    out: list[str] = []
    if name in reg.problems:
        p = reg.problems[name]
        solvers = sorted(n for n, s in reg.solvers.items() if pairs_with(s, p))
        out += [f"problem {name}: {first_line(p)}", f"kind: {getattr(p, 'kind', '?')}",
                f"solvers that pair with it: {', '.join(solvers) or 'none'}", "parameters:", *param_lines(p)]
    if name in reg.solvers:
        s = reg.solvers[name]
        out += [f"solver {name}: {first_line(s)}", f"kinds: {', '.join(getattr(s, 'kinds', ()))}",
                "parameters:", *param_lines(s)]
        try:
            versions = s.library_versions()
            out.append("libraries: " + (", ".join(f"{k} {v}" for k, v in sorted(versions.items())) or "none"))
        except (Exception, SystemExit) as exc:
            out.append(f"libraries: library_versions() failed ({type(exc).__name__})")
    if name in reg.suites:
        out += [f"suite {name}: {reg.suites[name]}", *str(reg.suites[name].read_text()).rstrip().splitlines()]
    if name in reg.collections:
        out += [f"dataset collection {name}: {first_line(reg.collections[name])}"]
    prefix, _, rest = name.partition("/")
    if rest and (name in reg.single_datasets or prefix in reg.collections):
        ds = reg.load_dataset(name)
        shape = getattr(ds.X, "shape", None)
        out += [f"dataset {name}: {ds.source or ''}".rstrip(),
                f"samples x features: {shape[0]} x {shape[1]}" if shape is not None and len(shape) == 2 else
                "payload: " + ", ".join(sorted(ds.payload or {})), f"labels: {ds.label_coding}" if ds.label_coding else ""]
        out = [line for line in out if line]
    if not out:
        known = sorted({*reg.problems, *reg.solvers, *reg.suites, *reg.collections})
        raise PsdbenchError(f"info: no problem, solver, suite or dataset is named {name!r} (known: {', '.join(known)})")
    return out
