"""The conic reference of a graph-classification instance: cvxpy formulations and the certified interval.

Paper: "Projection-free Graph-based Classifier Learning using Gershgorin Disc Perfect Alignment"
(../shared/papers/gdpa-graph-classifier-sdp.txt), SDP (8) and the reduced SDP of
:meth:`~.instance.GraphClassificationInstance.reduced_sdp`.  Mixed into the instance; dense only
(no formulation, and no reference, on sparse instances or past ``conic_max_n``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from psdbench.api import PsdbenchError
from psdbench.families.graph_classification.repair import unit_diagonal_psd
from psdbench.linalg.psd import min_eig


class ConicReference:
    """Methods of :class:`~.instance.GraphClassificationInstance` that build cvxpy problems."""

    def reference_formulation(self, formulation: str = "primal"):
        """A cvxpy problem with the optimum of (8), for the generic conic solvers.

        ``"primal"`` is the SDP primal (8) itself, variable ``M`` of size N+1.  ``"reduced"`` is
        the equivalent SDP of :meth:`reduced_sdp` (size |U|+1); its solution is mapped back to an
        ``M`` of (8) by :meth:`lift`, so the harness verifies and scores it like any primal point.
        """
        import cvxpy as cp

        from psdbench.api import Formulation

        if formulation == "reduced":
            prob, Z, _, _ = self._reduced_problem()
            return Formulation(problem=prob, extract=lambda: {"M": self.lift(np.asarray(Z.value))})
        self._dense_only("a cvxpy formulation")
        if formulation != "primal":
            raise PsdbenchError(f"graph-classification: formulation must be 'primal' or 'reduced', not {formulation!r}")
        N, m = self.n, self.m
        M = cp.Variable((N + 1, N + 1), PSD=True)
        cons = [cp.diag(M) == 1, M[:m, N] == self.xhat]
        prob = cp.Problem(cp.Minimize(cp.sum(cp.multiply(self.L, M[:N, :N]))), cons)
        return Formulation(problem=prob, extract=lambda: {"M": np.asarray(M.value)})

    def lift(self, Z: np.ndarray) -> np.ndarray:
        """Map a point ``Z`` of the reduced SDP to ``M = T Z T'`` of (8) (proof of :meth:`reduced_sdp`).

        ``T`` sends labelled node i to ``xhat_i`` times the homogenizing node, unlabelled nodes and
        the homogenizing node to themselves, so ``M`` is PSD whenever ``Z`` is, and the objectives
        agree.
        """
        N, m = self.n, self.m
        k = N - m + 1
        T = np.zeros((N + 1, k))
        T[:m, k - 1] = self.xhat
        T[m:N, : k - 1] = np.eye(k - 1)
        T[N, k - 1] = 1.0
        return T @ Z @ T.T

    def _reduced_problem(self):
        import cvxpy as cp

        Q, const = self.reduced_sdp()
        Z = cp.Variable(Q.shape, PSD=True)
        diag = cp.diag(Z) == 1
        return cp.Problem(cp.Minimize(cp.sum(cp.multiply(Q, Z)) + const), [diag]), Z, diag, Q

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
        """Certified interval [lower, upper] for p*, from the reduced SDP.

        Solved with Clarabel (interior point) where the reduced size allows, else SCS at 1e-6,
        tightened to 1e-7 and 1e-8 (warm-started) until the interval is within ``rtol`` relative or
        ``time_limit_s`` runs out.  ``upper`` is the objective of an exactly feasible point (the returned ``Z``
        projected on the PSD cone and rescaled to unit diagonal); ``lower`` is the dual bound of
        the returned ``w`` shifted by ``n max(0, -lambda_min(Q + diag w))``.  Neither trusts the
        solver.
        """
        import cvxpy as cp

        limit = self.params.get("conic_max_n")
        if self.is_sparse or (limit is not None and self.n > int(limit)):
            return None  # no conic solve at this size: gaps are against the best verified cell
        prob, Z, diag, Q = self._reduced_problem()
        const = float(self.reduced_sdp()[1])
        k = Q.shape[0]
        t0 = time.perf_counter()
        best: dict[str, Any] | None = None
        for eps in (1e-6, 1e-7, 1e-8):  # tighten until the certificate is tight enough
            left = None if not time_limit_s else float(time_limit_s) - (time.perf_counter() - t0)
            if left is not None and left <= 0:
                break
            if k <= 60:  # Clarabel's KKT system grows as k^4: fast below ~60, minutes at ~100
                solver, opts = "CLARABEL", {"tol_gap_abs": 1e-9, "tol_gap_rel": 1e-9, "tol_feas": 1e-9}
                if left is not None:
                    opts["time_limit"] = left
            else:
                # Without Anderson acceleration SCS needs a few hundred iterations here; the
                # certificate, not the tolerance, decides whether the interval counts as certified.
                solver, opts = "SCS", {"eps_abs": eps, "eps_rel": eps, "max_iters": 100000,
                                       "acceleration_lookback": 0, "warm_start": best is not None}
                if left is not None:
                    opts["time_limit_secs"] = left
            prob.solve(solver=solver, **opts)
            if Z.value is None or diag.dual_value is None:
                break
            Zf = unit_diagonal_psd(np.asarray(Z.value))  # exactly feasible: PSD, unit diagonal
            upper = float(np.sum(Q * Zf)) + const
            # cvxpy's multiplier w of `diag(Z) == 1` satisfies Q + diag(w) PSD at the optimum.
            w = np.asarray(diag.dual_value, float)
            lam = min_eig(Q + np.diag(w))
            lower = -float(np.sum(w)) - k * max(0.0, -lam) + const
            if best is None or upper - lower < best["gap"]:
                best = {"value": upper, "lower": lower, "gap": upper - lower,
                        "solver": f"{solver.lower()} (reduced SDP, eps {eps:g})" if solver == "SCS" else "clarabel (reduced SDP)",
                        "solver_version": f"cvxpy {cp.__version__}", "status": prob.status}
            if solver == "CLARABEL" or best["gap"] <= rtol * max(1.0, abs(best["value"])):
                break
        if best is None:
            raise RuntimeError(f"reference solve failed: {prob.status}")
        return best
