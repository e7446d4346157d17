"""Row sums of ``|M - L D L^T|`` on the pattern of ``L`` (numba), for :mod:`.certify`.

``P = L D L^T`` is computed left-looking, column ``j`` of its lower triangle as
``sum_{k <= j, l_jk != 0} (l_jk d_k) L[j:, k]``: every entry it touches lies in the pattern of ``L``
(the rows of a column of ``L`` form a clique of the filled graph), so ``P``'s lower triangle is one
array aligned with ``L``'s CSC data, and the work is the factorization's, ``sum_k c_k^2 / 2``.  A
pointer per column walks its rows in increasing order (``L``'s row indices sorted), the standard
left-looking Cholesky device.  Each entry of ``P`` is a sum of at most ``k`` products of three
factors (``k`` the most nonzeros of a row of ``L``), in some order: the rounding bound of
:mod:`.certify` uses ``gamma_{k+2}``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

try:
    from numba import njit
except ImportError:  # pragma: no cover
    njit = None


def _rowsums_py(n, cp, ci, cx, rp, rc, rx, d, mp, mi, mx):
    nnz = cp[n]
    P = np.zeros(nnz)
    nxt = cp[:n].copy()  # next unvisited entry of each column (its row >= the current target column)
    pos = np.full(n, -1, dtype=np.int64)
    rowR = np.zeros(n)
    Mv = np.zeros(nnz)
    for j in range(n):
        for p in range(cp[j], cp[j + 1]):
            pos[ci[p]] = p
        for q in range(rp[j], rp[j + 1]):  # row j of L: the columns k <= j with l_jk != 0
            k = rc[q]
            f = rx[q] * d[k]
            s = nxt[k]  # the entry (j, k) of column k
            for p in range(s, cp[k + 1]):
                P[pos[ci[p]]] += f * cx[p]
            nxt[k] = s + 1
        for p in range(mp[j], mp[j + 1]):  # M's lower triangle in column j
            i = mi[p]
            if i >= j:
                if pos[i] >= 0 and ci[pos[i]] == i and pos[i] >= cp[j] and pos[i] < cp[j + 1]:
                    Mv[pos[i]] = mx[p]
                else:  # an entry of M outside L's pattern (dropped by the factorization): all residual
                    a = abs(mx[p])
                    rowR[i] += a
                    if i != j:
                        rowR[j] += a
        for p in range(cp[j], cp[j + 1]):
            pos[ci[p]] = -1
    for j in range(n):
        for p in range(cp[j], cp[j + 1]):
            i = ci[p]
            a = abs(Mv[p] - P[p])
            rowR[i] += a
            if i != j:
                rowR[j] += a
    return rowR


_rowsums = njit(cache=True)(_rowsums_py) if njit is not None else _rowsums_py


def residual_rowsums(M: sp.spmatrix, L: sp.csc_matrix, d: np.ndarray) -> np.ndarray:
    """``|fl(M - fl(L D L^T))| 1`` (the computed residual's row sums, both triangles) for symmetric ``M``.

    Parameters
    ----------
    M : sparse (n, n), symmetric, in the ordering of ``L``
    L : csc_matrix, unit lower triangular
    d : ndarray (n,)
    """
    n = M.shape[0]
    L = sp.csc_matrix(L)
    L.sort_indices()
    Lr = L.tocsr()
    Lr.sort_indices()
    Mc = sp.csc_matrix(M)
    Mc.sort_indices()
    i64 = np.int64
    return _rowsums(i64(n), L.indptr.astype(i64), L.indices.astype(i64), L.data.astype(float),
                    Lr.indptr.astype(i64), Lr.indices.astype(i64), Lr.data.astype(float), np.asarray(d, dtype=float),
                    Mc.indptr.astype(i64), Mc.indices.astype(i64), Mc.data.astype(float))
