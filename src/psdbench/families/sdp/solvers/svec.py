"""svec conventions: the packed triangles SCS and Clarabel use for PSD cones.

Both scale off-diagonal entries by sqrt(2) so that ``svec(U)'svec(V) = <U, V>``:

* SCS: the lower triangle, column by column (``(0,0), (1,0), ..., (n-1,0), (1,1), ...``);
* Clarabel (``PSDTriangleConeT``): the upper triangle, column by column
  (``(0,0), (0,1), (1,1), (0,2), ...``).

:func:`svec_matrix` returns a sparse ``d x n^2`` matrix ``S`` with ``svec(X) = S vec(X)`` for a
symmetric ``X`` (row-major vec; each off-diagonal pair gets ``1/sqrt 2`` twice) and
``vec(X) = S' svec(X)`` (``S S' = I``).  :func:`stacked_svec` does the same for the stacked vector
of :mod:`.data`, LP blocks first (the cone order both solvers are given).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

SQRT2 = np.sqrt(2.0)


def svec_indices(n: int, order: str) -> tuple[np.ndarray, np.ndarray]:
    """Row and column index of each svec entry: ``order`` ``"scs"`` (lower, by column) or ``"clarabel"`` (upper, by column)."""
    if order == "scs":
        cols, rows = np.triu_indices(n)  # column j, rows i >= j, j outer: lower triangle by column
        return rows, cols
    if order == "clarabel":
        rows, cols = np.tril_indices(n)  # (i, j) with i >= j in row-major order ...
        return cols, rows  # ... read as (j, i): the upper triangle column by column
    raise ValueError(f"unknown svec order {order!r}")


def svec_matrix(n: int, order: str) -> sp.csr_matrix:
    """Sparse ``S`` (``n(n+1)/2 x n^2``) with ``svec(X) = S @ vec(X)`` (see the module docstring)."""
    r, c = svec_indices(n, order)
    d = r.size
    k = np.arange(d)
    diag = r == c
    w = np.where(diag, 1.0, 1.0 / SQRT2)
    rows = np.concatenate([k, k[~diag]])
    cols = np.concatenate([r * n + c, (c * n + r)[~diag]])
    vals = np.concatenate([w, w[~diag]])
    return sp.csr_matrix((vals, (rows, cols)), shape=(d, n * n))


def svec(X: np.ndarray, order: str) -> np.ndarray:
    """``svec`` of a symmetric matrix."""
    n = X.shape[0]
    r, c = svec_indices(n, order)
    return np.where(r == c, 1.0, SQRT2) * X[r, c]


def smat(v: np.ndarray, n: int, order: str) -> np.ndarray:
    """Inverse of :func:`svec`."""
    r, c = svec_indices(n, order)
    X = np.zeros((n, n))
    vals = np.where(r == c, 1.0, 1.0 / SQRT2) * np.asarray(v, dtype=float)
    X[r, c] = vals
    X[c, r] = vals
    return X


def stacked_svec(block_sizes: tuple[int, ...], order: str) -> tuple[sp.csr_matrix, int, list[int]]:
    """``T`` mapping a stacked vec to ``[LP entries of every LP block; svec of each PSD block]``.

    Returns ``T`` (``D x N``), the number of LP entries, and the PSD block orders in cone order.
    """
    widths = [s * s if s > 0 else -s for s in block_sizes]
    off = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    N = int(off[-1])
    pieces_lp, pieces_psd, psd = [], [], []
    for j, s in enumerate(block_sizes):
        if s < 0:
            pieces_lp.append(sp.csr_matrix((np.ones(-s), (np.arange(-s), off[j] + np.arange(-s))), shape=(-s, N)))
        else:
            S = svec_matrix(s, order).tocoo()
            pieces_psd.append(sp.csr_matrix((S.data, (S.row, S.col + off[j])), shape=(S.shape[0], N)))
            psd.append(s)
    n_lp = int(sum(-s for s in block_sizes if s < 0))
    T = sp.vstack(pieces_lp + pieces_psd, format="csr")
    return T, n_lp, psd
