"""Balanced signed graph learning (BSGL paper): one column LP (12) and one ADMM step of balanced CLIME.

Instances: the section VI-A GMRF (K = 500 samples, noiseless) with N nodes; column 0, its signs
from the true polarity, ``rho = rho_l + 0.03`` (``benchmarks/instances.py``, as asv's ``ColumnLP``).
The column LP is timed as the solver runs it (one HiGHS model, built then solved); the ADMM step is
one iteration of (89), (105), (111) with the Cholesky solver (``ColumnADMM`` with ``max_iter = 1``,
warm state: every call continues from the previous one).
"""

from __future__ import annotations

import numpy as np
from conftest import cached, run

from psdbench.families.signed_graph.clime_lp import ColumnLP, residual_rho
from psdbench.families.signed_graph.slp_admm import ColumnADMM

SIZES = [20, 50, 100, 200]
FAMILY = "signed"


def _data(cache: dict, n: int) -> dict:
    from benchmarks.instances import column_lp_data

    return cached(cache, ("signed", n), lambda: column_lp_data(n))


def _lp_reference(d: dict) -> float:
    """LP (12) in cvxpy (Clarabel): min ||l||_1, ||C l - e_i||_inf <= rho, s_j l_j <= 0 (j != i)."""
    import cvxpy as cp

    C, i, s = d["C"], d["i"], np.asarray(d["signs"], float)
    n = C.shape[0]
    e = np.zeros(n)
    e[i] = 1.0
    l = cp.Variable(n)
    others = np.delete(np.arange(n), i)
    cons = [cp.norm(C @ l - e, "inf") <= d["rho"], cp.multiply(s[others], l[others]) <= 0]
    return cp.Problem(cp.Minimize(cp.norm1(l)), cons).solve(solver=cp.CLARABEL)


def test_column_lp(benchmark, cache, size):
    d = _data(cache, size)
    l, obj = run(benchmark, lambda: ColumnLP(d["C"], d["i"], d["signs"]).solve(d["rho"]), family=FAMILY,
                 kernel="column_lp", size=size, expected="O(N^2) per simplex iteration (dense C)", expected_slope=2.0,
                 sparse=False)
    ref = _lp_reference(d)
    assert abs(obj - ref) <= 1e-6 * max(1.0, abs(ref))
    assert residual_rho(d["C"], d["i"], l) <= d["rho"] * (1 + 1e-7)


def test_admm_step(benchmark, cache, size):
    d = _data(cache, size)
    admm = ColumnADMM(C=d["C"], X=None, i=d["i"], signs=d["signs"], linear_solver="cholesky", max_iter=1)
    admm.solve(d["rho"])  # factor once, as the solver does per LP
    run(benchmark, lambda: admm.solve(d["rho"]), rounds=20, family=FAMILY, kernel="admm_step", size=size,
        expected="O(N^2) (one matvec with the factored inverse)", expected_slope=2.0, sparse=False)
    # reference: the same steps converge to the LP optimum (cvxpy): 20000 of them (balanced-clime's
    # admm_max_iter) end at least twice as close to it as 2000.  Not to a fixed tolerance: measured,
    # they do not meet ADMM's own 1e-8 residual test there (N = 20: not after 100000 either) and end
    # 4e-4 (N = 100) to 7e-3 (N = 200) relative from the optimum, a result reported, not a test.
    ref = _lp_reference(d)
    err = {}
    for k in (2000, 20000):
        r = ColumnADMM(C=d["C"], X=None, i=d["i"], signs=d["signs"], linear_solver="cholesky", max_iter=k).solve(d["rho"])
        err[k] = abs(r.objective - ref) + max(0.0, residual_rho(d["C"], d["i"], r.l) - d["rho"])
    assert err[20000] <= 0.5 * err[2000] or err[20000] <= 1e-9 * max(1.0, abs(ref))
