"""The losses of an asv run, printed at its table: ``psdbench asv continuous [ASV OPTIONS] [BASE] HEAD``.

A benchmark of :mod:`psdbench.asvbench.suites` never raises for a configuration that crashes or
loses a value: its time is ``n/a`` (asv's skip) and its tracked values are
:data:`~psdbench.asvbench.tracked.LOST`, so ``asv continuous`` prints its table and flags the loss.
Each loss is also one line, ``psdbench: lost <what>: <configuration> on <instance set>: <reason>``
(:func:`record`), which asv shows only with ``-e``, among its log.  ``psdbench asv continuous``
runs ``asv continuous`` with its arguments unchanged (its output as it comes), the benchmarks
writing their lines into a folder of its own (:data:`LOSSES_ENV`, one file per commit, keyed by
asv's ``ASV_COMMIT``), then prints HEAD's lines after the table, each standing loss (the same line
at BASE) marked.  Exit status: asv's when it is not 0 (1: something got worse, 2: a benchmark
failed), else 1 when HEAD lost something BASE did not, else 0; bad input (asv missing, a commit
git does not know, arguments asv refuses) is one line and exit 2 before anything runs.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from psdbench.system.errors import PsdbenchError

#: The environment variable naming the folder the benchmarks write their loss lines into.
LOSSES_ENV = "PSDBENCH_ASV_LOSSES"


def record(line: str) -> None:
    """Print a loss line on standard error and, under ``psdbench asv continuous``, append it to the
    file of the commit asv benchmarks (``$PSDBENCH_ASV_LOSSES/<ASV_COMMIT>.txt``)."""
    print(line, file=sys.stderr)
    folder = os.environ.get(LOSSES_ENV)
    if folder:
        path = Path(folder) / f"{os.environ.get('ASV_COMMIT') or 'unknown'}.txt"
        with open(path, "a", encoding="utf-8") as f:  # one short append per line: whole under O_APPEND
            f.write(line.replace("\n", " ") + "\n")


def read_losses(folder: str | Path, commit: str) -> list[str]:
    """The distinct loss lines recorded for ``commit`` (a full hash) in ``folder``, first seen first."""
    path = Path(folder) / f"{commit}.txt"
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    return list(dict.fromkeys(line for line in text.splitlines() if line))


def _commit(rev: str) -> str:
    out = subprocess.run(["git", "rev-parse", "--verify", "-q", f"{rev}^{{commit}}"], capture_output=True, text=True)
    if out.returncode != 0 or not out.stdout.strip():
        raise PsdbenchError(f"asv continuous: {rev!r} is not a commit of the repository here (git rev-parse)")
    return out.stdout.strip()


def parse_commits(argv: list[str]) -> tuple[str, str]:
    """``(base, head)`` full hashes of the commits ``asv continuous argv`` compares, by asv's own
    parser (base: HEAD's parent by default); :class:`PsdbenchError` (one line) for arguments asv
    refuses, asv missing, or a commit git does not know."""
    try:
        from asv.commands import make_argparser
    except ImportError:
        raise PsdbenchError("asv continuous: asv is not installed (pip install 'psdbench[bench]')") from None
    parser, _ = make_argparser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = parser.parse_args(["continuous", *argv])
    except SystemExit as exc:
        if exc.code == 0:  # --help, printed by asv
            raise
        lines = err.getvalue().strip().splitlines() or ["asv continuous: bad arguments"]
        raise PsdbenchError(lines[-1]) from None
    head = _commit(args.branch)
    return (_commit(args.base) if args.base else _commit(f"{head}^")), head


def print_losses(base: str, head: str, lines_base: list[str], lines_head: list[str]) -> int:
    """Print HEAD's loss lines (a standing one marked); returns how many BASE did not have."""
    standing = set(lines_base)
    new = [line for line in lines_head if line not in standing]
    if not lines_head:
        print(f"\npsdbench: no value lost at {head[:8]}")
        return 0
    print(f"\npsdbench: {len(new)} new and {len(lines_head) - len(new)} standing losses at {head[:8]} "
          f"(against {base[:8]}):")
    for line in lines_head:
        print(line + ("" if line in new else f"  [standing: also at {base[:8]}]"))
    return len(new)


def continuous(argv: list[str], asv: str = "asv") -> int:
    """Run ``asv continuous argv``, then print HEAD's losses after its table (module docstring).

    Parameters
    ----------
    argv : list of str
        ``asv continuous``'s arguments, passed on unchanged.
    asv : str
        The asv program.

    Returns
    -------
    int
        asv's exit status when not 0, else 1 when HEAD lost a value BASE had, else 0.

    Raises
    ------
    PsdbenchError
        One line, before asv runs: see :func:`parse_commits`.
    """
    base, head = parse_commits(argv)
    with tempfile.TemporaryDirectory(prefix="psdbench-asv-losses-") as folder:
        env = {**os.environ, LOSSES_ENV: folder}
        try:
            status = subprocess.run([asv, "continuous", *argv], env=env).returncode
        except OSError as exc:
            raise PsdbenchError(f"asv continuous: cannot run {asv} ({exc.strerror})") from None
        sys.stdout.flush()
        new = print_losses(base, head, read_losses(folder, base), read_losses(folder, head))
    return status or (1 if new else 0)
