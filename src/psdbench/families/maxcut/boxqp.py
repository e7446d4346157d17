"""Problem ``maxcut/boxqp``: the box-QP SDP relaxation of a sparse symmetric ``C``, on factored points,
and ``boxqp-mixing``, the mixing method for ``diag(Y) <= 1``.

::

    (P)  p* = max <C, Y>  s.t.  diag(Y) <= 1,  Y psd
    (D)       min 1'y     s.t.  Diag(y) - C psd,  y >= 0

SDPLIB's qpG files (S. Benson's box-QP relaxations of Gset graphs) state (P) in standard form on
``X = [[Y, .], [., W]]`` (2n x 2n): ``max <F_0, X>`` with ``F_0`` only in the top-left n x n block and
``X_ii + X_{n+i,n+i} = 1``.  Eliminating the slack block ``W`` gives (P): a feasible ``X``'s block ``Y``
has ``diag(Y) <= 1`` (``W_ii >= 0``), and any ``Y`` feasible for (P) extends with
``W = Diag(1 - diag Y)`` (block-diagonal, psd) to the same objective (``tests/test_maxcut_boxqp.py``
checks the two optima agree with Clarabel).  :func:`qpg_from_sdp` reads such a file into ``C = F_0``'s
top-left block, after checking the file has exactly this structure.

Dual bound (every ``y >= 0``).  For ``Y`` feasible in (P), ``tr Y <= n`` and, with ``S = C - Diag y``,

    <C, Y> = <S, Y> + y' diag(Y) <= max(0, lambda_max(S)) tr(Y) + 1'y <= 1'y + n max(0, lambda_max(S)),

the middle step using ``y >= 0`` and ``diag(Y) <= 1`` (only an upper bound on ``diag(Y)`` is known,
so ``y`` is clipped to ``y >= 0`` first) and ``<S, Y> <= lambda_max(S) tr(Y)`` (``Y`` psd; when
``lambda_max(S) < 0`` the term is at most 0).  ``lambda_max`` and the rounding come from
:func:`.bound.dual_bound` (certified, or an estimate where the factor does not fit), here raised to
``1'y`` rounded up when it falls below it.

Mixing method (Wang, Chang and Kolter 2017, arXiv:1706.00476; their Algorithm 1 for ``diag(X) = 1``):
with the other rows fixed, ``<C, V V^T>`` is ``c_ii ||v_i||^2 + 2 v_i' g_i + const`` in row ``v_i``,
``g_i = sum_{j != i} c_ij v_j``.  Over ``||v_i|| <= 1`` with ``c_ii >= 0`` it is convex, so its maximum
is on the sphere, at ``g_i / ||g_i||``: the max-cut update, so the max-cut kernel
(:func:`.mixing.mixing`) runs unchanged from unit rows (then ``diag(Y) = 1``, which for ``c_ii >= 0``
loses nothing: ``Y + Diag(1 - diag Y)`` is feasible and no worse).  With some ``c_ii < 0`` the update
is interior (``-g_i / c_ii`` when ``||g_i|| < -c_ii``); such data are refused with that reason.  The dual
of the point is ``y_i = max(0, ||g_i|| + c_ii)``.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, Check, DataError, Dataset, Feasibility, Formulation, Solution

from . import KIND
from .bound import DualBound, _up, dual_bound
from .contract import MaxcutKind
from .graph import check_graph, generate
from .mixing import MaxcutMixing, dual_from_point
from .problem import CONIC_MAX_N, GENERATOR_PARAMS, MaxcutInstance


def qpg_from_sdp(data: Any, name: str = "sdp") -> sp.csr_matrix:
    """``C`` (n x n) of an SDPLIB qpG file: one 2n block, ``X_ii + X_{n+i,n+i} = 1``, ``F_0`` top-left.

    The sdp family stores ``C_sdp = -F_0``; ``C`` here is ``F_0``'s top-left block.  Anything else
    (more blocks, other constraints, cost outside the top-left block) is a one-line ``DataError``.
    """
    sizes = tuple(data.block_sizes)
    if len(sizes) != 1 or sizes[0] <= 0 or sizes[0] % 2:
        raise DataError(f"{name}: a qpG box-QP has one PSD block of even size, this one has blocks {sizes}")
    N = sizes[0]
    n = N // 2
    A = data.A.tocsr()
    if A.shape[0] != n or not np.array_equal(np.asarray(data.b, dtype=float), np.ones(n)):
        raise DataError(f"{name}: not m = n/2 constraints with right-hand side 1 (m = {A.shape[0]}, block {N})")
    Acoo = A.tocoo()
    r, c = np.divmod(Acoo.col, N)
    i = np.arange(n, dtype=np.int64)
    want = np.sort(np.concatenate([i * N + i, i * N + n + i]))  # constraint k: X_kk + X_(n+k)(n+k)
    got = np.sort(Acoo.row.astype(np.int64) * N + r)
    if Acoo.nnz != 2 * n or np.any(r != c) or np.any(Acoo.data != 1.0) or np.any(got != want):
        raise DataError(f"{name}: constraints are not X_ii + X_(n+i)(n+i) = 1")
    cv = data.c.tocoo()
    rows, cols = np.divmod(cv.col, N)
    if np.any(rows >= n) or np.any(cols >= n):
        raise DataError(f"{name}: cost outside the top-left {n} x {n} block (not a qpG box-QP)")
    C = sp.csr_matrix((-cv.data, (rows, cols)), shape=(n, n))  # C_sdp = -F_0
    C.sum_duplicates()
    C.eliminate_zeros()
    C.sort_indices()
    return C


def check_cost(C: Any, name: str) -> sp.csr_matrix:
    """``C`` as canonical CSR: square, finite, exactly symmetric, diagonal >= 0 (else refused)."""
    if not sp.issparse(C):
        raise DataError(f"{name}: payload 'cost' must be a scipy.sparse matrix, got {type(C).__name__}")
    C = sp.csr_matrix(C, dtype=float, copy=True)
    C.sum_duplicates()
    C.eliminate_zeros()
    if C.shape[0] != C.shape[1] or not np.all(np.isfinite(C.data)):
        raise DataError(f"{name}: cost of shape {C.shape} is not square and finite")
    D = (C - C.T).tocsr()
    D.eliminate_zeros()
    if D.nnz:
        raise DataError(f"{name}: cost is not symmetric ({D.nnz} asymmetric entries)")
    if np.any(C.diagonal() < 0):
        raise DataError(f"{name}: cost has a negative diagonal entry (c_ii < 0: the mixing update is interior, "
                        "not supported)")
    C.sort_indices()
    return C


def boxqp_dual_bound(C: sp.csr_matrix, y: np.ndarray) -> DualBound:
    """``U(y+) = 1'y+ + n max(0, lambda_max(C - Diag y+))``, ``y+ = max(y, 0)``, rounded up (module doc)."""
    b = dual_bound(C, np.maximum(np.asarray(y, dtype=float).ravel(), 0.0))
    floor = _up(b.sum_y)
    return b if not (b.value < floor) else DualBound(floor, b.kind, b.reason, b.sum_y, b.eig)


@dataclass
class BoxqpInstance(MaxcutInstance):
    """``max <C, Y> s.t. diag(Y) <= 1, Y psd`` on factors; ``W`` is ``C``'s off-diagonal part."""

    def refuse_solver(self, solver: Any) -> str | None:
        if getattr(solver, "name", "") == MaxcutMixing.name:
            return "maxcut-mixing solves diag(X) = 1; boxqp-mixing solves diag(Y) <= 1"
        return super().refuse_solver(solver)

    def verify(self, solution: Solution) -> Feasibility:
        """``max_i (r_i' r_i - 1) <= tol`` (diag(Y) <= 1); finite entries."""
        R = self._R(solution)
        tols = {"diag_excess": self.tol}
        if R is None or R.shape[0] != self.n:
            return Feasibility(ok=False, min_eig=float("nan"), max_residual=float("inf"), tolerances=tols,
                               checks=[Check("a factor R with n rows returned", 0.0, 1.0, ">=")])
        finite = bool(np.all(np.isfinite(R)))
        res = max(0.0, float(np.max(np.einsum("ij,ij->i", R, R) - 1.0))) if finite else float("inf")
        checks = [Check("max_i (r_i' r_i - 1) (diag(Y) <= 1)", res, self.tol)]
        return Feasibility(ok=finite and res <= self.tol, min_eig=0.0, max_residual=res, tolerances=tols,
                           checks=checks, details={"diag_excess": res, "rank": float(R.shape[1])})

    def dual_of(self, solution: Solution) -> np.ndarray | None:
        """The solution's ``y``, else ``max(0, ||g_i|| + c_ii)`` of the point (clipped in the bound anyway)."""
        y = super().dual_of(solution)
        return None if y is None else np.maximum(y, 0.0)

    def bound(self, y: np.ndarray) -> DualBound:
        key = hash(np.asarray(y, dtype=float).tobytes())
        if self._memo.get("bound_key") != key:
            self._memo["bound"] = boxqp_dual_bound(self.C, y)
            self._memo["bound_key"] = key
        return self._memo["bound"]

    def evaluate(self, solution: Solution) -> dict[str, float]:
        """The dual bound and its kind, the gap to it, the published value (no cut: not a max-cut)."""
        out = super().evaluate(solution)
        out.pop("cut", None)
        out.pop("cut_over_bound", None)
        return out

    def reference_formulation(self, variant: str | None = None) -> Formulation | None:
        """(P) in cvxpy with a dense PSD variable (small n); ``y`` the dual of ``diag(Y) <= 1`` (>= 0)."""
        import cvxpy as cp

        if variant not in (None, "primal") or self.n > CONIC_MAX_N:
            return None
        Y = cp.Variable((self.n, self.n), PSD=True)
        cons = [cp.diag(Y) <= 1]
        prob = cp.Problem(cp.Maximize(cp.trace(self.C.toarray() @ Y)), cons)

        def extract() -> dict[str, np.ndarray]:
            w, Q = np.linalg.eigh(0.5 * (Y.value + Y.value.T))
            R = Q * np.sqrt(np.clip(w, 0, None))
            R /= np.maximum(1.0, np.linalg.norm(R, axis=1, keepdims=True))  # diag(Y) <= 1 up to rounding
            return {"R": R, "y": np.maximum(np.asarray(cons[0].dual_value, dtype=float).ravel(), 0.0)}

        return Formulation(problem=prob, extract=extract)

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
        """``boxqp-mixing`` to a tight tolerance, then the certified bound of its ``y`` (as ``maxcut/sdp``)."""
        t0 = time.monotonic()
        budget = Budget.seconds(0.6 * time_limit_s if time_limit_s else 600.0)
        sol = BoxqpMixing().solve(self, budget, tol=1e-13)
        b = self.bound(sol.variables["y"])
        certified = b.kind == "certified" and math.isfinite(b.value)
        return {"value": self.objective(sol), "lower": b.value if certified else None, "solver": BoxqpMixing.name,
                "solver_version": BoxqpMixing().library_versions().get("numba", ""),
                "status": sol.status.value if hasattr(sol.status, "value") else str(sol.status),
                "wall_time_s": time.monotonic() - t0, "message": f"dual bound ({b.kind}): {b.reason}"}


DESCRIPTION = """\
The box-QP SDP relaxation of a sparse symmetric C (SDPLIB's qpG files, S. Benson), on factors Y = R R^T:

    maximize    <C, Y>                   (P)         minimize   1'y                    (D)
    subject to  diag(Y) <= 1, Y psd                  subject to Diag(y) - C psd, y >= 0

qpG files (one 2n block, X_ii + X_(n+i)(n+i) = 1, F_0 top-left) read into C = F_0's top-left block
(the slack block eliminated); a graph gives C = W; a cost needs c_ii >= 0.
Variables: R (n, r), required; y (n,), optional (default max(0, ||g_i|| + c_ii)).
Verified when max_i (r_i' r_i - 1) <= tol.  Every y gives (with y clipped to y >= 0)
p* <= 1'y + n max(0, lambda_max(C - Diag y)), certified as for maxcut/sdp (dual_bound_certified).
Metrics: dual_bound, dual_bound_certified, bound_gap_rel, published (SDPLIB, beside).
Reference: boxqp-mixing to a tight tolerance and the certified bound of its y.
"""


class MaxcutBoxqp:
    """``maxcut/boxqp``: max <C, Y> s.t. diag Y <= 1, Y psd, on factored points."""

    name = "maxcut/boxqp"
    kind = KIND
    family = KIND
    sense = "max"
    description = DESCRIPTION
    contract = MaxcutKind
    size_param = "n"
    params: dict[str, api.Param] = {
        **GENERATOR_PARAMS,
        "tol": api.number(low=0.0, default=1e-8, doc="verified when max_i (r_i' r_i - 1) <= tol"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> BoxqpInstance:
        p = {**self.default_params, **params}
        pay = dict(dataset.payload)
        if "cost" in pay:
            C = check_cost(pay["cost"], dataset.name)
        elif "graph" in pay:
            C = check_graph(pay["graph"], dataset.name)
        elif "sdp" in pay:
            C = check_cost(qpg_from_sdp(pay["sdp"], dataset.name), dataset.name)
        elif "generator" in pay:
            C = generate(str(pay["generator"]), int(p["n"]), float(p["density"]), int(seed))
        else:
            raise DataError(f"{self.name}: dataset {dataset.name} has no cost (payload keys: cost, graph, sdp "
                            "or generator)")
        W = (C - sp.diags(C.diagonal())).tocsr()
        W.eliminate_zeros()
        published = pay.get("published")
        return BoxqpInstance(problem=self.name, dataset=dataset.name, params={**p, "hyperplanes": 0},
                             seed=int(seed), C=C, W=W, published=None if published is None else float(published))


class BoxqpMixing(MaxcutMixing):
    """The mixing method on ``max <C, Y>, diag Y <= 1`` (``c_ii >= 0``: the max-cut update, module doc)."""

    name = "boxqp-mixing"
    returns = "R (n x k unit rows, Y = R R^T), y (max(0, ||g_i|| + c_ii))"

    def supports(self, instance: Any) -> bool:
        return isinstance(instance, BoxqpInstance)

    def dual(self, C: sp.csr_matrix, V: np.ndarray) -> np.ndarray:
        """``y_i = max(0, ||g_i|| + c_ii)``: only ``diag(Y) <= 1`` is known, so ``y >= 0``."""
        return np.maximum(dual_from_point(C, V), 0.0)

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        if np.any(instance.C.diagonal() < 0):
            raise DataError("boxqp-mixing: c_ii < 0 makes the row update interior; not supported")
        return super().solve(instance, budget, **params)
