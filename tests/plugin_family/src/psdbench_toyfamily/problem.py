"""``toy/nearest-psd``: minimize ``||X - A||_F^2`` over PSD ``X`` with unit diagonal.

``A`` is drawn from the ``toy/noisy-corr`` dataset's payload with the instance's ``n`` and seed.
A solution is ``variables["X"]``; what solvers may read of an instance is
:class:`~psdbench_toyfamily.contract.NearestPsdKind`.

* Objective: ``||X - A||_F^2``, recomputed from ``X``.
* Verification: symmetric, ``lambda_min(X) >= -1e-7``, ``max |X_ii - 1| <= 1e-7``.
* Metrics: ``distance`` (``||X - A||_F``) and ``min_eig``.
* Reference: certified by an interval.  For any ``y`` the Lagrangian dual
  ``theta(y) = ||A||^2 + 2 1'y - ||(A + Diag y)_+||^2`` is a lower bound (Qi and Sun 2006); it is
  maximized by L-BFGS, and ``P(A + Diag y*)`` scaled to a unit diagonal (a congruence, so it stays
  PSD) is an exactly feasible point giving the upper bound.
* ``reference_formulation``: the same problem in cvxpy, so ``scs`` / ``clarabel`` / ``mosek`` run
  on it without code of their own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from psdbench.api import Check, DataError, Dataset, Feasibility, Formulation, Param, Solution, default_params, number

from . import KIND
from .contract import NearestPsdKind
from .data import GENERATOR, draw

EIG_TOL = 1e-7
DIAG_TOL = 1e-7


def project_psd(S: np.ndarray) -> np.ndarray:
    """Euclidean projection of a symmetric matrix onto the PSD cone."""
    w, V = np.linalg.eigh((S + S.T) / 2)
    return (V * np.maximum(w, 0.0)) @ V.T


def unit_diagonal(X: np.ndarray) -> np.ndarray:
    """``D^-1/2 X D^-1/2`` with ``D = diag(X)``: PSD stays PSD, the diagonal becomes 1."""
    d = np.sqrt(np.maximum(np.diag(X), 1e-300))
    Y = X / np.outer(d, d)
    Y = (Y + Y.T) / 2
    np.fill_diagonal(Y, 1.0)
    return Y


@dataclass
class NearestPsdInstance:
    """Implements :class:`~psdbench_toyfamily.contract.NearestPsdKind`."""

    variables: ClassVar[tuple[str, ...]] = ("X",)
    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    A: np.ndarray
    kind: str = KIND
    sense: str = "min"
    _ref: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.A.shape[0])

    def variable_shapes(self) -> dict[str, tuple[int, ...]]:
        """``X`` is n x n: a point of another shape is rejected by psdbench with one line."""
        return {"X": (self.n, self.n)}

    def _X(self, solution: Solution) -> np.ndarray:
        return np.asarray(solution.variables["X"], dtype=float)

    def objective(self, solution: Solution) -> float:
        return float(np.sum((self._X(solution) - self.A) ** 2))

    def verify(self, solution: Solution) -> Feasibility:
        X = self._X(solution)
        asym = float(np.max(np.abs(X - X.T)))
        min_eig = float(np.linalg.eigvalsh((X + X.T) / 2)[0])
        diag = float(np.max(np.abs(np.diag(X) - 1.0)))
        checks = [Check("asymmetry", asym, DIAG_TOL), Check("smallest eigenvalue of X", min_eig, -EIG_TOL, ">="),
                  Check("largest |X_ii - 1|", diag, DIAG_TOL)]
        return Feasibility(ok=all(c.ok for c in checks), min_eig=min_eig, max_residual=max(asym, diag),
                           tolerances={"min_eig": -EIG_TOL, "diag": DIAG_TOL, "symmetry": DIAG_TOL},
                           details={"asymmetry": asym, "diag_residual": diag}, checks=checks)

    def evaluate(self, solution: Solution) -> dict[str, float]:
        X = self._X(solution)
        return {"distance": float(np.linalg.norm(X - self.A)), "min_eig": float(np.linalg.eigvalsh((X + X.T) / 2)[0])}

    def reference_formulation(self, variant: str | None = None) -> Formulation | None:
        import cvxpy as cp

        if variant not in (None, "primal"):
            return None
        X = cp.Variable((self.n, self.n), PSD=True)
        prob = cp.Problem(cp.Minimize(cp.sum_squares(X - self.A)), [cp.diag(X) == 1])
        return Formulation(problem=prob, extract=lambda: {"X": np.asarray(X.value, dtype=float)})

    def repair(self, solution: Solution) -> Solution | None:
        """Project onto the PSD cone, then scale to a unit diagonal: a feasible point."""
        return Solution(variables={"X": unit_diagonal(project_psd(self._X(solution)))})

    def dual_bound(self, y: np.ndarray) -> tuple[float, np.ndarray]:
        """``theta(y)`` and its gradient ``2 (1 - diag((A + Diag y)_+))``."""
        P = project_psd(self.A + np.diag(y))
        theta = float(np.sum(self.A**2) + 2 * y.sum() - np.sum(P**2))
        return theta, 2.0 * (1.0 - np.diag(P))

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
        from importlib.metadata import version

        from scipy.optimize import minimize

        res = minimize(lambda y: tuple(-v for v in self.dual_bound(y)), np.zeros(self.n), jac=True,
                       method="L-BFGS-B", options={"maxiter": 10_000, "gtol": 1e-12, "ftol": 1e-15})
        lower, _ = self.dual_bound(res.x)
        X = unit_diagonal(project_psd(self.A + np.diag(res.x)))
        upper = self.objective(Solution(variables={"X": X}))
        return {"value": upper, "lower": lower, "solver": "scipy L-BFGS-B on the dual",
                "solver_version": version("scipy"), "status": "ok",
                "message": f"dual iterations {res.nit}; interval {upper - lower:.3g}"}


class NearestPsd:
    """Nearest unit-diagonal PSD matrix to a noisy symmetric matrix (toy plugin family)."""

    name = "toy/nearest-psd"
    kind = KIND
    family = KIND
    sense = "min"
    # the problem as `psdbench info toy/nearest-psd` prints it, and what a solver may read
    description = """\
Nearest correlation matrix (Higham 2002; the dual of Qi and Sun 2006 certifies it).

    minimize    ||X - A||_F^2            over X (n x n)
    subject to  X is PSD,  X_ii = 1      i = 1..n

A (n x n, symmetric) is drawn from the toy/noisy-corr dataset's payload with the instance's n and
seed.

Variables a solution carries:
  X  (n, n)  the approximation (verified: symmetric, lambda_min(X) >= -1e-7, max |X_ii - 1| <= 1e-7).

Metrics: distance ||X - A||_F and min_eig.
Reference: the Lagrangian dual theta(y) = ||A||^2 + 2 1'y - ||(A + Diag y)_+||^2 maximized by
L-BFGS (lower), and P(A + Diag y*) scaled to a unit diagonal, an exactly feasible point (value).
"""
    contract = NearestPsdKind
    params: dict[str, Param] = {"n": number(2, 200, default=8, integer=True, doc="matrix size")}
    default_params = default_params(params)

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> NearestPsdInstance:
        p = {**self.default_params, **params}
        payload = dict(dataset.payload)
        if payload.get("generator") != GENERATOR:
            raise DataError(f"{self.name}: dataset {dataset.name} is not a {GENERATOR} generator")
        A = draw(int(p["n"]), int(payload["rank"]), float(payload["noise"]), int(seed))
        return NearestPsdInstance(problem=self.name, dataset=dataset.name, params=p, seed=int(seed), A=A)
