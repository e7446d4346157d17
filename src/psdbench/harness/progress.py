"""The run's progress bar and its counts (tqdm: a live bar on a terminal, nothing on a log).

Only solver cells are counted (references are harness work, shown as a note), ``max_iter`` is
counted apart from failures, and cells another run on the same store holds or has stored are
counted as ``elsewhere`` (not to be confused with the status ``skipped``: a solver that does not
apply to an instance, which is a result of this run).
"""

from __future__ import annotations

import sys
from collections import Counter
from typing import IO

#: Statuses counted as failures in the progress line and the summary.
FAILED = frozenset({"timeout", "infeasible", "rejected", "solver infeasible", "diverged", "error", "crashed",
                    "out_of_memory"})


class Progress:
    """Counts of a run's cells, with a tqdm bar on a terminal.

    Parameters
    ----------
    total : int
        Solver cells this run means to compute.
    refs : int
        References to compute first (not counted as cells).
    enabled : bool
        False: no bar at all (``--quiet``, the Python API by default).
    file : file, optional
        Where the bar goes (default ``sys.stderr``).  tqdm draws it only if this is a terminal
        (``disable=None``), so a log or a pipe gets no ``\\r`` updates.
    """

    def __init__(self, total: int, refs: int = 0, enabled: bool = True, file: IO[str] | None = None) -> None:
        self.total, self.refs, self.refs_done = total, refs, 0
        self.status: Counter[str] = Counter()
        self.skipped: Counter[str] = Counter()
        self.bar = None
        if enabled and total + refs > 0:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit="cell", file=file or sys.stderr, disable=None, leave=False,
                            dynamic_ncols=True, desc="cells")
            self._show()

    def reference(self) -> None:
        """One reference finished."""
        self.refs_done += 1
        self._show()

    def cell(self, status: str) -> None:
        """One solver cell finished with ``status``."""
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

    def _show(self) -> None:
        if self.bar is None or self.bar.disable:
            return
        post = {"ok": self.status["ok"], "max_iter": self.status["max_iter"], "failed": self.failed}
        if self.skipped:
            post["elsewhere"] = sum(self.skipped.values())  # another run's (status "skipped" is a result)
        if self.refs:
            post["refs"] = f"{self.refs_done}/{self.refs}"
        self.bar.set_postfix(post, refresh=True)

    def close(self) -> None:
        """Remove the bar (the caller prints the one summary line)."""
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def summary(self) -> dict[str, int]:
        """``{"ran": ..., "elsewhere": ..., "status": {<status>: n, ...}}`` for the run's summary line.

        ``elsewhere`` counts the cells this run left to another run on the store (held or stored by
        it); cells whose status is ``skipped`` (a solver that does not apply) are under ``status``.
        """
        return {"ran": sum(self.status.values()), "elsewhere": sum(self.skipped.values()), "status": dict(self.status)}
