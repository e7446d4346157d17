"""Solver ``pg-spectraplex``: projected gradient ascent on ``g(X) = max_rho f(X, rho)`` (8), a baseline.

The ``pd-cone``-style baseline of the SDPMetric family, with the exact Euclidean projection onto
the spectraplex ``{X >= 0, tr X = 1}`` (eigenvalues projected onto the unit simplex, eigenvectors
kept; a full ``eigh`` per step, the cost the paper's rank-one update avoids).  Step: Barzilai-Borwein
length, backtracked until the sufficient-increase condition holds along the projection arc.  Stops
on the same Frank-Wolfe gap as ``sdpmetric`` (a certified bound on ``g* - g(X)``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Instance, Solution, Status, TraceRecorder
from psdbench.families.sdpmetric.contract import TripletMarginKind


def project_simplex(w: np.ndarray) -> np.ndarray:
    """Euclidean projection of ``w`` onto ``{x >= 0, sum x = 1}`` (sort-based, exact)."""
    u = np.sort(w)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, len(w) + 1)
    r = int(np.nonzero(u - css / k > 0)[0][-1])
    return np.maximum(w - css[r] / (r + 1), 0.0)


def project_spectraplex(A: np.ndarray) -> np.ndarray:
    """Euclidean projection of sym(A) onto ``{X >= 0, tr X = 1}``."""
    w, Q = np.linalg.eigh(0.5 * (A + A.T))
    X = (Q * project_simplex(w)) @ Q.T
    return 0.5 * (X + X.T)


class PgSpectraplex:
    """Solver ``pg-spectraplex``: projected gradient with BB steps and backtracking."""

    name = "pg-spectraplex"
    kinds = ("triplet-margin",)
    returns = "X (D, D): the metric on the spectraplex; rho: its margin (the scoring uses the exact rho*(X))"
    params: dict[str, api.Param] = {
        "tol": api.number(low=0, default=1e-7, doc="stop when the FW gap <= tol * max(1, |g|)"),
        "max_iter": api.number(low=1, default=100000, integer=True, doc="accepted steps"),
        "c1": api.number(low=1e-12, high=0.5, default=1e-4, doc="sufficient-increase constant"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        return {"numpy": np.__version__}

    def supports(self, instance: Instance) -> bool:
        return self.skip_reason(instance) is None

    def skip_reason(self, instance: Instance) -> str | None:
        if getattr(instance, "kind", None) != "triplet-margin":
            return f"pg-spectraplex solves kind 'triplet-margin', not {getattr(instance, 'kind', '?')!r}"
        if getattr(instance, "loss", None) == "hinge":
            return "pg-spectraplex needs a differentiable loss (squared-hinge or huber)"
        return None

    def solve(self, instance: TripletMarginKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        tol, c1 = float(p["tol"]), float(p["c1"])
        D = instance.D
        X = np.eye(D) / D
        g, G, rho = instance.value_and_grad(X)
        t = 1.0 / max(np.linalg.norm(G), 1e-12)
        rec = TraceRecorder(budget)
        status, message, k = Status.MAX_ITER, "", 0
        max_iter = int(budget.max_iter or p["max_iter"])
        for k in range(1, max_iter + 1):
            gap = float(np.linalg.eigvalsh(G)[-1]) - float(np.sum(G * X))  # certified bound on g* - g(X)
            rec.add(objective=g, fw_gap=gap, step=t, variables={"X": X, "rho": np.array(rho)})
            if gap <= tol * max(1.0, abs(g)):
                status, message = Status.OK, f"FW gap {gap:.3g} <= tol"
                break
            if budget.expired():
                status, message = Status.TIMEOUT, "deadline"
                break
            while True:  # backtracking along the projection arc
                Y = project_spectraplex(X + t * G)
                d = Y - X
                g_new, G_new, rho_new = instance.value_and_grad(Y)
                if g_new >= g + c1 * float(np.sum(G * d)) or t < 1e-14:
                    break
                t *= 0.5
            s, yv = d.ravel(), (G_new - G).ravel()
            sy = abs(float(s @ yv))
            t = float(np.clip(float(s @ s) / sy, 1e-10, 1e10)) if sy > 0 else 2.0 * t  # BB step
            X, g, G, rho = Y, g_new, G_new, rho_new
        final = {"X": X, "rho": np.array(rho)}
        return Solution(variables=final, status=status, iterations=k, trace=rec.points,
                        iterates=rec.finish(final), message=message)
