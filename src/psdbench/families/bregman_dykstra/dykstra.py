"""Solver ``dykstra``: the (stochastic) Dykstra algorithm for problem (2) (Algorithm 1, section 4).

State: ``alpha`` (K,) >= 0, the Dykstra correction duals (Algorithm 1, line 2: all zero), the
point ``(W, xi)`` with ``W^{-1} = I + sum_k alpha_k y_k A_k`` and
``phi_1'(xi_k) = phi_1'(1) + alpha_k y_k b_k / c_k`` (the iterate is the minimizer of the
Lagrangian at ``alpha``; :func:`.projection.project` explains the signs).  Each step
(``K`` steps make an epoch):

1. pick ``k`` (``order``: ``"cyclic"``, ``"rand"`` uniformly at random, ``"perm"`` a fresh
   permutation per epoch; section 3) -- Algorithm 1, line 4;
2. ``delta_{t-1/2}`` from ``J_t = 0`` (the projection onto the boundary of ``C_k``, (3), section 4) --
   line 5;
3. ``delta_t = max(delta_{t-1/2}, -alpha_k)``, ``alpha_k += delta_t`` -- line 6;
4. ``W^{-1} += delta_t y_k A_k``, ``W`` by (6), ``xi_k`` from its gradient -- line 7.

Stopping (section 4.1), checked after every epoch at the repaired feasible point
``(W_t, xi-bar_t)`` (``xi-bar_h = <W_t, A_h> / b_h`` on the violated constraints):

    BD((W_t, xi-bar_t), (I, 1)) - BD*  <=  sum_{h violated} c_h (phi_1(xi-bar_h) - phi_1(xi_h)
                                            - phi_1'(1) (xi-bar_h - xi_h))
                                          - sum_h alpha_h y_h (<A_h, W_t> - b_h xi_h)

stop when it is <= ``gap_tol * max(1, BD)``; or after ``max_epochs`` (status ``max_iter``) or at
the deadline (``timeout``).  The returned point is the repaired ``(W_t, xi-bar_t)``.

Rank-one ``A_k = v_k v_k'`` (labelled pairs with ``eps = 0``, ``instance.rank_one``): step 2 by
Sherman-Morrison (:func:`.projection.project_rank_one`, closed form for ISBD) and step 4 as
``W -= u / (1 + u p) (W v)(W v)'``, O(n^2) per projection with no ``A_k^{-1/2}`` (which does not
exist there) and no ``W^{-1}``; ``info["projection"]`` says which path ran.

Ill-conditioned ``A_k`` (condition number above ``projection.PENCIL_COND`` = 1e8, e.g. the section
5.1 generator's ``F_k F_k'`` at n = 400 reaches 1e16): ``A_k^{-1/2}`` would lose the digits the
root of ``J`` needs, so those half-spaces are projected through the generalized eigenproblem of
``(A_k, W^{-1})`` (:func:`.projection.project_pencil`; the same ``J`` and (6)); ``info["n_pencil"]``
counts them.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Instance, Solution, Status, TraceRecorder
from psdbench.families.bregman_dykstra import divergence as dv
from psdbench.families.bregman_dykstra.contract import BregmanPairsKind
from psdbench.families.bregman_dykstra.projection import (preprocess, project, project_pencil,
                                                          project_rank_one, rank_one_update)


def repaired_point(instance: BregmanPairsKind, W: np.ndarray, xi: np.ndarray,
                   alpha: np.ndarray) -> tuple[np.ndarray, float, float]:
    """``(xi-bar, BD at (W, xi-bar), section 4.1 gap bound)``."""
    div, b, c, y = instance.divergence, instance.b, instance.c, instance.y
    m = instance.inner(W)
    viol = y * (m - b * xi) > 0
    xibar = np.where(viol, m / b, xi)
    one = dv.dphi(1.0, div)
    repair = np.where(viol, c * (dv.phi(np.where(viol, xibar, 1.0), div) - dv.phi(np.where(viol, xi, 1.0), div)
                                 - one * (xibar - xi)), 0.0)
    bound = float(np.sum(repair) - np.sum(alpha * y * (m - b * xi)))  # section 4.1
    return xibar, instance.value(W, xibar), bound


class Dykstra:
    """Solver ``dykstra``: Algorithm 1 with the section 4 projection and the section 4.1 stopping rule."""

    name = "dykstra"
    kinds = ("bregman-pairs",)
    returns = "W (n, n): the metric; xi (K,): the slacks of the last epoch"
    params: dict[str, api.Param] = {
        "order": api.choice("rand", "perm", "cyclic",
                            doc="half-space order (section 3): rand (uniform) | perm (new permutation per epoch) | cyclic"),
        "gap_tol": api.number(low=0, default=1e-9, doc="stop when the section 4.1 bound <= gap_tol * max(1, BD)"),
        "max_epochs": api.number(low=1, default=2000, integer=True, doc="epoch cap (an epoch is K projections)"),
        "seed": api.number(low=0, default=0, integer=True, doc="seed of the rand / perm order"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        import scipy

        return {"numpy": np.__version__, "scipy": scipy.__version__}

    def supports(self, instance: Instance) -> bool:
        return self.skip_reason(instance) is None

    def skip_reason(self, instance: Instance) -> str | None:
        if getattr(instance, "kind", None) != "bregman-pairs":
            return f"dykstra solves kind 'bregman-pairs', not {getattr(instance, 'kind', '?')!r}"
        return None

    def solve(self, instance: BregmanPairsKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        A, y, b, c, div = instance.A, instance.y, instance.b, instance.c, instance.divergence
        K, n = A.shape[0], A.shape[1]
        rng = np.random.default_rng(int(p["seed"]))
        rank_one = bool(getattr(instance, "rank_one", False))
        V = instance.V if rank_one else None
        # section 4's pre-process: A_k^{-1/2}, or None where A_k is too ill-conditioned (pencil route)
        A_isqrt = [] if rank_one else [preprocess(A[k]) for k in range(K)]
        n_pencil = sum(a is None for a in A_isqrt)
        alpha = np.zeros(K)  # Algorithm 1, line 2
        W, Winv, xi = np.eye(n), np.eye(n), np.ones(K)
        one = dv.dphi(1.0, div)
        rec = TraceRecorder(budget)
        max_epochs = int(budget.max_iter or p["max_epochs"])
        gap_tol = float(p["gap_tol"])
        xibar, obj, bound = repaired_point(instance, W, xi, alpha)
        rec.add(objective=obj, gap_bound=bound, epoch=0, variables={"W": W, "xi": xibar})
        status, message, epoch, steps = Status.MAX_ITER, f"{max_epochs} epochs", 0, 0
        n_clipped = 0
        for epoch in range(1, max_epochs + 1):
            if p["order"] == "cyclic":
                ks = np.arange(K)
            elif p["order"] == "perm":
                ks = rng.permutation(K)
            else:
                ks = rng.integers(K, size=K)
            for k in ks:  # Algorithm 1, line 4
                if budget.expired():
                    break
                if rank_one:  # Sherman-Morrison: line 5 in closed form (ISBD) or a scalar root
                    u_half, Wv, pk = project_rank_one(W, V[k], float(xi[k]), float(b[k]), float(c[k]), div)
                elif A_isqrt[k] is None:  # same J and (6) through the pencil (A_k, W^{-1})
                    st = project_pencil(Winv, A[k], float(xi[k]), float(b[k]), float(c[k]), div)
                    u_half = st.u
                else:
                    st = project(Winv, A_isqrt[k], float(xi[k]), float(b[k]), float(c[k]), div)  # line 5, (7), (8)
                    u_half = st.u
                delta_half = y[k] * u_half  # u = y_k delta
                delta = max(delta_half, -alpha[k])  # line 6
                n_clipped += delta != delta_half
                alpha[k] += delta
                u = y[k] * delta
                if rank_one:
                    W = rank_one_update(W, Wv, pk, u)  # line 7: (W^{-1} + u v v')^{-1}
                else:
                    W = st.W(u)  # line 7 via (6)
                    Winv = Winv + u * A[k]  # (4): W^{-1} = W_{t-1}^{-1} + delta y_k A_k
                xi[k] = dv.dphi_inv(one + alpha[k] * y[k] * b[k] / c[k], div)  # line 7, slack part
                steps += 1
            xibar, obj, bound = repaired_point(instance, W, xi, alpha)
            rec.add(objective=obj, gap_bound=bound, epoch=epoch, variables={"W": W, "xi": xibar})
            if budget.expired():
                status, message = Status.TIMEOUT, "deadline"
                break
            if bound <= gap_tol * max(1.0, abs(obj)):
                status, message = Status.OK, f"section 4.1 gap bound {bound:.3g} <= gap_tol"
                break
        final = {"W": W, "xi": xibar}
        return Solution(variables=final, status=status, iterations=epoch, trace=rec.points,
                        iterates=rec.finish(final), message=message,
                        info={"epochs": epoch, "projections": steps, "gap_bound": bound,
                              "n_clipped": int(n_clipped), "order": p["order"], "n_pencil": int(n_pencil),
                              "projection": "rank-one (Sherman-Morrison)" if rank_one else "general (A^-1/2)"})
