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
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from psdbench.api import Check, Feasibility, Formulation, PsdbenchError, Solution
from psdbench.families.bregman_dykstra import divergence as dv
from psdbench.families.bregman_dykstra.pairs import LabelledPairs, knn_accuracy, knn_accuracy_matrices
from psdbench.linalg.psd import asymmetry
from psdbench.solvers.conic import solve_reference_clarabel

KIND = "bregman-pairs"


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
    #: labelled-pair instances (section 5.2, :mod:`.pairs`): ``A_k = V_k V_k' + eps I``, the split and pairs
    V: np.ndarray | None = None
    eps: float = 0.0
    data: LabelledPairs | None = None
    variables: ClassVar[tuple[str, ...]] = ("W", "xi")
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.A.shape[1])

    @property
    def K(self) -> int:
        return int(self.A.shape[0])

    # ------------------------------------------------------------------ values
    @property
    def rank_one(self) -> bool:
        """``A_k = v_k v_k'`` exactly (labelled pairs with ``eps = 0``): the Sherman-Morrison path applies."""
        return self.V is not None and self.V.ndim == 2 and self.eps == 0.0

    @property
    def descriptors(self) -> bool:
        """Covariance-descriptor pairs (``V`` (K, m, m): ``A_k = V_k V_k' + eps I``)."""
        return self.V is not None and self.V.ndim == 3

    def inner(self, W: np.ndarray) -> np.ndarray:
        """``<A_k, W>`` for every k (``v_k' W v_k + eps tr W`` on labelled pairs)."""
        if self.V is not None and self.V.ndim == 3:
            return np.einsum("kia,ij,kja->k", self.V, W, self.V) + self.eps * float(np.trace(W))
        if self.V is not None:
            return np.einsum("ki,ij,kj->k", self.V, W, self.V) + self.eps * float(np.trace(W))
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
        checks = [Check("asymmetry", asym, t["sym"]), Check("smallest eigenvalue of W", float(w[0]), t["pd"], ">"),
                  Check("largest pair-constraint violation, relative", float(np.max(viol)), t["constraint"]),
                  Check("xi in the domain of phi_1", float(dom), 1.0, "==")]
        return Feasibility(ok=all(c.ok for c in checks), min_eig=float(w[0]),
                           max_residual=max(asym, float(np.max(viol)), 0.0), tolerances=dict(t),
                           details={"asymmetry": asym, "max_violation_rel": float(np.max(viol)),
                                    "xi_in_domain": float(dom)}, checks=checks)

    def repair(self, solution: Solution) -> Solution:
        """``W`` symmetrized, its eigenvalues floored at ``1e-12 * max(1, lambda_max)``, with ``xi*(W)``."""
        W, _ = self._point(solution)
        w, Q = np.linalg.eigh(0.5 * (W + W.T))
        W = (Q * np.maximum(w, 1e-12 * max(1.0, w[-1]))) @ Q.T
        W = 0.5 * (W + W.T)
        return Solution(variables={"W": W, "xi": self.best_xi(W)})

    def evaluate(self, solution: Solution) -> dict[str, float]:
        """Objective parts and the constraint activity; on labelled pairs also the 3-NN test accuracy
        with the learned ``W`` (``acc_W``) and with ``W = I`` (``acc_eye``, "Eye"), same split."""
        W, xi = self._point(solution)
        m = self.inner(W)
        out = {"bd_W": float(self.value(W, np.ones(self.K))),
               "bd_xi": float(np.sum(self.c * dv.bd1(xi, self.divergence))),
               "n_active": float(np.sum(np.abs(m - self.b * xi) <= 1e-6 * (1 + np.abs(m))))}
        d = self.data
        if d is not None:
            knn = knn_accuracy_matrices if self.descriptors else knn_accuracy
            out["acc_W"] = knn(d.X_train, d.y_train, d.X_test, d.y_test, W)
            if "acc_eye" not in self._cache:
                self._cache["acc_eye"] = knn(d.X_train, d.y_train, d.X_test, d.y_test, None)
            out["acc_eye"] = self._cache["acc_eye"]
            out["n_train"], out["n_test"] = float(len(d.y_train)), float(len(d.y_test))
            out["n_violated_eye"] = float(np.sum(self.y * (self.inner(np.eye(self.n)) - self.b) > 0))
        return out

    # ------------------------------------------------------------------ metric-learn peers
    def metric_training_data(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(X_train, y_train)`` of a labelled-pair instance (scaled as the pairs are); ``None`` on
        synthetic half-spaces and covariance descriptors (the peers learn on vectors; they skip)."""
        if self.data is None or self.descriptors:
            return None
        return self.data.X_train, self.data.y_train

    def metric_pairs(self) -> dict[str, Any] | None:
        """The instance's own pairs for a pair learner (metric-learn's ``ITML``), with the mapping.

        ``pairs`` (K, 2, n) training samples, ``y`` (K,) in {+1, -1}, ``bounds = (b_ub, b_lb)`` and
        ``gamma``: ITML minimizes ``D_ld(M, I) + gamma sum_k D_ld(xi_k, b_k)`` (Davis et al.), with
        ``D_ld(xi, b) = BD_1(xi / b, 1)`` of ISBD, so ITML's problem is (2) with ISBD and
        ``c_k = gamma`` for all k, ``eps = 0``.  ``exact`` says whether that holds here, ``why``
        what breaks it.  ``None`` on synthetic half-spaces and covariance descriptors.
        """
        d = self.data
        if d is None or self.descriptors:
            return None
        why = []
        if self.divergence != "is":
            why.append(f"divergence {self.divergence!r}: ITML's slack term is ISBD")
        if self.eps != 0.0:
            why.append(f"eps = {self.eps:g}: ITML's A_k = v v' has no eps I")
        if not np.allclose(self.c, self.c[0], rtol=1e-15, atol=0):
            why.append("c_k not all equal: ITML has one gamma")
        pairs = np.stack([d.X_train[d.index[:, 0]], d.X_train[d.index[:, 1]]], axis=1)
        b_ub = float(self.b[self.y > 0][0]) if np.any(self.y > 0) else float(self.params.get("b_ub", 0.05))
        b_lb = float(self.b[self.y < 0][0]) if np.any(self.y < 0) else float(self.params.get("b_lb", 0.95))
        return {"pairs": pairs, "y": self.y.astype(int), "bounds": (b_ub, b_lb), "gamma": float(self.c[0]),
                "exact": not why, "why": "; ".join(why)}

    def metric_from_matrix(self, M: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """A learned metric as ``W = M`` (no rescaling: the objective is not scale-invariant), its
        eigenvalues floored at ``1e-12 max(1, lambda_max)``; the slack is the best feasible ``xi*(W)``
        (module docstring), so the row's objective is (2) at ``(M, xi*(M))``."""
        W = self.repair(Solution(variables={"W": np.asarray(M, float)})).variables
        floor = float(np.max(np.abs(W["W"] - 0.5 * (M + M.T))))
        return W, {"scale": 1.0, "eig_floor_change": floor}

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
        """Clarabel on :meth:`reference_formulation` (SCS at 1e-9 where Clarabel fails, e.g. on the
        ill-conditioned ``A_k`` of log-mapped descriptors): value at ``(W, xi*(W))``, lower bound
        ``g(alpha)`` at the solver's constraint duals ``alpha`` (module docstring); both recomputed
        here, so the certificate does not depend on which solver produced the point."""
        from importlib.metadata import version

        import cvxpy as cp

        t0 = time.perf_counter()
        form = self.reference_formulation()
        cons = self._cache["cons"]
        ok, status = solve_reference_clarabel(form.problem, time_limit_s)
        solver = "clarabel"
        if not ok:
            left = None if not time_limit_s else max(float(time_limit_s) - (time.perf_counter() - t0), 1.0)
            try:
                form.problem.solve(solver="SCS", eps_abs=1e-9, eps_rel=1e-9, max_iters=200_000,
                                   **({"time_limit_secs": left} if left else {}))
            except cp.SolverError as exc:
                return {"value": None, "lower": None, "status": "error", "solver": "clarabel+scs",
                        "message": f"{status}; scs: SolverError: {exc}"}
            if form.problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE) or cons.dual_value is None:
                return {"value": None, "lower": None, "status": "error", "solver": "clarabel+scs",
                        "message": f"{status}; scs: {form.problem.status}"}
            solver, status = "scs", f"{status}; scs status {form.problem.status} (eps 1e-9)"
        W = self.repair(Solution(variables={"W": form.extract()["W"]})).variables["W"]
        value = self.value(W, self.best_xi(W))
        lower = self.dual_value(np.asarray(cons.dual_value, float).reshape(-1))
        return {"value": value, "lower": lower if np.isfinite(lower) else None, "status": "ok",
                "solver": solver, "solver_version": version(solver),
                "message": f"{status}; value at (W, xi*(W)), lower = Lagrange dual at its duals",
                "solve_time_s": time.perf_counter() - t0}
