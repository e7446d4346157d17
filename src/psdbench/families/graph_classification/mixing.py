"""``gc-mixing``: the mixing method on the reduced SDP (8) of the graph classifier.

Papers: the graph-classifier SDP (8) ("Projection-free Graph-based Classifier Learning using
Gershgorin Disc Perfect Alignment", ../shared/papers/gdpa-graph-classifier-sdp.txt, section 4) with
its labelled nodes eliminated (:meth:`GraphClassificationInstance.reduced_sdp`):

    p* = const + min tr(Q Z)  s.t.  Z psd, diag(Z) = 1,   Q = [[L_UU, c], [c', 0]],

which is max-cut's form ``max <C, Z>`` with ``C = -Q``.  It is solved by the max-cut family's
mixing method (P.-W. Wang, W.-C. Chang and J. Z. Kolter, arXiv:1706.00476, Algorithm 1; the kernel
:func:`psdbench.families.maxcut.mixing.mixing`, reused, not copied) on unit vectors ``Z = V V^T``.

Dual (sign convention).  The max-cut module reads ``y_i = ||g_i|| + c_ii`` with
``g_i = sum_{j != i} c_ij v_j`` from the point; with ``C = -Q`` this is

    y_i = || sum_{j != i} Q_ij v_j || - Q_ii,

and ``Diag(y) - C = Q + diag(y)``: exactly the family's reduced dual (``min 1'y`` s.t.
``Q + diag(y)`` psd, lower bound ``const - 1'y``; :meth:`reduced_dual_bound`).  At a stationary
point ``(Q + diag y) V = 0``; away from it ``Q + diag(y)`` is only nearly psd, so the solver
certifies ``lambda_min(Q + diag y) >= -delta`` (LDL^T with a rigorous residual bound,
:func:`psdbench.linalg.certify.lambda_max_upper`; ``eigh`` on dense instances) and returns
``y + delta 1`` (``delta`` slightly inflated), which is psd up to that rounding and costs
``(|U| + 1) delta`` of the bound, the same shift :meth:`reduced_dual_bound` applies.  The harness
certifies the returned ``y`` again itself (no ``s_reduced``: the family's LDL^T certificate).

Labels: the homogenizing coordinate.  ``Z``'s t-column is ``z_i = v_i . v_t``, the relaxation of
``x_i x_t`` (the proof at :meth:`reduced_sdp`), so ``x_U = sign(V_U v_t)``: the rounding by the
t-column, which for a rank-one optimum is GDPA's eigenvector rule (section 5.2).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, Solution, Status, TraceRecorder
from psdbench.families.graph_classification.contract import GraphClassificationKind
from psdbench.families.maxcut.mixing import default_rank, dual_from_point, mixing


def reduced_cost(instance: GraphClassificationKind) -> tuple[sp.csr_matrix, float]:
    """``(Q, const)`` of the reduced SDP as a sorted CSR matrix (dense instances converted)."""
    Q, const = instance.reduced_sdp()
    Q = sp.csr_matrix(Q)
    Q.eliminate_zeros()
    Q.sort_indices()
    return Q, float(const)


def reduced_dual(Q: sp.csr_matrix, V: np.ndarray) -> np.ndarray:
    """``y_i = ||sum_{j != i} Q_ij v_j|| - Q_ii`` (the max-cut dual of ``C = -Q``)."""
    return dual_from_point(-Q, V)


def certify_shift(Q: sp.csr_matrix, y: np.ndarray) -> tuple[float, str]:
    """``delta >= 0`` with ``lambda_min(Q + diag y) >= -delta`` proven, and how it was proven.

    Dense (n <= 2000): ``eigh`` (as the family's dense certificate, inflated by ``1e-12`` of the
    matrix's scale for eigh's backward error); sparse: :func:`~psdbench.linalg.certify.lambda_max_upper`
    of ``-(Q + diag y)`` from the estimate 0 (a nearly optimal dual's smallest eigenvalue is near 0).
    Returns ``(inf, reason)`` where no certificate can be had.
    """
    from psdbench.families.graph_classification.instance import LDLT_MAX_ENVELOPE
    from psdbench.linalg.certify import lambda_max_upper

    D = (Q + sp.diags(y)).tocsr()
    scale = max(1.0, float(abs(D).sum(axis=1).max()))
    if D.shape[0] <= 2000:
        lam = float(np.linalg.eigvalsh(D.toarray())[0]) - 1e-12 * scale
        return max(0.0, -lam), "eigh"
    b = lambda_max_upper(-D, estimate=0.0, max_envelope=LDLT_MAX_ENVELOPE)
    if not b.certified:
        return math.inf, b.reason
    return max(0.0, b.value), b.reason


def t_column_labels(instance: GraphClassificationKind, V: np.ndarray) -> np.ndarray:
    """``[xhat; sign(V_U v_t)]`` (ties to +1)."""
    z = V[:-1] @ V[-1]
    return np.concatenate([instance.xhat, np.where(z >= 0, 1.0, -1.0)])


class GcMixing:
    """Solver ``gc-mixing``: the mixing method (Wang, Chang and Kolter 2017, Algorithm 1) on the reduced SDP (8)."""

    name = "gc-mixing"
    kinds = ("graph-classification",)
    returns = ("y_reduced: the mixing point's dual ||sum_{j != i} Q_ij v_j|| - Q_ii shifted by its certified "
               "lambda_min; x (N,): labels sign(V_U v_t)")
    params: dict[str, api.Param] = {
        "max_rank": api.number(low=1, default=16, integer=True,
                               doc="cap of the rank k = ceil(sqrt(2n)) + 1"),
        "rank": api.number(low=0, default=0, integer=True,
                           doc="the rank k; 0: ceil(sqrt(2n)) + 1 capped by max_rank"),
        "tol": api.number(low=0.0, default=1e-8,
                          doc="stop when a sweep lowers tr(QZ) by less than tol times its size"),
        "max_iter": api.number(low=1, default=100_000, integer=True, doc="sweeps at most"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def supports(self, instance: Any) -> bool:
        return hasattr(instance, "reduced_sdp")

    def library_versions(self) -> dict[str, str]:
        import numba

        return {"numba": numba.__version__, "numpy": np.__version__, "scipy": __import__("scipy").__version__}

    def warm_up(self, instance: Any) -> None:
        """Compile the sweep (untimed; numba caches it on disk)."""
        mixing(sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]])), 2, 0, max_sweeps=1)

    def solve(self, instance: GraphClassificationKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        Q, const = reduced_cost(instance)
        n = Q.shape[0]
        k = int(p["rank"]) or default_rank(n, int(p["max_rank"]))
        rec = TraceRecorder(budget)
        t0 = time.perf_counter()
        V, sweeps, why = mixing(-Q, k, int(getattr(instance, "seed", 0)), tol=float(p["tol"]),
                                max_sweeps=int(budget.max_iter or p["max_iter"]), budget=budget, trace=rec)
        t_mix = time.perf_counter() - t0
        y = reduced_dual(Q, V)
        t1 = time.perf_counter()
        delta, how = certify_shift(Q, y)
        t_cert = time.perf_counter() - t1
        if math.isfinite(delta):
            y = y + (delta * (1.0 + 1e-12) + np.finfo(float).tiny)
        sdp_value = const + float(np.sum(V * (Q @ V)))
        status = {"converged": Status.OK, "max_iter": Status.MAX_ITER, "timeout": Status.TIMEOUT}[why]
        return Solution(
            variables={"y_reduced": y, "x": t_column_labels(instance, V)},
            status=status,
            iterations=sweeps,
            trace=rec.points,
            info={"status": why, "rank": k, "mixing_s": t_mix, "certify_s": t_cert, "lambda_shift": delta,
                  "certificate": how, "sdp_primal": sdp_value, "bound": const - float(np.sum(y))},
        )
