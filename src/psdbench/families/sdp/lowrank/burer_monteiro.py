"""``sdp-burer-monteiro``: the low-rank augmented Lagrangian method of SDPLR.

S. Burer and R. D. C. Monteiro, "A nonlinear programming algorithm for solving semidefinite
programs via low-rank factorization", Math. Program. Ser. B 95:329-357, 2003.  (The paper is not
in /work/shared/papers; section references below are as I recall its structure.)

(P) ``min <C, X> s.t. A(X) = b, X psd`` becomes, with ``X = R R'`` (``R`` n x r), the nonconvex
``min <C, R R'> s.t. A(R R') = b``.  Rank: the smallest ``r`` with ``r (r + 1) / 2 >= m``
(Barvinok and Pataki: some optimal ``X`` has rank ``r*`` with ``r* (r* + 1) / 2 <= m``; the
paper's choice), at most the block's order.  The augmented Lagrangian (the paper's Section 4)::

    L(R, y, sigma) = <C, R R'> - y'(A(R R') - b) + sigma / 2 ||A(R R') - b||^2
    grad_R L       = 2 S R,   S = C - A*(y - sigma (A(R R') - b))

(with ``scale_constraints``, each ``A_i``, ``b_i`` divided by ``||A_i||_F`` first) is minimised over ``R`` for fixed ``(y, sigma)`` by limited-memory BFGS with the paper's EXACT
line search: along a direction ``D``, ``L(R + a D)`` is a quartic polynomial in ``a`` (its
coefficients from ``A(R D' + D R')`` and ``A(D D')``), minimised through the roots of its cubic
derivative.  Then, as in the paper's algorithm: when the infeasibility ``||A(R R') - b||`` has
dropped below ``eta`` times its best value so far, the multipliers are updated
``y <- y - sigma (A(R R') - b)``; otherwise ``sigma <- gamma sigma`` (paper: ``gamma = 10``,
``eta = 1/4``, as I recall them; both are parameters).  Ours: once the relative infeasibility is
at most ``tol`` the multipliers are updated whatever the decrease, and ``sigma`` stays below
:data:`SIGMA_MAX`.

The dual estimate returned is ``y - sigma (A(R R') - b)`` at the final ``R`` (its ``S`` is the
dual slack ``Z = C - A*(y)``), moved along ``w`` with ``A*(w) = I`` where the data have one so
that ``Z`` is in the cone (:func:`.lowrank_bound.shift_dual`; the bound it gives is unchanged).  Stopping (ours, not the paper's, which stops on feasibility
``rho_f`` and a gradient test): where the data bound the trace (``tr X <= T``), when the
relative feasibility ``||A(R R') - b|| / (1 + |b|_max) <= tol``, ``|y'(A(R R') - b)|`` relative
to ``1 + |<C, X>| + |b'y|`` is at most ``tol`` (so ``<X, Z>`` is the gap) AND the relative gap between
``<C, R R'>`` and the bound ``b'y + T min(0, lambda_min(Z))`` (:mod:`.lowrank_bound`, its
eigenvalue as estimated) is ``<= tol``; without a trace bound, when feasibility and
``lambda_min(Z) >= -tol (1 + |C|_max)`` hold.  It also stops ("stalled") after ``patience``
feasible checks in which that gap did not fall by 10 % (the multipliers' accuracy, limited by
``sigma`` times the rounding of ``A(R R') - b``, ends there).  The harness recomputes every error and the bound.

Dual refinement (ours): at each feasible check the least-squares multiplier of the stationarity
condition, ``argmin_y ||(C - A*(y)) R||_F`` (LSQR from the current one), replaces it when its
bound is better.

Saddle escape (ours, after the paper's observation that a rank-deficient local minimiser has
``S`` psd): where the point is feasible to ``tol`` but ``lambda_min(S) < -tol (1 + |C|_max)``,
``R`` is rotated to its principal columns and moved along the eigenvector of ``lambda_min(S)`` in
its weakest column, by the same exact line search (a direction of negative curvature).

Handles: PSD blocks only (any number, a common ``r``; each block's factor is its rows of ``R``).
Skips data with LP (diagonal) blocks: ``R R'`` has no sign constraint to offer them (SDPLR's
LP blocks, squared variables, are not implemented here).  Returns the factored point ``R``,
``y`` (:mod:`.factored`).
"""

from __future__ import annotations

import math
import time
from importlib.metadata import version
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, Solution, Status, TraceRecorder

from psdbench.families.sdp import KIND
from psdbench.families.sdp.lowrank.factored import Factored, FactoredSolver
from psdbench.families.sdp.lowrank.lowrank_bound import shift_dual


#: the penalty is not raised past this (the quartic's coefficients overflow beyond ~1e150)
SIGMA_MAX = 1e12


def rank_bound(m: int) -> int:
    """The smallest ``r`` with ``r (r + 1) / 2 >= m`` (Barvinok-Pataki)."""
    return int(math.ceil((math.sqrt(8 * m + 1) - 1) / 2))


def _min_eigpair(Sj: Any) -> tuple[float, np.ndarray]:
    """The smallest eigenvalue of a sparse symmetric block and its unit eigenvector (dense up to
    :data:`.lowrank_bound.DENSE_MAX`, else Lanczos)."""
    from scipy.sparse.linalg import eigsh

    from psdbench.families.sdp.lowrank.lowrank_bound import DENSE_MAX

    if Sj.shape[0] <= DENSE_MAX:
        w, V = np.linalg.eigh(Sj.toarray())
        return float(w[0]), V[:, 0]
    w, V = eigsh(Sj.tocsr(), k=1, which="SA", tol=1e-10)
    return float(w[0]), V[:, 0]


class _Lagrangian:
    """``L(R, y, sigma)``, its gradient, and the quartic along a direction, on the patterns of :class:`.Factored`."""

    def __init__(self, F: Factored, b: np.ndarray, scale: np.ndarray) -> None:
        # constraints scaled to unit Frobenius norm: A_i / scale_i, b_i / scale_i (multipliers y_i scale_i)
        self.F, self.b = F, b / scale
        self.Ms = [sp.csr_matrix(P.M.multiply(1.0 / scale[None, :])) for P in F.patterns]

    def parts(self, R: np.ndarray) -> list[np.ndarray]:
        """Per block: ``weight * (R R')`` on the pattern."""
        return [P.weight * P.dots(Rj) for P, Rj in zip(self.F.patterns, self.F.blocks(R))]

    def reduce(self, parts: list[np.ndarray]) -> tuple[np.ndarray, float]:
        """``(A(.), <C, .>)`` of a pattern vector per block."""
        Av = sum((M.T @ d for M, d in zip(self.Ms, parts)), np.zeros(self.b.size))
        return Av, float(sum(P.c @ d for P, d in zip(self.F.patterns, parts)))

    def grad(self, R: np.ndarray, ytil: np.ndarray) -> np.ndarray:
        """``2 S R`` with ``S = C - A*(ytil)``."""
        G = np.empty_like(R)
        for P, M, sl in zip(self.F.patterns, self.Ms, self.F.row_slices):
            G[sl] = 2.0 * (P.matrix(P.c - M @ ytil) @ R[sl])
        return G

    def lsq_dual(self, R: np.ndarray, y0: np.ndarray) -> np.ndarray:
        """``argmin_y ||(C - A*(y)) R||_F`` by LSQR from ``y0`` (the stationarity condition ``S R = 0``
        as least squares in ``y``; its adjoint from the pattern's symmetric row dots)."""
        from scipy.sparse.linalg import LinearOperator, lsqr

        shapes = [(sl, P, M) for P, M, sl in zip(self.F.patterns, self.Ms, self.F.row_slices)]
        r = R.shape[1]

        def mv(y: np.ndarray) -> np.ndarray:  # y -> A*(y) R
            out = np.empty_like(R)
            for sl, P, M in shapes:
                out[sl] = P.matrix(M @ y) @ R[sl]
            return out.ravel()

        def rmv(w: np.ndarray) -> np.ndarray:  # W -> (<A_i, (W R' + R W') / 2>)_i
            W = w.reshape(R.shape)
            return sum((M.T @ (P.weight * P.sym_dots(W[sl], R[sl]) / 2) for sl, P, M in shapes), np.zeros(self.b.size))

        op = LinearOperator((R.size, self.b.size), matvec=mv, rmatvec=rmv, dtype=float)
        Cs = np.empty_like(R)
        for sl, P, M in shapes:
            Cs[sl] = P.matrix(P.c) @ R[sl]
        rhs = Cs.ravel() - mv(y0)
        dy = lsqr(op, rhs, atol=1e-14, btol=1e-14, iter_lim=max(100, min(2000, 4 * self.b.size)))[0]
        del r
        return y0 + dy

    def quartic(self, R: np.ndarray, D: np.ndarray, v: np.ndarray, obj: float, y: np.ndarray,
                sigma: float) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
        """Coefficients ``q0..q4`` of ``L(R + a D)`` and the pattern parts of ``R D' + D R'``, ``D D'``."""
        p1 = [P.weight * P.sym_dots(Rj, Dj) for P, Rj, Dj in zip(self.F.patterns, self.F.blocks(R), self.F.blocks(D))]
        p2 = self.parts(D)
        a1, c1 = self.reduce(p1)
        a2, c2 = self.reduce(p2)
        q = np.array([obj - y @ v + sigma / 2 * v @ v,
                      c1 - y @ a1 + sigma * v @ a1,
                      c2 - y @ a2 + sigma / 2 * (a1 @ a1 + 2 * v @ a2),
                      sigma * a1 @ a2,
                      sigma / 2 * a2 @ a2])
        return q, p1, p2


def exact_step(q: np.ndarray) -> float:
    """The ``a > 0`` minimising the quartic ``sum_k q_k a^k`` (0 when none decreases it)."""
    roots = np.roots([4 * q[4], 3 * q[3], 2 * q[2], q[1]]) if q[4] > 0 else np.roots([3 * q[3], 2 * q[2], q[1]])
    cand = [float(r.real) for r in np.atleast_1d(roots) if abs(r.imag) <= 1e-10 * (1 + abs(r.real)) and r.real > 0]
    if not cand:
        return 0.0
    val = [np.polyval(q[::-1], a) for a in cand]
    best = cand[int(np.argmin(val))]
    return best if np.polyval(q[::-1], best) < q[0] else 0.0


class SdpBurerMonteiro(FactoredSolver):
    """Burer-Monteiro with an augmented Lagrangian (SDPLR's method) on (P), PSD blocks only."""

    name = "sdp-burer-monteiro"
    kinds: tuple[str, ...] = (KIND,)
    returns = ("R (n_psd, r): the PSD blocks' factors stacked by rows (X_j = R_j R_j'), a factored point verified "
               "without forming X; y (m,): the dual estimate y - sigma (A(RR') - b), moved into the cone along A*(w) = I")
    params: dict[str, api.Param] = {
        "rank": api.number(low=0, default=0, integer=True,
                           doc="columns of R; 0: the smallest r with r(r+1)/2 >= m (at most the largest block)"),
        "tol": api.number(low=0, default=1e-7, doc="stop at relative feasibility and relative gap to the bound <= tol"),
        "sigma0": api.number(low=0, default=1.0, doc="initial penalty; 0: 1 / n (the order of X)"),
        "gamma": api.number(low=1, default=10.0, doc="penalty increase factor (paper: 10)"),
        "eta": api.number(low=0, high=1, default=0.25, doc="multiplier update when infeasibility < eta * best (paper: 1/4)"),
        "memory": api.number(low=1, default=8, integer=True, doc="L-BFGS memory (pairs kept)"),
        "inner_tol": api.number(low=0, default=1e-1,
                                doc="an inner solve stops at ||grad L||_F / (1 + |C|_max) <= inner_tol / sigma "
                                    "(or at 1e-3 of the relative infeasibility, whichever is larger; at most tol once feasible to tol)"),
        "max_inner": api.number(low=1, default=2000, integer=True, doc="L-BFGS iterations per inner solve"),
        "max_outer": api.number(low=1, default=500, integer=True, doc="augmented Lagrangian iterations"),
        "scale_constraints": api.Param(default=False, types=(bool,),
                                       doc="divide each A_i, b_i by ||A_i||_F (measured: slower on theta and gpp)"),
        "refine_dual": api.Param(default=True, types=(bool,),
                                 doc="at each feasible check also try the least-squares multiplier of S(y) R = 0"),
        "patience": api.number(low=1, default=20, integer=True,
                               doc="stop ('stalled') after this many feasible checks without the gap falling by 10 %"),
        "check_every": api.number(low=1, default=1, integer=True,
                                  doc="estimate lambda_min(Z) for the stopping test every this many outer iterations"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        return {"numpy": version("numpy"), "scipy": version("scipy")}

    def skip_reason(self, instance: Any) -> str | None:
        """Skips data with LP (diagonal) blocks, and data without constraints or PSD blocks."""
        d = instance.data
        if any(s < 0 for s in d.block_sizes):
            return "sdp-burer-monteiro handles PSD blocks only; the data have LP (diagonal) blocks"
        if not d.block_sizes or d.m == 0:
            return "sdp-burer-monteiro needs at least one PSD block and one constraint"
        return None

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        from psdbench.families.sdp.reference import trace_upper

        p = {**self.default_params, **params}
        d = instance.data
        F = Factored.of(d)
        scale = np.ones(d.m)
        if p["scale_constraints"]:
            scale = np.sqrt(np.asarray(d.A.multiply(d.A).sum(axis=1)).ravel())
            scale[scale == 0] = 1.0
        Lg = _Lagrangian(F, np.asarray(d.b, dtype=float), scale)
        b = Lg.b
        n_max = max(d.block_sizes)
        r = int(p["rank"]) or rank_bound(d.m)
        r = max(1, min(r, n_max))
        T = trace_upper(d)
        nb, nc = 1.0 + d.norm_b_inf(), 1.0 + d.norm_C_inf()
        rng = np.random.default_rng(instance.seed)
        R = rng.standard_normal((F.n_psd, r))
        R *= math.sqrt((T if T else d.n) / float(np.sum(R * R)))  # tr(R R') = T (or n)
        y = np.zeros(d.m)
        sigma = float(p["sigma0"]) or 1.0 / d.n
        rec = TraceRecorder(budget)
        parts = Lg.parts(R)
        Av, obj = Lg.reduce(parts)
        v = Av - b
        best_v = float(np.linalg.norm(v))
        total_inner, outer, status, bound_est, escapes = 0, 0, "max_outer", float("nan"), 0
        best_gap, stall, refined = np.inf, 0, 0
        max_inner = int(budget.max_iter or p["max_inner"])
        t0 = time.monotonic()
        for outer in range(1, int(p["max_outer"]) + 1):
            # ---- inner: L-BFGS with the exact line search on the quartic
            S_hist: list[tuple[np.ndarray, np.ndarray, float]] = []
            ytil = y - sigma * v
            G = Lg.grad(R, ytil)
            feas = float(np.linalg.norm(scale * v)) / nb
            gtol = max(float(p["inner_tol"]) / sigma, 1e-3 * feas) * nc
            gtol = min(gtol, 1e-1 * nc)
            if feas <= float(p["tol"]):  # feasible: the dual bound's accuracy follows the gradient's
                gtol = min(gtol, float(p["tol"]) * nc)
            for _ in range(max_inner):
                gnorm = float(np.linalg.norm(G))
                if gnorm <= gtol or budget.expired():
                    break
                D = -G
                if S_hist:  # two-loop recursion
                    alphas = []
                    for s_, g_, rho in reversed(S_hist):
                        a = rho * float(np.vdot(s_, D))
                        alphas.append(a)
                        D = D - a * g_
                    s_, g_, _ = S_hist[-1]
                    D *= float(np.vdot(s_, g_)) / float(np.vdot(g_, g_))
                    for (s_, g_, rho), a in zip(S_hist, reversed(alphas)):
                        D += (a - rho * float(np.vdot(g_, D))) * s_
                    if float(np.vdot(D, G)) >= 0:
                        D, S_hist = -G, []
                q, p1, p2 = Lg.quartic(R, D, v, obj, y, sigma)
                a = exact_step(q)
                total_inner += 1
                if a == 0.0:
                    if S_hist:
                        S_hist = []
                        continue
                    break
                R = R + a * D
                parts = [x0 + a * x1 + a * a * x2 for x0, x1, x2 in zip(parts, p1, p2)]
                Av, obj = Lg.reduce(parts)
                v = Av - b
                ytil = y - sigma * v
                G_new = Lg.grad(R, ytil)
                sv, gv = a * D, G_new - G
                sg = float(np.vdot(sv, gv))
                if sg > 1e-16 * float(np.linalg.norm(sv)) * float(np.linalg.norm(gv)):
                    S_hist.append((sv, gv, 1.0 / sg))
                    S_hist = S_hist[-int(p["memory"]):]
                G = G_new
            # recompute exactly (the quartic's update of the pattern products accumulates rounding)
            parts = Lg.parts(R)
            Av, obj = Lg.reduce(parts)
            v = Av - b
            vn = float(np.linalg.norm(v))
            feas = float(np.linalg.norm(scale * v)) / nb
            ytil = y - sigma * v
            done = False
            if feas <= float(p["tol"]) and outer % int(p["check_every"]) == 0:
                pairs = [_min_eigpair(P.matrix(P.c - M @ ytil)) for P, M in zip(F.patterns, Lg.Ms)]
                if p["refine_dual"]:
                    # the least-squares multiplier of the stationarity S(y) R = 0, kept when its
                    # bound b'y + T min(0, lambda_min) (or lambda_min alone) is the better one
                    y_ls = Lg.lsq_dual(R, ytil)
                    pairs_ls = [_min_eigpair(P.matrix(P.c - M @ y_ls)) for P, M in zip(F.patterns, Lg.Ms)]
                    lam0, lam1 = min(q[0] for q in pairs), min(q[0] for q in pairs_ls)
                    Tb = T if T is not None else 0.0
                    if float(b @ y_ls) + Tb * min(0.0, lam1) > float(b @ ytil) + Tb * min(0.0, lam0) or (
                            T is None and lam1 > lam0):
                        ytil, pairs = y_ls, pairs_ls
                        refined += 1
                jmin = int(np.argmin([pr[0] for pr in pairs]))
                lam = pairs[jmin][0]
                dobj = float(b @ ytil)
                denom = 1 + abs(obj) + abs(dobj)
                # <X, Z> = <C, X> - b'y - y'(A(X) - b): the second term small too (err6 after the shift)
                done = abs(float(ytil @ v)) / denom <= float(p["tol"])
                if T is not None:
                    bound_est = dobj + T * min(0.0, lam)
                    gap = (obj - bound_est) / (1 + abs(obj) + abs(bound_est))
                    done = done and gap <= float(p["tol"])
                else:
                    gap = -lam / nc
                    done = done and gap <= float(p["tol"])
                gap = max(gap, abs(float(ytil @ v)) / denom)
                if gap < 0.9 * best_gap:
                    best_gap, stall = gap, 0
                else:
                    stall += 1
                if not done and stall >= int(p["patience"]):
                    y, status = ytil, "stalled"
                    break
                if not done and lam < -float(p["tol"]) * nc:
                    # a saddle: S has a negative direction u.  Rotate R_j to its principal columns (R R'
                    # unchanged) and step along u in the weakest one, by the exact line search
                    sl = F.row_slices[jmin]
                    U, sv, _ = np.linalg.svd(R[sl], full_matrices=False)
                    R[sl] = U * sv
                    D = np.zeros_like(R)
                    D[sl, int(np.argmin(sv))] = pairs[jmin][1]
                    q, p1, p2 = Lg.quartic(R, D, v, obj, y, sigma)
                    a = exact_step(q)
                    if a > 0:
                        R = R + a * D
                        escapes += 1
                        parts = Lg.parts(R)
                        Av, obj = Lg.reduce(parts)
                        v = Av - b
                        vn = float(np.linalg.norm(v))
            rec.add(objective=obj, err1=feas, sigma=sigma, iter=total_inner,
                    **({"dual_objective": bound_est} if bound_est == bound_est else {}))
            if done:
                y, status = ytil, "converged"
                break
            if budget.expired():
                y, status = ytil, "budget"
                break
            if vn <= float(p["eta"]) * best_v or feas <= float(p["tol"]):
                # the multiplier update y <- y - sigma (A(RR') - b); once feasible to tol (ours: the
                # paper raises sigma whenever the infeasibility stalls, which at rounding level
                # only inflates sigma (v) and spoils y)
                y, best_v = ytil, min(best_v, vn)
            else:
                sigma = min(sigma * float(p["gamma"]), SIGMA_MAX)
        else:
            y = y - sigma * v
        variables = {"R": R, "y": shift_dual(d, y / scale)}
        info = {"status": status, "rank": r, "outer": outer, "inner": total_inner, "sigma": sigma, "escapes": escapes, "refined": refined,
                "solve_s": time.monotonic() - t0, "budget_s": float(getattr(budget, "time_limit_s", None) or float("nan"))}
        return Solution(variables=variables, status=Status.TIMEOUT if budget.expired() else Status.OK,
                        iterations=total_inner, info=info, trace=rec.points, iterates=rec.finish(variables),
                        message="" if status == "converged" else f"stopped: {status}")
