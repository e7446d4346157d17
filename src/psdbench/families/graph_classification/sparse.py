"""Sparse matrices of the graph-classification family: no array of n x n entries anywhere.

Paper: "Projection-free Graph-based Classifier Learning using Gershgorin Disc Perfect Alignment"
(../shared/papers/gdpa-graph-classifier-sdp.txt), sections 4.1-4.3 (the dense versions of every
matrix here are methods of :class:`~.instance.GraphClassificationInstance`, used below the
instance's ``dense_n``).

``knn_laplacian``     kNN similarity graph (section 6.1) from scikit-learn's neighbour search and its Laplacian
``reduced_sdp``       ``(Q, const)`` of the reduced SDP, Q sparse
``split_matrix``      H-bar of the reduced dual (homogenizing node split), sparse
``harmonic``          label propagation (harmonic function) by sparse conjugate gradients
``certify``           the O(nnz) Gershgorin certificate of H-bar from a scaling vector, else a
                      LOBPCG estimate with its residual
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.sparse.linalg import cg

from psdbench.linalg.psd import gershgorin_left_end, min_eig_estimate


def knn_laplacian(F: np.ndarray, k: int) -> sp.csr_matrix:
    """``L = D - W`` of the symmetrized kNN graph, ``w_ij = exp(-||f_i - f_j||^2)`` (section 6.1).

    An edge joins i and j when either is among the other's ``k`` nearest neighbours (the same
    graph as the dense builder).  Squared distances are recomputed from the rows of each stored
    pair (O(n k d)); nothing of size n x n is formed.
    """
    n = F.shape[0]
    kk = min(k, n - 1)
    from sklearn.neighbors import NearestNeighbors  # here: importing the family needs no scikit-learn

    _, ind = NearestNeighbors(n_neighbors=kk + 1).fit(F).kneighbors(F)
    rows = np.repeat(np.arange(n), kk + 1)
    cols = ind.ravel()
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    d2 = np.sum((F[rows] - F[cols]) ** 2, axis=1)
    W = sp.coo_matrix((np.exp(-d2), (rows, cols)), shape=(n, n)).tocsr()
    W.sum_duplicates()
    W = W.maximum(W.T).tocsr()  # either end's neighbour list; both directions carry the same weight
    return (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocsr()


def reduced_sdp(L: sp.csr_matrix, m: int, xhat: np.ndarray) -> tuple[sp.csr_matrix, float]:
    """``Q = [[L_UU, c], [c', 0]]``, ``c = L_UL xhat``, ``const = xhat' L_LL xhat`` (sparse).

    The equivalence with (8) is proved at :meth:`GraphClassificationInstance.reduced_sdp`.
    """
    L = sp.csr_matrix(L)
    L_UU = L[m:, m:]
    c = L[m:, :m] @ xhat
    const = float(xhat @ (L[:m, :m] @ xhat))
    col = sp.csr_matrix(c[:, None])
    Q = sp.bmat([[L_UU, col], [col.T, None]], format="csr")
    Q.eliminate_zeros()
    return Q, const


def split_matrix(Q: sp.csr_matrix, y: np.ndarray, eps: float) -> sp.csr_matrix:
    """H-bar of the reduced dual (size |U|+2): t+ keeps the edges ``c_i < 0``, t- those ``c_i > 0``.

    Diagonals ``y_t/2 - eps`` and ``y_t/2 + eps``; Lemma 1's argument gives H-bar PSD => Q + diag(y)
    PSD (see :meth:`GraphClassificationInstance.reduced_split_matrix`).
    """
    u = Q.shape[0] - 1
    c = np.asarray(Q[:u, u].todense()).ravel()
    plus = sp.csr_matrix(np.where(c < 0, c, 0.0)[:, None])
    minus = sp.csr_matrix(np.where(c > 0, c, 0.0)[:, None])
    corner = sp.diags([0.5 * y[u] - eps, 0.5 * y[u] + eps])
    H = sp.bmat([[Q[:u, :u] + sp.diags(y[:u]), sp.hstack([plus, minus])],
                 [sp.vstack([plus.T, minus.T]), corner]], format="csr")
    H.eliminate_zeros()
    return H


@dataclass
class Harmonic:
    """Label propagation ``f_U = -L_UU^-1 L_UL xhat`` and how it was computed."""

    f: np.ndarray
    seconds: float
    iterations: int
    residual: float


def harmonic(L: sp.csr_matrix, m: int, xhat: np.ndarray, rtol: float = 1e-8) -> Harmonic:
    """Harmonic function (Zhu et al.) by Jacobi-preconditioned CG on ``L_UU + 1e-10 I``.

    The ridge is the dense baseline's (components without a labelled node get ``f = 0``: the
    right-hand side vanishes there, so CG's iterates stay 0).  ``residual`` is the relative residual
    reached; the time is the solve's alone (slicing included).
    """
    t0 = time.perf_counter()
    L = sp.csr_matrix(L)
    A = (L[m:, m:] + 1e-10 * sp.identity(L.shape[0] - m, format="csr")).tocsr()
    b = -(L[m:, :m] @ xhat)
    d = A.diagonal()
    M = sp.diags(1.0 / np.where(d > 0, d, 1.0))
    its = [0]

    def count(_: np.ndarray) -> None:
        its[0] += 1

    f, _ = cg(A, b, rtol=rtol, atol=0.0, maxiter=20 * A.shape[0], M=M, callback=count)
    bn = float(np.linalg.norm(b)) or 1.0
    res = float(np.linalg.norm(A @ f - b)) / bn
    return Harmonic(f=f, seconds=time.perf_counter() - t0, iterations=its[0], residual=res)


@dataclass
class Certificate:
    """A lower bound on ``lambda_min(H-bar)`` and how it was obtained.

    ``kind`` is ``"gershgorin"`` (proven: the smallest disc left end of ``S H-bar S^-1``) or
    ``"lobpcg"`` (an estimate: Ritz value minus residual, which bounds *an* eigenvalue but is not
    proven to bound the smallest one).
    """

    bound: float
    kind: str
    gershgorin: float
    residual: float = float("nan")


def certify(Hbar: sp.csr_matrix, s: np.ndarray | None, tol: float) -> Certificate:
    """Gershgorin certificate of ``Hbar`` with scaling ``s`` in O(nnz); LOBPCG where it fails.

    The disc check fails when the left end is below ``-tol`` (or ``s`` is missing); then the row
    records a LOBPCG estimate ``theta - ||H u - theta u||`` instead.
    """
    g = gershgorin_left_end(Hbar, s) if s is not None else float("-inf")
    if g >= -tol:
        return Certificate(bound=g, kind="gershgorin", gershgorin=g)
    est = min_eig_estimate(Hbar, None if s is None else 1.0 / np.asarray(s, float))
    return Certificate(bound=est.theta - est.residual, kind=est.method, gershgorin=g, residual=est.residual)
