"""Grids: a TOML file or a named built-in suite, expanded to cells.

A cell is problem x dataset x instance params x seed x solver x solver params.  Lists expand as a
Cartesian product.  A ``[[solvers]]`` entry may carry ``where = { n = [50, 100] }``: the solver runs
only on instances whose parameters take one of the listed values (used to keep a solver to the sizes
it can handle); the keys ``dataset`` and ``problem`` filter on the dataset and problem names.  A solver is paired only with the
problems whose ``kind`` it lists in ``kinds`` (``"*"``: any), so one grid can mix problem families.  See ``docs/architecture.md`` for the format; :func:`load_grid` raises a one-line
:class:`~psdbench.api.PsdbenchError` on anything malformed.

A grid narrowed from the command line (``run -s / -d / -p``: :func:`restrict`,
:func:`parse_selector`) is cut down in :mod:`psdbench.harness.grid.selection`, re-exported here.
"""

from __future__ import annotations

import itertools
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Collection, Mapping

from psdbench.api import PsdbenchError, pairs_with, param_specs, problem_family, problem_sense, validate_params
from psdbench.registry import CORE_LIBRARIES, Registry
from psdbench.harness.grid.data import GridDatasets
from psdbench.harness.grid.inputs import positive_seconds
from psdbench.harness.store.keys import cell_id, cell_key, code_hash, instance_key
from psdbench.harness.limits import MAX_CELLS, check_depth, check_seeds, echo
from psdbench.harness.grid.selection import parse_selector, restrict  # re-exported: the grid narrowed by run -s / -d / -p
from psdbench.harness.asvspec import asv_settings

__all__ = ["PROBLEM_KEYS", "RUN_KEYS", "SOLVER_KEYS", "Cell", "Grid", "expand", "parse_selector", "read_grid_file",
           "read_suite", "restrict"]

RUN_KEYS = {"seeds", "timeout", "reference_timeout", "memory_mb", "reference", "name", "save_solutions"}
PROBLEM_KEYS = {"name", "datasets", "params"}
SOLVER_KEYS = {"name", "params", "where"}


@dataclass(frozen=True)
class Cell:
    """One unit of work; ``cell_key`` hashes everything that determines its result, ``cell_id`` only
    its description (:func:`~psdbench.harness.store.keys.cell_id`); ``solver_code`` / ``problem_code``
    are the code hashes in the keys."""

    problem: str
    dataset: str
    instance_params: dict[str, Any]
    seed: int
    solver: str
    solver_params: dict[str, Any]
    instance_key: str
    cell_key: str
    cell_id: str = ""
    solver_code: str = ""
    problem_code: str = ""


@dataclass
class Grid:
    name: str
    cells: list[Cell]
    timeout: float = 300.0
    reference_timeout: float = 120.0
    memory_mb: int | None = None
    reference: bool = True
    save_solutions: bool = False  # keep each cell's returned point (harness/store/solutions.py)
    instances: dict[str, dict[str, Any]] = field(default_factory=dict)  # instance_key -> spec
    senses: dict[str, str] = field(default_factory=dict)  # problem name -> "min" | "max"
    families: dict[str, str] = field(default_factory=dict)  # problem name -> family
    libraries: list[str] = field(default_factory=list)  # distributions whose versions the run records
    #: versions the solvers report themselves (a library outside the environment, e.g. in its own folder)
    reported_versions: dict[str, str] = field(default_factory=dict)
    problem_codes: dict[str, str] = field(default_factory=dict)  # problem name -> its code hash
    #: modules the grid's plugins list in ``preload``: imported before workers are forked, not by
    #: :func:`expand` (a resumed run with nothing to do imports none of them)
    preload: list[str] = field(default_factory=list)
    #: dataset name -> ``[stamp, fingerprint]`` for the datasets whose collection has a ``stamp``
    #: hook: kept in the store, so that the next run with the same stamp need not load them
    dataset_fingerprints: dict[str, list[str]] = field(default_factory=dict)
    #: ``expand_params`` results on stamped datasets, keyed as :meth:`~psdbench.harness.grid.data.GridDatasets.expand` keys them
    param_expansions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)


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
    """A grid TOML file, parsed; a one-line error if it is missing, not text or not TOML."""
    p = Path(path)
    if not p.is_file():
        raise PsdbenchError(f"grid file {p} " + ("is a folder" if p.is_dir() else "does not exist"))
    try:
        return tomllib.loads(p.read_text(encoding="utf-8")), p.stem
    except UnicodeDecodeError:
        raise PsdbenchError(f"grid file {p} is not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise PsdbenchError(f"grid file {p}: malformed TOML: {str(exc).splitlines()[0]}") from None
    except RecursionError:
        raise PsdbenchError(f"grid file {p}: values nested too deep to read") from None


def _run_settings(run: Any, name: str) -> dict[str, Any]:
    """The checked ``[run]`` table: every field of the right type and range, else a one-line error."""
    if not isinstance(run, dict):
        raise PsdbenchError(f"grid {name}: [run] must be a table")
    bad = set(run) - RUN_KEYS
    if bad:
        raise PsdbenchError(f"grid {name}: [run] has unknown key(s) {', '.join(sorted(bad))} "
                            f"(accepted: {', '.join(sorted(RUN_KEYS))})")
    seeds = run.get("seeds", [0])
    if not isinstance(seeds, list) or not seeds or not all(isinstance(s, int) and not isinstance(s, bool)
                                                           and s >= 0 for s in seeds):
        raise PsdbenchError(f"grid {name}: [run] seeds must be a non-empty list of integers >= 0, not {echo(seeds)}")
    check_seeds(seeds, f"grid {name}: [run]")
    out: dict[str, Any] = {"seeds": list(dict.fromkeys(seeds)), "name": run.get("name", name)}  # a repeated seed is one
    if not isinstance(out["name"], str) or not out["name"]:
        raise PsdbenchError(f"grid {name}: [run] name must be a non-empty string, not {out['name']!r}")
    for key, default in (("timeout", 300.0), ("reference_timeout", 120.0)):
        out[key] = positive_seconds(run.get(key, default), f"grid {name}: [run] {key}")
    mem = run.get("memory_mb")
    if mem is not None and (isinstance(mem, bool) or not isinstance(mem, int) or mem < 16):
        raise PsdbenchError(f"grid {name}: [run] memory_mb must be an integer number of MiB >= 16, not {mem!r}")
    out["memory_mb"] = mem
    ref = run.get("reference", True)
    if not isinstance(ref, bool):
        raise PsdbenchError(f"grid {name}: [run] reference must be true or false (a TOML boolean), not {ref!r}")
    out["reference"] = ref
    keep = run.get("save_solutions", False)
    if not isinstance(keep, bool):
        raise PsdbenchError(f"grid {name}: [run] save_solutions must be true or false (a TOML boolean), not {keep!r}")
    out["save_solutions"] = keep
    return out


def _library_versions(solver: Any, sname: str, where: str) -> dict[str, str]:
    """The solver's ``library_versions()``, or a one-line error naming the plugin if it fails."""
    try:
        versions = solver.library_versions()
    except (Exception, SystemExit) as exc:
        raise PsdbenchError(f"{where}: solver plugin {sname!r} library_versions() failed: "
                            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") from None
    if not isinstance(versions, dict):
        raise PsdbenchError(f"{where}: solver plugin {sname!r} library_versions() returned "
                            f"{type(versions).__name__}, not a dict")
    return versions


def _where_keys(filt: dict[str, list[Any]], problems: list[Any], where: str) -> None:
    """A ``where`` key must name ``dataset``, ``problem`` or a parameter of a problem the solver pairs with."""
    known = {"dataset", "problem"}
    for problem in problems:
        known |= set(param_specs(problem)) | set(getattr(problem, "default_params", {}) or {})
    bad = set(filt) - known
    if bad and problems:
        raise PsdbenchError(f"{where}: 'where' key(s) {', '.join(sorted(bad))} name no parameter of the problems "
                            f"it pairs with (known: {', '.join(sorted(known))})")


def expand(spec: dict[str, Any], name: str, reg: Registry, narrowed: bool = False,
           max_cells: int | None = MAX_CELLS, known: tuple[Mapping[str, Any], Mapping[str, Any]] = ({}, {}),
           named: Collection[str] | None = None) -> Grid:
    """Validate a parsed grid and expand it to cells (checks every plugin, dataset and value).

    Raises a one-line :class:`PsdbenchError` on anything malformed, including a solver entry that
    yields no cell (no problem of a kind it supports, or a ``where`` that matches nothing), and on
    a grid of more than ``max_cells`` cells (None: no limit; the cells past it are counted, not
    built).  Repeated entries (a solver, seed or dataset listed twice) give one cell.

    ``narrowed`` (a grid cut down from the command line, :func:`~psdbench.harness.grid.selection.restrict`): a solver entry that
    gives no cell among the kept problems is dropped instead (its ``where`` keys are then not
    checked: they may name parameters of a problem the selection dropped); only a solver that
    gives no cell at all, through any of its entries, is an error.  ``named`` (the solvers the
    command line selected, ``-s``; None: all of them): a solver of the grid that was not named and
    gives no cell at all is dropped too (``-p`` of one problem of a suite keeps the
    suite's solvers for that problem), unless no solver is left.

    ``known``: what the store kept of earlier runs (:func:`~psdbench.harness.store.db.read_meta`): the
    stamped datasets' ``name -> [stamp, fingerprint]`` and their ``expand_params`` results
    (:class:`~psdbench.harness.grid.data.GridDatasets`); either is used only where the stamp is unchanged.
    """
    check_depth(spec, f"grid {name}")
    unknown = set(spec) - {"run", "problems", "solvers", "asv"}
    if unknown:
        raise PsdbenchError(f"grid {name}: unknown section(s) {', '.join(sorted(unknown))}")
    run = _run_settings(spec.get("run", {}), name)
    asv_settings(spec, name, run["seeds"])  # checked like the rest; read by psdbench.asvbench.suites
    seeds = run["seeds"]
    problems, solvers = spec.get("problems"), spec.get("solvers")
    if not isinstance(problems, list) or not problems or not isinstance(solvers, list) or not solvers:
        raise PsdbenchError(f"grid {name}: needs at least one [[problems]] and one [[solvers]] entry")

    solver_entries = []
    for j, s in enumerate(solvers):
        where = f"grid {name}: solvers[{j}]"
        if not isinstance(s, dict) or "name" not in s or set(s) - SOLVER_KEYS:
            raise PsdbenchError(f"{where}: needs 'name' and accepts only {', '.join(sorted(SOLVER_KEYS))}")
        if not isinstance(s["name"], str):
            raise PsdbenchError(f"{where}: 'name' must be a string, not {s['name']!r}")
        solver = reg.solver(s["name"])
        combos = _product(s.get("params", {}), where)
        for c in combos:
            validate_params(solver, c, where)
        filt = s.get("where", {})
        if not isinstance(filt, dict):
            raise PsdbenchError(f"{where}: 'where' must be a table")
        versions = _library_versions(solver, s["name"], where)
        # the key hashes the *effective* parameters, so a changed default never reuses old cells
        defaults = {k: spec.default for k, spec in param_specs(solver).items()}
        solver_entries.append((s["name"], combos, {k: v if isinstance(v, list) else [v] for k, v in filt.items()},
                               [versions, defaults], solver, where, code_hash(solver)))

    data = GridDatasets(reg, *known)
    loaded = []
    for i, p in enumerate(problems):
        where = f"grid {name}: problems[{i}]"
        if not isinstance(p, dict) or "name" not in p or set(p) - PROBLEM_KEYS:
            raise PsdbenchError(f"{where}: needs 'name' and accepts only {', '.join(sorted(PROBLEM_KEYS))}")
        if not isinstance(p["name"], str):
            raise PsdbenchError(f"{where}: 'name' must be a string, not {p['name']!r}")
        problem = reg.problem(p["name"])
        datasets = p.get("datasets", [])
        if narrowed and datasets == []:
            raise PsdbenchError(f"{where}: problem {p['name']!r} is not in grid {name}, so it has no datasets: "
                                "add -d DATASET (psdbench list datasets)")
        if not isinstance(datasets, list) or not datasets:
            raise PsdbenchError(f"{where}: 'datasets' must be a non-empty list")
        datasets = data.match(datasets, where)
        for d in datasets:
            data.check(d, where)  # one-line DataError (exit 2) before anything runs
        combos = _product(p.get("params", {}), where)
        for c in combos:
            validate_params(problem, c, where, undeclared_ok=True)
        loaded.append((p["name"], problem, datasets, combos, where))
    if not narrowed:
        for sname, _, filt, _, solver, where, _ in solver_entries:
            _where_keys(filt, [pr for _, pr, _, _, _ in loaded if pairs_with(solver, pr)], where)

    cells: list[Cell] = []
    instances: dict[str, dict[str, Any]] = {}
    senses: dict[str, str] = {}
    families: dict[str, str] = {}
    codes: dict[str, str] = {}
    per_solver = [0] * len(solver_entries)
    uncounted = 0
    for pname, problem, datasets, combos, where in loaded:
        expanded = []
        pcode = codes[pname] = code_hash(problem)
        for d in datasets:  # a problem may expand special values (e.g. fold = "all") per dataset
            for c in combos:
                try:
                    expanded += [(d, e) for e in data.expand(problem, pname, pcode, d, c)]
                except PsdbenchError as exc:
                    raise PsdbenchError(f"{where}: {(str(exc).splitlines() or [''])[0]}") from None
                except Exception as exc:  # a plugin's hook failing is a plugin error, not psdbench's
                    raise PsdbenchError(f"{where}: problem plugin {pname!r} expand_params failed on {d}: "
                                        f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}") from None
        senses[pname] = problem_sense(problem)
        families[pname] = problem_family(problem)
        for (d, ip), seed in itertools.product(expanded, seeds):
            ikey = instance_key(pname, d, ip, seed, data.fingerprint(d), pcode)
            instances[ikey] = {"problem": pname, "dataset": d, "instance_params": ip, "seed": seed}
            for j, (sname, scombos, filt, versions, solver, _, scode) in enumerate(solver_entries):
                if not pairs_with(solver, problem):
                    continue  # a solver is paired only with the problem kinds it declares
                if any((d if k == "dataset" else pname if k == "problem" else
                        ip.get(k, getattr(problem, "default_params", {}).get(k))) not in allowed
                       for k, allowed in filt.items()):
                    continue
                per_solver[j] += len(scombos)
                if uncounted or (max_cells is not None and len(cells) + len(scombos) > max_cells):
                    uncounted += len(scombos)  # past the limit: counted for the message, not built
                    continue
                for sp in scombos:
                    ckey = cell_key(ikey, sname, sp, versions, scode)
                    cells.append(Cell(pname, d, ip, seed, sname, sp, ikey, ckey, cell_id(pname, d, ip, seed, sname, sp),
                                      scode, pcode))
    if narrowed:  # entries that give no cell among the kept problems are dropped, not errors
        given: dict[str, int] = {}
        for count, entry in zip(per_solver, solver_entries):
            given[entry[0]] = given.get(entry[0], 0) + count
        first_empty = {e[0]: j for j, e in reversed(list(enumerate(solver_entries))) if not given[e[0]]}
        keep = [j for j, c in enumerate(per_solver) if c or (first_empty.get(solver_entries[j][0]) == j and (
            named is None or solver_entries[j][0] in named))]
        if not keep:  # nothing pairs with the kept problems: the first solver's reason is the error
            keep = [0] if solver_entries else []
        per_solver, solver_entries = [per_solver[j] for j in keep], [solver_entries[j] for j in keep]
    for count, (sname, _, filt, _, solver, where, _) in zip(per_solver, solver_entries):
        if count == 0:
            why = f"its 'where' {filt} matches no instance" if filt else \
                f"no problem of the grid has a kind it supports ({', '.join(getattr(solver, 'kinds', ()))})"
            raise PsdbenchError(f"{where}: solver {sname!r} gives no cell: {why}")
    cells = _unique(cells)
    if uncounted:
        raise PsdbenchError(f"grid {name}: {len(cells) + uncounted} cells, more than {max_cells}: "
                            "pass --yes (yes=True) to run a grid this large, or narrow it with -s / -d / -p")
    return Grid(
        name=run["name"],
        cells=cells,
        timeout=run["timeout"],
        reference_timeout=run["reference_timeout"],
        memory_mb=run["memory_mb"],
        reference=run["reference"],
        save_solutions=run["save_solutions"],
        instances=instances,
        senses=senses,
        families=families,
        libraries=list(dict.fromkeys([*CORE_LIBRARIES, *(lib for e in solver_entries for lib in e[3][0])])),
        reported_versions={lib: str(v) for e in solver_entries for lib, v in e[3][0].items()},
        problem_codes=codes,
        preload=list(dict.fromkeys(m for obj in [*(e[4] for e in solver_entries), *(pr for _, pr, _, _, _ in loaded)]
                                   for m in getattr(obj, "preload", ()))),
        dataset_fingerprints=data.stamped,
        param_expansions=data.expansions,
    )


def _unique(cells: list[Cell]) -> list[Cell]:
    """One cell per ``cell_key``, in grid order (a solver, seed or dataset listed twice runs once)."""
    seen: dict[str, Cell] = {}
    for c in cells:
        seen.setdefault(c.cell_key, c)
    return list(seen.values())
