"""Factored points of ``sdp/standard``: ``X_j = R_j R_j'`` per PSD block, verified without forming ``X``.

A solver may return, instead of the stacked ``X``,

* ``R`` of shape ``(n_psd, r)``: the factors of the PSD blocks stacked by rows in block order
  (block ``j``'s ``n_j`` rows, all blocks with the same ``r`` columns; a block of rank below ``r``
  has zero columns), so ``X_j = R_j R_j'``;
* ``x_lp`` of shape ``(n_lp,)``: the entries of the diagonal (LP) blocks in block order (required
  when the data have LP blocks);

with ``y`` (m,) as for a dense point (``Z`` is always ``C - A*(y)``, so DIMACS err3 is 0).

Everything here costs ``O(nnz(A) r + nnz(C) r)`` time and ``O(nnz + n r)`` memory:

* ``A(R R')``: ``<A_i, R R'> = sum_{(p, q)} (A_i)_pq R_p . R_q`` over the stored entries of ``A_i``
  (both triangles folded onto ``p <= q``, an off-diagonal pair counted twice), one row dot product
  per distinct position of the pattern (:class:`BlockPattern`); ``<C, R R'>`` likewise;
* ``Z = C - A*(y)``: per PSD block one sparse symmetric matrix on the union pattern of ``C`` and
  the ``A_i`` (:meth:`BlockPattern.matrix`);
* the primal cone holds by construction (err2 = 0; an LP block's smallest entry otherwise);
* ``<X, Z> = sum_j tr(R_j' Z_j R_j)`` (err6), ``lambda_min(Z)`` (err4) and the lower bound on the
  optimum of (P) from ``y`` (:mod:`.lowrank_bound`).

The dense path (:func:`.errors.dimacs_errors` on a stacked ``X``) is unchanged; on a small
instance both give the same errors for the same point (``tests/test_sdp_lowrank_verify.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench.families.sdp.data import SdpData

#: entries of one chunk of row dot products (bounds the temporary ``(chunk, r)`` arrays)
CHUNK_ENTRIES = 1 << 22


@dataclass(frozen=True)
class BlockPattern:
    """The union sparsity pattern of ``C`` and the ``A_i`` on one PSD block, upper triangle.

    Attributes
    ----------
    size : int
        The block's order ``n_j``.
    rows, cols : ndarray of int64, shape (k,)
        Positions ``p <= q`` of the pattern (row-major order).
    weight : ndarray of shape (k,)
        2 off the diagonal, 1 on it: ``<M, R R'> = sum_k weight_k M_pq R_p . R_q`` for symmetric ``M``.
    M : scipy.sparse.csr_matrix of shape (k, m)
        ``M[k, i]``: the symmetric part of ``A_i`` at position ``k``.
    c : ndarray of shape (k,)
        The symmetric part of ``C`` at position ``k``.
    full : tuple
        ``(indptr, indices, perm)``: the CSR structure of the symmetric ``n_j x n_j`` matrix on the
        pattern (both triangles) and the pattern entry each stored value comes from.
    """

    size: int
    rows: np.ndarray
    cols: np.ndarray
    weight: np.ndarray
    M: sp.csr_matrix
    c: np.ndarray
    full: tuple[np.ndarray, np.ndarray, np.ndarray]

    def dots(self, R: np.ndarray, S: np.ndarray | None = None) -> np.ndarray:
        """``R_p . S_q`` for every pattern position ``(p, q)`` (``S = R`` by default): (k,).

        A compiled loop (numba) where available: no ``(k, r)`` temporaries; numpy in chunks otherwise.
        """
        S = R if S is None else S
        kernel = _kernel()
        if kernel is not None and R.dtype == np.float64 and S.dtype == np.float64:
            out = np.empty(self.rows.size)
            kernel(self.rows, self.cols, np.ascontiguousarray(R), np.ascontiguousarray(S), out)
            return out
        r = max(R.shape[1], 1)
        step = max(1, CHUNK_ENTRIES // r)
        out = np.empty(self.rows.size)
        for a in range(0, self.rows.size, step):
            p, q = self.rows[a:a + step], self.cols[a:a + step]
            out[a:a + step] = np.einsum("ij,ij->i", R[p], S[q])
        return out

    def sym_dots(self, R: np.ndarray, D: np.ndarray) -> np.ndarray:
        """``(R D' + D R')_pq`` at every pattern position (the first-order term of ``(R + a D)(R + a D)'``)."""
        return self.dots(R, D) + self.dots(D, R)

    def matrix(self, values: np.ndarray) -> sp.csr_matrix:
        """The symmetric sparse ``n_j x n_j`` matrix with ``values`` (k,) on the pattern."""
        indptr, indices, perm = self.full
        return sp.csr_matrix((np.asarray(values)[perm], indices, indptr), shape=(self.size, self.size))


_KERNEL: list[Any] = []


def _kernel() -> Any:
    """The numba row-dot kernel ``out[k] = R[rows[k]] . S[cols[k]]`` (compiled once, cached on disk), or ``None``."""
    if not _KERNEL:
        try:
            from numba import njit
        except ImportError:  # pragma: no cover - numba is a dependency; numpy otherwise
            _KERNEL.append(None)
            return None

        @njit(cache=True, nogil=True)
        def rowdots(rows, cols, R, S, out):  # pragma: no cover - compiled
            r = R.shape[1]
            for k in range(rows.size):
                p, q = rows[k], cols[k]
                acc = 0.0
                for j in range(r):
                    acc += R[p, j] * S[q, j]
                out[k] = acc

        _KERNEL.append(rowdots)
    return _KERNEL[0]


def warm_kernel() -> None:
    """Compile (or load from numba's cache) the row-dot kernel with a tiny call."""
    kernel = _kernel()
    if kernel is not None:
        idx = np.zeros(1, np.int64)
        kernel(idx, idx, np.ones((1, 1)), np.ones((1, 1)), np.empty(1))


def _pattern(data: SdpData, j: int) -> BlockPattern:
    s = int(data.block_sizes[j])
    off = data.offsets
    Ab = data.A[:, off[j]:off[j + 1]].tocoo()
    cb = data.c[:, off[j]:off[j + 1]].tocoo()
    p_a, q_a = Ab.col // s, Ab.col % s
    p_c, q_c = cb.col // s, cb.col % s
    # fold both triangles onto p <= q: the symmetric part (A + A') / 2 at (p, q) is half the sum of
    # the two stored entries, on the diagonal the entry itself
    key_a = np.minimum(p_a, q_a) * s + np.maximum(p_a, q_a)
    key_c = np.minimum(p_c, q_c) * s + np.maximum(p_c, q_c)
    keys = np.unique(np.concatenate([key_a, key_c]))
    rows, cols = keys // s, keys % s
    half_a = np.where(p_a == q_a, 1.0, 0.5)
    half_c = np.where(p_c == q_c, 1.0, 0.5)
    M = sp.csr_matrix((Ab.data * half_a, (np.searchsorted(keys, key_a), Ab.row)), shape=(keys.size, data.m))
    M.sum_duplicates()
    c = np.bincount(np.searchsorted(keys, key_c), weights=cb.data * half_c, minlength=keys.size)
    weight = np.where(rows == cols, 1.0, 2.0)
    # the full symmetric matrix: every off-diagonal position twice
    off_diag = rows != cols
    idx = np.arange(keys.size)
    fr = np.concatenate([rows, cols[off_diag]])
    fc = np.concatenate([cols, rows[off_diag]])
    fk = np.concatenate([idx, idx[off_diag]])
    order = np.lexsort((fc, fr))
    fr, fc, fk = fr[order], fc[order], fk[order]
    indptr = np.concatenate([[0], np.cumsum(np.bincount(fr, minlength=s))]).astype(np.int64)
    return BlockPattern(size=s, rows=rows.astype(np.int64), cols=cols.astype(np.int64), weight=weight,
                        M=M.tocsr(), c=c, full=(indptr, fc.astype(np.int64), fk))


class Factored:
    """The operators of one :class:`SdpData` on factored points (built once per data, cached).

    Parameters
    ----------
    data : SdpData
    """

    def __init__(self, data: SdpData) -> None:
        self.data = data
        sizes = data.block_sizes
        self.psd = [j for j, s in enumerate(sizes) if s > 0]
        self.lp = [j for j, s in enumerate(sizes) if s < 0]
        self.patterns = [_pattern(data, j) for j in self.psd]
        starts = np.cumsum([0] + [sizes[j] for j in self.psd])
        self.row_slices = [slice(int(a), int(b)) for a, b in zip(starts[:-1], starts[1:])]
        self.n_psd = int(starts[-1])
        off = data.offsets
        lp_cols = [np.arange(off[j], off[j + 1]) for j in self.lp]
        cols = np.concatenate(lp_cols) if lp_cols else np.zeros(0, np.int64)
        self.n_lp = int(cols.size)
        self.A_lp = data.A[:, cols].tocsr() if cols.size else None
        self.c_lp = np.asarray(data.c[:, cols].todense()).ravel() if cols.size else np.zeros(0)

    @classmethod
    def of(cls, data: SdpData) -> "Factored":
        """The cached operators of ``data``."""
        if "factored" not in data._cache:
            data._cache["factored"] = cls(data)
        return data._cache["factored"]

    def blocks(self, R: np.ndarray) -> list[np.ndarray]:
        """``R_j`` of each PSD block (views of the stacked ``R``)."""
        return [R[s] for s in self.row_slices]

    def lp_part(self, x_lp: np.ndarray | None) -> np.ndarray:
        """The LP entries (zeros of length 0 without LP blocks); a missing ``x_lp`` with LP blocks is an error."""
        if self.n_lp == 0:
            return np.zeros(0)
        if x_lp is None:
            raise ValueError(f"the data have {self.n_lp} LP entries: a factored point needs x_lp")
        return np.asarray(x_lp, dtype=float).ravel()

    def A_op(self, R: np.ndarray, x_lp: np.ndarray | None = None) -> np.ndarray:
        """``A(R R') + A_lp x_lp``: (m,), in ``O(nnz(A) r)``."""
        out = np.zeros(self.data.m)
        for P, Rj in zip(self.patterns, self.blocks(R)):
            out += P.M.T @ (P.weight * P.dots(Rj))
        if self.A_lp is not None:
            out += self.A_lp @ self.lp_part(x_lp)
        return out

    def objective(self, R: np.ndarray, x_lp: np.ndarray | None = None) -> float:
        """``<C, R R'> + c_lp' x_lp``."""
        val = sum(float(P.c @ (P.weight * P.dots(Rj))) for P, Rj in zip(self.patterns, self.blocks(R)))
        if self.n_lp:
            val += float(self.c_lp @ self.lp_part(x_lp))
        return val

    def slack(self, y: np.ndarray) -> tuple[list[sp.csr_matrix], np.ndarray]:
        """``Z = C - A*(y)``: one sparse symmetric matrix per PSD block and the LP entries."""
        y = np.asarray(y, dtype=float)
        mats = [P.matrix(P.c - P.M @ y) for P in self.patterns]
        z_lp = self.c_lp - (self.A_lp.T @ y if self.A_lp is not None else 0.0)
        return mats, np.asarray(z_lp, dtype=float).ravel()

    def slack_error(self, y: np.ndarray) -> tuple[list[sp.csr_matrix], np.ndarray]:
        """A bound on the rounding error of each entry of the computed ``Z`` (Higham's ``gamma_k
        (|C| + |A|'|y|)``, ``k`` the most terms an entry sums, plus one), same layout as :meth:`slack`."""
        ay = np.abs(np.asarray(y, dtype=float))
        k = max([int(np.diff(P.M.indptr).max(initial=0)) for P in self.patterns] + [1]) + 1
        if self.A_lp is not None:
            k = max(k, int(np.diff(self.A_lp.tocsc().indptr).max(initial=0)) + 1)
        g = gamma(k)
        mats = [P.matrix(g * (np.abs(P.c) + abs(P.M) @ ay)) for P in self.patterns]
        e_lp = g * (np.abs(self.c_lp) + (abs(self.A_lp).T @ ay if self.A_lp is not None else 0.0))
        return mats, np.asarray(e_lp, dtype=float).ravel()

    def complementarity(self, R: np.ndarray, x_lp: np.ndarray | None, y: np.ndarray) -> float:
        """``<X, Z> = sum_j tr(R_j' Z_j R_j) + x_lp' z_lp``."""
        mats, z_lp = self.slack(y)
        val = sum(float(np.sum(Rj * (Zj @ Rj))) for Zj, Rj in zip(mats, self.blocks(R)))
        return val + float(self.lp_part(x_lp) @ z_lp) if self.n_lp else val

    def to_dense(self, R: np.ndarray, x_lp: np.ndarray | None = None) -> np.ndarray:
        """The stacked dense ``X`` of a factored point (small instances and tests only)."""
        parts, lp, k = [], self.lp_part(x_lp), 0
        Rs = iter(self.blocks(R))
        for s in self.data.block_sizes:
            if s > 0:
                Rj = next(Rs)
                parts.append((Rj @ Rj.T).ravel())
            else:
                parts.append(lp[k:k - s])
                k -= s
        return np.concatenate(parts)


def gamma(k: int) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error bound of a k-term floating-point sum."""
    u = np.finfo(float).eps / 2
    return k * u / (1 - k * u)


def is_factored(variables: dict[str, Any]) -> bool:
    """Whether a solution's variables are a factored point (``R`` given, no stacked ``X``)."""
    return "R" in variables and "X" not in variables


class FactoredSolver:
    """What the low-rank solvers returning factored points share: ``supports`` is "no skip reason",
    and the untimed warm-up compiles the row-dot kernel (:func:`warm_kernel`) once per worker."""

    def skip_reason(self, instance: Any) -> str | None:  # pragma: no cover - each solver states its own
        return None

    def supports(self, instance: Any) -> bool:
        return self.skip_reason(instance) is None

    def warm_up(self, instance: Any) -> None:
        """Compile the row-dot kernel on a tiny call (untimed, once per worker)."""
        warm_kernel()
