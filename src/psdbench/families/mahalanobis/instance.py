"""One metric-learning instance of the SGML paper's problem (26) (:class:`MahalanobisInstance`).

An instance holds the training rows ``F`` (and, on the classification protocol, the test rows), its
objective ``Q`` (:mod:`.objectives`) and the constraint set ``{M symmetric, M >= rho I, tr(M) <= C}``.
It recomputes the objective of a returned ``M``, verifies it (symmetry, ``lambda_min >= rho``,
trace, and a claimed balanced signed graph), evaluates it (trace, k-NN and nearest-class-mean
accuracy: :func:`classify`) and computes the certified reference.  The problems that build
instances, and both protocols of the paper (sections 6.2, 6.3), are in :mod:`.problem`.

Reference optimum (:meth:`MahalanobisInstance.certified_reference`): the objective depends on ``M`` only
through distances of differences ``f_i - f_j``, which span an ``r``-dimensional subspace
``U`` (``r <= n - 1``).  Writing ``M = rho I + N``, replacing ``N`` by ``U U' N U U'`` keeps every
distance and does not increase the trace, so the problem is equivalent to one over
``M = rho I + U X U'`` with ``X >= 0`` (r x r) and ``tr X <= C - K rho``: tiny on the objective
protocol even for K = 2000.  It is solved with Clarabel and certified by the Frank-Wolfe bound,
valid for any feasible ``M`` of a convex ``Q``:

    Q* >= Q(M) + min_{S feasible} <G, S - M>,   min_S <G, S> = rho tr G + (C - K rho) min(0, lambda_min(G))

(the max for DEML, which maximizes a concave function).  LSML is not convex: its reference is the
best verified value of the cells, marked so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from psdbench.api import Check, Feasibility, PsdbenchError, Solution
from psdbench.linalg.balance import sign_violation, two_colouring
from psdbench.linalg.psd import asymmetry, project_spectraplex, scale_to_trace_floor
from psdbench.families.mahalanobis.objectives import PairObjective

KIND = "mahalanobis"  # the kind; problem names stay metric/<objective>
#: Clarabel settings of the reference solve
CLARABEL_TIGHT = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10, "max_iter": 500}


@dataclass
class MahalanobisInstance:
    """One metric-learning instance: training data, objective, constraint set, optional test data."""

    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    F: np.ndarray
    y: np.ndarray
    obj: PairObjective
    C: float
    rho: float
    F_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    kind: str = KIND
    tol: dict[str, float] = field(default_factory=dict)
    #: the variables a solution may carry: ``M``, and ``colours`` with a balanced-graph claim
    variables: ClassVar[tuple[str, ...]] = ("M", "colours")
    _U: np.ndarray | None = field(default=None, repr=False)  # subspace(), computed once

    @property
    def n(self) -> int:
        """Matrix dimension K (number of features)."""
        return self.F.shape[1]

    @property
    def K(self) -> int:
        return self.F.shape[1]

    def variable_shapes(self) -> dict[str, tuple[int, ...]]:
        """``M`` is K x K (checked by the harness before ``verify``: ``api.point_mismatch``)."""
        return {"M": (self.K, self.K)}

    @property
    def sense(self) -> str:
        return self.obj.sense

    # ------------------------------------------------------------------ objective and gradient
    def value(self, M: np.ndarray) -> float:
        return self.obj.value(M)

    def value_and_grad(self, M: np.ndarray) -> tuple[float, np.ndarray]:
        return self.obj.value_and_grad(M)

    def objective(self, solution: Solution) -> float:
        return self.obj.value(np.asarray(solution.variables["M"], float))

    # ------------------------------------------------------------------------- verification
    def verify(self, solution: Solution) -> Feasibility:
        M = np.asarray(solution.variables["M"], float)
        if M.shape != (self.K, self.K):
            raise PsdbenchError(f"metric: M has shape {M.shape}, expected {(self.K, self.K)}")
        S = 0.5 * (M + M.T)
        w = np.linalg.eigvalsh(S)
        scale = max(1.0, float(np.abs(w).max()))
        asym = asymmetry(M)
        trace_excess = max(0.0, float(np.trace(M)) - self.C)
        psd_short = max(0.0, self.rho - float(w[0]))
        col = two_colouring(S, tol=self.tol["zero"] * scale)
        details = {"asymmetry": asym, "lambda_min": float(w[0]), "trace": float(np.trace(M)),
                   "trace_excess": trace_excess, "balanced": float(col.balanced),
                   "n_components": float(col.n_components)}
        checks = [Check("asymmetry", asym, self.tol["sym"] * scale),
                  Check("rho - smallest eigenvalue of M", psd_short, self.tol["psd"] * scale),
                  Check("tr M - C", trace_excess, self.tol["trace"] * max(1.0, self.C))]
        if "colours" in solution.variables:  # a claimed balanced signed graph is checked as claimed
            viol = sign_violation(S, np.asarray(solution.variables["colours"], float))
            details["sign_violation"] = viol
            checks += [Check("sign violation of the claimed colours", viol, self.tol["zero"] * scale),
                       Check("balanced (sign-consistent two-colouring)", float(col.balanced), 1.0, "==")]
        return Feasibility(ok=all(c.ok for c in checks), min_eig=float(w[0]),
                           max_residual=max(asym, trace_excess, psd_short),
                           tolerances=dict(self.tol), details=details, checks=checks)

    # --------------------------------------------------------------------------- evaluation
    def evaluate(self, solution: Solution) -> dict[str, float]:
        M = np.asarray(solution.variables["M"], float)
        M = 0.5 * (M + M.T)
        off = M - np.diag(np.diag(M))
        out: dict[str, float] = {"trace": float(np.trace(M)), "n_train": float(len(self.y)),
                                 "offdiag_nnz": float(np.count_nonzero(np.abs(off) > 1e-10) // 2)}
        if self.F_test is not None and self.y_test is not None and len(self.y_test):
            out.update(classify(self.F, self.y, self.F_test, self.y_test, M, int(self.params["k_nn"])))
        return out

    # --------------------------------------------------------------------------- references
    def subspace(self) -> np.ndarray:
        """Orthonormal basis ``U`` (K x r) of the span of the training differences ``f_i - f_j``."""
        if self._U is None:
            Fc = self.F - self.F.mean(axis=0)
            _, s, Vt = np.linalg.svd(Fc, full_matrices=False)
            r = int(np.sum(s > 1e-10 * max(1.0, s.max(initial=0.0))))
            self._U = Vt[:r].T
        return self._U

    def reference_formulation(self, formulation: str = "full"):
        """cvxpy problem with the same optimum: ``full`` (M is K x K) or ``reduced`` (M = rho I + U X U')."""
        import cvxpy as cp

        from psdbench.api import Formulation

        expr_fn = self.obj.cvxpy_expression
        iu, ju = np.triu_indices(len(self.y), 1)
        Delta = self.F[iu] - self.F[ju]
        if formulation == "full":
            M = cp.Variable((self.K, self.K), symmetric=True)
            d = cp.sum(cp.multiply(Delta @ M, Delta), axis=1)
            cons = [M >> self.rho * np.eye(self.K), cp.trace(M) <= self.C]

            def extract() -> dict[str, np.ndarray]:
                return {"M": np.asarray(M.value, float)}

        elif formulation == "reduced":
            U = self.subspace()
            r = U.shape[1]
            X = cp.Variable((r, r), symmetric=True)
            P = Delta @ U
            d = self.rho * np.sum(Delta**2, axis=1) + cp.sum(cp.multiply(P @ X, P), axis=1)
            cons = [X >> 0, cp.trace(X) <= self.C - self.K * self.rho]

            def extract() -> dict[str, np.ndarray]:
                Xv = np.asarray(X.value, float)
                return {"M": self.rho * np.eye(self.K) + U @ (0.5 * (Xv + Xv.T)) @ U.T}

        else:
            raise PsdbenchError(f"metric: unknown formulation {formulation!r} (full | reduced)")
        expr = expr_fn(d, (iu, ju))
        if expr is None:
            return None
        goal = cp.Maximize(expr) if self.sense == "max" else cp.Minimize(expr)
        return Formulation(problem=cp.Problem(goal, cons), extract=extract)

    def fw_bound(self, M: np.ndarray) -> float:
        """Frank-Wolfe bound on the optimum from a feasible ``M`` (lower for min, upper for max)."""
        q, G = self.value_and_grad(M)
        U = self.subspace()
        wG = np.linalg.eigvalsh(U.T @ G @ U) if U.shape[1] < self.K else np.linalg.eigvalsh(G)
        if U.shape[1] < self.K:  # G = F_c' (.) F_c vanishes outside span(U)
            wG = np.append(wG, 0.0)
        slack = self.C - self.K * self.rho
        base = self.rho * float(np.trace(G)) - float(np.sum(G * M))
        if self.sense == "max":
            return q + base + slack * max(0.0, float(wG.max()))
        return q + base + slack * min(0.0, float(wG.min()))

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
        """Solve the reduced formulation with Clarabel; certify with the Frank-Wolfe bound."""
        import cvxpy as cp

        form = self.reference_formulation("reduced")
        if form is None:
            return {"value": None, "lower": None, "status": "none",
                    "message": f"{self.obj.name} is not convex: the reference is the best verified value"}
        t0 = time.perf_counter()
        r = self.subspace().shape[1]
        solver = "CLARABEL" if r <= 60 else "SCS"
        opts: dict[str, Any] = {}
        if solver == "SCS":
            opts = {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200000}
            if time_limit_s:
                opts["time_limit_secs"] = float(time_limit_s)
        else:  # Clarabel's defaults (1e-8) leave Frank-Wolfe gaps of 1e-4 on MCML; these close them
            opts = dict(CLARABEL_TIGHT)
            if time_limit_s:
                opts["time_limit"] = float(time_limit_s)
        form.problem.solve(solver=solver, **opts)
        if form.problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return {"value": None, "lower": None, "status": str(form.problem.status), "solver": solver}
        M = project_spectraplex(form.extract()["M"], self.rho, self.C)  # exactly feasible
        from importlib.metadata import version

        return {"value": self.value(M), "lower": self.fw_bound(M), "status": "ok", "solver": solver.lower(),
                "solver_version": version(solver.lower()), "solve_time_s": time.perf_counter() - t0}

    # ------------------------------------------------------------------ metric-learning peers
    def metric_training_data(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(F, y)`` on the classification protocol (peers learn there); ``None`` otherwise."""
        return (self.F, self.y) if self.params.get("protocol") == "classification" else None

    def metric_from_matrix(self, M: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """A peer's metric as ``{"M": a M + b I}`` with ``tr = C``, ``>= rho I`` (k-NN is scale-invariant;
        ``b > 0`` only if scaling alone misses ``rho``: :func:`scale_to_trace_floor`), and ``{scale, shift}``."""
        Mm, a, b = scale_to_trace_floor(np.asarray(M, float), self.C, self.rho)
        return {"M": Mm}, {"scale": a, "shift": b}

    # ------------------------------------------------------------------------- start points
    def identity_start(self) -> np.ndarray:
        """``(C / K) I`` shrunk by ``(1 - 1e-9)``: strictly feasible and PD."""
        return (self.C / self.K) * (1 - 1e-9) * np.eye(self.K)


def classify(F: np.ndarray, y: np.ndarray, Ft: np.ndarray, yt: np.ndarray, M: np.ndarray, k: int) -> dict[str, float]:
    """k-NN and nearest-class-mean accuracy under the metric ``M`` (features mapped by ``M^{1/2}``)."""
    from sklearn.neighbors import KNeighborsClassifier

    w, V = np.linalg.eigh(M)
    R = V * np.sqrt(np.clip(w, 0.0, None))  # d_M(a, b) = ||R'(a - b)||^2
    Z, Zt = F @ R, Ft @ R
    knn = KNeighborsClassifier(n_neighbors=min(k, len(y))).fit(Z, y)
    acc = float(np.mean(knn.predict(Zt) == yt))
    classes = np.unique(y)
    means = np.stack([Z[y == c].mean(axis=0) for c in classes])
    dist = ((Zt[:, None, :] - means[None, :, :]) ** 2).sum(axis=2)
    ncm = float(np.mean(classes[np.argmin(dist, axis=1)] == yt))
    return {"accuracy": acc, "ncm_accuracy": ncm}
