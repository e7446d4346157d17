"""asv benchmarks of single kernels the whole solves spend their time in (the solves themselves are
``bench_suites.py``'s, from the families' suites).

``MetricStepSearch``  SGML's Frank-Wolfe step-size search on a classification-sized training set
``ColumnLP``          one column LP (12) of balanced CLIME (BSGL paper, section VI-A instance N = 50,
                      K = 500, seed 0, noiseless) at ``rho = rho_l + 0.03``, by HiGHS and by the
                      section V ADMM

BLAS is pinned to one thread.  Run from the repository root::

    asv run --quick --python=same -b MetricStepSearch -b ColumnLP
"""

from __future__ import annotations

from benchmarks.instances import column_lp_data, limit_blas, metric_wdbc

SEED = 0
#: The BSGL section VI-A instance of ``ColumnLP``.
SIGNED_PARAMS = {"n_nodes": 50, "n_samples": 500, "noise_sd": 0.0}


class MetricStepSearch:
    """SGML's Frank-Wolfe step-size search (eqs. (35)-(38)) on a classification-sized training set.

    ``sklearn/breast-cancer`` with the section 6.3 protocol (seed 0, a 90/10 split: about 512
    training samples, so every pair-distance array is 512 x 512).  The direction is a Frank-Wolfe
    step from the identity: to ``K v v'`` with ``v`` the gradient's lowest eigenvector, the
    minimizing vertex of the set ``{M PSD, tr M <= K}``.
    MCML and GLR search for the root of ``Q'(gamma)`` (``slope_along``), LMNN takes its exact
    piecewise-linear minimizer (``exact_step``).  This is where the classification protocol spends
    most of its time.
    """

    params = [["mcml", "glr", "lmnn"]]
    param_names = ["objective"]
    timeout = 120
    repeat = (3, 20, 30.0)

    def setup(self, objective):
        import numpy as np

        from psdbench.families.mahalanobis.objectives import pair_distances

        self._threads = limit_blas()
        inst = metric_wdbc(objective, {"protocol": "classification", "k_nn": 10}, SEED)
        K = inst.F.shape[1]
        _, G = inst.obj.value_and_grad(np.eye(K))
        v = np.linalg.eigh(G)[1][:, 0]
        S = K * np.outer(v, v)
        self.obj = inst.obj
        self.D0 = pair_distances(inst.F, np.eye(K))
        self.E = pair_distances(inst.F, S) - self.D0

    def teardown(self, objective):
        self._threads.unregister()

    def time_step_size(self, objective):
        from psdbench.families.mahalanobis.sgml_kernels import newton_step_size

        if objective == "lmnn":
            self.obj.exact_step(self.D0, self.E)
        else:
            newton_step_size(self.obj.slope_along(self.D0, self.E))


class ColumnLP:
    params = [["highs", "admm-cholesky"]]
    param_names = ["backend"]
    timeout = 300
    number = 1
    warmup_time = 0.0
    repeat = (1, 3, 60.0)

    def setup(self, backend):
        self._threads = limit_blas()
        d = column_lp_data(SIGNED_PARAMS["n_nodes"], SIGNED_PARAMS["n_samples"], 0)
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
