"""asv benchmarks shipped with psdbench: any repository tracks its suites with a two-line stub.

``psdbench.asvbench.suites`` holds the benchmarks every tracked suite becomes (a suite with an
``[asv]`` table, psdbench's own or a plugin's); a repository's ``benchmarks/`` package re-exports
them (psdbench's own ``benchmarks/bench_suites.py``; the stub ``psdbench asv init`` writes into a
plugin's repository, :mod:`psdbench.asvbench.setup`).  asv imports the benchmark package before
any benchmark module, in every process it starts: the stub calls :func:`pin_threads` first, so
OpenBLAS / MKL / OpenMP load with one thread.
"""

from __future__ import annotations

import os
import time
from typing import Any

#: The thread-count variables :func:`pin_threads` sets (unless already set).
BLAS_THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def pin_threads() -> None:
    """One BLAS / OpenMP thread for what loads next, unless the environment sets a count (asv passes
    the caller's environment through, ``PYTHONPATH`` excepted)."""
    for var in BLAS_THREAD_VARS:
        os.environ.setdefault(var, "1")


def limit_blas() -> Any:
    """Load the BLAS / OpenMP pools the solvers use, then pin them to one thread.

    Returns the :class:`threadpoolctl.threadpool_limits` object: keep a reference for as long as
    the limit must last, and call its ``unregister()`` to lift it.
    """
    import scipy.linalg  # noqa: F401  (threadpoolctl only reaches libraries already loaded)
    import sklearn.neighbors  # noqa: F401  (its OpenMP pool)
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


#: The scheduler's statistics of the calling thread (Linux): CPU time, time waited runnable, slices.
SCHEDSTAT = "/proc/thread-self/schedstat"


def runqueue_wait_s() -> float:
    """Seconds the calling thread has waited runnable for a CPU (Linux ``schedstat``), 0 elsewhere."""
    try:
        with open(SCHEDSTAT, "rb") as f:
            return int(f.read().split()[1]) * 1e-9
    except (OSError, IndexError, ValueError):
        return 0.0


def uncontended_timer() -> float:
    """Wall time minus the time the thread waited for a CPU that other processes held.

    What a solve would take on an idle core: its CPU time plus its own waits (a sleep, I/O), but
    not the time the machine's other jobs kept it off the CPU, which on a shared 2-core machine
    varies two- to threefold from one minute to the next (``docs/benchmarks.md``).  The
    benchmarks' solves run on one thread (BLAS pinned), the thread this reads.  Where
    ``schedstat`` is absent it is the wall clock.
    """
    return time.perf_counter() - runqueue_wait_s()
