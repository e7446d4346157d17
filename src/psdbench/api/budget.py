"""The one deadline a solver works against (:class:`Budget`), re-exported by :mod:`psdbench.api`."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np


@dataclass(frozen=True)
class Budget:
    """What a solver may spend, and the one deadline the harness enforces.

    ``deadline`` is a :func:`time.monotonic` instant (system-wide on every platform psdbench runs
    on, so the harness process and the worker agree on it).  The harness kills the worker at
    ``deadline + grace_s``; a solver that checks :meth:`expired` between iterations and returns
    its point is recorded as ``timeout`` with that point verified, one that does not is killed.

    Attributes
    ----------
    time_limit_s : float, optional
        Seconds the cell was given (informational: the deadline is what counts).
    max_iter : int, optional
        Overrides the solver's own iteration limit when set.
    deadline : float, optional
        ``time.monotonic()`` value at which the solver must stop; ``None``: no limit.
    grace_s : float
        Seconds after ``deadline`` before the hard kill (for the solver to return and the harness
        to verify).
    checkpoint : callable, optional
        Set by the harness: receives each iterate a :class:`TraceRecorder` keeps, so that a cell
        killed at the deadline still has its last sampled point verified.
    """

    time_limit_s: float | None = None
    max_iter: int | None = None
    deadline: float | None = None
    grace_s: float = 0.0
    checkpoint: Callable[[float, dict[str, np.ndarray]], None] | None = field(default=None, compare=False, repr=False)

    @classmethod
    def seconds(cls, seconds: float | None, max_iter: int | None = None, grace_s: float = 0.0) -> "Budget":
        """A budget whose deadline is ``seconds`` from now (``None``: no deadline)."""
        deadline = None if seconds is None else time.monotonic() + float(seconds)
        return cls(time_limit_s=seconds, max_iter=max_iter, deadline=deadline, grace_s=grace_s)

    def remaining(self) -> float | None:
        """Seconds left before the deadline (never negative), or ``None`` without one."""
        if self.deadline is None:
            return None
        return max(0.0, self.deadline - time.monotonic())

    def expired(self) -> bool:
        """Whether the deadline has passed: a solver stops and returns its point."""
        return self.deadline is not None and time.monotonic() >= self.deadline
