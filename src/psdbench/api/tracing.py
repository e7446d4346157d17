"""Trace points and sampled iterates of a solve (:class:`TraceRecorder`, :class:`Deferred`,
:func:`resolve_iterate`, :func:`thin`), re-exported by :mod:`psdbench.api`.

The harness re-scores the iterates a recorder keeps with the instance's own objective and
verification (the ``curve`` column), and verifies them when a cell is killed at its deadline.

A trace is thinned to the points a curve can show (:func:`thin`, at most :data:`MAX_TRACE_POINTS`):
a recorder keeps no more while the solver runs, and the harness thins every solver's returned
trace the same way before it is stored.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

#: Most trace points a cell stores (:func:`thin`).
MAX_TRACE_POINTS = 600
#: Levels per decade at which :func:`thin` keeps the first point below each level of a field.
LEVELS_PER_DECADE = 10


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


def _numeric(points: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Every field that is a finite-or-NaN number in every point, as an array (``t`` included)."""
    first = points[0] if isinstance(points[0], Mapping) else {}
    keys = [k for k, v in first.items() if isinstance(v, (int, float, np.number)) and not isinstance(v, bool)]
    out = {}
    for k in keys:
        try:
            out[k] = np.array([float(p[k]) for p in points])
        except (KeyError, TypeError, ValueError, IndexError):  # a field some points lack or do not hold as a number
            continue
    return out


def _level_crossings(v: np.ndarray, per_decade: int) -> np.ndarray:
    """Indices where the running minimum of ``|v|`` first falls below a new level ``10**(j / per_decade)``."""
    a = np.abs(v)
    a = np.where(np.isfinite(a) & (a > 0), a, np.inf)
    run = np.minimum.accumulate(a)
    ok = np.isfinite(run)
    if not ok.any():
        return np.zeros(0, dtype=int)
    level = np.floor(per_decade * np.log10(run[ok]))
    pos = np.flatnonzero(ok)
    return np.concatenate([pos[:1], pos[1:][np.diff(level) < 0]])


def _log_spaced(x: np.ndarray, want: int) -> np.ndarray:
    """About ``want`` distinct positions of the sorted, non-decreasing ``x`` (``x[0] = 0``) at values
    spaced evenly on ``log(1 + x / step)`` (``step``: the smallest positive increment), i.e. every
    position while they are dense, geometrically spaced after."""
    if want <= 0 or len(x) < 2 or x[-1] <= 0:
        return np.zeros(0, dtype=int)
    d = np.diff(x)
    step = float(np.min(d[d > 0]))
    top = math.log1p(float(x[-1]) / step)

    def pick(k: int) -> np.ndarray:
        return np.unique(np.searchsorted(x, step * np.expm1(np.linspace(0.0, top, k))).clip(0, len(x) - 1))

    lo, hi = want, want
    while len(pick(hi)) < want and hi < 64 * len(x):  # duplicates where points are dense: ask for more
        lo, hi = hi, 2 * hi
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if len(pick(mid)) <= want else (lo, mid)
    return pick(lo)


def thin_indices(points: Sequence[Mapping[str, Any]], max_points: int = MAX_TRACE_POINTS,
                 index: Sequence[float] | None = None, per_decade: int = LEVELS_PER_DECADE) -> list[int]:
    """The positions of ``points`` that :func:`thin` keeps, sorted.

    Parameters
    ----------
    points : sequence of dict
        Trace points in recording order.
    max_points : int
        The most positions returned (at least 2).
    index : sequence of float, optional
        The iteration number of each point (default: its position), so that a trace thinned
        before (:class:`TraceRecorder` compacts while it records) keeps its log spacing.
    per_decade : int
        Levels per decade of :func:`_level_crossings`.

    Returns
    -------
    list of int
    """
    n = len(points)
    max_points = max(int(max_points), 2)
    if n <= max_points:
        return list(range(n))
    cols = _numeric(points)
    # 1. always: the first and last point, and each field's smallest and largest value (the best point,
    #    whatever the sense of the field)
    must = {0, n - 1}
    for k, v in cols.items():
        if k != "t" and np.isfinite(v).any():
            must.update((int(np.nanargmin(v)), int(np.nanargmax(v))))
    # 2. where a field's running minimum of |value| first passes each level (a gap or a bound first
    #    below 1e-6 stays at its iteration, to 1 / per_decade of a decade)
    cross: set[int] = set()
    for k, v in cols.items():
        if k != "t":
            cross.update(_level_crossings(v, per_decade))
    cross -= must
    room = max_points - len(must)
    if len(cross) > room // 2:  # too many levels: keep them evenly
        cross = set(np.array(sorted(cross))[np.unique(np.linspace(0, len(cross) - 1, room // 2).round().astype(int))])
    keep = must | cross
    # 3. fill: log-spaced in iteration and in time
    room = max_points - len(keep)
    idx = np.asarray(index, float) if index is not None else np.arange(n, dtype=float)
    if room > 0:
        third = room // 3
        grid = [*_log_spaced(idx - idx[0], third)]
        t = cols.get("t")
        if t is not None and np.all(np.isfinite(t)) and np.all(np.diff(t) >= 0):
            grid += list(_log_spaced(t - t[0], third))
        grid = [int(i) for i in dict.fromkeys(grid) if int(i) not in keep][:room]
        keep.update(grid)
        left = max_points - len(keep)  # the rest evenly in iteration (a linear axis, e.g. epochs)
        if left > 0:
            rest = np.setdiff1d(np.arange(n), np.fromiter(keep, int))
            keep.update(int(i) for i in rest[np.unique(np.linspace(0, len(rest) - 1, left).round().astype(int))])
    return sorted(keep)


def thin(points: Sequence[Mapping[str, Any]], max_points: int = MAX_TRACE_POINTS,
         index: Sequence[float] | None = None) -> list[dict[str, Any]]:
    """A trace reduced to the points a curve can show: at most ``max_points`` of ``points``.

    Kept, in this order of priority: the first and last points; for every numeric field, its
    smallest and largest value (so the best objective and the tightest bound are there, whatever
    the sense); the point where the running minimum of each field's magnitude first falls below
    each level ``10**(-j/10)`` (so "the first iteration with a gap below 1e-6" moves by at most a
    tenth of a decade); then points spaced evenly on a logarithmic scale of the iteration and of
    the time ``t``.  A trace of ``max_points`` or fewer is returned unchanged.

    Parameters
    ----------
    points : sequence of dict
        Trace points ``{"t": ..., ...}`` in recording order.
    max_points : int
        Upper bound on the points returned.
    index : sequence of float, optional
        Iteration number of each point (default: its position).

    Returns
    -------
    list of dict
        A sub-sequence of ``points``, in order.
    """
    if len(points) <= max(int(max_points), 2):
        return list(points)
    return [points[i] for i in thin_indices(points, max_points, index)]


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
    max_points : int
        The most trace points :attr:`points` returns (:func:`thin`); while recording, the points
        are compacted to that many whenever they reach eight times as many, so memory stays bounded.
    """

    def __init__(self, budget: Any = None, ratio: float = 1.25, min_gap_s: float = 0.002,
                 max_iterates: int = 64, max_points: int = MAX_TRACE_POINTS) -> None:
        self._clock = time.monotonic
        self._t0 = self._clock()
        self._points: list[dict[str, float]] = []
        self._index: list[int] = []  # the iteration number of each kept point
        self._count = 0
        self._max_points = int(max_points)
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
        self._points.append({"t": t, **{k: float(v) for k, v in values.items()}})
        self._index.append(self._count)
        self._count += 1
        if len(self._points) >= 8 * self._max_points:
            keep = thin_indices(self._points, self._max_points, self._index)
            self._points = [self._points[i] for i in keep]
            self._index = [self._index[i] for i in keep]
        if variables is None:
            return
        last = self.iterates[-1][0] if self.iterates else None
        if last is None or (t >= self._ratio * last and t - last >= self._gap):
            self._keep(t, variables)
            self._pending = None
        else:
            self._pending = (t, variables)  # referenced, copied if kept at finish

    @property
    def points(self) -> list[dict[str, float]]:
        """The recorded points thinned to at most ``max_points`` (:func:`thin`), in order."""
        return thin(self._points, self._max_points, self._index)

    @property
    def n_points(self) -> int:
        """How many points were recorded (before thinning)."""
        return self._count

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
