"""Instance of ``metric/bregman-pairs``: problem (2) of the stochastic Dykstra paper.

    minimize   BD((W, xi), (I, 1)) = tr W - log det W - n + sum_k c_k BD_1(xi_k, 1)
    subject to y_k <A_k, W> <= y_k b_k xi_k   (k = 1..K),   W > 0                                   (2)

Variables a solution carries: ``W`` (n x n, symmetric positive definite) and optionally ``xi``
(K,).  Scoring: with ``xi``, :meth:`objective` is (2) at ``(W, xi)`` as returned (and
:meth:`verify` checks its constraints); without ``xi``, at the best feasible slack for ``W``,
``xi*_k(W) = argmin_{xi : y_k (<A_k, W> - b_k xi) <= 0} BD_1(xi, 1)``, which is
``max(1, <A_k, W> / b_k)`` for ``y_k = +1`` and ``min(1, <A_k, W> / b_k)`` for ``y_k = -1``
(``BD_1(., 1)`` is convex with its minimum at 1), so ``(W, xi*(W))`` is feasible whenever ``W > 0``.

Lower bound (Lagrange duality).  For multipliers ``alpha >= 0`` with ``I + S > 0``,
``S = sum_k alpha_k y_k A_k``,

    g(alpha) = min_{W, xi} BD + sum_k alpha_k y_k (<A_k, W> - b_k xi_k)
             = log det(I + S) + sum_k min_xi [c_k BD_1(xi, 1) - alpha_k y_k b_k xi]

(the W part: ``min_W tr((I + S) W) - log det W - n = log det(I + S)``); ``g(alpha) <= BD*``.
:meth:`dual_value` computes it; :meth:`certified_reference` uses Clarabel's constraint duals.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from psdbench.api import Feasibility, Formulation, PsdbenchError, Solution
from psdbench.families.bregman_dykstra import divergence as dv
from psdbench.linalg.psd import asymmetry

KIND = "bregman-pairs"
CLARABEL_TIGHT = {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10, "max_iter": 500}


@dataclass
class BregmanPairsInstance:
    """Problem (2): ``A`` (K, n, n) PSD, ``y`` (K,) in {-1, +1}, ``b`` (K,) > 0, ``c`` (K,) > 0."""

    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    A: np.ndarray
    y: np.ndarray
    b: np.ndarray
    c: np.ndarray
    divergence: str
    tol: dict[str, float]
    kind: str = KIND
    sense: str = "min"
    variables: ClassVar[tuple[str, ...]] = ("W", "xi")
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.A.shape[1])

    @property
    def K(self) -> int:
        return int(self.A.shape[0])

    # ------------------------------------------------------------------ values
    def inner(self, W: np.ndarray) -> np.ndarray:
        """``<A_k, W>`` for every k."""
        return np.einsum("kij,ij->k", self.A, W)

    def best_xi(self, W: np.ndarray) -> np.ndarray:
        """``xi*(W)``: the best feasible slack for ``W`` (module docstring)."""
        r = self.inner(W) / self.b
        return np.where(self.y > 0, np.maximum(1.0, r), np.minimum(1.0, r))

    def value(self, W: np.ndarray, xi: np.ndarray) -> float:
        """(2) at ``(W, xi)``; ``inf`` outside the domain (``W`` not PD or ``xi`` outside ``dom phi_1``)."""
        try:
            L = np.linalg.cholesky(0.5 * (W + W.T))
        except np.linalg.LinAlgError:
            return float("inf")
        if not np.all(dv.in_domain(xi, self.divergence)):
            return float("inf")
        logdet = 2.0 * float(np.sum(np.log(np.diag(L))))
        return float(np.trace(W) - logdet - self.n + np.sum(self.c * dv.bd1(xi, self.divergence)))

    def dual_value(self, alpha: np.ndarray) -> float:
        """The Lagrange dual ``g(alpha) <= BD*`` (module docstring); ``-inf`` where it is unbounded."""
        alpha = np.maximum(np.asarray(alpha, float), 0.0)
        S = np.eye(self.n) + np.einsum("k,kij->ij", alpha * self.y, self.A)
        try:
            L = np.linalg.cholesky(0.5 * (S + S.T))
        except np.linalg.LinAlgError:
            return -float("inf")
        slack = dv.conj_min(alpha * self.y * self.b, self.c, self.divergence)
        return float(2.0 * np.sum(np.log(np.diag(L))) + np.sum(slack))

    def _point(self, solution: Solution) -> tuple[np.ndarray, np.ndarray]:
        if "W" not in solution.variables:
            raise PsdbenchError(f"{self.problem}: a solution carries W (and optionally xi), got "
                                f"{sorted(solution.variables)}")
        W = np.asarray(solution.variables["W"], float)
        if W.shape != (self.n, self.n):
            raise PsdbenchError(f"{self.problem}: W has shape {W.shape}, expected {(self.n, self.n)}")
        xi = solution.variables.get("xi")
        xi = self.best_xi(W) if xi is None else np.asarray(xi, float).reshape(-1)
        if xi.shape != (self.K,):
            raise PsdbenchError(f"{self.problem}: xi has shape {xi.shape}, expected {(self.K,)}")
        return W, xi

    def objective(self, solution: Solution) -> float:
        """(2) at ``(W, xi)``, or at ``(W, xi*(W))`` without ``xi``."""
        return self.value(*self._point(solution))

    def verify(self, solution: Solution) -> Feasibility:
        """``W`` symmetric PD, ``y_k (<A_k, W> - b_k xi_k) <= tol (1 + |<A_k, W>|)``, ``xi`` in ``dom phi_1``."""
        W, xi = self._point(solution)
        asym = asymmetry(W)
        w = np.linalg.eigvalsh(0.5 * (W + W.T))
        m = self.inner(W)
        viol = self.y * (m - self.b * xi) / (1.0 + np.abs(m))
        dom = bool(np.all(dv.in_domain(xi, self.divergence)))
        t = self.tol
        ok = asym <= t["sym"] and w[0] > t["pd"] and float(np.max(viol)) <= t["constraint"] and dom
        return Feasibility(ok=bool(ok), min_eig=float(w[0]), max_residual=max(asym, float(np.max(viol)), 0.0),
                           tolerances=dict(t),
                           details={"asymmetry": asym, "max_violation_rel": float(np.max(viol)),
                                    "xi_in_domain": float(dom)})

    def repair(self, solution: Solution) -> Solution:
        """``W`` symmetrized, its eigenvalues floored at ``1e-12 * max(1, lambda_max)``, with ``xi*(W)``."""
        W, _ = self._point(solution)
        w, Q = np.linalg.eigh(0.5 * (W + W.T))
        W = (Q * np.maximum(w, 1e-12 * max(1.0, w[-1]))) @ Q.T
        W = 0.5 * (W + W.T)
        return Solution(variables={"W": W, "xi": self.best_xi(W)})

    def evaluate(self, solution: Solution) -> dict[str, float]:
        """Synthetic instances have no task metric: objective parts and the constraint activity."""
        W, xi = self._point(solution)
        m = self.inner(W)
        return {"bd_W": float(self.value(W, np.ones(self.K))),
                "bd_xi": float(np.sum(self.c * dv.bd1(xi, self.divergence))),
                "n_active": float(np.sum(np.abs(m - self.b * xi) <= 1e-6 * (1 + np.abs(m))))}

    # ------------------------------------------------------------------ references
    def reference_formulation(self, variant: str | None = None) -> Formulation:
        """cvxpy: ``-log_det``, slack divergence by ``log`` (IS), ``entr`` (RE) or squares (L2); exp cone + SDP."""
        import cvxpy as cp

        n, K = self.n, self.K
        W = cp.Variable((n, n), PSD=True)
        xi = cp.Variable(K)
        if self.divergence == "is":
            slack = xi - cp.log(xi) - 1.0
        elif self.divergence == "re":
            slack = -cp.entr(xi) - xi + 1.0
        else:
            slack = 0.5 * cp.square(xi - 1.0)
        obj = cp.trace(W) - cp.log_det(W) - n + cp.sum(cp.multiply(self.c, slack))
        Amat = self.A.reshape(K, n * n)  # A_k symmetric: row-major and column-major vec agree
        cons = [cp.multiply(self.y, Amat @ cp.vec(W, order="F") - cp.multiply(self.b, xi)) <= 0]
        prob = cp.Problem(cp.Minimize(obj), cons)
        self._cache["cons"] = cons[0]
        return Formulation(problem=prob, extract=lambda: {"W": 0.5 * (W.value + W.value.T), "xi": np.asarray(xi.value)})

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-6) -> dict[str, Any]:
        """Clarabel on :meth:`reference_formulation`: value at ``(W, xi*(W))``, lower bound ``g(alpha)``
        at Clarabel's constraint duals ``alpha`` (module docstring); both recomputed here."""
        import cvxpy as cp
        from importlib.metadata import version

        t0 = time.perf_counter()
        form = self.reference_formulation()
        cons = self._cache["cons"]
        status = "not solved"
        for settings in (CLARABEL_TIGHT, {}):
            opts: dict[str, Any] = dict(settings)
            if time_limit_s:
                opts["time_limit"] = max(float(time_limit_s) - (time.perf_counter() - t0), 1e-3)
            try:
                with warnings.catch_warnings():
                    warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                    form.problem.solve(solver="CLARABEL", **opts)
                status = str(form.problem.status)
            except cp.SolverError as exc:
                status = f"SolverError: {exc}"
                continue
            if form.problem.status in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
                break
        else:
            return {"value": None, "lower": None, "status": "error", "solver": "clarabel",
                    "message": f"clarabel: {status} (tight and default settings)"}
        W = self.repair(Solution(variables={"W": form.extract()["W"]})).variables["W"]
        value = self.value(W, self.best_xi(W))
        lower = self.dual_value(np.asarray(cons.dual_value, float).reshape(-1))
        return {"value": value, "lower": lower if np.isfinite(lower) else None, "status": "ok",
                "solver": "clarabel", "solver_version": version("clarabel"),
                "message": f"clarabel status {status}; value at (W, xi*(W)), lower = Lagrange dual at its duals",
                "solve_time_s": time.perf_counter() - t0}
