"""``toy-altproj``: alternating projections with Dykstra's correction (Higham 2002).

Alternates the projection onto the PSD cone (with Dykstra's correction) and onto the unit-diagonal
affine set; the returned point is the last PSD iterate scaled to a unit diagonal, which is exactly
feasible.  Every iteration is offered to a :class:`~psdbench.api.TraceRecorder`, which samples the
iterates the harness re-scores; the solver stops at ``budget.expired()``, at ``max_iter`` (or the
budget's), or when an iteration moves ``X`` by less than ``tol``.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import numpy as np

from psdbench.api import Budget, Param, Solution, Status, TraceRecorder, default_params, number

from . import KIND
from .problem import project_psd, unit_diagonal


class AlternatingProjections:
    """Alternating projections with Dykstra's correction (nearest correlation matrix)."""

    name = "toy-altproj"
    kinds = (KIND,)
    params: dict[str, Param] = {
        "max_iter": number(1, 10**6, default=2000, integer=True, doc="iteration limit"),
        "tol": number(0.0, 1.0, default=1e-10, doc="stop when ||X_k+1 - X_k||_F <= tol"),
    }
    default_params = default_params(params)

    def supports(self, instance: Any) -> bool:
        return getattr(instance, "kind", None) == KIND

    def library_versions(self) -> dict[str, str]:
        return {"numpy": version("numpy")}

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        p = {**self.default_params, **params}
        max_iter = int(budget.max_iter or p["max_iter"])
        A = np.asarray(instance.A, dtype=float)
        rec = TraceRecorder(budget)
        Y, dS = A.copy(), np.zeros_like(A)
        X = project_psd(Y)
        status, it = Status.MAX_ITER, 0
        while it < max_iter:
            it += 1
            R = Y - dS
            X = project_psd(R)
            dS = X - R
            Y_new = X.copy()
            np.fill_diagonal(Y_new, 1.0)
            step = float(np.linalg.norm(Y_new - Y))
            Y = Y_new
            rec.add(objective=float(np.sum((Y - A) ** 2)), step=step, variables={"X": Y})
            if step <= p["tol"]:
                status = Status.OK
                break
            if budget.expired():
                status = Status.TIMEOUT
                break
        final = unit_diagonal(X)
        return Solution(variables={"X": final}, status=status, iterations=it, trace=rec.points,
                        iterates=rec.finish({"X": final}), info={"last_step": step if it else 0.0})
