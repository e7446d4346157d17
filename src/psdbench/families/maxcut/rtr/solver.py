"""``maxcut-rtr``: Riemannian trust regions on the product of spheres, with rank adaptation, for the
max-cut SDP ``max <C, X> s.t. diag(X) = 1, X psd``; it stops on an estimate of the bound gap of the
point it returns.

The method, and where each piece is from:

* **Burer-Monteiro on the oblique manifold.**  ``X = V V'`` with ``V`` in
  ``M_p = {V in R^{n x p} : ||v_i|| = 1}`` (S. Burer, R. D. C. Monteiro, Math. Program. B 95:329-357,
  2003; the constraint ``diag(X) = 1`` is the manifold), so (P) is ``min F(V) = -<C, V V'>`` over a
  smooth manifold (M. Journee, F. Bach, P.-A. Absil, R. Sepulchre, "Low-rank optimization on the
  cone of positive semidefinite matrices", SIAM J. Optim. 20(5):2327-2351, 2010, [JBAS10]; N.
  Boumal, V. Voroninski, A. S. Bandeira, "The non-convex Burer-Monteiro approach works on smooth
  semidefinite programs", NeurIPS 2016, [BVB16]).  Gradient, Hessian and retraction:
  :mod:`.kernels`.
* **Riemannian trust regions** (P.-A. Absil, C. G. Baker, K. A. Gallivan, "Trust-region methods on
  Riemannian manifolds", Found. Comput. Math. 7:303-330, 2007, [ABG07]; the same algorithm is
  Algorithm 10 of Absil, Mahony and Sepulchre, *Optimization Algorithms on Matrix Manifolds*, 2008,
  [AMS08], its inner solver Algorithm 11): the model ``m(eta) = F + <grad, eta> + <eta, Hess[eta]> / 2``
  on the tangent space, minimised in the ball ``||eta|| <= Delta`` by truncated conjugate gradients
  (Steihaug-Toint, :func:`tcg`: stops at negative curvature or the boundary, or when
  ``||r_j|| <= ||r_0|| min(||r_0||^theta, kappa)``, ``kappa = 0.1``, local convergence of order
  ``min(1 + theta, 2)`` [ABG07]; ``theta`` is a parameter, default 0.5: measured on maxG11, maxG32 and
  maxG60, 1.0 took 1.4-2.3 times the inner steps to the same certified gap); the step ``R_V(eta)`` is accepted when ``rho = (F(V) - F(R_V(eta))) /
  (m(0) - m(eta)) > 0.1``; ``Delta`` is quartered when ``rho < 1/4`` and doubled (up to
  ``Delta_bar = pi sqrt(n)``, from ``Delta_0 = Delta_bar / 8``) when ``rho > 3/4`` at the boundary
  ([AMS08] Algorithm 10's rules).  Ours: ``F(V) - F(R_V(eta))`` is computed as
  ``sum((V_new - V) * C (V_new + V))`` (exact for symmetric ``C``), at the accuracy of the step rather
  than of ``|F|``, and ``rho`` gets both terms regularised by ``1e3 eps max(1, |F|)`` (as Manopt's
  ``trustregions`` does) so that steps at rounding level are not rejected forever.
* **Rank adaptation** ([JBAS10], its rank-incremental algorithm; [BVB16]): a second-order critical
  ``V`` of rank below ``p`` is optimal, and ``V`` is optimal exactly when ``S = Diag(y) - C`` is psd,
  ``y_i = v_i' (C V)_i``.  Started at rank ``p0`` (default ``ceil(2 ln n)``, LoRADS's default initial
  rank: 14 to 20 on 800 to 20,000 nodes, where the mixing method's ``ceil(sqrt(2n)) + 1`` is 41 to 201;
  measured here, a start below the optimum's rank (8 or 12 on the 20,000-node torus) stalls near saddles
  for minutes where 20 converges in seconds), the
  trust regions run until the gradient is small; then ``lambda_max(C - Diag y) = -lambda_min(S)``
  is estimated (:func:`psdbench.linalg.lanczos.lanczos_estimate`, the certificate's own start, stopped
  as soon as it passes the threshold below), and
  * when ``n lambda_max <= 0.9 gap_tol max(1, |f|)`` the point is returned ("converged");
  * when ``S``'s most negative eigenvalue is below what the gradient explains (``-lambda_min >
    ||grad||_F sqrt(p / n)``: a saddle of rank ``p``, not an inexact optimum) the eigenvectors of its
    negative eigenvalues (ARPACK, at most ``rank_step``) become new columns: ``[V, t U] `` retracted
    is a descent direction of second order (``F`` falls by ``t^2 sum |lambda_k|`` to first order in
    ``t^2``), ``t`` halved from ``1 / max |U|`` until ``F`` falls, and ``p`` grows by their number;
  * otherwise the gradient threshold is divided by 100 and the trust regions go on.

The bound the harness certifies from the returned ``y`` is ``U(y) = 1'y + n lambda_max(C - Diag y)``
(:mod:`..bound`) with ``1'y = <C, V V'>``, so the bound gap is ``n lambda_max(C - Diag y)``: the
solver's stop is an estimate of the very number that is certified.  Deterministic given the seed
(the start: Gaussian rows normalised, :func:`..mixing.initial_point`).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, Solution, Status, TraceRecorder

from .. import KIND
from ..mixing import MaxcutMixing, initial_point
from . import kernels as K

#: Absil, Mahony and Sepulchre's acceptance threshold and radius factors (Algorithm 10)
RHO_ACCEPT, RHO_SHRINK, RHO_GROW = 0.1, 0.25, 0.75
#: tCG's linear factor ([ABG07]'s kappa; its ``theta`` is the solver's parameter)
KAPPA = 0.1
#: the gradient falls by this factor between two estimates of the gap, or
CHECK_FACTOR = 10.0
#: the trust regions do this many times the last estimate's steps (in tCG steps) before the next
CHECK_WORK = 4.0
#: most sweeps of the mixing method's warm start
WARM_SWEEPS = 200


@dataclass
class Point:
    """``V`` with ``H = C V``, the gradient ``G``, the multipliers ``y`` and ``f = <C, V V'>``."""

    V: np.ndarray
    H: np.ndarray
    G: np.ndarray
    y: np.ndarray
    f: float

    @property
    def gnorm(self) -> float:
        return float(np.linalg.norm(self.G))


class Rows:
    """``C``'s CSR arrays and the kernels on them (one object per solve; nothing global)."""

    def __init__(self, C: sp.csr_matrix):
        self.C = C
        self.n = int(C.shape[0])
        self.arrays = K.csr_arrays(C)

    def point(self, V: np.ndarray) -> Point:
        H, G, y = np.empty_like(V), np.empty_like(V), np.empty(V.shape[0])
        f = K.gradient(*self.arrays, V, H, G, y)
        return Point(V, H, G, y, float(f))

    def hess(self, pt: Point, U: np.ndarray) -> np.ndarray:
        out = np.empty_like(U)
        K.hessian(*self.arrays, pt.V, U, pt.y, out)
        return out


def tcg(rows: Rows, pt: Point, delta: float, *, kappa: float = 0.1, theta: float = 1.0,
        max_inner: int = 1000) -> tuple[np.ndarray, np.ndarray, bool, int]:
    """Truncated conjugate gradients ([AMS08] Algorithm 11, Steihaug-Toint) on the trust-region model
    (:func:`.kernels.tcg`, one compiled call).

    Returns ``(eta, Hess[eta], at_boundary, iterations)``; ``eta`` minimises ``<G, eta> + <eta,
    Hess[eta]> / 2`` approximately in ``||eta|| <= delta`` (identity preconditioner).
    """
    eta = np.empty_like(pt.G)
    work = [np.empty_like(pt.G) for _ in range(3)]
    boundary, its = K.tcg(*rows.arrays, pt.V, pt.y, pt.G, float(delta), float(kappa), float(theta),
                          int(max_inner), eta, *work)
    return eta, rows.hess(pt, eta), bool(boundary), int(its)


@dataclass
class TrState:
    """What the trust regions carry between calls: the radius, its cap, and the counts so far."""

    delta: float
    delta_bar: float
    theta: float = 0.5
    outer: int = 0
    inner: int = 0


def trust_regions(rows: Rows, pt: Point, st: TrState, gtol: float, *, max_outer: int, budget: Budget | None,
                  trace: TraceRecorder | None, rank: int, max_inner: float = math.inf) -> tuple[Point, str]:
    """[AMS08] Algorithm 10 from ``pt`` until ``||grad||_F <= gtol`` or ``st.inner >= max_inner``; returns
    the point and why it stopped (``"gradient"``, ``"work"``, ``"max_iter"``, ``"timeout"``,
    ``"stalled"``: the radius fell below rounding)."""
    eps = np.finfo(float).eps
    while pt.gnorm > gtol:
        if st.inner >= max_inner:
            return pt, "work"
        if st.outer >= max_outer:
            return pt, "max_iter"
        if budget is not None and budget.expired():
            return pt, "timeout"
        st.outer += 1
        eta, Heta, boundary, its = tcg(rows, pt, st.delta, kappa=KAPPA, theta=st.theta)
        st.inner += its
        Vn = np.empty_like(pt.V)
        K.retract(pt.V, eta, Vn)
        new = rows.point(Vn)
        decrease = K.sum_diff(new.V, pt.V, new.H, pt.H)  # F(V) - F(V_new) = f(V_new) - f(V)
        model = -(float(np.vdot(pt.G, eta)) + 0.5 * float(np.vdot(eta, Heta)))
        reg = 1e3 * eps * max(1.0, abs(pt.f))
        rho = (decrease + reg) / (model + reg)
        if rho < RHO_SHRINK:
            st.delta /= 4.0
        elif rho > RHO_GROW and boundary:
            st.delta = min(2.0 * st.delta, st.delta_bar)
        if rho > RHO_ACCEPT and decrease >= -reg:
            pt = new
        if trace is not None:
            trace.add(iter=st.outer, objective=pt.f, grad_norm=pt.gnorm, rank=rank, tr_radius=st.delta,
                      inner=its)
        if st.delta < 1e-14 * st.delta_bar:
            return pt, "stalled"
    return pt, "gradient"


def negative_directions(rows: Rows, pt: Point, k: int, seed: int, depth: float) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest eigenpairs of ``S = Diag(y) - C`` on the complement of ``range(V)``.

    ``S V = G / 2`` is small near a critical point, so ``range(V)`` is a cluster of eigenvalues near 0
    that a negative eigenvalue of order ``1e-6`` cannot be told from in few Lanczos steps; on its
    complement (``P S P``, ``P = I - Q Q'``, ``Q`` an orthonormal basis of ``range(V)``) the negative
    eigenvalues are the extreme ones.  ARPACK runs on ``sigma I - P S P`` (``sigma`` Gershgorin's
    bound, which='LA'), so its relative test is one of the residual against ``||S||``, not against the
    tiny eigenvalue: ``tol = 0.1 depth / sigma`` with ``depth`` the size of the negative eigenvalue
    sought (the estimate of ``-lambda_min(S)``), enough for a vector of negative curvature; the values
    returned are the Rayleigh quotients ``u' S u`` of the vectors found (those converged when ARPACK
    stops at its cap of 100 restarts).
    """
    from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

    n = rows.n
    S = (sp.diags(pt.y) - rows.C).tocsr()
    Q, _ = np.linalg.qr(pt.V)
    sigma = float(np.max(np.abs(S).sum(axis=1)))

    def apply(x: np.ndarray) -> np.ndarray:
        x = x.reshape(n, -1)
        x = x - Q @ (Q.T @ x)
        w = S @ x
        w -= Q @ (Q.T @ w)
        return sigma * x - w

    op = LinearOperator((n, n), matvec=apply, matmat=apply, dtype=float)
    k = max(1, min(k, n - Q.shape[1] - 2))
    v0 = np.random.default_rng(seed).standard_normal(n)
    try:
        _, vecs = eigsh(op, k=k, which="LA", tol=max(1e-12, 0.1 * depth / sigma), v0=v0, maxiter=100)
    except ArpackNoConvergence as err:
        vecs = err.eigenvectors
    vecs = vecs - Q @ (Q.T @ vecs)
    vecs /= np.maximum(np.linalg.norm(vecs, axis=0), 1e-300)
    vals = np.einsum("ij,ij->j", vecs, S @ vecs)
    order = np.argsort(vals)
    return vals[order], vecs[:, order]


def add_columns(rows: Rows, pt: Point, U: np.ndarray) -> Point:
    """``[V, t U]`` retracted, ``t`` halved from ``1 / max |U|`` until ``<C, X>`` rises ([JBAS10])."""
    t = 1.0 / max(float(np.max(np.abs(U))), 1e-300)
    base = np.hstack([pt.V, np.zeros_like(U)])
    best = None
    for _ in range(40):
        E = np.hstack([np.zeros_like(pt.V), t * U])
        Vn = np.empty_like(base)
        K.retract(base, E, Vn)
        new = rows.point(Vn)
        if new.f > pt.f:
            return new
        best = new
        t /= 2.0
    return best if best is not None else rows.point(base)


def start_rank(n: int) -> int:
    """``ceil(2 ln n)``: the initial rank LoRADS uses by default (its ``timesLogRank`` 2), at least 2."""
    return max(2, math.ceil(2.0 * math.log(max(n, 2))))


def solve_rtr(C: sp.csr_matrix, seed: int, *, rank: int, max_rank: int, rank_step: int, gap_tol: float,
              max_iter: int, theta: float = 0.5, warm_tol: float = 1e-4, budget: Budget | None = None,
              trace: TraceRecorder | None = None) -> tuple[Point, dict[str, Any]]:
    """Trust regions with rank adaptation (the module's method); returns the point and its counts."""
    from psdbench.linalg.lanczos import lanczos_estimate

    if K.gradient is None:
        raise RuntimeError("maxcut-rtr needs numba (pip install numba)")
    rows = Rows(sp.csr_matrix(C))
    n = rows.n
    p = int(max(1, min(rank or start_rank(n), n, max_rank)))
    V = initial_point(n, p, seed)
    sweeps = 0
    if warm_tol > 0:  # the mixing method's cheap first phase, until a sweep gains less than warm_tol
        from ..mixing import mixing

        V, sweeps, _ = mixing(rows.C, p, seed, tol=warm_tol, max_sweeps=WARM_SWEEPS, budget=budget, V0=V)
    pt = rows.point(V)
    bar = math.pi * math.sqrt(n)
    st = TrState(delta=bar / 8.0, delta_bar=bar, theta=float(theta))
    gtol = 1e-2 * pt.gnorm
    checks, escapes, why = 0, 0, "max_iter"
    check_cost = math.inf  # no estimate yet: the first check waits for the gradient
    log: list[dict[str, float]] = []  # one entry per estimate of the gap (the solver's own account)
    t0 = time.perf_counter()
    lam = math.nan
    while True:
        pt, why = trust_regions(rows, pt, st, gtol, max_outer=max_iter, budget=budget, trace=trace, rank=p,
                                max_inner=st.inner + CHECK_WORK * check_cost)
        if why in ("timeout", "max_iter"):
            break
        checks += 1
        # lambda_max(C - Diag y), stopped once it is known to be above both the stop's threshold and
        # what the gradient explains (then the point is a saddle of rank p: see the module doc)
        threshold = 0.9 * gap_tol * max(1.0, abs(pt.f)) / n
        residual = pt.gnorm * math.sqrt(p / n)
        M = (rows.C - sp.diags(pt.y)).tocsr()
        # the test is relative to the spread of the Ritz values (at most 2 ||M||): an error 5 % of the threshold
        spread = 2.0 * float(np.max(np.asarray(abs(M).sum(axis=1))))
        counts: dict[str, int] = {}
        lam = lanczos_estimate(M, tol=max(1e-12, 0.05 * threshold / spread), above=max(threshold, residual),
                               counts=counts)
        # its Lanczos steps, each counted as one tCG step (a product with C is 1 / p of a Hessian product,
        # but at small n the per-step overheads are alike): the next check waits for CHECK_WORK times as many
        check_cost = float(counts.get("steps", n))
        bound = pt.f + n * max(lam, 0.0)
        log.append({"t": time.perf_counter() - t0, "rank": p, "outer": st.outer, "inner": st.inner,
                    "grad_norm": pt.gnorm, "lambda_max": lam, "gap_estimate": n * max(lam, 0.0) / max(1.0, abs(bound))})
        if lam <= threshold:
            why = "converged"
            break
        if lam > residual and p < max_rank:
            vals, vecs = negative_directions(rows, pt, min(rank_step, max_rank - p), seed + checks, lam)
            neg = vals < -residual
            if np.any(neg):
                pt = add_columns(rows, pt, vecs[:, neg])
                p = pt.V.shape[1]
                escapes += 1
                st.delta = st.delta_bar / 8.0
                gtol = pt.gnorm / CHECK_FACTOR
                continue
        if why == "stalled" or pt.gnorm == 0.0:
            break
        gtol = pt.gnorm / CHECK_FACTOR
    return pt, {"status": why, "rank": p, "outer": st.outer, "inner": st.inner, "checks": checks,
                "escapes": escapes, "warm_sweeps": sweeps, "lambda_max_estimate": lam, "checks_log": log}


class MaxcutRtr:
    """Riemannian trust regions with rank adaptation on ``max <C, X>, diag X = 1`` (module doc)."""

    name = "maxcut-rtr"
    kinds = (KIND,)
    returns = "R (n x p unit rows, X = R R^T), y (y_i = r_i' (C R)_i)"
    params: dict[str, api.Param] = {
        "rank": api.number(low=0, default=0, integer=True,
                           doc="the starting rank p0; 0: ceil(2 ln n) (LoRADS's default initial rank, timesLogRank 2)"),
        "max_rank": api.number(low=1, default=100, integer=True, doc="the rank is never raised above it"),
        "rank_step": api.number(low=1, default=4, integer=True, doc="columns added at most per rank increase"),
        "gap_tol": api.number(low=0.0, default=1e-6,
                              doc="stop when the estimated bound gap n lambda_max(C - Diag y) / max(1, |<C, X>|) <= 0.9 gap_tol"),
        "max_iter": api.number(low=1, default=100_000, integer=True, doc="trust-region iterations at most"),
        "warm_tol": api.number(low=0.0, default=1e-4,
                               doc="mixing-method sweeps first (at most 200), until one gains less than warm_tol "
                                   "times the objective; 0: none"),
        "theta": api.number(low=0.0, high=1.0, default=0.5,
                            doc="tCG stops at ||r|| <= ||r0|| min(||r0||^theta, 0.1): local order 1 + theta"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    # the same requirement (a cost C) and the same libraries as the mixing method's solver
    supports = MaxcutMixing.supports
    library_versions = MaxcutMixing.library_versions

    def warm_up(self, instance: Any) -> None:
        """Compile the kernels (untimed; numba caches them on disk): a solve of a 5-cycle."""
        W = sp.diags([np.ones(4), np.ones(4)], [1, -1], shape=(5, 5)).tolil()
        W[0, 4] = W[4, 0] = 1.0
        W = sp.csr_matrix(W)
        C = (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W) / 4.0
        solve_rtr(sp.csr_matrix(C), 0, rank=2, max_rank=3, rank_step=1, gap_tol=1e-3, max_iter=50)

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        p = {**self.default_params, **params}
        rec = TraceRecorder(budget)
        t0 = time.perf_counter()
        pt, info = solve_rtr(instance.C, int(getattr(instance, "seed", 0)), rank=int(p["rank"]),
                             max_rank=int(p["max_rank"]), rank_step=int(p["rank_step"]),
                             gap_tol=float(p["gap_tol"]), max_iter=int(budget.max_iter or p["max_iter"]),
                             theta=float(p["theta"]), warm_tol=float(p["warm_tol"]),
                             budget=budget, trace=rec)
        # "stalled" (the radius fell to rounding before the gap estimate was met) is an inaccurate exit
        status = {"converged": Status.OK, "timeout": Status.TIMEOUT}.get(info["status"], Status.MAX_ITER)
        return Solution(variables={"R": pt.V, "y": pt.y}, status=status, iterations=info["outer"],
                        trace=rec.points, info={**info, "solve_time_s": time.perf_counter() - t0})
