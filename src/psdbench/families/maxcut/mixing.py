"""``maxcut-mixing``: the mixing method (P.-W. Wang, W.-C. Chang and J. Z. Kolter, "The Mixing Method:
low-rank coordinate descent for semidefinite programming with diagonal constraints", arXiv:1706.00476,
2017).

The paper's problem (its eq. (1)) is ``min <C', X> s.t. X_ii = 1, X psd`` written on unit vectors
``X = V^T V`` (its eq. (2), ``V = [v_1 ... v_n]`` in ``R^{k x n}``).  Its Algorithm 1 ("Mixing method
for MAXCUT problem") updates one column at a time, in order,

    v_i <- normalize(- sum_{j != i} c'_ij v_j),

the exact minimizer of the objective in ``v_i`` with the others fixed (the objective is linear in
``v_i``, the constraint ``||v_i|| = 1``).  Here ``C' = -C`` (we maximize ``<C, X>``), so
``v_i <- g_i / ||g_i||`` with ``g_i = sum_{j != i} c_ij v_j``, and each update raises ``<C, X>`` by
``2 (||g_i|| - v_i^T g_i) >= 0`` (the paper's decrease ``||g_i|| (... )`` in Lemma 3.4's form).  The
rank is ``k = ceil(sqrt(2 n)) + 1`` (the paper's choice ``k > sqrt(2n)``, after Pataki and Barvinok:
with it the non-optimal critical points are unstable, its Theorem 3.3), capped by ``max_rank``.
A row ``v_i`` with ``g_i = 0`` is left as it is (the paper's algorithm assumes ``||g_i|| > 0``).

The dual ``y`` is read from the point as in the paper's optimality condition (Section 3: a critical
point satisfies ``C' V^T ... = -Diag(||g_i||)``): ``y_i = ||g_i|| + c_ii``, computed after the last sweep
from the point returned (one sparse product).  ``Diag(y) - C`` then annihilates ``V`` up to the
sweep's stationarity, and :mod:`.bound` turns any ``y`` into an upper bound.

Sweeps run in a numba kernel over ``C``'s CSR rows without the diagonal (int32 indices), on ``V``
stored n x k in C order (each ``v_i`` contiguous: the paper's C code's layout), one compiled call per
sweep (sequential: each update reads the rows updated before it).  Deterministic given the seed (the
initial ``V`` is Gaussian rows normalized).  Stops when the objective's relative increase over a sweep
falls below ``tol``, at ``max_iter`` sweeps, or at the budget's deadline (status ``timeout``, the point
returned).
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, Solution, Status, TraceRecorder

from . import KIND

try:  # numba is a dependency of the family; a missing numba is a one-line error at solve
    from numba import njit
except ImportError:  # pragma: no cover - exercised only without numba
    njit = None


def _sweep_py(indptr, indices, data, V):  # the kernel, in Python (compiled below)
    """One sweep of Algorithm 1 over the rows of ``V`` (n x k, C order, each ``v_i`` contiguous), in
    place; returns the sweep's gain ``sum_i 2 (||g_i|| - v_i' g_i)``.

    ``indptr, indices, data``: the CSR rows of ``C`` without its diagonal (:func:`offdiagonal_rows`),
    column indices ascending, so ``g_i = sum_{j != i} c_ij v_j`` is summed in the order of the columns
    (as the kernel before issue 49 did, bit for bit).  ``||g_i||^2`` and ``v_i' g_i`` are summed in
    four interleaved partial sums (lanes ``t mod 4``, added pairwise at the end): the same numbers,
    rounded in a fixed order that does not depend on the machine, without one serial chain of ``k``
    additions (no fastmath); ``v_i`` is ``g_i`` times ``1 / ||g_i||`` (one division a row, as the
    paper's C code).
    """
    n, k = V.shape
    k4 = k - k % 4
    gain = 0.0
    g = np.zeros(k)
    for i in range(n):
        p0 = indptr[i]
        p1 = indptr[i + 1]
        if p0 == p1:  # no neighbour: g_i = 0, v_i is left as it is
            continue
        # g_i = sum_{j != i} c_ij v_j (Algorithm 1's inner sum; the paper's -g_i with C' = -C), over
        # the row's columns in order, two at a time: g <- (g + c_a v_a) + c_b v_b is the one-at-a-time
        # sum rounded the same, with half the loads and stores of g
        j = indices[p0]
        c = data[p0]
        if p0 + 1 < p1:
            jb = indices[p0 + 1]
            cb = data[p0 + 1]
            for t in range(k):
                g[t] = c * V[j, t] + cb * V[jb, t]
            p = p0 + 2
        else:
            for t in range(k):
                g[t] = c * V[j, t]
            p = p0 + 1
        while p + 1 < p1:
            ja = indices[p]
            ca = data[p]
            jb = indices[p + 1]
            cb = data[p + 1]
            for t in range(k):
                g[t] = (g[t] + ca * V[ja, t]) + cb * V[jb, t]
            p += 2
        if p < p1:
            j = indices[p]
            c = data[p]
            for t in range(k):
                g[t] += c * V[j, t]
        # ||g_i||^2 and v_i' g_i (the old v_i: the update's gain 2 (||g_i|| - v_i' g_i), Lemma 3.4)
        s0 = s1 = s2 = s3 = 0.0
        d0 = d1 = d2 = d3 = 0.0
        for t in range(0, k4, 4):
            g0 = g[t]
            g1 = g[t + 1]
            g2 = g[t + 2]
            g3 = g[t + 3]
            s0 += g0 * g0
            s1 += g1 * g1
            s2 += g2 * g2
            s3 += g3 * g3
            d0 += g0 * V[i, t]
            d1 += g1 * V[i, t + 1]
            d2 += g2 * V[i, t + 2]
            d3 += g3 * V[i, t + 3]
        for t in range(k4, k):
            s0 += g[t] * g[t]
            d0 += g[t] * V[i, t]
        nrm = math.sqrt((s0 + s1) + (s2 + s3))
        if nrm > 0.0:  # the paper assumes ||g_i|| > 0; a zero g_i leaves v_i as it is
            gain += nrm - ((d0 + d1) + (d2 + d3))
            inv = 1.0 / nrm
            for t in range(k):  # v_i <- g_i / ||g_i|| (Algorithm 1: v_i <- normalize(-sum_j c'_ij v_j))
                V[i, t] = g[t] * inv
    return 2.0 * gain


_sweep = njit(cache=True, nogil=True)(_sweep_py) if njit is not None else None


def offdiagonal_rows(C: sp.csr_matrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of ``C``'s CSR rows without the diagonal entries, in the order of
    ``C``'s own (sorted) rows; indices in int32 when they fit (half the index traffic of int64)."""
    n = C.shape[0]
    counts = np.diff(C.indptr)
    rows = np.repeat(np.arange(n, dtype=np.int64), counts)
    keep = C.indices != rows
    itype = np.int32 if max(n, int(keep.sum())) < 2**31 - 1 else np.int64
    indptr = np.zeros(n + 1, dtype=itype)
    np.cumsum(np.bincount(rows[keep], minlength=n), out=indptr[1:])
    return indptr, np.ascontiguousarray(C.indices[keep], dtype=itype), np.ascontiguousarray(C.data[keep], dtype=float)


def default_rank(n: int, max_rank: int) -> int:
    """``k = ceil(sqrt(2 n)) + 1`` (the paper's ``k > sqrt(2n)``), at most ``max_rank`` and ``n``."""
    return int(max(1, min(n, math.ceil(math.sqrt(2 * n)) + 1, max_rank)))


def initial_point(n: int, k: int, seed: int) -> np.ndarray:
    """Rows drawn uniformly on the unit sphere of ``R^k`` (seeded)."""
    V = np.random.default_rng(seed).standard_normal((n, k))
    V /= np.linalg.norm(V, axis=1, keepdims=True)
    return np.ascontiguousarray(V)


def dual_from_point(C: sp.csr_matrix, V: np.ndarray) -> np.ndarray:
    """``y_i = ||g_i|| + c_ii`` with ``g_i = sum_{j != i} c_ij v_j`` (the paper's dual)."""
    d = C.diagonal()
    G = C @ V - d[:, None] * V
    return np.linalg.norm(G, axis=1) + d


def mixing(C: sp.csr_matrix, k: int, seed: int, *, tol: float = 1e-10, max_sweeps: int = 100_000,
           budget: Budget | None = None, trace: TraceRecorder | None = None,
           V0: np.ndarray | None = None) -> tuple[np.ndarray, int, str]:
    """Run Algorithm 1 on ``max <C, V V^T>``; returns ``(V, sweeps, why it stopped)``.

    ``V0`` (n x k, unit rows), when given, is the start instead of the seeded random point (a run
    continued where an earlier one stopped; it is copied, never changed).
    """
    if _sweep is None:
        raise RuntimeError("maxcut-mixing needs numba (pip install numba)")
    C = sp.csr_matrix(C)
    if not C.has_sorted_indices:
        C = C.sorted_indices()  # a sorted copy: the caller's matrix is not changed
    n = C.shape[0]
    if V0 is None:
        V = initial_point(n, k, seed)
    else:
        V = np.array(V0, dtype=float, order="C", copy=True)
        if V.shape != (n, k):
            raise ValueError(f"V0 has shape {V.shape}, expected {(n, k)}")
    indptr, indices, data = offdiagonal_rows(C)
    diag_sum = float(C.diagonal().sum())  # the constant part of <C, X> (diag X = 1), summed once
    obj = float(np.sum(V * (C @ V)))
    why = "max_iter"
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        gain = _sweep(indptr, indices, data, V)
        obj += gain
        if trace is not None:
            trace.add(iter=sweeps, objective=obj, sweep_gain=gain)
        if gain <= tol * max(1.0, abs(obj - diag_sum)):
            why = "converged"
            break
        if budget is not None and budget.expired():
            why = "timeout"
            break
    return V, sweeps, why


class MaxcutMixing:
    """The mixing method (Wang, Chang and Kolter 2017, Algorithm 1) on ``max <C, X>, diag X = 1``."""

    name = "maxcut-mixing"
    kinds = (KIND,)
    returns = "R (n x k unit rows, X = R R^T), y (the dual ||g_i|| + c_ii)"
    params: dict[str, api.Param] = {
        "max_rank": api.number(low=1, default=100, integer=True,
                               doc="cap of the rank k = ceil(sqrt(2n)) + 1"),
        "rank": api.number(low=0, default=0, integer=True, doc="the rank k; 0: ceil(sqrt(2n)) + 1 capped by max_rank"),
        "tol": api.number(low=0.0, default=1e-10,
                          doc="stop when a sweep raises the objective by less than tol times its size"),
        "max_iter": api.number(low=1, default=100_000, integer=True, doc="sweeps at most"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def supports(self, instance: Any) -> bool:
        return getattr(instance, "C", None) is not None

    def library_versions(self) -> dict[str, str]:
        import numba

        return {"numba": numba.__version__, "numpy": np.__version__, "scipy": __import__("scipy").__version__}

    def warm_up(self, instance: Any) -> None:
        """Compile the sweep (untimed; numba caches it on disk)."""
        C = sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))
        mixing(C, 2, 0, max_sweeps=1)

    def dual(self, C: sp.csr_matrix, V: np.ndarray) -> np.ndarray:
        """The dual ``y`` of the point ``V`` (a subclass for another constraint set overrides it)."""
        return dual_from_point(C, V)

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        p = {**self.default_params, **params}
        C = instance.C
        n = C.shape[0]
        k = int(p["rank"]) or default_rank(n, int(p["max_rank"]))
        rec = TraceRecorder(budget)
        t0 = time.perf_counter()
        max_sweeps = int(budget.max_iter or p["max_iter"])
        V, sweeps, why = mixing(C, k, int(getattr(instance, "seed", 0)), tol=float(p["tol"]),
                                max_sweeps=max_sweeps, budget=budget, trace=rec)
        y = self.dual(C, V)
        status = {"converged": Status.OK, "max_iter": Status.MAX_ITER, "timeout": Status.TIMEOUT}[why]
        return Solution(variables={"R": V, "y": y}, status=status, iterations=sweeps, trace=rec.points,
                        info={"status": why, "rank": k, "solve_time_s": time.perf_counter() - t0})
