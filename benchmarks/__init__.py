"""The asv benchmark package (``benchmark_dir`` in ``asv.conf.json``).

asv imports this package before any ``bench_*`` module, in every process it starts, so the
thread counts set here reach OpenBLAS / MKL / OpenMP before NumPy loads them: one thread each,
unless the variable is already set in the environment (asv passes the caller's environment
through, ``PYTHONPATH`` excepted).  The benchmarks' ``setup`` also limits the loaded pools with
threadpoolctl; the variables cover what runs before that and the subprocesses a benchmark starts.
"""

from psdbench.asvbench import BLAS_THREAD_VARS, pin_threads  # noqa: F401  (numpy not imported by it)

pin_threads()
