"""Command line: ``psdbench run | list | info | results | report | export | merge | verify | site | import | compare | asv init | asv continuous``.

Exit codes: 0 success (failed cells are results, but not when every cell run failed for a harness
reason), 2 bad input (config, plugin, data, paths: a
one-line message before any work starts and before any file is changed), 3 the machine's
condition (a full disk, a file-size limit, an I/O error: :mod:`psdbench.system.oserrors`; Dask workers
that cannot run cells, a scheduler that went away, every cell failed by the harness:
:class:`~psdbench.harness.limits.MachineError`), 1 internal
error; 130 on Ctrl-C, 128 + the signal on SIGTERM / SIGHUP / SIGQUIT (:mod:`psdbench.system.signals`),
141 when standard output is a closed pipe.
``psdbench`` without arguments prints the help.  The read commands (``results``, ``report``,
``compare``) open stores read-only and never modify them.
"""

from __future__ import annotations

from psdbench.system.signals import early_guard as _early_guard

_GUARD = _early_guard()  # a Ctrl-C or stop signal while the command line loads: one line, its exit status
_PROGRAM = bool(_GUARD)  # this process is the psdbench program (not a test or notebook importing it)

import argparse  # noqa: E402
import json  # noqa: E402
import math  # noqa: E402
import os  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

# One BLAS / OpenMP thread in the command's own process, set before anything imports numpy.  Its
# workers run with one thread each anyway (harness/workers/process.py), and the process itself does no
# numerical work worth a pool; a pool's threads would make it unsafe to fork, so every run would
# wait for the fork server to import the plugins again (seconds) instead of forking its first
# workers with everything imported (harness/workers/process.py: fork_context).
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS"):
    os.environ[_var] = "1"

from psdbench.system.errors import PsdbenchError  # noqa: E402  (psdbench.api's, without NumPy: --version and --help import none)
from psdbench.system.signals import Terminated  # noqa: E402,F401  (re-exported: the Ctrl-C path of a stop signal)

from psdbench.cli.parser import DEFAULT_DB, EXIT_REGRESSION, _parser  # noqa: E402,F401  (the grammar; DEFAULT_DB re-exported)


def _cmd_run(args: argparse.Namespace) -> int:
    from psdbench.cli import preflight
    from psdbench.harness.limits import check_scheduler
    from psdbench.harness.runner import run_grid
    from psdbench.harness.store.db import Store
    from psdbench.session import prepare

    out, out_flag = report_folder(args)
    preflight.check_writes(out, out_flag)
    if args.ref_cache:
        from psdbench.harness.grid.inputs import check_out_dir

        check_out_dir(args.ref_cache, "--ref-cache")
    preflight.check_backend(args)
    preflight.check_blas_threads(args)
    check_scheduler(args.scheduler)
    prep = prepare(args.grid, suite=args.suite, solvers=args.solver, datasets=args.dataset, problems=args.problem,
                   db=args.db, save_solutions=args.save_solutions, yes=args.yes)
    reported = dict(prep.registry.broken)  # plugins are imported as needed: more may be reported after the run
    for name, why in reported.items():
        print(f"psdbench: warning: plugin {name} skipped ({why})", file=sys.stderr)
    grid = prep.grid
    jobs = preflight.plan_jobs(args.jobs, grid.memory_mb, cells=len(grid.cells))
    store = Store(prep.db)
    try:
        summary: dict[str, Any] = {}
        run_id = run_grid(grid, store, jobs=jobs, backend=args.backend, timeout=args.timeout,
                          force=args.force, progress=not args.quiet, command=" ".join(sys.argv),
                          scheduler=args.scheduler, summary=summary, save_solutions=prep.grid.save_solutions,
                          ref_cache=False if args.no_ref_cache else (args.ref_cache or True))
        df = store.results_frame()
        print(_closing_line(run_id, df[df["cell_key"].isin({c.cell_key for c in grid.cells})], grid.name, args.db,
                            summary))
        if out:  # rewritten only when what it shows changed (`psdbench report` rewrites it always)
            paths = preflight.write_report_whole(store, out, registry=prep.registry, only_if_changed=True)
            print(_report_line(paths) if paths is not None else
                  f"report: {Path(out) / 'report.html'} unchanged (no cell changed since it was written)")
        for name, why in prep.registry.broken.items():  # plugins first imported by the cells or the report
            if name not in reported:
                print(f"psdbench: warning: plugin {name} skipped ({why})", file=sys.stderr)
        failed = summary.get("harness_failed")
        if failed:  # every cell run now failed for a harness reason: not a success (stored, re-run next time)
            from psdbench.harness.limits import MachineError

            raise MachineError(f"all {summary.get('ran', 0)} cells run now failed in the harness, not in a solver "
                               f"({failed}); they are computed again by the next run")
    finally:
        store.close()  # checkpoints the WAL: the file alone holds the run, and later reads leave it as is
    return 0


def report_folder(args: argparse.Namespace) -> tuple[str, str]:
    """``run``'s report folder and the option that named it: ``--out`` (``psdbench report``'s name),
    or ``--report``, its former name, still accepted (hidden from the help); given both, ``--report``
    must agree with ``--out`` unless ``--out`` was left at its default."""
    alias = getattr(args, "report_alias", None)
    if alias is None:
        return args.out, "--out"
    if args.out not in ("reports", alias):
        raise PsdbenchError(f"run: --report {alias!r} and --out {args.out!r} name two report folders: give one "
                            "(--report is the former name of --out)")
    return alias, "--report"


def _closing_line(run_id: str, mine: Any, grid: str, db: str, summary: dict[str, Any]) -> str:
    """The run's one summary line (printed with or without ``--quiet``).

    ``run R: 12 cells of grid G in DB: 9 ok, 1 rejected, 2 skipped (3 run now, 0 left to another
    run)``, the counts in the page's outcome words (:func:`psdbench.harness.store.results.outcome`), then
    the notes (:func:`_run_notes`) and, last, for the configurations not run because an optional
    extra is missing, the command that installs it.  ``skipped`` is only the outcome (the solver
    does not run on the cell); cells another run on the store holds or stored are "left to another run".
    """
    from psdbench.api import install_command
    from psdbench.harness.store.results import missing_extras, outcome_column

    counts = outcome_column(mine).value_counts().to_dict() if len(mine) else {}
    extras = missing_extras(mine)
    return (f"run {run_id}: {len(mine)} cells of grid {grid} in {db}: "
            + ", ".join(f"{int(v)} {k}" for k, v in sorted(counts.items()))
            + f" ({summary.get('ran', 0)} run now, {summary.get('elsewhere', 0)} left to another run)"
            + _run_notes(summary)
            + "".join(f"; {n} configuration{'s' if n != 1 else ''} not run: missing extra '{e}': "
                      f"{install_command(e)}" for e, n in extras.items()))


def _run_notes(summary: dict[str, Any]) -> str:
    """The run summary's notes: cells re-run because code changed, references from the cache or
    from the cells' certified points, and the cells' solve time beside the process's wall time."""
    notes = []
    changed = summary.get("code_changed") or {}
    if changed:
        notes.append(f"{sum(changed.values())} cells re-run because code changed ("
                     + ", ".join(f"{why}: {n}" for why, n in sorted(changed.items())) + ")")
    if summary.get("refs_reused"):
        notes.append(f"{summary['refs_reused']} references reused from cache")
    if summary.get("refs_rejected"):
        notes.append(f"{summary['refs_rejected']} cached references rejected (corrupt or stale) and recomputed")
    if summary.get("refs_from_cells"):
        notes.append(f"{summary['refs_from_cells']} references taken from the cells' certified points")
    timing = summary.get("timing") or {}
    if timing.get("cells") or timing.get("references_solved"):
        notes.append(f"{timing.get('solve_s', 0.0):.1f} s solving in {timing.get('cells', 0)} cells, "
                     f"{timing.get('reference_s', 0.0):.1f} s in {timing.get('references_solved', 0)} "
                     f"reference solves, {timing.get('process_s', float('nan')):.1f} s wall time of the process")
    return "".join(f"; {n}" for n in notes)


def _report_line(paths: dict[str, Path]) -> str:
    """``report: <html>, <markdown> (+ N tables and figures in <dir>)``."""
    main = [paths[k] for k in ("html", "markdown") if k in paths]
    rest = len(paths) - len(main)
    where = main[0].parent if main else ""
    return "report: " + ", ".join(str(p) for p in main) + (f" (+ {rest} CSV and PNG files in {where})" if rest else "")


def _cmd_list(args: argparse.Namespace) -> int:
    from psdbench.cli.describe import list_lines
    from psdbench.registry.qualified import ambiguous
    from psdbench.registry import discover

    reg = discover(preload=False)  # describes plugins: their cells' modules are not needed
    for what in [args.what] if args.what else ["problems", "solvers", "datasets", "suites"]:
        if not args.what:
            print(f"{what}:")
        if what in ("problems", "solvers"):  # names and docstrings from the source: no plugin imported
            lines = list_lines(reg.problems if what == "problems" else reg.solvers, what, args.verbose)
            print("\n".join(lines)) if lines else None
        elif what == "datasets":
            names = list(reg.single_datasets)
            for prefix, coll in sorted(reg.collections.items()):
                try:  # a collection plugin that fails is reported, the others are listed
                    names += [f"{prefix}/{n}" for n in coll.names()]
                except (Exception, SystemExit) as exc:
                    print(f"psdbench: warning: {prefix}/* unavailable ({type(exc).__name__}: "
                          f"{(str(exc).splitlines() or [''])[0]})", file=sys.stderr)
            for n in sorted(names):
                print(n)
        else:
            for n in reg.suite_names():
                print(n)
    for name, why in reg.broken.items():
        print(f"psdbench: warning: plugin {name} skipped ({why})", file=sys.stderr)
    listed = [args.what] if args.what else ["problems", "solvers", "datasets", "suites", "reports"]
    for kind, names in reg.duplicates().items():  # a name two distributions register: never one of them silently
        for name, dists in sorted(names.items()) if kind in listed else ():
            print(f"psdbench: warning: {ambiguous(kind.rstrip('s'), name, dists)}", file=sys.stderr)
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from psdbench.cli.describe import info_lines
    from psdbench.registry import discover

    print("\n".join(info_lines(discover(preload=False), args.name)))
    return 0


def _records(df: Any) -> list[dict[str, Any]]:
    """Rows as plain JSON-able dicts: JSON columns as objects, NaN as null."""
    def clean(v: Any) -> Any:
        if isinstance(v, dict):
            return {k: clean(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [clean(x) for x in v]
        if hasattr(v, "item") and not isinstance(v, (str, bytes)):
            v = v.item()
        if isinstance(v, float) and not math.isfinite(v):
            return None
        return v

    return [{k: clean(v) for k, v in row.items()} for row in df.to_dict(orient="records")]


def _cmd_results(args: argparse.Namespace) -> int:
    from psdbench.harness.grid.inputs import ReadOnlyStore

    df = ReadOnlyStore(args.db).results_frame(view="history" if args.all else "current")
    df = df.drop(columns=["trace"], errors="ignore")
    if len(df):  # the page's word for what happened (rejected, inaccurate, ...) beside the store's status
        from psdbench.harness.store.results import outcome_column

        df.insert(df.columns.get_loc("status") + 1, "outcome", outcome_column(df))
    if args.format == "json":
        sys.stdout.write(json.dumps(_records(df), indent=1, default=str) + "\n")
        return 0
    for c in ("instance_params", "solver_params", "metrics", "curve"):
        if c in df.columns:
            df[c] = df[c].map(lambda d: json.dumps(d, sort_keys=True, default=float))
    if args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    else:
        cols = (["run_id"] if args.all else []) + [
            "problem", "dataset", "instance_params", "seed", "solver", "solver_params", "outcome", "objective",
            "gap_rel", "gap_scaled", "wall_time_s", "metric_error_rate"]
        if "below_certified" in df.columns and df["below_certified"].any():
            cols.append("below_certified")
        import pandas as pd

        with pd.option_context("display.max_rows", None, "display.width", 250, "display.max_colwidth", 60):
            print(df[[c for c in cols if c in df.columns]].to_string(index=False))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from psdbench.cli import preflight
    from psdbench.harness.grid.inputs import ReadOnlyStore

    store = ReadOnlyStore(args.db)
    preflight.check_writes(args.out, "--out")
    print(_report_line(preflight.write_report_whole(store, args.out)))
    return 0


def _cmd_export(args: argparse.Namespace) -> int:
    from psdbench.harness.grid.inputs import ReadOnlyStore
    from psdbench.publish.export import check_target, export_dataset

    store = ReadOnlyStore(args.db)
    check_target(args.out)
    paths = export_dataset(store, args.out, runs=args.run, point_cap=int(args.point_cap_mb * 2**20))
    from psdbench.publish.read import read_manifest

    tables = read_manifest(Path(args.out))["tables"]
    print(f"dataset: {args.out} ({tables['cells']['rows']} cells, {tables['runs']['rows']} runs, "
          f"{tables['references']['rows']} references; {paths['manifest'].name})")
    return 0


def _cmd_merge(args: argparse.Namespace) -> int:
    from psdbench.publish.merge import merge_datasets

    info = merge_datasets(args.datasets, args.out)
    for d in info["reference_disagreements"]:
        print(f"psdbench: warning: reference of {d['problem']} on {d['dataset']} ({d['instance_key']}): "
              f"{d['sources'][0]} certifies [{d['a'][0]:.12g}, {d['a'][1]:.12g}], {d['sources'][1]} "
              f"[{d['b'][0]:.12g}, {d['b'][1]:.12g}]: they do not meet", file=sys.stderr)
    for table, keys in info["same_key_different_content"].items():
        print(f"psdbench: warning: {len(keys)} {table} rows differ between sources under one key "
              f"(the first source's kept), e.g. {keys[0]}", file=sys.stderr)
    counts = ", ".join(f"{t} {info['rows_in'][t]} in, {info['rows_out'][t]} out" for t in info["rows_in"])
    print(f"merged: {args.out} ({counts})")
    return 0


def _cmd_verify(args: argparse.Namespace) -> int:
    from psdbench.publish.read import read_manifest
    from psdbench.publish.verify import verify_dataset

    read_manifest(args.dataset)  # not a dataset: one line, exit 2, before any work
    checked, findings = verify_dataset(args.dataset, references=args.references)
    for f in findings:
        print(f"{f.table} {f.key}: {f.what}")
    rows = len({(f.table, f.key) for f in findings})
    print(f"verify: {checked} rows checked from their stored points, "
          + (f"{rows} do not reproduce" if rows else "all reproduce"))
    return EXIT_REGRESSION if rows else 0


def _cmd_site(args: argparse.Namespace) -> int:
    from psdbench.publish.site import build_site

    info = build_site(args.datasets, args.out, title=args.title)
    counts = ", ".join(f"{t} {info['merge']['rows_in'][t]} in, {info['merge']['rows_out'][t]} out" for t in info["merge"]["rows_in"])
    print(f"site: {info['index']} ({info['pages']} pages, {info['rows']} rows, {info['setups']} setups; {counts})")
    return 0


def _cmd_import(args: argparse.Namespace) -> int:
    from psdbench.publish.outside import import_results

    info = import_results(args.files, args.format, args.out)
    print(f"dataset: {args.out} ({info['cells']} cells from {info['files']} {args.format} files, {info['runs']} runs; "
          f"{info['left_out']} rows left out; labelled: reported by the solver, not verified)")
    return 0


def _cmd_compare(args: argparse.Namespace) -> int:
    import pandas as pd

    from psdbench.report.compare import TABLE_WIDTH, cell_table, compare_cells, compare_configs, compare_solvers, unmatched
    from psdbench.harness.asvspec import declared_directions
    from psdbench.harness.grid.inputs import ReadOnlyStore
    from psdbench.registry import discover

    metrics = [m.strip() for m in args.metrics.split(",") if m.strip()] if args.metrics else []
    # the current row of each cell (as results and the report): a cell re-run after a code change is one row
    a, b = ReadOnlyStore(args.a).results_frame(view="current"), ReadOnlyStore(args.b).results_frame(view="current")
    known = {c[len("metric_"):] for c in [*a.columns, *b.columns] if c.startswith("metric_")}
    if set(metrics) - known:
        raise PsdbenchError(f"compare: --metrics {', '.join(sorted(set(metrics) - known))}: no such metric in "
                            f"{args.a} or {args.b} (known: {', '.join(sorted(known)) or 'none'})")
    directions = declared_directions(discover())  # the one rule for direction, read as asv reads it
    cells = compare_cells(a, b, factor=args.factor, gap_tol=args.gap_tol, min_time=args.min_time,
                          directions=directions)
    solvers = compare_solvers(cells) if len(cells) else compare_solvers(cells.assign(gap_change=[], time_ratio=[]))
    only_a, only_b = unmatched(a, b)
    configs = compare_configs(a, b, factor=args.factor, gap_tol=args.gap_tol, min_time=args.min_time,
                              directions=directions)
    worse = configs[configs["worse"] != ""]
    status = EXIT_REGRESSION if args.fail_on_regression and len(worse) else 0
    if not len(cells):
        print(f"psdbench: note: {args.a} and {args.b} share no cell ({only_a} and {only_b} cells; cells match on "
              "problem, dataset, instance parameters, seed, solver and solver parameters)", file=sys.stderr)
    shown = cells[cells["flags"] != ""] if args.only_flagged and len(cells) else cells
    if args.format == "json":
        print(json.dumps({"cells": _records(shown), "solvers": _records(solvers), "only_in_a": only_a,
                          "only_in_b": only_b, "regressions": _records(worse)}, indent=1, default=str))
        return status
    if args.format == "csv":
        shown.to_csv(sys.stdout, index=False)
        return status
    with pd.option_context("display.max_rows", None, "display.width", TABLE_WIDTH, "display.max_colwidth", 40):
        print(f"A = {args.a}\nB = {args.b}")  # the table fits TABLE_WIDTH columns; these two are the paths
        print(f"{len(cells)} matched cells ({only_a} only in A, {only_b} only in B); "
              f"{int((cells['flags'] != '').sum()) if len(cells) else 0} flagged")
        print(cell_table(shown, metrics))
        print("\nper solver (time ratio B/A, geometric mean):")
        print(solvers.to_string(index=False) if len(solvers) else "(no solvers)")
        print(f"\n{len(worse)} configurations worse beyond their spread (medians over their cells)"
              + (":" if len(worse) else ""))
        for r in worse.itertuples():
            print(f"  {r.config} on {r.instance_set}: {r.worse.replace(',', ', ')} (time {r.time_a:.3g} -> "
                  f"{r.time_b:.3g} s, gap {r.gap_a:.3g} -> {r.gap_b:.3g}; {r.cells} cells)"[:TABLE_WIDTH])
    return status


def _cmd_asv(args: argparse.Namespace) -> int:
    if args.asv_cmd == "continuous":
        from psdbench.asvbench.losses import continuous

        return continuous(list(args.asv_args))
    from psdbench.asvbench.init import write_asv_files

    for path in write_asv_files(args.dir, suites=args.suite, force=args.force):
        print(f"wrote {path}")
    return 0


COMMANDS = {"asv": _cmd_asv, "run": _cmd_run, "list": _cmd_list, "info": _cmd_info, "results": _cmd_results,
            "report": _cmd_report, "compare": _cmd_compare, "export": _cmd_export,
            "verify": _cmd_verify, "merge": _cmd_merge, "site": _cmd_site, "import": _cmd_import}


def main(argv: list[str] | None = None) -> int:
    """Run the command line; returns the exit status (0, 1, 2 or 3, 4 for ``compare --fail-on-regression``
    with regressions; 130 on Ctrl-C, 128 + the signal on
    SIGTERM / SIGHUP / SIGQUIT, 141 on a closed standard output).

    As the ``psdbench`` program (``argv`` None), a Ctrl-C or stop signal after the command ended,
    during the interpreter's clean-up, still exits 130 / 128 + the signal (:func:`signals.late_guard`).
    """
    status = _main(argv)
    if argv is None and _PROGRAM:
        from psdbench.system.signals import late_guard

        late_guard()
    return status


def _main(argv: list[str] | None) -> int:
    from psdbench.system.signals import exit_status, interrupted_line, release, stops_gracefully

    try:  # Ctrl-C while these load (the first second) ends as anywhere else, not with a traceback
        release(_GUARD)  # from here on, Ctrl-C is a KeyboardInterrupt handled below
        from psdbench.cli import preflight
        from psdbench.harness.limits import MachineError, cut_line
        from psdbench.system.oserrors import EXIT_MACHINE, EXIT_PIPE, describe, quiet_stdout
    except KeyboardInterrupt as exc:
        print(interrupted_line(exc, None), file=sys.stderr)
        return exit_status(exc)

    parser = _parser()
    argv = sys.argv[1:] if argv is None else list(argv)
    args: argparse.Namespace | None = None
    try:
        if not argv:
            parser.print_help()
            return 0
        if argv[:2] == ["asv", "continuous"]:  # asv's own arguments, options first (-e, -b ...), parsed by asv
            args = argparse.Namespace(cmd="asv", asv_cmd="continuous", asv_args=argv[2:])
        else:
            args = parser.parse_args(argv)
        if args.cmd is None:
            parser.print_help()
            return 0
        preflight.check_cwd(args.cmd)
        with stops_gracefully():
            return COMMANDS[args.cmd](args)
    except PsdbenchError as exc:
        print(f"psdbench: error: {cut_line(str(exc))}", file=sys.stderr)
        return 2
    except MachineError as exc:  # a cluster that cannot run cells or went away, every cell failed by the harness
        print(f"psdbench: error: {cut_line(str(exc))}", file=sys.stderr)
        return EXIT_MACHINE
    except SystemExit as exc:  # --help / --version
        return exc.code if isinstance(exc.code, int) else 0
    except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM / SIGHUP / SIGQUIT (signals.Terminated)
        print(interrupted_line(exc, getattr(args, "cmd", None)), file=sys.stderr)
        return exit_status(exc)
    except BrokenPipeError:  # `psdbench results | head -1`: the reader has what it wanted
        quiet_stdout()
        return EXIT_PIPE
    except Exception as exc:
        known = describe(exc, getattr(args, "db", None))
        if known is not None:
            print(f"psdbench: error: {cut_line(known[1])}", file=sys.stderr)
            return known[0]
        print(f"psdbench: internal error: {type(exc).__name__}: {cut_line(str(exc))}", file=sys.stderr)
        return 1

