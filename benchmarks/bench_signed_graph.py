"""asv benchmarks: balanced signed graph learning (BSGL paper, section VI-A instances).

Run from the repository root (configuration in ``asv.conf.json``)::

    asv run --quick --python=same -b Signed

``SignedGraphN50``: the whole learner on the section VI-A instance N = 50, K = 500 (seed 0,
noiseless), ``balanced-clime`` against CLIME and GLASSO with greedy balancing; besides time,
``track_f_measure`` (147) and ``track_verified`` (1 if symmetric, positive definite, balanced).
``ColumnLP``: one column LP (12) at ``rho = rho_l + 0.03`` by HiGHS and by the section V ADMM.
BLAS is pinned to one thread.
"""

from __future__ import annotations

from psdbench.api import Budget
from psdbench.registry import discover

from benchmarks.instances import column_lp_data, limit_blas, signed_graph

PARAMS = {"n_nodes": 50, "n_samples": 500, "noise_sd": 0.0}
CONFIGS = {"balanced-clime": ("balanced-clime", {}), "clime-greedy": ("clime", {"balance": "greedy"}),
           "glasso-greedy": ("glasso", {"balance": "greedy"})}


class SignedGraphN50:
    params = [list(CONFIGS)]
    param_names = ["config"]
    timeout = 600
    number = 1
    warmup_time = 0.0
    repeat = (1, 3, 60.0)

    def setup(self, config):
        self._threads = limit_blas()
        reg = discover()
        self.instance = signed_graph(seed=0, reg=reg, **PARAMS)
        name, self.kw = CONFIGS[config]
        self.solver = reg.solver(name)

    def teardown(self, config):
        self._threads.unregister()

    def time_solve(self, config):
        self.solver.solve(self.instance, Budget(), **self.kw)

    def track_f_measure(self, config):
        return self.instance.evaluate(self.solver.solve(self.instance, Budget(), **self.kw))["f_measure"]

    def track_verified(self, config):
        return int(self.instance.verify(self.solver.solve(self.instance, Budget(), **self.kw)).ok)


class ColumnLP:
    params = [["highs", "admm-cholesky"]]
    param_names = ["backend"]
    timeout = 300
    number = 1
    warmup_time = 0.0
    repeat = (1, 3, 60.0)

    def setup(self, backend):
        self._threads = limit_blas()
        d = column_lp_data(PARAMS["n_nodes"], PARAMS["n_samples"], 0)
        self.C, self.signs, self.rho = d["C"], d["signs"], d["rho"]

    def teardown(self, backend):
        self._threads.unregister()

    def time_column(self, backend):
        from psdbench.families.signed_graph.clime_lp import ColumnLP as HighsLP
        from psdbench.families.signed_graph.slp_admm import ColumnADMM

        if backend == "highs":
            HighsLP(self.C, 0, self.signs).solve(self.rho)
        else:
            ColumnADMM(C=self.C, X=None, i=0, signs=self.signs, linear_solver="cholesky").solve(self.rho)
