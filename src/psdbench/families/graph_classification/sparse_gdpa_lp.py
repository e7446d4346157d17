"""``gdpa-lp`` on a sparse instance: the loop of :mod:`.gdpa_lp` with nothing N x N.

Paper: "Projection-free Graph-based Classifier Learning using Gershgorin Disc Perfect Alignment"
(../shared/papers/gdpa-graph-classifier-sdp.txt), sections 4.3-5.2.  H-bar of (15)/(20) is a
:class:`~psdbench.linalg.gershgorin_lp.SparseAffineSignedMatrix` of ``[y (N+1), z (M)[, eps]]``, so
the Gershgorin rows (21) are built in O(nnz) for HiGHS; first eigenvectors by warm-started LOBPCG
(section 5.1) on the sparse H-bar; labels (section 5.2) from the first eigenvector of H (12) by
LOBPCG.  The solution carries ``s`` (the last LP's scalars) for the instance's Gershgorin certificate.
"""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import lobpcg

from psdbench.api import Budget, Deferred, Solution, Status, TraceRecorder
from psdbench.linalg.gdpa import first_eigvec, magnitudes
from psdbench.linalg.gershgorin_lp import SparseAffineSignedMatrix
from psdbench.linalg.lp import solve_lp


def split_affine(L: sp.spmatrix, xhat: np.ndarray, eps: float, free_eps: bool) -> SparseAffineSignedMatrix:
    """H-bar(x) of (15) (the same terms as :meth:`.gdpa_lp.SplitDualLP.matrix`), sparse."""
    N, m = L.shape[0], len(xhat)
    g1 = xhat > 0
    hub = np.where(g1, N, N + 1)
    lab = np.arange(m)
    C = sp.block_diag([sp.csr_matrix(L), sp.diags([0.0 if free_eps else -eps, 0.0 if free_eps else eps])], format="csr")
    iy, iz, ie = np.arange(N + 1), N + 1 + lab, N + 1 + m
    half = np.where(g1, -0.5, 0.5)
    terms = [
        (np.arange(N), np.arange(N), iy[:N], np.ones(N), np.zeros(N)),  # y_i on the data diagonal
        (np.array([N, N + 1]), np.array([N, N + 1]), np.array([N, N]), np.array([0.5, 0.5]), np.zeros(2)),
        (lab, hub, iz, np.ones(m), np.where(g1, -1.0, 1.0)),  # z_i on the edge to its split node (known sign)
        (np.full(m, N), np.full(m, N), iz, half, np.zeros(m)),  # kappa_{N+1}
        (np.full(m, N + 1), np.full(m, N + 1), iz, -half, np.zeros(m)),  # kappa_{N+2}
    ]
    if free_eps:
        terms.append((np.array([N, N + 1]), np.array([N, N + 1]), np.array([ie, ie]), np.array([-1.0, 1.0]), np.zeros(2)))
    row, col, var, coef, sign = (np.concatenate(t) for t in zip(*terms))
    return SparseAffineSignedMatrix(C, row, col, var, coef, sign, N + 1 + m + int(free_eps))


def lp_rows(L: sp.spmatrix, xhat: np.ndarray, eps: float, free_eps: bool, a: np.ndarray,
            rho: float) -> tuple[sp.csr_matrix, np.ndarray]:
    """``A_ub, b_ub``: the Gershgorin rows (21) of ``S H-bar S^-1 >= rho``, ``s_i = 1 / a_i``, in O(nnz)."""
    return split_affine(L, xhat, eps, free_eps).rows(a, rho)


def labels(instance: Any, y: np.ndarray, z: np.ndarray, tol: float, maxiter: int) -> np.ndarray:
    """Section 5.2: ``x = sign(xhat_1 v_1 v)``, v the first eigenvector of H (12) (LOBPCG); known labels kept."""
    H = instance.dual_matrix(y, z)
    x0 = np.concatenate([np.ones(instance.n), [1.0]]) + 1e-3 * np.random.default_rng(0).standard_normal(instance.n + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, V = lobpcg(H, x0[:, None], tol=tol, maxiter=maxiter, largest=False)
    v = V[: instance.n, 0]
    x = np.sign(instance.xhat[0] * v[0] * v)
    x[x == 0] = 1.0 if instance.xhat.sum() >= 0 else -1.0
    x[: instance.m] = instance.xhat
    return x


def solve_sparse(instance: Any, budget: Budget, p: dict[str, Any]) -> Solution:
    """GDPA-LP of :class:`.gdpa_lp.GdpaLp` on a sparse instance (same parameters, same initialization)."""
    N, m, xhat = instance.n, instance.m, instance.xhat
    free = p["epsilon"] == "free"
    tol, maxiter = float(p["lobpcg_tol"]), int(p["lobpcg_maxiter"])
    rec = TraceRecorder(budget)
    y = np.concatenate([np.ones(m), np.zeros(N - m), [float(m)]])  # section 5.2
    z = -xhat.copy()
    eps = float(y.sum() + z.sum())
    v, prev, status, n_lp, a_lp = None, None, Status.MAX_ITER, 0, np.ones(N + 2)
    trace_L = float(instance.L.diagonal().sum())
    c = np.concatenate([np.ones(N + 1), 2.0 * xhat, [0.0] if free else []])
    bounds = [(None, None)] * (N + 1) + [(None, 0.0) if g else (0.0, None) for g in xhat > 0] + ([(None, None)] if free else [])
    for _ in range(int(budget.max_iter or p["max_lp"])):
        v = first_eigvec(instance.split_dual_matrix(y, z, eps), v, tol, maxiter, jacobi=True).v
        eps_lp = float(y.sum() + z.sum())
        a_lp = magnitudes(v)
        A, rhs = lp_rows(instance.L, xhat, eps_lp, free, a_lp, float(p["rho"]))
        res = solve_lp(c, A, rhs, bounds, tol=float(p["lp_tol"]))
        n_lp += 1
        y, z = res.x[: N + 1], res.x[N + 1: N + 1 + m]
        eps = float(res.x[-1]) if free else eps_lp
        rec.add(lp_objective=res.fun, lower_bound=-res.fun, eps=eps,
                variables={"y": y, "z": z, "eps": np.array(eps), "s": 1.0 / a_lp,
                           "x": Deferred(labels, (y, z, tol, maxiter))})  # scored by the harness, after the solve
        if abs(res.fun) > p["diverge_at"] * (1.0 + trace_L):
            status = Status.DIVERGED
            break
        if prev is not None and abs(res.fun - prev) <= p["tol"] * max(abs(res.fun), abs(prev), 1e-12):
            status = Status.OK
            break
        prev = res.fun
        if budget.expired():
            status = Status.TIMEOUT
            break
    variables = {"y": y, "z": z, "eps": np.array(eps), "x": labels(instance, y, z, tol, maxiter), "s": 1.0 / a_lp}
    return Solution(variables=variables, status=status, iterations=n_lp, trace=rec.points,
                    iterates=rec.finish(variables),
                    info={"lp_count": n_lp, "lp_objective": float(np.sum(y) + 2.0 * xhat @ z)})
