"""asv benchmarks: GDPA-LP versus SCS on one WDBC graph-classification instance.

Instance: ``sklearn/breast-cancer``, ``n=100`` (50 labelled), kNN graph with ``k=10``, seed 0.
BLAS is pinned to one thread (threadpoolctl) so that timings compare the algorithms, not the
thread pools.  SCS runs with ``acceleration_lookback=0`` (the setting of the smoke suite).

Tracked, besides time and peak memory:

``track_gap_rel``     relative objective gap ``(f(sol) - p*) / p*``, with ``p*`` the certified
                      reference value of the reduced SDP (Clarabel, well under a second at n=100);
``track_error_rate``  error rate on the unlabelled nodes.
"""

from __future__ import annotations

from threadpoolctl import threadpool_limits

from psdbench.api import Budget
from psdbench.registry import discover

DATASET = "sklearn/breast-cancer"
PROBLEM = "graph-classification"
INSTANCE_PARAMS = {"n": 100, "graph": "knn", "k": 10}
SEED = 0
SOLVER_PARAMS = {"gdpa-lp": {}, "scs": {"acceleration_lookback": 0}}


class GraphClassificationWDBC:
    params = [["gdpa-lp", "scs"]]
    param_names = ["solver"]
    timeout = 300

    def setup(self, solver):
        self._threads = threadpool_limits(1)  # kept on self: the limit lasts as long as the object
        reg = discover()
        dataset = reg.load_dataset(DATASET)
        self.instance = reg.problem(PROBLEM).build(dataset, INSTANCE_PARAMS, SEED)
        self.solver = reg.solver(solver)
        self.solver_params = dict(SOLVER_PARAMS[solver])

    def teardown(self, solver):
        self._threads.unregister()

    def _solve(self):
        return self.solver.solve(self.instance, Budget(), **self.solver_params)

    def time_solve(self, solver):
        self._solve()

    def peakmem_solve(self, solver):
        self._solve()

    def track_gap_rel(self, solver):
        p_star = self.instance.certified_reference()["value"]
        sol = self._solve()
        return (self.instance.objective(sol) - p_star) / p_star

    track_gap_rel.unit = "relative"

    def track_error_rate(self, solver):
        return self.instance.evaluate(self._solve())["error_rate"]

    track_error_rate.unit = "fraction"
