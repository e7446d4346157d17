"""asv benchmarks: SGML, PGML and PD-cone on fixed metric-learning instances (SGML paper, section 6.2).

Run from the repository root (configuration in ``asv.conf.json``)::

    asv run --quick --python=same -b Metric

Instances: ``sklearn/breast-cancer`` (WDBC, K = 30), the section 6.2 protocol (fold 3 of
round(569/4) stratified folds, about 4 samples), objectives MCML and DEML.  BLAS is pinned to one
thread.  Besides time and peak memory:

``track_gap``       ``(Q(sol) - p*) / max(1, |p*|)`` (``p* - Q`` for DEML, which is maximized), with
                    ``p*`` the certified reference of the instance (reduced SDP by Clarabel,
                    Frank-Wolfe bound); 0 is optimal.  MCML's optimum on a 4-sample fold is about
                    1e-11, hence the absolute scale below 1.
``track_balanced``  1 if the returned metric is the Laplacian of a balanced signed graph (SGML's
                    search space), else 0 (PD-cone's metrics in general are not).
"""

from __future__ import annotations

from psdbench.api import Budget, Solution
from psdbench.registry import discover

from benchmarks.instances import limit_blas, metric_wdbc

INSTANCE_PARAMS = {"protocol": "objective", "fold": 3}
SEED = 0


class MetricWDBC:
    params = [["mcml", "deml"], ["sgml", "pgml", "pd-cone"]]
    param_names = ["objective", "solver"]
    timeout = 300
    number = 1
    warmup_time = 0.0
    repeat = (1, 5, 60.0)

    def setup(self, objective, solver):
        self._threads = limit_blas()
        reg = discover()
        self.instance = metric_wdbc(objective, INSTANCE_PARAMS, SEED, reg=reg)
        self.solver = reg.solver(solver)

    def teardown(self, objective, solver):
        self._threads.unregister()

    def _solve(self) -> Solution:
        return self.solver.solve(self.instance, Budget())

    def time_solve(self, objective, solver):
        self._solve()

    def peakmem_solve(self, objective, solver):
        self._solve()

    def track_gap(self, objective, solver):
        p_star = self.instance.certified_reference()["value"]
        q = self.instance.objective(self._solve())
        worse = p_star - q if self.instance.sense == "max" else q - p_star
        return worse / max(abs(p_star), 1.0)

    track_gap.unit = "scaled"

    def track_balanced(self, objective, solver):
        return self.instance.verify(self._solve()).details["balanced"]

    track_balanced.unit = "bool"


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
