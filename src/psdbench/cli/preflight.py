"""Checks a command makes before any work or write, and the report written whole.

``psdbench run`` and ``psdbench report`` call these before they open a store or start a cell:
the umask, the report folder (:mod:`psdbench.system.outdir`), the backend (the Dask scheduler's
reachability is :func:`psdbench.harness.limits.check_scheduler`, which the Python API makes too), the workers the machine's memory holds
(:func:`psdbench.harness.limits.plan_workers`) and the working folder.  Each raises a one-line
:class:`~psdbench.api.PsdbenchError` (exit status 2).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from psdbench.api import PsdbenchError


def check_writes(out: str | None, flag: str) -> None:
    """Before any work: the umask lets psdbench read what it writes, and the report folder (if
    any) can be replaced as a whole (:mod:`psdbench.system.outdir`)."""
    mask = os.umask(0)
    os.umask(mask)
    if mask & 0o600:
        raise PsdbenchError(f"umask {mask:04o} would make the files psdbench writes unreadable or unwritable to "
                            "you; set e.g. `umask 022`")
    if out:
        from psdbench.harness.grid.inputs import check_out_dir
        from psdbench.system.outdir import check_report_folder

        check_out_dir(out, flag)
        check_report_folder(out, flag)


#: The file in a report folder holding :func:`report_digest` of the store it was written from.
DIGEST = ".psdbench-report-digest"


def report_digest(store: Any) -> str:
    """SHA-256 of what a report shows of a store: every history row's key, run, status and gap
    columns, every reference, and psdbench's version (a run that computed nothing changes none)."""
    import hashlib

    from psdbench.system.version import psdbench_version

    h = hashlib.sha256(psdbench_version().encode())
    with store._conn() as con:  # the store's own connection: read-only (or immutable) for a ReadOnlyStore
        for query in ("SELECT seq, cell_key, run_id, status, objective, reference_objective, reference_kind, gap_abs, "
                      "gap_rel FROM history ORDER BY seq",
                      "SELECT instance_key, value, lower, gap, kind, solver, created_at FROM refs ORDER BY instance_key"):
            h.update(query.encode())
            for row in con.execute(query):
                h.update(repr(row).encode())
    return h.hexdigest()


def write_report_whole(store: Any, out: str, registry: Any = None,
                       only_if_changed: bool = False) -> dict[str, Path] | None:
    """The report written into a folder beside ``out`` and swapped in whole (:mod:`psdbench.system.outdir`);
    ``registry``: the plugins (default: discovered).  With ``only_if_changed``, a report of the
    same :func:`report_digest` (nothing to show has changed since it was written) is left as it
    is and ``None`` returned."""
    digest = report_digest(store)
    if only_if_changed:
        try:
            if (Path(out) / DIGEST).read_text().strip() == digest and (Path(out) / "report.html").is_file():
                return None
        except (OSError, UnicodeDecodeError):
            pass

    from psdbench.system.outdir import replace_folder  # only when written: the report's imports take a second

    def write(folder: Path) -> dict[str, Path]:
        from psdbench.report import write_report

        paths = write_report(store, folder, registry=registry)
        (folder / DIGEST).write_text(digest + "\n")
        return paths

    return replace_folder(out, write)


def check_backend(args: argparse.Namespace) -> None:
    if args.scheduler is not None and args.backend != "dask":
        raise PsdbenchError("--scheduler needs --backend dask (the local backend has no scheduler)")
    if args.backend == "dask":
        from importlib.util import find_spec

        if find_spec("distributed") is None:  # before the store is opened: no runs row
            raise PsdbenchError("--backend dask needs 'distributed': pip install 'psdbench[dask]'")


def check_blas_threads(args: argparse.Namespace) -> None:
    """``--blas-threads`` (else ``$PSDBENCH_BLAS_THREADS``) must be a positive integer; it is then set in
    this process's environment, which every worker the run starts inherits."""
    import os

    from psdbench.harness.workers.child import BLAS_THREADS_VAR

    given = args.blas_threads if args.blas_threads is not None else os.environ.get(BLAS_THREADS_VAR)
    if given is None:
        return
    flag = "--blas-threads" if args.blas_threads is not None else f"${BLAS_THREADS_VAR}"
    try:
        n = int(given)
    except ValueError:
        n = 0
    if n < 1 or n > 4096:
        raise PsdbenchError(f"{flag} must be a positive integer number of threads, not {given!r}")
    os.environ[BLAS_THREADS_VAR] = str(n)


def plan_jobs(jobs: int | None, memory_mb: int | None, cells: int | None = None) -> int:
    """The workers the run uses (:func:`~psdbench.harness.limits.plan_workers`; at most ``cells``),
    notes on stderr."""
    from psdbench.harness.limits import plan_workers

    used, _, notes = plan_workers(jobs, memory_mb, work=cells)
    for note in notes:
        print(f"psdbench: warning: {note}", file=sys.stderr)
    return used


def check_cwd(command: str) -> None:
    """A deleted working folder is a one-line error for the commands that take paths."""
    if command in ("list", "info"):
        return
    try:
        os.getcwd()
    except FileNotFoundError:
        raise PsdbenchError("the working folder no longer exists; cd to an existing folder and re-run") from None
