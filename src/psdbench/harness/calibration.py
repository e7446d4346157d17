"""A short, fixed calibration timed at the start of every run: how fast this machine is, and how
noisy, on a few pinned kernels (about a second in all).

Each kernel runs on seeded inputs with BLAS pinned to one thread (as the workers run), once untimed,
then :data:`REPEATS` times; the run's ``machine`` record keeps each kernel's median, fastest and
slowest time (``calibration``), and the exported dataset holds them as rows of its own, so a reader
compares two machines by the ratio of their medians and sees each one's spread.  ``PSDBENCH_CALIBRATION=off``
skips it (the test suite does, but for the tests of this module).
"""

from __future__ import annotations

import os
import statistics
import time
from typing import Any, Callable

import numpy as np

__all__ = ["KERNELS", "REPEATS", "calibrate", "enabled"]

#: Timed repetitions of each kernel (after one untimed call).
REPEATS = 5


def _matmul(n: int) -> Callable[[], Any]:
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    return lambda: a @ b


def _eigh(n: int) -> Callable[[], Any]:
    rng = np.random.default_rng(1)
    m = rng.standard_normal((n, n))
    s = m + m.T
    return lambda: np.linalg.eigh(s)


def _sparse_solve(side: int) -> Callable[[], Any]:
    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(side, side))
    lap = (sp.kron(sp.eye(side), t) + sp.kron(t, sp.eye(side))).tocsc()  # 2-D Laplacian, SPD
    rhs = np.random.default_rng(2).standard_normal(side * side)
    return lambda: spla.spsolve(lap, rhs)


def _interpreter(n: int) -> Callable[[], Any]:
    def loop() -> int:
        total = 0
        for i in range(n):
            total += i * i % 7
        return total
    return loop


#: ``(name, size, builder)``: dense BLAS-3, a dense LAPACK eigensolver, a sparse direct solve, and
#: the interpreter (what the harness's own per-cell work runs on).
KERNELS: tuple[tuple[str, int, Callable[[int], Callable[[], Any]]], ...] = (
    ("matmul", 700, _matmul), ("eigh", 300, _eigh), ("sparse_solve", 80, _sparse_solve),
    ("interpreter", 400_000, _interpreter),
)


def enabled() -> bool:
    """Whether runs calibrate: unless ``PSDBENCH_CALIBRATION`` is ``off`` (or ``0``, ``no``)."""
    return os.environ.get("PSDBENCH_CALIBRATION", "on").strip().lower() not in ("off", "0", "no", "false")


def calibrate(repeats: int = REPEATS) -> list[dict[str, Any]]:
    """Time every kernel of :data:`KERNELS` on one BLAS thread.

    Returns
    -------
    list of dict
        One per kernel: ``kernel``, ``size``, ``repeats``, ``median_s``, ``min_s``, ``max_s``.
    """
    from threadpoolctl import threadpool_limits

    out = []
    with threadpool_limits(limits=1):
        for name, size, build in KERNELS:
            fn = build(size)
            fn()  # untimed: first-call costs (page faults, lazy loading) are not the machine's speed
            times = []
            for _ in range(repeats):
                t0 = time.perf_counter()
                fn()
                times.append(time.perf_counter() - t0)
            out.append({"kernel": name, "size": size, "repeats": repeats, "median_s": statistics.median(times),
                        "min_s": min(times), "max_s": max(times)})
    return out
