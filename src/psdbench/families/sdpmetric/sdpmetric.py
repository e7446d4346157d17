"""Solver ``sdpmetric``: the SDPMetric paper's Algorithms 1 and 2 (rank-one Frank-Wolfe on the spectraplex).

Outer loop (Algorithm 1): rho by its exact 1-D maximization (line 3, :func:`.losses.best_rho`),
then ``inner_iter`` steps of Algorithm 2 at that fixed rho (line 4): ``v`` the top eigenvector of
``G = nabla_X f(X, rho_k)`` (12), ``X <- X + alpha (v v' - X)`` (7), ``alpha`` by backtracking.

Stopping, checked at the top of every outer iteration, with rho just re-maximized:

* the Frank-Wolfe gap ``lambda_max(G) - <G, X>`` <= ``tol * max(1, |f|)``.  Since ``g(X) = max_rho
  f(X, rho)`` is concave and ``G`` (at ``rho*(X)``) is a supergradient of it (see
  :mod:`.instance`), this gap bounds ``g* - g(X)``: the returned point is within it of the optimum;
* Algorithm 1, line 5: both changes of ``f`` (by the X step and by the rho step) below ``eps``;
* ``budget.expired()`` (status ``timeout``), ``max_iter`` outer iterations (status ``max_iter``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Instance, Solution, Status, TraceRecorder
from psdbench.families.sdpmetric import losses
from psdbench.families.sdpmetric.contract import TripletMarginKind


def top_eig(G: np.ndarray, v0: np.ndarray | None, method: str, dense_max: int) -> tuple[float, np.ndarray]:
    """Largest eigenvalue of symmetric ``G`` and its unit eigenvector (Algorithm 2, line 2).

    ``method="auto"``: full ``eigh`` up to ``dense_max``, else ARPACK ``eigsh`` warm-started at
    ``v0`` (the previous eigenvector), falling back to ``eigh`` if ARPACK does not converge.
    """
    D = G.shape[0]
    if method == "eigh" or (method == "auto" and D <= dense_max):
        w, Q = np.linalg.eigh(G)
        return float(w[-1]), Q[:, -1]
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh

    try:
        w, Q = eigsh(G, k=1, which="LA", v0=v0, tol=1e-12, maxiter=20 * D)
        return float(w[0]), Q[:, 0] / np.linalg.norm(Q[:, 0])
    except ArpackNoConvergence:
        w, Q = np.linalg.eigh(G)
        return float(w[-1]), Q[:, -1]


class Sdpmetric:
    """Solver ``sdpmetric``: rank-one Frank-Wolfe with exact rho and backtracking (Algorithms 1, 2)."""

    name = "sdpmetric"
    kinds = ("triplet-margin",)
    returns = "X (D, D): the metric on the spectraplex; rho: its margin (the scoring uses the exact rho*(X))"
    params: dict[str, api.Param] = {
        "tol": api.number(low=0, default=1e-7, doc="stop when the FW gap <= tol * max(1, |f|)"),
        "eps": api.number(low=0, default=1e-12,
                          doc="Algorithm 1 line 5: stop when both changes of f are below eps (0: off)"),
        "inner_iter": api.number(low=1, default=1, integer=True, doc="Algorithm 2 steps (J) per rho update"),
        "max_iter": api.number(low=1, default=100000, integer=True, doc="outer iterations (Algorithm 1's K)"),
        "c1": api.number(low=1e-12, high=0.5, default=1e-4, doc="sufficient-increase constant of (13)"),
        "eig": api.choice("auto", "eigh", "eigsh", doc="top eigenvector: auto (eigh up to eig_dense_max) | eigh | eigsh"),
        "eig_dense_max": api.number(low=1, default=50, integer=True, doc="auto: full eigh up to this D"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        import scipy

        return {"numpy": np.__version__, "scipy": scipy.__version__}

    def supports(self, instance: Instance) -> bool:
        return self.skip_reason(instance) is None

    def skip_reason(self, instance: Instance) -> str | None:
        if getattr(instance, "kind", None) != "triplet-margin":
            return f"sdpmetric solves kind 'triplet-margin', not {getattr(instance, 'kind', '?')!r}"
        if getattr(instance, "loss", None) == "hinge":
            return "sdpmetric needs a differentiable loss (squared-hinge (9) or huber (10)); hinge is for the conic solvers"
        return None

    def solve(self, instance: TripletMarginKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        U, V, C, loss, h = instance.U, instance.V, float(instance.C), instance.loss, float(instance.h)
        D = U.shape[1]
        tol, eps, c1 = float(p["tol"]), float(p["eps"]), float(p["c1"])
        eig = lambda G, v0: top_eig(G, v0, str(p["eig"]), int(p["eig_dense_max"]))  # noqa: E731
        fval = lambda m, r: losses.f_value(m, r, C, loss, h)  # noqa: E731

        # Algorithm 1, line 1: a rank-one, trace-one start, v v' with v the top eigenvector of the
        # gradient at the centre I / D (the first Frank-Wolfe vertex from there).
        m = losses.margins(U, V, np.eye(D) / D)
        _, v = eig(losses.grad_X(U, V, m, losses.best_rho(m, C, loss, h), C, loss, h), None)
        X = np.outer(v, v)
        m = losses.margins(U, V, X)
        rho_prev = f_prev = None
        rec = TraceRecorder(budget)
        status, message, eig_time, n_backtrack = Status.MAX_ITER, "", 0.0, 0
        max_iter = int(budget.max_iter or p["max_iter"])
        k = 0
        for k in range(1, max_iter + 1):
            rho = losses.best_rho(m, C, loss, h)  # Algorithm 1, line 3 (exact; rho free as in (8))
            f_rho = fval(m, rho)  # f(X_{k-1}, rho_k) = g(X_{k-1})
            G = losses.grad_X(U, V, m, rho, C, loss, h)
            t0 = time.perf_counter()
            lam, v = eig(G, v)
            eig_time += time.perf_counter() - t0
            gap = lam - float(np.sum(G * X))  # FW gap: bounds g* - g(X) (module docstring)
            rec.add(objective=f_rho, fw_gap=gap, rho=rho, variables={"X": X, "rho": np.array(rho)})
            if gap <= tol * max(1.0, abs(f_rho)):
                status, message = Status.OK, f"FW gap {gap:.3g} <= tol"
                break
            if budget.expired():
                status, message = Status.TIMEOUT, "deadline"
                break
            f_start = f_rho
            for j in range(int(p["inner_iter"])):  # Algorithm 2 at fixed rho_k
                if j > 0:
                    G = losses.grad_X(U, V, m, rho, C, loss, h)
                    t0 = time.perf_counter()
                    lam, v = eig(G, v)  # line 2
                    eig_time += time.perf_counter() - t0
                    # Line 3 prints "l_i < eps"; l_i = lambda_max(G) alone is not a gap (it is
                    # not even scale-free).  The test used is the FW gap at fixed rho, l_i - <G, X_i>.
                    if lam - float(np.sum(G * X)) <= tol * max(1.0, abs(f_rho)):
                        break
                slope = lam - float(np.sum(G * X))  # <G, p_i> with p_i = v v' - X_i (line 5)
                mv = (U @ v) ** 2 - (V @ v) ** 2  # <A_r, v v'>; margins are affine along p_i
                dm = mv - m
                f0 = fval(m, rho)
                # Backtracking line search (13), applied to -f since we maximize.  alpha <= 1 keeps
                # X feasible (7); starting from the largest feasible step alpha = 1 and shrinking
                # by a factor in [0.1, 0.5] only (safeguarded quadratic interpolation; f is
                # piecewise quadratic along p_i, so it is often exact), we enforce the
                # sufficient-increase condition f(X + alpha p) >= f(X) + c1 alpha <G, p>; the
                # curvature condition of (13) is not tested: backtracking from the maximal step
                # already excludes too-short steps (Nocedal & Wright, section 3.1), and at alpha = 1
                # it cannot be asked for since no longer step is feasible.
                alpha = 1.0
                f_new = fval(m + alpha * dm, rho)
                while f_new < f0 + c1 * alpha * slope:
                    n_backtrack += 1
                    curv = (f_new - f0 - slope * alpha) / alpha**2  # < 0 here
                    a_q = -slope / (2.0 * curv) if curv < 0 else 0.5 * alpha
                    alpha = min(max(a_q, 0.1 * alpha), 0.5 * alpha)
                    f_new = fval(m + alpha * dm, rho)
                    if alpha < 1e-16:
                        alpha, f_new = 0.0, f0
                        break
                X = X + alpha * (np.outer(v, v) - X)  # (7), line 6
                X = 0.5 * (X + X.T)
                m = m + alpha * dm
                if alpha == 0.0:
                    break
            f_x = fval(m, rho)  # f(X_k, rho_k)
            # Algorithm 1, line 5: |f(X_k, rho_k) - f(X_{k-1}, rho_k)| < eps and
            # |f(X_{k-1}, rho_k) - f(X_{k-1}, rho_{k-1})| < eps.
            if (k > 1 and eps > 0 and abs(f_x - f_start) < eps and f_prev is not None
                    and abs(f_start - f_prev) < eps):
                status, message = Status.OK, "Algorithm 1 line 5 (changes of f below eps)"
                break
            rho_prev, f_prev = rho, f_x
        rho = losses.best_rho(m, C, loss, h)
        final = {"X": X, "rho": np.array(rho)}
        return Solution(variables=final, status=status, iterations=k, trace=rec.points,
                        iterates=rec.finish(final), message=message,
                        info={"eig_time_s": eig_time, "backtracks": n_backtrack, "rho": rho, "rho_prev": rho_prev})
