"""Fixtures and helpers of the kernel benchmark suite (pytest-benchmark).

Every benchmark records in ``benchmark.extra_info`` what ``benchmarks/scripts/harness/kernel_report.py`` needs:

``role``        ``"kernel"`` (one call of one kernel) or ``"solve"`` (a whole solve with an iteration
                cap; two caps per solver give the marginal cost of one iteration);
``family``, ``kernel`` / ``solver``, ``size`` (the size parameter), ``nnz`` (nonzeros of the
                kernel's matrix, where it has one), ``expected`` (the complexity the code expects,
                as text) and ``expected_slope`` (its exponent in the size, or in nnz for
                ``sparse = True`` kernels);
``iterations``  (solve) the iteration cap, and ``calls``: how many times the solve called each
                kernel per measured iteration, counted in an untimed run by wrapping the kernels
                (no solver code changes); ``iteration_s`` / ``iteration_min_s``: one iteration's
                time read off the solver's own trace (:func:`run_solve`);
``calls_per_round`` (kernel) how many recorded calls one round replays (:func:`run_calls`): the
                kernels run on the inputs their solver gave them in the measured iterations
                (a memo argument as it was at the call, in every round).

Quick mode (``--benchmark-disable``, what ``.ci/run`` runs): each kernel once, at its smallest
size only, with its correctness check.
"""

from __future__ import annotations

import sys
from collections import Counter
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable
from unittest import mock

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:  # `benchmarks.instances`, the module asv's files use too
    sys.path.insert(0, str(ROOT))


def _quick(config: pytest.Config) -> bool:
    return bool(config.getoption("benchmark_disable", default=False))


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrize ``size`` by the module's ``SIZES`` (only the smallest in quick mode)."""
    if "size" in metafunc.fixturenames:
        sizes = list(getattr(metafunc.module, "SIZES"))
        metafunc.parametrize("size", sizes[:1] if _quick(metafunc.config) else sizes)


@pytest.fixture(scope="session", autouse=True)
def one_blas_thread():
    """BLAS and OpenMP pinned to one thread for the whole session (the machine is shared)."""
    from benchmarks.instances import limit_blas

    limits = limit_blas()
    yield
    limits.unregister()


@pytest.fixture(scope="session")
def cache() -> dict:
    """Instances and solver runs shared by the benchmarks of one session (built once per size)."""
    return {}


def cached(cache: dict, key: tuple, build: Callable[[], Any]) -> Any:
    """``cache[key]``, built by ``build()`` the first time."""
    if key not in cache:
        cache[key] = build()
    return cache[key]


def run(benchmark: Any, fn: Callable[[], Any], *, rounds: int = 5, **info: Any) -> Any:
    """Time ``fn()`` (``rounds`` rounds of one call after one warm-up call) and record ``info``.

    Returns ``fn()``'s result (of the last round), for the caller's correctness check, which runs
    after the timed part.
    """
    benchmark.extra_info.update(info)
    return benchmark.pedantic(fn, rounds=rounds, iterations=1, warmup_rounds=1)


def run_calls(benchmark: Any, f: Callable, calls: list[tuple[tuple, dict]], *, rounds: int = 5, **info: Any) -> list:
    """Time one replay of ``calls`` (see :func:`sample_calls`); ``calls_per_round`` lets the report
    divide the time by their number.  Returns the results of the last replay.

    Every round replays fresh copies of the calls' dict arguments (made untimed, before the round):
    a memo the kernel fills, such as SGML's eigenpair cache, is then as the solver passed it,
    not already holding what the previous round computed.
    """
    benchmark.extra_info.update(info, calls_per_round=len(calls))
    return benchmark.pedantic(lambda cs: [f(*a, **kw) for a, kw in cs], setup=lambda: ((fresh_dicts(calls),), {}),
                              rounds=rounds, iterations=1, warmup_rounds=1)


def fresh_dicts(calls: list[tuple[tuple, dict]]) -> list[tuple[tuple, dict]]:
    """``calls`` with every dict-valued argument replaced by a shallow copy (the other arguments shared)."""
    def cp(x: Any) -> Any:
        return dict(x) if isinstance(x, dict) else x

    return [(tuple(cp(x) for x in a), {k: cp(x) for k, x in kw.items()}) for a, kw in calls]


def _patch(owner: Any, attr: str, wrapper: Callable) -> Any:
    """``mock.patch.object`` that keeps a staticmethod a staticmethod."""
    import inspect

    static = isinstance(inspect.getattr_static(owner, attr), staticmethod)
    return mock.patch.object(owner, attr, staticmethod(wrapper) if static else wrapper)


def count_calls(fn: Callable[[], Any], targets: dict[str, tuple[Any, str]]) -> tuple[Any, Counter]:
    """Run ``fn()`` with each ``getattr(owner, attr)`` wrapped by a call counter.

    ``targets`` maps a kernel name to ``(owner, attribute)`` (a module whose global the solver
    calls, a class, or an instance).  Returns ``fn()``'s result and the calls per kernel name.
    """
    counts: Counter = Counter()

    def counting(name: str, f: Callable) -> Callable:
        def wrapper(*a: Any, **k: Any) -> Any:
            counts[name] += 1
            return f(*a, **k)
        return wrapper

    with ExitStack() as stack:
        for name, (owner, attr) in targets.items():
            stack.enter_context(_patch(owner, attr, counting(name, getattr(owner, attr))))
        out = fn()
    return out, counts


def per_iteration_calls(solve: Callable[[int], Any], targets: dict[str, tuple[Any, str]], lo: int,
                        hi: int) -> dict[str, float]:
    """Calls per iteration of each kernel: ``(calls(solve(hi)) - calls(solve(lo))) / (hi - lo)``."""
    _, c_lo = count_calls(lambda: solve(lo), targets)
    _, c_hi = count_calls(lambda: solve(hi), targets)
    return {k: (c_hi[k] - c_lo[k]) / (hi - lo) for k in targets}


def in_place(benchmark: Any, solve: Callable[[int], Any], targets: dict[str, tuple[Any, str]], lo: int, hi: int,
             keep: Callable[[dict], bool] | None = None, repeats: int = 3) -> dict[str, float]:
    """One iteration and its kernels timed where the solver runs them (no replay), for ``extra_info``.

    Runs ``solve(hi)`` ``repeats`` times, untimed by the benchmark, with every target wrapped by a
    timer (outermost calls only: a kernel inside another counts once) and the solver's
    ``TraceRecorder.add`` stamped on the same clock.  The measured iterations are the last
    ``hi - lo`` intervals between stamps of points ``keep`` accepts, as in :func:`run_solve`.
    Returns, for the repeat with the median iteration time, ``in_place_iteration_s`` and
    ``in_place_kernels_s`` (the kernels' time inside those iterations), both per iteration: their
    ratio is the glue alone.  A replayed kernel (:func:`run_calls`) runs on warm caches, so the
    sum of replays can be below the same kernels' time in place.  Empty in quick mode.
    """
    import statistics
    import time

    from psdbench.api.tracing import TraceRecorder

    if benchmark.disabled:
        return {}
    clock, depth = time.monotonic, [0]
    spans: list[tuple[float, float]] = []
    stamps: list[float] = []

    def timing(f: Callable) -> Callable:
        def wrapper(*a: Any, **k: Any) -> Any:
            if depth[0]:
                return f(*a, **k)
            depth[0] += 1
            t0 = clock()
            try:
                return f(*a, **k)
            finally:
                spans.append((t0, clock()))
                depth[0] -= 1
        return wrapper

    add = TraceRecorder.add

    def stamped(self: Any, variables: Any = None, **values: Any) -> None:
        if keep is None or keep(values):
            stamps.append(clock())
        add(self, variables, **values)

    runs = []
    for _ in range(repeats):
        spans.clear(), stamps.clear()
        with ExitStack() as stack:
            for owner, attr in targets.values():
                stack.enter_context(_patch(owner, attr, timing(getattr(owner, attr))))
            stack.enter_context(mock.patch.object(TraceRecorder, "add", stamped))
            solve(hi)
        if len(stamps) <= hi - lo:
            return {}
        t_lo, t_hi = stamps[-1 - (hi - lo)], stamps[-1]
        inside = sum(t1 - t0 for t0, t1 in spans if t_lo <= t0 < t_hi)
        runs.append(((t_hi - t_lo) / (hi - lo), inside / (hi - lo)))
    it, kern = sorted(runs)[len(runs) // 2]
    return {"in_place_iteration_s": float(it), "in_place_kernels_s": float(kern),
            "in_place_repeats": repeats, "in_place_spread": float(statistics.pstdev([r[0] for r in runs]) / it)}


def sample_calls(fn: Callable[[], Any], owner: Any, attr: str, skip: int = 0, k: int = 16,
                 seed: int = 0) -> list[tuple[tuple, dict]]:
    """Arguments (copied) of up to ``k`` calls ``fn()`` makes to ``getattr(owner, attr)``, after the first ``skip``.

    Reservoir sampling with a fixed seed, so the sample is uniform over the calls of the measured
    iterations and the same in every run.  A kernel benchmark replays the sample: its time per call
    is then the mean over the inputs the solver really gave it (cold or warm starts, cache hits).
    """
    import copy
    import random

    rng = random.Random(seed)
    kept: list = []
    seen = [0]
    f = getattr(owner, attr)

    def wrapper(*a: Any, **kw: Any) -> Any:
        i = seen[0] - skip
        seen[0] += 1
        if i >= 0:
            if len(kept) < k:
                kept.append(copy.deepcopy((a, kw)))
            else:
                j = rng.randint(0, i)
                if j < k:
                    kept[j] = copy.deepcopy((a, kw))
        return f(*a, **kw)

    with _patch(owner, attr, wrapper):
        fn()
    if not kept:
        raise RuntimeError(f"{attr} was not called after the first {skip} calls")
    return kept


def last_call(fn: Callable[[], Any], owner: Any, attr: str) -> tuple[tuple, dict]:
    """Arguments of the last call ``fn()`` makes to ``getattr(owner, attr)`` (arrays copied).

    Lets a kernel be timed on exactly the input its solver gave it (a warm start, a direction).
    """
    import copy

    seen: list = []
    f = getattr(owner, attr)

    def wrapper(*a: Any, **k: Any) -> Any:
        seen[:] = [copy.deepcopy((a, k))]
        return f(*a, **k)

    with _patch(owner, attr, wrapper):
        fn()
    if not seen:
        raise RuntimeError(f"{attr} was never called")
    return seen[0]


def iteration_calls(solve: Callable[[int], Any], caps: tuple[int, int], owner: Any, attr: str,
                    k: int = 16) -> list[tuple[tuple, dict]]:
    """Sampled arguments of the calls to ``owner.attr`` that ``solve(caps[1])`` makes after those of
    ``solve(caps[0])``: the inputs of the kernel in the iterations the solve benchmarks measure."""
    _, c = count_calls(lambda: solve(caps[0]), {attr: (owner, attr)})
    return sample_calls(lambda: solve(caps[1]), owner, attr, skip=c[attr], k=k)


def run_solve(benchmark: Any, solve: Callable[[], Any], *, rounds: int = 3, measured: int = 0,
              keep: Callable[[dict], bool] | None = None, **info: Any) -> Any:
    """Time a capped solve; with ``measured > 0`` also read one iteration's time off its own trace.

    The solver's :class:`~psdbench.api.TraceRecorder` stamps every point it adds (``t``, one
    clock, inside the solve); the last ``measured`` differences between consecutive points (those
    ``keep`` accepts) of every round are the measured iterations, free of the solve's set-up and
    final work.  Their median and minimum over all rounds go to ``extra_info`` as
    ``iteration_s`` / ``iteration_min_s``.  Returns the last solution.
    """
    import statistics

    sols: list = []

    def fn() -> Any:
        sols.append(solve())
        return sols[-1]

    out = run(benchmark, fn, rounds=rounds, **info)
    if measured and sols:
        diffs = []
        for s in sols:
            t = [p["t"] for p in s.trace if keep is None or keep(p)]
            diffs += list(np.diff(t)[-measured:])
        if diffs:
            benchmark.extra_info["iteration_s"] = float(statistics.median(diffs))
            benchmark.extra_info["iteration_min_s"] = float(min(diffs))
    return out
