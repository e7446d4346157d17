"""asv benchmarks: GDPA-LP versus SCS on one WDBC graph-classification instance.

Run from the repository root (configuration in ``asv.conf.json``)::

    asv machine --yes
    asv run --quick --python=same      # in the current environment
    asv run --quick                    # CI: a fresh virtualenv per commit, the project installed as a wheel

Instance: ``sklearn/breast-cancer``, ``n=100`` (50 labelled), kNN graph with ``k=10``, seed 0.
BLAS is pinned to one thread (threadpoolctl) so that timings compare the algorithms, not the
thread pools.  SCS solves the equivalent reduced SDP (``formulation="reduced"``, as in the
default suite); on the SDP (8) as published it needs tens of seconds at this size.

Tracked, besides time and peak memory:

``track_gap_rel``     relative objective gap ``(f(sol) - p*) / p*``, with ``p*`` the certified
                      reference value of the reduced SDP (Clarabel, a few seconds at n=100).  It
                      is computed inside this benchmark, not in ``setup``: asv runs ``setup``
                      before every benchmark and the others do not need it.  ``f(sol)`` is what
                      the instance recomputes: ``tr(L X)`` of SCS's ``M``, ``x' L x`` of GDPA-LP's
                      labels (an upper bound on p*);
``track_error_rate``  error rate on the unlabelled nodes.
"""

from __future__ import annotations

from psdbench.api import Budget
from psdbench.registry import discover

from benchmarks.instances import graph_classification, limit_blas

INSTANCE_PARAMS = {"n": 100, "graph": "knn", "k": 10}
SEED = 0
SOLVER_PARAMS = {"gdpa-lp": {}, "scs": {"formulation": "reduced"}}


class GraphClassificationWDBC:
    params = [["gdpa-lp", "scs"]]
    param_names = ["solver"]
    timeout = 300
    # One SCS solve takes about a second at n=100: one call per sample, no warm-up, and stop
    # sampling after two minutes (at least one sample, at most five).
    number = 1
    warmup_time = 0.0
    repeat = (1, 5, 120.0)

    def setup(self, solver):
        reg = discover()
        # threadpoolctl only reaches libraries already loaded: load the ones the solvers import
        # lazily (SCS's own OpenBLAS here; SciPy's and scikit-learn's in limit_blas) before limiting.
        import cvxpy  # noqa: F401
        import scs  # noqa: F401

        self._threads = limit_blas()  # kept on self: the limit lasts as long as the object
        self.instance = graph_classification(seed=SEED, reg=reg, **INSTANCE_PARAMS)
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
