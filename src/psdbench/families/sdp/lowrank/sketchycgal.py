"""``sdp-sketchycgal``: SketchyCGAL for trace-bounded SDPs, returning the Nystrom factor.

A. Yurtsever, J. A. Tropp, O. Fercoq, M. Udell and V. Cevher, "Scalable semidefinite
programming", SIAM J. Math. Data Sci. 3(1):171-200, 2021.  (The paper is not in
/work/shared/papers: what follows is the method as I recall it, and the algorithm numbers are as I
recall them: Algorithm 6.1 "SketchyCGAL", the Nystrom sketch's Init / RankOneUpdate / Reconstruct
(their Section 4, after Tropp, Yurtsever, Udell and Cevher, SIAM J. Matrix Anal. Appl. 2017), the
approximate minimum eigenvector by Lanczos with ``q_t = ceil(t^(1/4) log n)`` iterations.)

The problem, scaled here so that ``||C||_F = 1``, ``||A|| = 1`` (an estimate of the operator norm
by power iteration, ``A`` and ``b`` divided by it) and the trace is 1 (``X = alpha X_s``)::

    min <C, X>  s.t.  A(X) = b,  X psd,  tr X = alpha   (or tr X <= alpha)

CGAL (Algorithm 6.1), for ``t = 1, 2, ...``, with ``beta_0 = 1``::

    beta  = beta_0 sqrt(t + 1),   eta = 2 / (t + 1)
    (xi, v) = ApproxMinEvec(C + A*(y + beta (z - b)); q_t)      [z = A(X_t), never X_t itself]
    h = A(alpha v v')           (h = 0 when tr X <= alpha and xi > 0)
    z <- (1 - eta) z + eta h,   p <- (1 - eta) p + eta alpha v'Cv
    gamma = min(beta_0, 4 beta_0 alpha^2 ||A||^2 / ((t + 1)^(3/2) ||z - b||^2))
    y <- y + gamma (z - b)
    Sketch.RankOneUpdate(sqrt(alpha) v, eta):  S <- (1 - eta) S + eta sqrt(alpha) v (sqrt(alpha) v' Omega)

and at the end the Nystrom reconstruction ``X ~ U Lambda U'`` from ``S = X Omega`` (``Omega``
Gaussian n x R): ``sigma = sqrt(n) eps(||S||)``, ``S_s = S + sigma Omega``, ``L = chol(Omega' S_s)``,
``U Sigma = svd(S_s L^-1)``, ``Lambda = max(0, Sigma^2 - sigma I)``, then the trace correction
``Lambda <- Lambda + (tau - tr Lambda) I / R`` with ``tau`` the iterate's trace, tracked as
``tau <- (1 - eta) tau + eta tr H`` (``alpha`` when the data fix the trace; less when ``tr X <= alpha``
and the LMO took 0).  The factor returned is ``R = U Lambda^(1/2)``
(memory ``O(n R + m)``: X is never formed).

The dual: each iteration's eigenvalue gives, for ``y_ours = -(y + beta (z - b))`` in this family's
sign (``Z = C - A*(y_ours)`` is the matrix whose ``lambda_min`` was estimated), the lower bound
``b'y_ours + alpha min(0, lambda_min(Z))`` on the optimum of (P) (:mod:`.lowrank_bound`); the ``y``
with the best such estimate is returned, moved along ``w`` (``A*(w) = I``) so that its ``Z`` is in
the cone (:func:`.lowrank_bound.shift_dual`: the same bound), and the harness recomputes and
certifies it.  Stopping
(ours): at ``max_iter``, the budget, or when the relative infeasibility of ``z`` (in the original
scaling, as DIMACS err1: ``||A(X_t) - b|| / (1 + |b|_max)``; of the implicit ``X_t``, not of the
Nystrom reconstruction, which adds its own error where ``X_t``'s rank exceeds the sketch) and the relative
gap between ``p`` and the best bound are both at most ``tol``, the bound's eigenvalue then
recomputed accurately (a few-step Lanczos value lies above ``lambda_min``, so its bound is too high).

Handles: one PSD block and a trace bound, i.e. the identity in the range of ``A*`` (the data fix
``tr X``: theta, thetaG, mcp, gpp; :meth:`.data.SdpData.trace_bound`) or a known bound given as
the parameter ``alpha`` (then ``tr X <= alpha``).  Skips LP blocks, several blocks, and data with
neither, with the reason.
"""

from __future__ import annotations

import math
import time
from importlib.metadata import version
from typing import Any

import numpy as np
import scipy.linalg as sla

from psdbench import api
from psdbench.api import Budget, Solution, Status, TraceRecorder

from psdbench.families.sdp import KIND
from psdbench.families.sdp.lowrank.factored import Factored, FactoredSolver
from psdbench.families.sdp.lowrank.lowrank_bound import lambda_min_estimate, shift_dual


def lanczos_min(matvec: Any, n: int, q: int, rng: np.random.Generator, v0: np.ndarray | None = None
                ) -> tuple[float, np.ndarray]:
    """``q`` Lanczos steps (full reorthogonalisation) from a random start (or ``v0``): the smallest
    Ritz value and its unit Ritz vector (the paper's ApproxMinEvec)."""
    q = max(1, min(q, n))
    Q = np.empty((n, q))
    alpha, beta = np.empty(q), np.empty(q)
    v = rng.standard_normal(n) if v0 is None else np.array(v0, dtype=float)
    v /= np.linalg.norm(v)
    k = q
    for i in range(q):
        Q[:, i] = v
        w = matvec(v)
        alpha[i] = v @ w
        w -= Q[:, :i + 1] @ (Q[:, :i + 1].T @ w)
        w -= Q[:, :i + 1] @ (Q[:, :i + 1].T @ w)
        beta[i] = np.linalg.norm(w)
        if beta[i] <= 1e-12 * (abs(alpha[i]) + 1e-300):
            k = i + 1
            break
        v = w / beta[i]
    if k == 1:
        return float(alpha[0]), Q[:, 0].copy()
    vals, vecs = sla.eigh_tridiagonal(alpha[:k], beta[:k - 1], select="i", select_range=(0, 0))
    u = Q[:, :k] @ vecs[:, 0]
    return float(vals[0]), u / np.linalg.norm(u)


class NystromSketch:
    """The Nystrom sketch ``S = X Omega`` of a psd matrix updated by rank-one steps (Init / RankOneUpdate / Reconstruct)."""

    def __init__(self, n: int, size: int, rng: np.random.Generator) -> None:
        # a sketch wider than n holds nothing more, and its core Omega' S (rank <= n) is singular
        self.Omega = rng.standard_normal((n, min(size, n)))
        self.S = np.zeros((n, size))

    def rank_one_update(self, v: np.ndarray, eta: float) -> None:
        """``S <- (1 - eta) S + eta v (v' Omega)``."""
        self.S *= 1.0 - eta
        self.S += eta * np.outer(v, v @ self.Omega)

    def reconstruct(self) -> tuple[np.ndarray, np.ndarray]:
        """``(U, Lambda)`` with ``X ~ U diag(Lambda) U'`` (the stabilised Nystrom approximation)."""
        n = self.S.shape[0]
        norm = np.linalg.norm(self.S, 2)
        if norm == 0.0:  # X = 0 (every step so far took the LMO's zero: tr X <= alpha)
            return np.zeros((n, 1)), np.zeros(1)
        sigma = math.sqrt(n) * np.spacing(norm)
        Ss = self.S + sigma * self.Omega
        M = self.Omega.T @ Ss
        M = (M + M.T) / 2
        try:
            L = np.linalg.cholesky(M)  # lower: M = L L'
            B = sla.solve_triangular(L, Ss.T, lower=True).T  # S_s L^-T: B B' = S_s M^-1 S_s'
        except np.linalg.LinAlgError:  # M numerically singular (X of rank < sketch size, sigma tiny):
            w, V = np.linalg.eigh(M)  # the same Nystrom approximation S_s M^+ S_s' through M's range
            keep = w > w[-1] * M.shape[0] * np.finfo(float).eps
            B = Ss @ (V[:, keep] / np.sqrt(w[keep]))
        U, sv, _ = np.linalg.svd(B, full_matrices=False)
        return U, np.maximum(0.0, sv ** 2 - sigma)


def _op_norm(F: Factored, rng: np.random.Generator, iters: int = 30) -> float:
    """``||A||`` (vec(X) -> A(X), Frobenius to Euclidean) by power iteration on ``A A*``, raised 1 %."""
    P = F.patterns[0]
    # A(X) = M' (w o x_pattern), A*(y) on the pattern = M y: the norm of diag(sqrt(w)) M
    W = P.M.multiply(np.sqrt(P.weight)[:, None]).tocsr()
    x = rng.standard_normal(W.shape[1])
    nrm = 1.0
    for _ in range(iters):
        x = W.T @ (W @ x)
        nrm = float(np.linalg.norm(x))
        if nrm == 0:
            return 1.0
        x /= nrm
    return 1.01 * math.sqrt(nrm)


class SdpSketchyCgal(FactoredSolver):
    """SketchyCGAL (Yurtsever et al. 2021) on one trace-bounded PSD block; returns the Nystrom factor."""

    name = "sdp-sketchycgal"
    kinds: tuple[str, ...] = (KIND,)
    returns = ("R (n, R): the Nystrom factor U Lambda^(1/2) of the sketched X (X ~ R R'), a factored point verified "
               "without forming X; y (m,): the dual estimate with the best bound seen")
    params: dict[str, api.Param] = {
        "sketch": api.number(low=1, default=10, integer=True, doc="Nystrom sketch size R (columns of the factor)"),
        "max_iter": api.number(low=1, default=100000, integer=True, doc="CGAL iterations T"),
        "tol": api.number(low=0, default=1e-3, doc="stop at relative infeasibility and relative gap estimate <= tol"),
        "beta0": api.number(low=0, default=1.0, doc="beta_0 of Algorithm 6.1"),
        "alpha": api.number(low=0, default=0.0,
                            doc="a known bound tr X <= alpha; 0: the trace the data fix (identity in the range of A*)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        return {"numpy": version("numpy"), "scipy": version("scipy")}

    def skip_reason(self, instance: Any, alpha: float = 0.0) -> str | None:
        """Skips LP blocks, several blocks, and data whose trace is not fixed (without ``alpha``)."""
        d = instance.data
        if any(s < 0 for s in d.block_sizes) or len(d.block_sizes) != 1:
            return "sdp-sketchycgal handles one PSD block only; the data have blocks " + str(list(d.block_sizes))
        if d.m == 0:
            return "sdp-sketchycgal needs at least one constraint"
        if not alpha and d.trace_bound() is None:
            return ("sdp-sketchycgal needs a trace bound: the data do not fix tr X (identity not in the range of A*) "
                    "and no alpha was given")
        return None

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        p = {**self.default_params, **params}
        d = instance.data
        reason = self.skip_reason(instance, float(p["alpha"]))
        if reason:
            raise ValueError(reason)
        bounded = bool(p["alpha"])
        alpha = float(p["alpha"]) if bounded else float(d.trace_bound())
        F = Factored.of(d)
        P = F.patterns[0]
        n = d.n
        rng = np.random.default_rng(instance.seed)
        # scaling: ||C||_F = 1, ||A|| = 1, trace 1 (X = alpha X_s)
        c_fro = float(np.sqrt(np.sum(P.weight * P.c ** 2))) or 1.0
        a_nrm = _op_norm(F, rng)
        c_s, M_s = P.c / c_fro, P.M / a_nrm
        b_s = np.asarray(d.b, dtype=float) / (a_nrm * alpha)
        # relative infeasibility as DIMACS err1 measures it: ||A(X) - b|| / (1 + |b|_max), A(X) = a_nrm alpha z
        nb = (1.0 + d.norm_b_inf()) / (a_nrm * alpha)
        beta0 = float(p["beta0"])
        sketch = NystromSketch(n, min(int(p["sketch"]), n), rng)
        z, y, obj, trx = np.zeros(d.m), np.zeros(d.m), 0.0, 0.0  # trx: the scaled tr X of the iterate
        best = (-np.inf, np.zeros(d.m))
        rec = TraceRecorder(budget)
        T = int(budget.max_iter or p["max_iter"])
        tol = float(p["tol"])
        t0, t, status = time.monotonic(), 0, "max_iter"
        v, recheck = None, 0
        for t in range(1, T + 1):
            beta, eta = beta0 * math.sqrt(t + 1), 2.0 / (t + 1)
            w = y + beta * (z - b_s)
            D = P.matrix(c_s + M_s @ w)  # C_s + A_s*(w)
            q = int(math.ceil(t ** 0.25 * math.log(max(n, 2))))
            xi, v = lanczos_min(D.dot, n, q, rng)
            # dual bound in the original scaling: Z = C - A*(y_ours) = c_fro D with y_ours = -c_fro w / a_nrm
            y_ours = -c_fro * w / a_nrm
            lb = float(d.b @ y_ours) + alpha * min(0.0, c_fro * xi)
            if lb > best[0]:
                best = (lb, y_ours)
            if bounded and xi > 0:  # tr X <= alpha: the LMO's answer is 0
                h, hv, cv, th = np.zeros(d.m), np.zeros(n), 0.0, 0.0
            else:
                hv, th = v, 1.0
                h = M_s.T @ (P.weight * v[P.rows] * v[P.cols])
                cv = float(c_s @ (P.weight * v[P.rows] * v[P.cols]))
            z = (1 - eta) * z + eta * h
            obj = (1 - eta) * obj + eta * cv
            trx = (1 - eta) * trx + eta * th
            r = z - b_s
            rn2 = float(r @ r)
            gamma = min(beta0, 4 * beta0 / ((t + 1) ** 1.5 * rn2)) if rn2 > 0 else beta0
            y = y + gamma * r
            sketch.rank_one_update(hv, eta)
            feas = math.sqrt(rn2) / nb
            pobj = obj * c_fro * alpha
            gap = (pobj - best[0]) / (1 + abs(pobj) + abs(best[0]))
            if t % 10 == 0 or t == 1:
                rec.add(objective=pobj, dual_objective=best[0], infeasibility=feas, iter=t)
            if feas <= tol and gap <= tol and t >= recheck:
                # the q_t-step Lanczos value lies above lambda_min: recompute the best y's bound
                # accurately (lowrank_bound.lambda_min_estimate) before stopping on it
                Zb = P.matrix(P.c - P.M @ best[1])
                best = (float(d.b @ best[1]) + alpha * min(0.0, lambda_min_estimate(Zb)), best[1])
                if (pobj - best[0]) / (1 + abs(pobj) + abs(best[0])) <= tol:
                    status = "converged"
                    break
                recheck = t + max(10, t // 10)
            if budget.expired():
                status = "budget"
                break
        U, lam = sketch.reconstruct()
        lam = lam + (trx - lam.sum()) / lam.size  # trace correction to the iterate's trace (1 unless tr X <= alpha)
        R = U * np.sqrt(np.maximum(lam, 0.0) * alpha)
        variables = {"R": R, "y": shift_dual(d, best[1])}
        info = {"status": status, "iterations": t, "sketch": int(lam.size), "alpha": alpha,
                "solve_s": time.monotonic() - t0, "a_norm": a_nrm, "c_fro": c_fro}
        return Solution(variables=variables, status=Status.TIMEOUT if budget.expired() else Status.OK,
                        iterations=t, info=info, trace=rec.points, iterates=rec.finish(variables),
                        message="" if status == "converged" else f"stopped: {status}")
