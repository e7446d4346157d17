"""Command line: ``psdbench run | list | results | report``.

Exit codes: 0 success (failed cells are results), 2 bad input (config, plugin, data), 1 internal
error.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .api import PsdbenchError

DEFAULT_DB = "psdbench-results.sqlite"


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="psdbench", description="Benchmark harness for optimization on the PSD cone.")
    sub = ap.add_subparsers(dest="cmd")
    run = sub.add_parser("run", help="run a suite or grid (default: the default suite)")
    src = run.add_mutually_exclusive_group()
    src.add_argument("--suite", default=None, help="named built-in suite (psdbench list suites)")
    src.add_argument("--grid", default=None, help="grid TOML file")
    run.add_argument("--db", default=DEFAULT_DB)
    run.add_argument("--jobs", type=int, default=None, help="worker processes (default: cores)")
    run.add_argument("--backend", default="local", choices=["local", "dask"])
    run.add_argument("--scheduler", default=None, help="dask scheduler address (default: a local cluster)")
    run.add_argument("--timeout", type=float, default=None, help="seconds per cell (overrides the grid)")
    run.add_argument("--force", action="store_true", help="re-run cells already stored")
    run.add_argument("--report", default="reports", help="report directory written after the run ('' for none)")
    run.add_argument("--quiet", action="store_true", help="no progress bar")
    ls = sub.add_parser("list", help="list problems, solvers, datasets or suites")
    ls.add_argument("what", choices=["problems", "solvers", "datasets", "suites"])
    res = sub.add_parser("results", help="print the stored results")
    res.add_argument("--db", default=DEFAULT_DB)
    res.add_argument("--format", default="table", choices=["table", "csv", "json"])
    rep = sub.add_parser("report", help="write the HTML / Markdown / CSV report")
    rep.add_argument("--db", default=DEFAULT_DB)
    rep.add_argument("--out", default="reports")
    return ap


def _cmd_run(args: argparse.Namespace) -> int:
    from .harness.grid import expand, read_grid_file, read_suite
    from .harness.runner import run_grid
    from .harness.store import Store
    from .registry import discover

    reg = discover()
    for name, why in reg.broken.items():
        print(f"psdbench: warning: plugin {name} skipped ({why})", file=sys.stderr)
    spec, name = read_grid_file(args.grid) if args.grid else read_suite(args.suite or "default", reg)
    grid = expand(spec, name, reg)
    store = Store(args.db)
    run_id = run_grid(grid, store, jobs=args.jobs, backend=args.backend, timeout=args.timeout, force=args.force,
                      progress=not args.quiet, command=" ".join(sys.argv), scheduler=args.scheduler)
    df = store.results_frame()
    mine = df[df["cell_key"].isin({c.cell_key for c in grid.cells})]
    counts = mine["status"].value_counts().to_dict() if len(mine) else {}
    print(f"run {run_id}: {len(mine)} cells of grid {grid.name} in {args.db}: "
          + ", ".join(f"{v} {k}" for k, v in sorted(counts.items())))
    if args.report:
        from .report import write_report

        paths = write_report(store, args.report)
        print(_report_line(paths))
    return 0


def _report_line(paths: dict[str, Path]) -> str:
    """``report: <html>, <markdown> (+ N tables and figures in <dir>)``."""
    main = [paths[k] for k in ("html", "markdown") if k in paths]
    rest = len(paths) - len(main)
    where = main[0].parent if main else ""
    return "report: " + ", ".join(str(p) for p in main) + (f" (+ {rest} CSV and PNG files in {where})" if rest else "")


def _cmd_list(args: argparse.Namespace) -> int:
    from .registry import discover

    reg = discover()
    if args.what == "problems":
        for n, p in sorted(reg.problems.items()):
            print(f"{n}\t{(p.__doc__ or '').strip().splitlines()[0] if p.__doc__ else ''}")
    elif args.what == "solvers":
        for n, s in sorted(reg.solvers.items()):
            kinds = ",".join(getattr(s, "kinds", ()))
            print(f"{n}\t{kinds}\t{(type(s).__doc__ or '').strip().splitlines()[0] if type(s).__doc__ else ''}")
    elif args.what == "datasets":
        for n in reg.dataset_names():
            print(n)
        if "uci" in reg.collections:
            try:
                reg.collections["uci"].names()
            except PsdbenchError as exc:
                print(f"(uci/* unavailable: {exc})", file=sys.stderr)
    else:
        for n in reg.suite_names():
            print(n)
    for name, why in reg.broken.items():
        print(f"psdbench: warning: plugin {name} skipped ({why})", file=sys.stderr)
    return 0


def _cmd_results(args: argparse.Namespace) -> int:
    from .harness.store import Store

    if not Path(args.db).is_file():
        raise PsdbenchError(f"no results store at {args.db}")
    df = Store(args.db).results_frame()
    df = df.drop(columns=["trace"])
    for c in ("instance_params", "solver_params", "metrics", "curve"):
        df[c] = df[c].map(lambda d: json.dumps(d, sort_keys=True, default=float))
    if args.format == "csv":
        df.to_csv(sys.stdout, index=False)
    elif args.format == "json":
        sys.stdout.write(df.to_json(orient="records", indent=1) + "\n")
    else:
        cols = ["problem", "dataset", "instance_params", "seed", "solver", "status", "objective", "gap_rel",
                "wall_time_s", "metric_error_rate"]
        import pandas as pd

        with pd.option_context("display.max_rows", None, "display.width", 200, "display.max_colwidth", 60):
            print(df[[c for c in cols if c in df.columns]].to_string(index=False))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from .report import write_report
    from .harness.store import Store

    if not Path(args.db).is_file():
        raise PsdbenchError(f"no results store at {args.db}")
    paths = write_report(Store(args.db), args.out)
    print(_report_line(paths))
    return 0


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.cmd is None:
        args = _parser().parse_args(["run", *(argv or [])])
    try:
        return {"run": _cmd_run, "list": _cmd_list, "results": _cmd_results, "report": _cmd_report}[args.cmd](args)
    except PsdbenchError as exc:
        print(f"psdbench: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("psdbench: interrupted; finished cells are stored, re-run to complete the rest", file=sys.stderr)
        return 130
    except Exception as exc:
        print(f"psdbench: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
