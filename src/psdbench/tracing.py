"""Trace points and sampled iterates of a solve (:class:`TraceRecorder`), re-exported by :mod:`psdbench.api`.

The harness re-scores the iterates a recorder keeps with the instance's own objective and
verification (the ``curve`` column), and verifies them when a cell is killed at its deadline.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Mapping

import numpy as np

class TraceRecorder:
    """Collects trace points and samples iterates for :class:`Solution`.

    ``add(objective=..., **values)`` appends a point ``{"t": ..., ...}``; ``add(variables=...)``
    also offers the current iterate, which is kept (copied) when it is the first, or when at least
    ``min_gap_s`` seconds and a ``ratio`` factor of elapsed time separate it from the last one
    kept, so a run keeps O(log(time)) iterates; :meth:`finish` keeps the final one.  Iterates are
    what the harness re-scores (convergence curves are never the solver's word) and what it
    verifies when a cell runs out of time.

    Parameters
    ----------
    budget : psdbench.api.Budget, optional
        Supplies the harness's ``checkpoint`` sink.  Times are measured from construction, which
        a solver does as it starts, so a curve's time axis is the solve's (as ``wall_time_s``).
    ratio, min_gap_s : float
        Iterate sampling: keep one when ``t >= ratio * t_last`` and ``t - t_last >= min_gap_s``.
    max_iterates : int
        Hard cap on stored iterates (older ones are thinned by half when it is reached).
    """

    def __init__(self, budget: Any = None, ratio: float = 1.25, min_gap_s: float = 0.002,
                 max_iterates: int = 64) -> None:
        self._clock = time.monotonic
        self._t0 = self._clock()
        self.points: list[dict[str, float]] = []
        self.iterates: list[tuple[float, dict[str, np.ndarray]]] = []
        self._ratio, self._gap, self._cap = float(ratio), float(min_gap_s), int(max_iterates)
        self._pending: tuple[float, dict[str, np.ndarray]] | None = None
        self.sink: Callable[[float, dict[str, np.ndarray]], None] | None = getattr(budget, "checkpoint", None)

    def elapsed(self) -> float:
        """Seconds since the start."""
        return self._clock() - self._t0

    def add(self, variables: Mapping[str, np.ndarray] | None = None, **values: float) -> None:
        """Record a point; ``variables`` (the current iterate) is sampled, see the class docstring."""
        t = self.elapsed()
        self.points.append({"t": t, **{k: float(v) for k, v in values.items()}})
        if variables is None:
            return
        last = self.iterates[-1][0] if self.iterates else None
        if last is None or (t >= self._ratio * last and t - last >= self._gap):
            self._keep(t, variables)
            self._pending = None
        else:
            self._pending = (t, variables)  # referenced (not read: a lazy mapping stays lazy), copied if kept at finish

    def _keep(self, t: float, variables: Mapping[str, np.ndarray]) -> None:
        snap = {k: np.array(v, dtype=float, copy=True) for k, v in variables.items()}
        self.iterates.append((t, snap))
        if len(self.iterates) > self._cap:
            self.iterates = self.iterates[:1] + self.iterates[1:-1:2] + self.iterates[-1:]
        if self.sink is not None:
            self.sink(t, snap)

    def finish(self, variables: Mapping[str, np.ndarray] | None = None) -> list[tuple[float, dict[str, np.ndarray]]]:
        """Keep the final iterate (``variables``, else the last one offered) and return the samples."""
        if variables is not None:
            self._keep(self.elapsed(), variables)
        elif self._pending is not None:
            self._keep(*self._pending)
        self._pending = None
        return self.iterates
