"""Block-diagonal SDP data and its sparse operators.

The primal-dual pair (DIMACS form)::

    (P)  min <C, X>  s.t.  A(X) = b,  X psd
    (D)  max b'y     s.t.  A*(y) + Z = C,  Z psd

with ``X = diag(X_1, ..., X_k)`` block diagonal.  A block of signed size ``s`` is a symmetric
PSD block of order ``s`` when ``s > 0`` and a diagonal (LP) block of ``|s|`` nonnegative entries
when ``s < 0`` (SDPA's convention).

Layout: a point is stored as one vector ``x`` stacking, block by block, the full row-major
``vec(X_j)`` (``n_j^2`` entries) of a PSD block or the ``|s_j|`` diagonal entries of an LP block.
``A`` is a sparse ``m x N`` matrix whose row ``i`` is that vector of ``A_i`` (both triangles of a
PSD block), so ``A(X) = A @ x`` and ``A*(y) = A.T @ y``; ``C`` is a sparse vector of the same
length.  Nothing is densified except per-block matrices a caller asks for.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp


@dataclass(frozen=True)
class SdpData:
    """The data ``(C, A, b)`` of a block-diagonal SDP.

    Attributes
    ----------
    block_sizes : tuple of int
        Signed block sizes (negative: a diagonal / LP block of that many entries).
    A : scipy.sparse.csr_matrix of shape (m, N)
        Row ``i`` is the stacked vec of ``A_i`` (see the module docstring for the layout).
    b : ndarray of shape (m,)
    c : scipy.sparse.csr_matrix of shape (1, N)
        The stacked vec of ``C``.
    name : str
        Where the data came from (file name or generator), for messages.
    """

    block_sizes: tuple[int, ...]
    A: sp.csr_matrix
    b: np.ndarray
    c: sp.csr_matrix
    name: str = ""
    _cache: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)

    # -------------------------------------------------------------------------- layout
    @property
    def m(self) -> int:
        """Number of equality constraints."""
        return int(self.A.shape[0])

    @property
    def n(self) -> int:
        """Total matrix order ``sum |s_j|`` (SDPLIB's n)."""
        return int(sum(abs(s) for s in self.block_sizes))

    @property
    def offsets(self) -> np.ndarray:
        """Start of each block in the stacked vector: (k + 1,) int64, ``offsets[-1] = N``."""
        widths = [s * s if s > 0 else -s for s in self.block_sizes]
        return np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)

    @property
    def N(self) -> int:
        """Length ``N`` of the stacked vector (``sum n_j^2`` over PSD blocks plus the LP entries)."""
        return int(self.offsets[-1])

    # -------------------------------------------------------------------------- operators
    def A_op(self, x: np.ndarray) -> np.ndarray:
        """``A(X) = (<A_i, X>)_i``: stacked ``x`` (N,) -> (m,)."""
        return np.asarray(self.A @ x).ravel()

    def At_op(self, y: np.ndarray) -> np.ndarray:
        """``A*(y) = sum_i y_i A_i``: ``y`` (m,) -> stacked (N,)."""
        return np.asarray(self.A.T @ np.asarray(y, dtype=float)).ravel()

    def c_dense(self) -> np.ndarray:
        """``C`` as a dense stacked vector (N,) (cached)."""
        if "c" not in self._cache:
            self._cache["c"] = np.asarray(self.c.todense()).ravel()
        return self._cache["c"]

    def split(self, x: np.ndarray) -> list[np.ndarray]:
        """Blocks of a stacked (N,) vector: a list of (n_j, n_j) arrays (PSD blocks) and (|s_j|,) vectors (LP blocks)."""
        off = self.offsets
        out = []
        for j, s in enumerate(self.block_sizes):
            v = np.asarray(x[off[j]:off[j + 1]], dtype=float)
            out.append(v.reshape(s, s) if s > 0 else v)
        return out

    def stack(self, blocks: list[np.ndarray]) -> np.ndarray:
        """Inverse of :meth:`split`: a list of blocks -> stacked (N,) (an LP block as a vector or diagonal matrix)."""
        if len(blocks) != len(self.block_sizes):
            raise ValueError(f"{len(blocks)} blocks given, the data has {len(self.block_sizes)}")
        parts = []
        for blk, s in zip(blocks, self.block_sizes):
            B = np.asarray(blk, dtype=float)
            if s < 0 and B.ndim == 2:
                B = np.diag(B)
            want = (s, s) if s > 0 else (-s,)
            if B.shape != want:
                raise ValueError(f"block of shape {B.shape}, expected {want}")
            parts.append(B.ravel())
        return np.concatenate(parts) if parts else np.zeros(0)

    def C_blocks(self) -> list[np.ndarray]:
        """``C`` block by block, dense: a list of (n_j, n_j) arrays and (|s_j|,) vectors."""
        return self.split(self.c_dense())

    def A_block(self, i: int, j: int) -> sp.csr_matrix:
        """``A_i`` restricted to block ``j``: sparse (n_j, n_j) (an LP block as a diagonal matrix)."""
        off, s = self.offsets, self.block_sizes[j]
        row = self.A[i, off[j]:off[j + 1]]
        if s > 0:
            return sp.csr_matrix(row.toarray().reshape(s, s))
        return sp.diags(row.toarray().ravel()).tocsr()

    def inner(self, u: np.ndarray, v: np.ndarray) -> float:
        """``<U, V>`` of two stacked (N,) vectors (the trace inner product of the block matrices)."""
        return float(np.dot(u, v))

    def min_eigs(self, x: np.ndarray) -> np.ndarray:
        """Smallest eigenvalue of each block of a stacked (N,) vector: (k,) (an LP block's smallest entry)."""
        out = []
        for B, s in zip(self.split(x), self.block_sizes):
            if s > 0:
                out.append(float(np.linalg.eigvalsh((B + B.T) / 2)[0]) if s else 0.0)
            else:
                out.append(float(B.min()) if B.size else 0.0)
        return np.asarray(out)

    def identity(self) -> np.ndarray:
        """The identity as a stacked (N,) vector."""
        return self.stack([np.eye(s) if s > 0 else np.ones(-s) for s in self.block_sizes])

    def trace_bound(self, tol: float = 1e-12) -> float | None:
        """``tr(X)`` of every feasible ``X`` when the data fixes it, else ``None``.

        The trace is fixed when the identity lies in the range of ``A*``: ``I = A*(w)`` gives
        ``tr(X) = <A*(w), X> = w'b`` for every ``X`` with ``A(X) = b`` (max-cut: ``w = 1``, the
        diagonal unit constraints; theta: ``w = e_1``, the trace constraint).  ``w`` is read off
        single-entry diagonal rows where they cover the identity (:meth:`_diagonal_weights`), else found by
        sparse least squares (LSQR and two refinement passes on its residual) and accepted when
        ``||A*(w) - I||_inf <= tol * (1 + ||w||_inf)``.
        """
        if "trace" in self._cache:
            return self._cache["trace"]
        from scipy.sparse.linalg import lsqr

        eye = self.identity()
        At = self.A.T.tocsr()
        w0 = self._diagonal_weights(eye)
        w = np.zeros(self.m) if w0 is None else w0
        for _ in range(3 if w0 is None else 0):  # LSQR, then refinement on its residual (thetaG11: 4.7e-12 after one pass, 1e-16 after)
            w = w + lsqr(At, eye - self.At_op(w), atol=1e-15, btol=1e-15, iter_lim=max(100, 10 * self.m))[0]
        resid = float(np.max(np.abs(self.At_op(w) - eye))) if eye.size else 0.0
        ok = resid <= tol * (1 + float(np.max(np.abs(w), initial=0.0)))
        bound = float(w @ self.b) if ok else None
        self._cache["trace"], self._cache["trace_w"] = bound, (w if ok else None)
        return bound

    def _diagonal_weights(self, eye: np.ndarray) -> np.ndarray | None:
        """``w`` with ``A*(w) = I`` exactly where every identity position has a constraint of its
        own with that single stored entry (``diag(X) = b`` rows: max-cut, thetaG): ``w_i = 1 / a_i``
        on those rows, 0 elsewhere; else ``None`` (LSQR then).  thetaG51: no LSQR (12 s at load 12)."""
        A = self.A.tocsr()
        single = np.flatnonzero(np.diff(A.indptr) == 1)
        if single.size == 0:
            return None
        cols, vals = A.indices[A.indptr[single]], A.data[A.indptr[single]]
        pos = np.flatnonzero(eye)
        keep = np.isin(cols, pos) & (vals != 0)
        cols, vals, rows = cols[keep], vals[keep], single[keep]
        _, first = np.unique(cols, return_index=True)
        if first.size != pos.size:
            return None
        w = np.zeros(self.m)
        w[rows[first]] = 1.0 / vals[first]
        return w

    def trace_weights(self) -> np.ndarray | None:
        """The ``w`` with ``A*(w) = I`` (to rounding) behind :meth:`trace_bound`, ``None`` where there is none."""
        self.trace_bound()
        return self._cache["trace_w"]

    def norm_b_inf(self) -> float:
        """``||b||_inf``."""
        return float(np.max(np.abs(self.b), initial=0.0))

    def norm_C_inf(self) -> float:
        """``||C||_inf``: the largest absolute entry of ``C``."""
        return float(np.max(np.abs(self.c.data), initial=0.0))


def from_blocks(block_sizes: tuple[int, ...] | list[int], C: list[Any], A: list[list[Any]], b: Any,
                name: str = "") -> SdpData:
    """Build :class:`SdpData` from per-block matrices (for generators and tests).

    Parameters
    ----------
    block_sizes : sequence of int
        Signed block sizes.
    C : list
        One entry per block: a symmetric matrix (PSD block) or a vector (LP block); dense or sparse.
    A : list of list
        ``A[i][j]``: block ``j`` of ``A_i`` (``None`` for zero).
    b : array_like of shape (m,)
    """
    sizes = tuple(int(s) for s in block_sizes)
    widths = [s * s if s > 0 else -s for s in sizes]
    off = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)

    def vec(blk: Any, j: int) -> sp.csr_matrix:
        if blk is None:
            return sp.csr_matrix((1, widths[j]))
        if sp.issparse(blk):
            blk = blk.toarray()
        B = np.asarray(blk, dtype=float)
        if sizes[j] < 0 and B.ndim == 2:
            B = np.diag(B)
        return sp.csr_matrix(B.reshape(1, -1))

    c = sp.hstack([vec(C[j], j) for j in range(len(sizes))], format="csr") if sizes else sp.csr_matrix((1, 0))
    rows = [sp.hstack([vec(Ai[j], j) for j in range(len(sizes))], format="csr") for Ai in A]
    Amat = sp.vstack(rows, format="csr") if rows else sp.csr_matrix((0, int(off[-1])))
    Amat.eliminate_zeros()
    c.eliminate_zeros()
    return SdpData(block_sizes=sizes, A=Amat, b=np.asarray(b, dtype=float).ravel(), c=c, name=name)
