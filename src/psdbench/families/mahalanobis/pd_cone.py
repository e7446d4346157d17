"""PD-cone: projected gradient for metric learning, the baseline of the SGML paper (section 6.2, Table 3).

Each iteration takes a gradient step from the current ``M`` and projects back onto
``{M >= rho I, tr(M) <= C}`` by a full eigendecomposition: eigenvalues are clipped at ``rho``
and, if the trace exceeds ``C``, rescaled (``projection = "rescale"``, the paper's rule: the part
above ``rho`` is scaled so that the trace is ``C``, which keeps ``lambda_min >= rho``), or moved by
the exact Euclidean projection (``projection = "euclidean"``).

Step size (Table 3, "as done in [1]"): ``t_0 = 0.1 / N`` with ``N`` the number of training samples;
after a step that lowers the objective ``t <- 1.01 t`` and the step is kept, otherwise
``t <- t / 2`` and the step is discarded.  The method stops when an accepted step changes the
objective by less than ``tol * max(1, |Q|)`` (main tol. 1e-5) or after ``max_iter`` iterations
(1e3), counting discarded steps.

DEML is maximized: the method minimizes ``-Q``.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Instance, Solution, Status, TraceRecorder
from psdbench.families.mahalanobis.contract import MahalanobisKind
from psdbench.linalg.psd import project_spectraplex


def project_rescale(A: np.ndarray, rho: float, C: float) -> tuple[np.ndarray, np.ndarray]:
    """Clip eigenvalues at ``rho``; if the trace exceeds ``C``, scale the part above ``rho`` down to it.

    Returns the projected matrix and its eigenvalues.
    """
    w, V = np.linalg.eigh(0.5 * (A + A.T))
    lam = np.maximum(w, rho)
    K = len(lam)
    if lam.sum() > C:
        lam = rho + (lam - rho) * (C - K * rho) / (lam.sum() - K * rho)
    return (V * lam) @ V.T, lam


class PdCone:
    """Solver ``pd-cone``: projected gradient with eigenvalue clipping and trace rescaling."""

    name = "pd-cone"
    kinds = ("mahalanobis",)
    returns = "M (K, K): the metric"
    params: dict[str, api.Param] = {
        "step0": api.number(low=0, default=None, doc="initial step; None = 0.1 / N (Table 3)"),
        "grow": api.number(low=1, default=1.01, doc="step factor after a step that lowers the objective"),
        "shrink": api.number(low=0, high=1, default=0.5, doc="step factor after a discarded step"),
        "tol": api.number(low=0, default=1e-5, doc="stop when an accepted step changes Q by <= tol * max(1, |Q|)"),
        "max_iter": api.number(low=1, default=1000, integer=True, doc="iterations, discarded steps included"),
        "projection": api.choice("rescale", "euclidean", doc="rescale (the paper's rule) | euclidean (exact projection)"),
        "start": api.choice("identity", doc="identity: (C/K) I"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        return {"numpy": np.__version__}

    def supports(self, instance: Instance) -> bool:
        return getattr(instance, "kind", None) == "mahalanobis"

    def solve(self, instance: MahalanobisKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        sign = -1.0 if instance.sense == "max" else 1.0
        rho, C = instance.rho, instance.C

        def project(A: np.ndarray) -> np.ndarray:
            if p["projection"] == "rescale":
                return project_rescale(A, rho, C)[0]
            return project_spectraplex(A, rho, C)

        M = instance.identity_start()
        q, G = instance.value_and_grad(M)
        f = sign * q
        step = float(p["step0"]) if p["step0"] is not None else 0.1 / len(instance.y)
        rec = TraceRecorder(budget)
        rec.add(objective=q, step=step, variables={"M": M})
        eig_time = 0.0
        status = Status.MAX_ITER
        max_iter = int(budget.max_iter or p["max_iter"])
        it = 0
        for it in range(1, max_iter + 1):
            t0 = time.perf_counter()
            M_new = project(M - step * sign * G)
            eig_time += time.perf_counter() - t0
            q_new, G_new = instance.value_and_grad(M_new)
            f_new = sign * q_new
            if f_new < f:  # success: keep the step, grow it by 1 %
                change = f - f_new
                M, q, G, f = M_new, q_new, G_new, f_new
                step *= float(p["grow"])
                rec.add(objective=q, step=step, eig_time=eig_time, variables={"M": M})
                if change <= float(p["tol"]) * max(1.0, abs(f)):
                    status = Status.OK
                    break
            else:  # failure: discard, halve
                step *= float(p["shrink"])
                if step < 1e-300:
                    status = Status.OK
                    break
            if budget.expired():
                status = Status.TIMEOUT
                break
        return Solution(variables={"M": M}, status=status, iterations=it, trace=rec.points,
                        iterates=rec.finish({"M": M}),
                        info={"eig_time_s": eig_time, "final_step": step})
