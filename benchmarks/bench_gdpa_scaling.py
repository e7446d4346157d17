"""asv benchmarks: sparse gdpa-lp-elim on a cod-rna kNN instance at N = 10,000.

Run from the repository root (configuration in ``asv.conf.json``)::

    asv run --quick --python=same --bench GdpaCodRna10k

Instance: ``uci/cod-rna`` (needs ``PSDBENCH_DATA``), stratified subset ``n = 10000``, kNN graph
``k = 10``, ``minmax`` scaling, ``dense_n = 0`` (sparse), seed 0.  BLAS on one thread.  Without
``PSDBENCH_DATA`` or the file, ``setup`` raises ``NotImplementedError`` and asv records the
benchmark as skipped (``n/a``), the reason in its output (``--show-stderr``).

``time_solve`` / ``peakmem_solve``  gdpa-lp-elim (default parameters)
``time_labelprop``                  label propagation's sparse CG solve on the same instance
``track_error_rate``                error rate on the unlabelled nodes
``track_lower_bound``               the certified lower bound on p* (Gershgorin certificate)
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits

from psdbench.api import Budget, DataError
from psdbench.families.graph_classification import sparse as gsp
from psdbench.registry import discover

DATASET = "uci/cod-rna"
PARAMS = {"n": 10000, "graph": "knn", "k": 10, "scaling": "minmax", "dense_n": 0}


class GdpaCodRna10k:
    timeout = 600
    number = 1
    warmup_time = 0.0
    repeat = (1, 5, 60.0)

    def setup(self):
        import scipy.sparse.linalg  # noqa: F401  (load BLAS users before limiting their threads)
        import sklearn.neighbors  # noqa: F401

        reg = discover()
        try:
            reg.check_dataset(DATASET)
        except DataError as exc:  # asv's way to skip: NotImplementedError from setup
            raise NotImplementedError(f"GdpaCodRna10k needs {DATASET}: {exc}") from None
        self._threads = threadpool_limits(1)
        self.instance = reg.problem("graph-classification").build(reg.load_dataset(DATASET), PARAMS, 0)
        self.solver = reg.solver("gdpa-lp-elim")

    def teardown(self):
        threads = getattr(self, "_threads", None)  # asv calls teardown after a skipping setup too
        if threads is not None:
            threads.unregister()

    def _solve(self):
        return self.solver.solve(self.instance, Budget())

    def time_solve(self):
        self._solve()

    def peakmem_solve(self):
        self._solve()

    def time_labelprop(self):
        gsp.harmonic(self.instance.L, self.instance.m, self.instance.xhat)

    def track_error_rate(self):
        return self.instance.evaluate(self._solve())["error_rate"]

    track_error_rate.unit = "fraction"

    def track_lower_bound(self):
        return self.instance.evaluate(self._solve())["lower_bound"]

    track_lower_bound.unit = "objective"
