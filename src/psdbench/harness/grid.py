"""Grids: a TOML file or a named built-in suite, expanded to cells.

A cell is problem x dataset x instance params x seed x solver x solver params.  Lists expand as a
Cartesian product.  A ``[[solvers]]`` entry may carry ``where = { n = [50, 100] }``: the solver runs
only on instances whose parameters take one of the listed values (used to keep a solver to the sizes
it can handle); the key ``dataset`` filters on the dataset name.  A solver is paired only with the
problems whose ``kind`` it lists in ``kinds`` (``"*"``: any), so one grid can mix problem families.  See ``docs/architecture.md`` for the format; :func:`load_grid` raises a one-line
:class:`~psdbench.api.PsdbenchError` on anything malformed.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import __version__
from ..api import PsdbenchError, expand_params, pairs_with, param_specs, problem_family, problem_sense, validate_params
from ..registry import CORE_LIBRARIES, Registry

RUN_KEYS = {"seeds", "timeout", "reference_timeout", "memory_mb", "reference", "name"}
PROBLEM_KEYS = {"name", "datasets", "params"}
SOLVER_KEYS = {"name", "params", "where"}


@dataclass(frozen=True)
class Cell:
    """One unit of work; ``cell_key`` hashes everything that determines its result."""

    problem: str
    dataset: str
    instance_params: dict[str, Any]
    seed: int
    solver: str
    solver_params: dict[str, Any]
    instance_key: str
    cell_key: str


@dataclass
class Grid:
    name: str
    cells: list[Cell]
    timeout: float = 300.0
    reference_timeout: float = 120.0
    memory_mb: int | None = None
    reference: bool = True
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)  # instance_key -> spec
    senses: dict[str, str] = field(default_factory=dict)  # problem name -> "min" | "max"
    families: dict[str, str] = field(default_factory=dict)  # problem name -> family
    libraries: list[str] = field(default_factory=list)  # distributions whose versions the run records


def _hash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:20]


def instance_key(problem: str, dataset: str, params: dict[str, Any], seed: int) -> str:
    return _hash(["instance", problem, dataset, params, seed, __version__])


def _product(params: dict[str, Any], where: str) -> list[dict[str, Any]]:
    if not isinstance(params, dict):
        raise PsdbenchError(f"{where}: 'params' must be a table")
    keys = sorted(params)
    values = [v if isinstance(v, list) else [v] for v in (params[k] for k in keys)]
    if any(len(v) == 0 for v in values):
        raise PsdbenchError(f"{where}: a parameter has an empty list")
    return [dict(zip(keys, combo)) for combo in itertools.product(*values)]


def read_suite(name: str, reg: Registry) -> tuple[dict[str, Any], str]:
    """A suite registered through ``psdbench.suites`` (a family's or a plugin's ``*.toml``)."""
    return reg.read_suite(name), name


def read_grid_file(path: str | Path) -> tuple[dict[str, Any], str]:
    p = Path(path)
    if not p.is_file():
        raise PsdbenchError(f"grid file {p} does not exist")
    try:
        return tomllib.loads(p.read_text()), p.stem
    except tomllib.TOMLDecodeError as exc:
        raise PsdbenchError(f"{p}: malformed TOML: {exc}") from None


def expand(spec: dict[str, Any], name: str, reg: Registry) -> Grid:
    """Validate a parsed grid and expand it to cells (checks every plugin and dataset name)."""
    unknown = set(spec) - {"run", "problems", "solvers"}
    if unknown:
        raise PsdbenchError(f"grid {name}: unknown section(s) {', '.join(sorted(unknown))}")
    run = spec.get("run", {})
    if not isinstance(run, dict) or set(run) - RUN_KEYS:
        raise PsdbenchError(f"grid {name}: [run] accepts only {', '.join(sorted(RUN_KEYS))}")
    seeds = run.get("seeds", [0])
    if not isinstance(seeds, list) or not all(isinstance(s, int) for s in seeds):
        raise PsdbenchError(f"grid {name}: [run] seeds must be a list of integers")
    problems, solvers = spec.get("problems"), spec.get("solvers")
    if not isinstance(problems, list) or not problems or not isinstance(solvers, list) or not solvers:
        raise PsdbenchError(f"grid {name}: needs at least one [[problems]] and one [[solvers]] entry")

    solver_entries = []
    for j, s in enumerate(solvers):
        where = f"grid {name}: solvers[{j}]"
        if not isinstance(s, dict) or "name" not in s or set(s) - SOLVER_KEYS:
            raise PsdbenchError(f"{where}: needs 'name' and accepts only {', '.join(sorted(SOLVER_KEYS))}")
        solver = reg.solver(s["name"])
        combos = _product(s.get("params", {}), where)
        for c in combos:
            validate_params(solver, c, where)
        filt = s.get("where", {})
        if not isinstance(filt, dict):
            raise PsdbenchError(f"{where}: 'where' must be a table")
        versions = solver.library_versions()
        # the key hashes the *effective* parameters, so a changed default never reuses old cells
        defaults = {k: spec.default for k, spec in param_specs(solver).items()}
        solver_entries.append((s["name"], combos, {k: v if isinstance(v, list) else [v] for k, v in filt.items()},
                               [versions, defaults], solver))

    cells: list[Cell] = []
    instances: dict[str, dict[str, Any]] = {}
    senses: dict[str, str] = {}
    families: dict[str, str] = {}
    for i, p in enumerate(problems):
        where = f"grid {name}: problems[{i}]"
        if not isinstance(p, dict) or "name" not in p or set(p) - PROBLEM_KEYS:
            raise PsdbenchError(f"{where}: needs 'name' and accepts only {', '.join(sorted(PROBLEM_KEYS))}")
        problem = reg.problem(p["name"])
        datasets = p.get("datasets", [])
        if not isinstance(datasets, list) or not datasets:
            raise PsdbenchError(f"{where}: 'datasets' must be a non-empty list")
        for d in datasets:
            reg.check_dataset(d)  # one-line DataError (exit 2) before anything runs
        combos = _product(p.get("params", {}), where)
        for c in combos:
            validate_params(problem, c, where, undeclared_ok=True)
        expanded = []
        for d in datasets:  # a problem may expand special values (e.g. fold = "all") per dataset
            for c in combos:
                expanded += [(d, e) for e in expand_params(problem, lambda d=d: reg.load_dataset(d), c)]
        senses[p["name"]] = problem_sense(problem)
        families[p["name"]] = problem_family(problem)
        for (d, ip), seed in itertools.product(expanded, seeds):
            ikey = instance_key(p["name"], d, ip, seed)
            instances[ikey] = {"problem": p["name"], "dataset": d, "instance_params": ip, "seed": seed}
            for sname, scombos, filt, versions, solver in solver_entries:
                if not pairs_with(solver, problem):
                    continue  # a solver is paired only with the problem kinds it declares
                if any((d if k == "dataset" else ip.get(k, getattr(problem, "default_params", {}).get(k))) not in allowed
                       for k, allowed in filt.items()):
                    continue
                for sp in scombos:
                    ckey = _hash(["cell", ikey, sname, sp, versions, __version__])
                    cells.append(Cell(p["name"], d, ip, seed, sname, sp, ikey, ckey))
    return Grid(
        name=run.get("name", name),
        cells=cells,
        timeout=float(run.get("timeout", 300)),
        reference_timeout=float(run.get("reference_timeout", 120)),
        memory_mb=run.get("memory_mb"),
        reference=bool(run.get("reference", True)),
        instances=instances,
        senses=senses,
        families=families,
        libraries=list(dict.fromkeys([*CORE_LIBRARIES, *(lib for e in solver_entries for lib in e[3][0])])),
    )
