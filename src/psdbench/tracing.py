"""Trace points and sampled iterates of a solve (:class:`TraceRecorder`, :class:`Deferred`,
:func:`resolve_iterate`), re-exported by :mod:`psdbench.api`.

The harness re-scores the iterates a recorder keeps with the instance's own objective and
verification (the ``curve`` column), and verifies them when a cell is killed at its deadline.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np


@dataclass(frozen=True)
class Deferred:
    """An entry of a traced iterate that is computed only when the iterate is scored.

    A solver whose iterate has an entry that costs more than the iteration itself (GDPA's labels:
    one eigensolve each) offers it as ``Deferred(fn, args)``; :class:`TraceRecorder` keeps it
    unevaluated, and the harness computes ``fn(instance, *args)`` when it re-scores the curve
    after the timed interval, or when it verifies a killed cell's checkpoints in another process
    (:func:`resolve_iterate`).  The returned point of a solve is never deferred.

    Attributes
    ----------
    fn : callable
        ``fn(instance, *args) -> ndarray``, a module-level function (a checkpoint crosses to the
        runner's process by pickle, which names the function), deterministic in its arguments so
        that the deferred value is the one the solve would have computed.
    args : tuple
        Arguments after the instance (arrays are copied when the iterate is kept).
    """

    fn: Callable[..., Any]
    args: tuple = ()

    def __call__(self, instance: Any) -> np.ndarray:
        return np.array(self.fn(instance, *self.args), dtype=float, copy=True)

    def snapshot(self) -> "Deferred":
        """The same entry with its array arguments copied (the solver may reuse its buffers)."""
        return Deferred(self.fn, tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a
                                       for a in self.args))


def resolve_iterate(instance: Any, variables: Mapping[str, Any]) -> dict[str, Any]:
    """``variables`` with every :class:`Deferred` entry computed for ``instance``.

    Parameters
    ----------
    instance : psdbench.api.Instance
        The instance the iterate belongs to.
    variables : mapping of str to ndarray or Deferred
        A kept iterate (``Solution.iterates[i][1]``) or a checkpoint.

    Returns
    -------
    dict of str to ndarray
    """
    return {k: (v(instance) if isinstance(v, Deferred) else v) for k, v in variables.items()}


class TraceRecorder:
    """Collects trace points and samples iterates for :class:`Solution`.

    ``add(objective=..., **values)`` appends a point ``{"t": ..., ...}``; ``add(variables=...)``
    also offers the current iterate, which is kept (copied) when it is the first, or when at least
    ``min_gap_s`` seconds and a ``ratio`` factor of elapsed time separate it from the last one
    kept, so a run keeps O(log(time)) iterates; :meth:`finish` keeps the final one.  Iterates are
    what the harness re-scores (convergence curves are never the solver's word) and what it
    verifies when a cell runs out of time.  A kept iterate's arrays are copied and its
    :class:`Deferred` entries are kept unevaluated (computed by the harness, outside the solve).

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
        self.iterates: list[tuple[float, dict[str, Any]]] = []
        self._ratio, self._gap, self._cap = float(ratio), float(min_gap_s), int(max_iterates)
        self._pending: tuple[float, Mapping[str, Any]] | None = None
        self.sink: Callable[[float, dict[str, Any]], None] | None = getattr(budget, "checkpoint", None)

    def elapsed(self) -> float:
        """Seconds since the start."""
        return self._clock() - self._t0

    def add(self, variables: Mapping[str, Any] | None = None, **values: float) -> None:
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
            self._pending = (t, variables)  # referenced, copied if kept at finish

    def _keep(self, t: float, variables: Mapping[str, Any]) -> None:
        snap = {k: (v.snapshot() if isinstance(v, Deferred) else np.array(v, dtype=float, copy=True))
                for k, v in variables.items()}
        self.iterates.append((t, snap))
        if len(self.iterates) > self._cap:
            self.iterates = self.iterates[:1] + self.iterates[1:-1:2] + self.iterates[-1:]
        if self.sink is not None:
            self.sink(t, snap)

    def finish(self, variables: Mapping[str, Any] | None = None) -> list[tuple[float, dict[str, Any]]]:
        """Keep the final iterate (``variables``, else the last one offered) and return the samples."""
        if variables is not None:
            self._keep(self.elapsed(), variables)
        elif self._pending is not None:
            self._keep(*self._pending)
        self._pending = None
        return self.iterates
