"""A fill-reducing ordering and the exact fill of its Cholesky factor, before any factorization.

Used by :mod:`.certify` where the cheap bound on the fill (the reverse Cuthill-McKee envelope) is
too large: on a 2-D grid of ``n`` nodes the envelope grows like ``n^1.5`` (1.3e9 nonzeros on a
1000 x 1000 torus) while a nested-dissection factor has ``O(n log n)`` nonzeros (George, "Nested
dissection of a regular finite element mesh", SIAM J. Numer. Anal. 10, 1973; 4.4e7 on that torus).

- :func:`envelope_size`: the reverse Cuthill-McKee envelope, an O(nnz) bound on the fill of a
  factor in that order (the certificate's first check).
- :func:`nested_dissection` orders by METIS's multilevel nested dissection (``pymetis``);
  :func:`dissection_within` returns that ordering only when its exact fill fits a budget.
- :func:`cholesky_fill` counts the nonzeros of the Cholesky factor ``L`` of a symmetric pattern in
  its given order, exactly, in ``O(nnz(L))`` time and ``O(n)`` memory, and stops as soon as the
  count passes a budget, so a factor that cannot fit is refused in about the time of counting the
  budget.  The count is the standard one through the elimination tree (Liu, "The role of
  elimination trees in sparse factorization", SIAM J. Matrix Anal. Appl. 11, 1990):

  * the elimination tree: ``parent(j) = min { i > j : l_ij != 0 }``, built row by row with path
    compression over the entries ``a_kj`` (``j < k``) of row ``k`` (Liu, Algorithm 4.2);
  * row ``k`` of ``L`` has a nonzero in column ``j < k`` exactly when ``j`` lies on the tree path
    from some ``i`` with ``a_ki != 0`` up to ``k`` (the row subtree, Liu, Theorem 3.3); walking each
    such path until a node already marked for row ``k`` visits every nonzero of row ``k`` once.

The count equals the nonzeros SuperLU's ``L`` has when it factors the permuted matrix in its
natural order with no pivoting (the certificate's call): the tests check both on grids and random
graphs.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

try:
    from numba import njit
except ImportError:  # pragma: no cover
    njit = None


def _fill_py(n, indptr, indices, budget):
    parent = np.full(n, -1, dtype=np.int64)
    ancestor = np.full(n, -1, dtype=np.int64)  # path-compressed ancestors (Liu, Algorithm 4.2)
    for k in range(n):
        for p in range(indptr[k], indptr[k + 1]):
            i = indices[p]
            while i != -1 and i < k:
                nxt = ancestor[i]
                ancestor[i] = k
                if nxt == -1:
                    parent[i] = k
                i = nxt
    mark = np.full(n, -1, dtype=np.int64)
    total = n  # the diagonal
    for k in range(n):
        mark[k] = k
        for p in range(indptr[k], indptr[k + 1]):
            i = indices[p]
            if i >= k:
                continue
            while mark[i] != k:  # up the row subtree of row k (Liu, Theorem 3.3)
                mark[i] = k
                total += 1
                i = parent[i]
            if total > budget:
                return -1
    return total


_fill = njit(cache=True)(_fill_py) if njit is not None else _fill_py


def cholesky_fill(M: sp.spmatrix, budget: int | None = None) -> int | None:
    """Nonzeros of the Cholesky factor ``L`` (diagonal included) of symmetric ``M`` in its order.

    Parameters
    ----------
    M : sparse (n, n)
        Its pattern is read, assumed symmetric (both triangles stored or not: the lower one is used
        through the rows' entries left of the diagonal, so a matrix with only the upper triangle
        stored must be symmetrised first).
    budget : int, optional
        Stop counting past this many nonzeros.

    Returns
    -------
    int or None
        The exact count, or None when it exceeds ``budget``.
    """
    n = M.shape[0]
    A = sp.csr_matrix(M)
    A = (A + A.T).tocsr() if (A != A.T).nnz else A  # the pattern of both triangles
    i64 = np.int64
    cap = np.iinfo(np.int64).max if budget is None else int(budget)
    total = _fill(i64(n), A.indptr.astype(i64), A.indices.astype(i64), i64(cap))
    return None if total < 0 else int(total)


def nested_dissection(M: sp.spmatrix) -> np.ndarray:
    """METIS's nested-dissection ordering of the graph of symmetric ``M`` (diagonal ignored).

    Returns
    -------
    ndarray of int
        ``perm`` with ``M[perm][:, perm]`` the reordered matrix.

    Raises
    ------
    ImportError
        When ``pymetis`` is not installed.
    """
    import pymetis

    A = sp.csr_matrix(M, copy=True)
    A.setdiag(0)
    A.eliminate_zeros()
    A = (abs(A) + abs(A.T)).tocsr()
    A.sort_indices()
    n = A.shape[0]
    if A.nnz == 0:
        return np.arange(n)
    perm, _ = pymetis.nested_dissection(pymetis.CSRAdjacency(A.indptr.astype(np.int64), A.indices.astype(np.int64)))
    return np.asarray(perm, dtype=np.int64)


def envelope_size(M: sp.spmatrix) -> int:
    """Nonzeros of the lower envelope (profile) of ``M`` in reverse Cuthill-McKee order.

    The fill of a Cholesky factor in that order lies inside its envelope, so this is an upper bound
    on the fill reachable (the minimum-degree order used is in practice no worse); it is computed
    in O(nnz) before any factorization, to refuse one that cannot fit.
    """
    from scipy.sparse.csgraph import reverse_cuthill_mckee

    p = reverse_cuthill_mckee(M.tocsr(), symmetric_mode=True)
    P = M.tocsr()[p][:, p].tocoo()
    first = np.arange(M.shape[0])
    np.minimum.at(first, P.row, P.col)
    return int(np.sum(np.arange(M.shape[0]) - first + 1))


def dissection_within(M: sp.spmatrix, max_fill: int, why: str) -> tuple[np.ndarray | None, str]:
    """A nested-dissection ordering of ``M`` whose Cholesky factor has at most ``max_fill`` nonzeros
    (counted exactly before any factorization), or None with the reason: ``why`` (the caller's
    account of what refused the cheaper ordering) and what refused this one.

    Returns
    -------
    perm : ndarray or None
    reason : str
        Empty with a permutation.
    """
    try:
        perm = nested_dissection(M)
    except ImportError:
        return None, why + "; no nested-dissection ordering (pymetis is not installed)"
    fill = cholesky_fill(sp.csr_matrix(M)[perm][:, perm], budget=max_fill)
    if fill is None:
        return None, why + f"; a nested-dissection factor would have more than {max_fill} nonzeros"
    return perm, ""
