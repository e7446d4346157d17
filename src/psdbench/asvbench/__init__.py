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
