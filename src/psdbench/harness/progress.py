"""The run's progress and its counts: a live tqdm bar on a terminal; on a log or a pipe, plain lines.

Only solver cells are counted (references are harness work, shown as a note), in the page's
words (:func:`psdbench.harness.store.results.outcome`: ``rejected``, ``inaccurate``, ...); ``max_iter``
and ``inaccurate`` apart from failures, and cells another run on the same store holds or has
stored are counted as ``elsewhere`` (not to be confused with the status ``skipped``: a solver that
does not apply to an instance, which is a result of this run).

Where the output is not a terminal (a log, a pipe, a CI job), no ``\r`` updates are written; a
plain line (``psdbench: 12/40 cells (10 ok, 2 rejected; refs 4/4), 1m23s``) is written when the
first reference and the first cell finish, then when one finishes at least :data:`PLAIN_EVERY` s
after the last line, and for the last one (a line is written after the row is committed); so a long run shows it is alive, and a short one writes a line or
two.  No thread is used (a run forks its first workers while it has a single thread).
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from typing import IO

#: Statuses counted as failures in the progress line and the summary.
FAILED = frozenset({"timeout", "infeasible", "rejected", "solver infeasible", "diverged", "error", "crashed",
                    "out_of_memory"})
#: Outcomes shown beside ``max_iter`` (a point that verified, but not a converged one).
STOPPED = frozenset({"max_iter", "inaccurate"})
#: Seconds between plain progress lines where the output is not a terminal.
PLAIN_EVERY = 30.0


class Progress:
    """Counts of a run's cells, with a tqdm bar on a terminal.

    Parameters
    ----------
    total : int
        Solver cells this run means to compute.
    refs : int
        References to compute first (not counted as cells).
    enabled : bool
        False: no progress at all (``--quiet``, the Python API by default).
    file : file, optional
        Where progress goes (default ``sys.stderr``).  tqdm draws its bar only if this is a
        terminal (``disable=None``); elsewhere plain lines are written (see the module).
    """

    def __init__(self, total: int, refs: int = 0, enabled: bool = True, file: IO[str] | None = None) -> None:
        self.total, self.refs, self.refs_done = total, refs, 0
        self.status: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.bar = None
        self.plain: IO[str] | None = None
        self.started = time.monotonic()
        self._last_line: float | None = None
        self._pending = False
        self._cell_shown = False
        out = file or sys.stderr
        if enabled and total + refs > 0:
            try:
                tty = out.isatty()
            except (AttributeError, ValueError):
                tty = False
            if tty:
                from tqdm import tqdm

                self.bar = tqdm(total=total, unit="cell", file=out, disable=None, leave=False,
                                dynamic_ncols=True, desc="cells")
                self._show()
            else:
                self.plain = out

    def reference(self) -> None:
        """One reference finished."""
        self.refs_done += 1
        self._show()

    def cell(self, status: str) -> None:
        """One solver cell finished with ``status`` (its outcome word: ``rejected``, ``inaccurate``, ...)."""
        self.status[status] += 1
        if self.bar is not None:
            self.bar.update(1)
        self._show()

    def skip(self, reason: str, what: str = "cell") -> None:
        """A cell (or reference) this run did not compute: ``reason`` (another run holds it ...)."""
        if what == "ref":
            self.refs_done += 1
        else:
            self.skipped[reason] += 1
            if self.bar is not None:
                self.bar.update(1)
        self._show()

    @property
    def failed(self) -> int:
        """Cells that ended in a failure status (``max_iter`` is not one)."""
        return sum(n for s, n in self.status.items() if s in FAILED)

    def line(self) -> str:
        """The plain progress line (no newline)."""
        done = sum(self.status.values()) + sum(self.skipped.values())
        parts = [f"{n} {w}" for w, n in sorted(self.status.items())]
        if self.skipped:
            parts.append(f"{sum(self.skipped.values())} another run's")
        refs = f"refs {self.refs_done}/{self.refs}" if self.refs else ""
        inside = ", ".join(parts) + ("; " if parts and refs else "") + refs
        secs = int(time.monotonic() - self.started)
        return f"psdbench: {done}/{self.total} cells" + (f" ({inside})" if inside else "") + \
            f", {secs // 60}m{secs % 60:02d}s"

    def _plain(self, force: bool = False) -> None:
        if self.plain is None:
            return
        now = time.monotonic()
        if force or self._last_line is None or now - self._last_line >= PLAIN_EVERY:
            try:
                print(self.line(), file=self.plain, flush=True)
            except (OSError, ValueError):  # a closed log: progress is not worth failing the run
                self.plain = None
                return
            self._last_line, self._pending = now, False
        else:
            self._pending = True

    def _show(self) -> None:
        cells = sum(self.status.values()) + sum(self.skipped.values())
        first_cell = cells == 1 and not self._cell_shown
        self._cell_shown = self._cell_shown or cells > 0
        self._plain(force=first_cell or (cells >= self.total and self.refs_done >= self.refs))  # first cell, last one
        if self.bar is None or self.bar.disable:
            return
        post = {"ok": self.status["ok"], "max_iter": sum(self.status[w] for w in STOPPED), "failed": self.failed}
        if self.skipped:
            post["elsewhere"] = sum(self.skipped.values())  # another run's (status "skipped" is a result)
        if self.refs:
            post["refs"] = f"{self.refs_done}/{self.refs}"
        self.bar.set_postfix(post, refresh=True)

    def close(self) -> None:
        """Remove the bar (the caller prints the one summary line); a plain line not yet written is."""
        if self._pending:
            self._plain(force=True)
        self.plain = None
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def summary(self) -> dict[str, int]:
        """``{"ran": ..., "elsewhere": ..., "status": {<status>: n, ...}}`` for the run's summary line.

        ``elsewhere`` counts the cells this run left to another run on the store (held or stored by
        it); cells whose status is ``skipped`` (a solver that does not apply) are under ``status``.
        """
        return {"ran": sum(self.status.values()), "elsewhere": sum(self.skipped.values()), "status": dict(self.status)}
