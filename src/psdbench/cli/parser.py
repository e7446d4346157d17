"""The command line's grammar: ``psdbench``'s argument parser and its value checks.

Every usage error is one line on stderr with exit status 2 (:class:`_Parser`), raised before any
work starts; the commands themselves are in :mod:`psdbench.cli.commands`.  Imports nothing numerical, so
``--help`` and ``--version`` stay fast.
"""

from __future__ import annotations

import argparse
import math
from typing import NoReturn

from psdbench.system.errors import PsdbenchError

DEFAULT_DB = "psdbench-results.sqlite"
#: ``compare --fail-on-regression``: a configuration got worse beyond its spread (for CI).
EXIT_REGRESSION = 4


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors are one line on stderr and exit status 2 (no usage dump)."""

    def error(self, message: str) -> NoReturn:
        raise PsdbenchError(f"{self.prog}: {message}")


def _jobs(text: str) -> int:
    from psdbench.harness.limits import echo

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--jobs must be an integer >= 1, not {echo(text)}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"--jobs must be an integer >= 1, not {echo(text)}")
    return value


def _seconds(text: str) -> float:
    from psdbench.harness.limits import MAX_SECONDS, echo

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"--timeout must be a number of seconds > 0, not {echo(text)}") from None
    if not math.isfinite(value) or not 0 < value <= MAX_SECONDS:  # a deadline past MAX_SECONDS overflows a timer
        raise argparse.ArgumentTypeError(f"--timeout must be a finite number of seconds, 0 < --timeout <= "
                                         f"{MAX_SECONDS:.0e}, not {echo(text)}")
    return value


def _positive(text: str) -> float:
    from psdbench.harness.limits import echo

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number, not {echo(text)}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(f"expected a finite number >= 0, not {echo(text)}")
    return value


def _parser() -> argparse.ArgumentParser:
    ap = _Parser(prog="psdbench", description="Benchmark harness for optimization on the PSD cone.")
    from psdbench.system.version import psdbench_version

    ap.add_argument("--version", action="version", version=f"psdbench {psdbench_version()}")
    sub = ap.add_subparsers(dest="cmd", parser_class=_Parser)
    run = sub.add_parser("run", help="run a suite or grid (default: the default suite)")
    src = run.add_mutually_exclusive_group()
    src.add_argument("--suite", default=None, help="named suite (psdbench list suites)")
    src.add_argument("--grid", default=None, help="grid TOML file")
    run.add_argument("-s", "--solver", action="append", default=None, metavar="SOLVER",
                     help="run only this solver, or SOLVER[param=value,...] (repeatable; one the grid does not "
                          "list is added)")
    run.add_argument("-d", "--dataset", action="append", default=None, metavar="DATASET",
                     help="run the problems on this dataset instead of the grid's (repeatable)")
    run.add_argument("-p", "--problem", action="append", default=None, metavar="PROBLEM",
                     help="run only this problem, or PROBLEM[param=value,...] (repeatable; one the grid does not "
                          "list is added)")
    run.add_argument("--db", default=DEFAULT_DB)
    run.add_argument("--jobs", type=_jobs, default=None, help="worker processes, >= 1 (default: cores)")
    run.add_argument("--backend", default="local", choices=["local", "dask"])
    run.add_argument("--scheduler", default=None, help="dask scheduler address (default: a local cluster)")
    run.add_argument("--timeout", type=_seconds, default=None, help="seconds per cell (overrides the grid)")
    run.add_argument("--force", action="store_true", help="re-run cells already stored")
    run.add_argument("--out", default="reports", metavar="DIR",
                     help="report directory (as `psdbench report --out`), written after the run when what it shows "
                          "changed ('' for none)")
    run.add_argument("--report", dest="report_alias", default=None, help=argparse.SUPPRESS)  # the former name of --out
    run.add_argument("--quiet", action="store_true",
                     help="no progress bar or progress lines (the closing summary line is still printed)")
    run.add_argument("--blas-threads", type=int, default=None, metavar="N",
                     help="BLAS threads of each cell worker (default: $PSDBENCH_BLAS_THREADS, else 1); recorded in the "
                          "run's row, so runs with different counts are told apart")
    run.add_argument("--save-solutions", action="store_true", default=None,
                     help="keep each cell's returned point (<db stem>.solutions/<run>/<cell>.npz, named in the row)")
    cache = run.add_mutually_exclusive_group()
    cache.add_argument("--ref-cache", default=None, metavar="DIR",
                       help="reference cache shared by stores (default: $PSDBENCH_REF_CACHE, else "
                            "$XDG_CACHE_HOME/psdbench/references)")
    cache.add_argument("--no-ref-cache", action="store_true", help="neither read nor write the reference cache")
    run.add_argument("--yes", action="store_true", help="run a grid of more than 20000 cells")
    ls = sub.add_parser("list", help="list problems, solvers, datasets or suites")
    ls.add_argument("what", nargs="?", default=None, choices=["problems", "solvers", "datasets", "suites"],
                    help="what to list (default: all four)")
    ls.add_argument("-v", "--verbose", action="store_true", help="every parameter, its default, type and meaning")
    info = sub.add_parser("info", help="one problem, solver, dataset or suite: every parameter, default, type, meaning")
    info.add_argument("name")
    res = sub.add_parser("results", help="print the stored results: the current row of each cell")
    res.add_argument("--db", default=DEFAULT_DB)
    res.add_argument("--all", action="store_true", help="every stored row of every run (the history)")
    res.add_argument("--format", default="table", choices=["table", "csv", "json"])
    rep = sub.add_parser("report", help="write the HTML / Markdown / CSV report")
    rep.add_argument("--db", default=DEFAULT_DB)
    rep.add_argument("--out", default="reports")
    exp = sub.add_parser("export", help="write the results as a dataset folder (Parquet tables and a manifest) "
                         "that pandas and DuckDB read without psdbench")
    exp.add_argument("--db", default=DEFAULT_DB)
    exp.add_argument("--run", action="append", default=None, metavar="RUN_ID",
                     help="only this run's rows (repeatable; default: every run's, one row per cell and run)")
    exp.add_argument("--out", default="dataset", metavar="DIR",
                     help="the dataset folder, replaced as a whole (default: dataset)")
    exp.add_argument("--point-cap-mb", type=_positive, default=1.0, metavar="MB",
                     help="carry each saved point (run --save-solutions) of at most this size, for psdbench verify "
                          "(default 1)")
    mrg = sub.add_parser("merge", help="merge datasets of many machines and versions into one, nothing lost "
                         "(rows counted in and out, references reconciled, disagreements listed)")
    mrg.add_argument("datasets", nargs="+", metavar="DATASET", help="dataset folders (psdbench export)")
    mrg.add_argument("--out", required=True, metavar="DIR", help="the merged dataset folder, replaced as a whole")
    ver = sub.add_parser("verify", help="re-check a dataset's rows from their stored points on this machine: "
                         f"status, objective, gap (exit {EXIT_REGRESSION} when one does not reproduce)")
    ver.add_argument("dataset", help="a dataset folder (psdbench export)")
    ver.add_argument("--references", action="store_true",
                     help="also certify each certified reference again (one solve per instance)")
    site = sub.add_parser("site", help="write a static results site of datasets (offline, any static host): "
                          "winners per setup, a page per solver, instance set and machine, the history across builds")
    site.add_argument("datasets", nargs="+", metavar="DATASET", help="dataset folders (psdbench export / merge / import)")
    site.add_argument("-o", "--out", required=True, metavar="DIR", help="the site folder, replaced as a whole")
    site.add_argument("--title", default="psdbench results", help="the site's title (default: psdbench results)")
    imp = sub.add_parser("import", help="read outside result files (benchopt's, asv's) as a dataset whose rows are "
                         "labelled: quality the solver reported, nobody verified or certified")
    imp.add_argument("files", nargs="+", metavar="FILE", help="result files (benchopt: .parquet / .csv; asv: results/<machine>/*.json)")
    imp.add_argument("--format", required=True, choices=["benchopt", "asv"], help="the files' format")
    imp.add_argument("--out", required=True, metavar="DIR", help="the dataset folder, replaced as a whole")
    cmp_ = sub.add_parser("compare", help="compare two stores per cell and per solver, regressions flagged")
    cmp_.add_argument("a", help="baseline store")
    cmp_.add_argument("b", help="candidate store")
    cmp_.add_argument("--factor", type=_positive, default=1.1, help="time ratio B/A flagged as slower (default 1.1)")
    cmp_.add_argument("--gap-tol", type=_positive, default=1e-6, help="gap_rel increase flagged (default 1e-6)")
    cmp_.add_argument("--min-time", type=_positive, default=0.05, help="A's time below which ratios are not flagged")
    cmp_.add_argument("--only-flagged", action="store_true", help="per-cell table: flagged cells only")
    cmp_.add_argument("--metrics", default=None, metavar="M1,M2",
                      help="per-cell table: a column of change for each of these metrics (csv / json: all)")
    cmp_.add_argument("--format", default="table", choices=["table", "csv", "json"])
    cmp_.add_argument("--fail-on-regression", action="store_true",
                      help=f"exit {EXIT_REGRESSION} when a configuration's time, gap or metric got worse beyond its spread")
    asv = sub.add_parser("asv", help="asv for a plugin's repository: asv init writes asv.conf.json and benchmarks/")
    asv_sub = asv.add_subparsers(dest="asv_cmd", parser_class=_Parser, required=True)
    init = asv_sub.add_parser("init", help="write asv.conf.json and the benchmark stub into a plugin's repository")
    init.add_argument("dir", nargs="?", default=".", help="the plugin's git repository (default: .)")
    init.add_argument("--suite", action="append", default=None, metavar="SUITE",
                      help="track this suite (repeatable; default: every tracked suite psdbench does not ship)")
    init.add_argument("--force", action="store_true", help="overwrite the files if they exist")
    cont = asv_sub.add_parser("continuous", help="asv continuous [BASE] HEAD, then HEAD's losses (configuration, "
                              "reason) after its table; exit 1 when HEAD got worse or lost a value")
    cont.add_argument("asv_args", nargs=argparse.REMAINDER, metavar="ASV_ARGS",
                      help="asv continuous's arguments, passed on unchanged (e.g. -b Toy main HEAD)")
    return ap
