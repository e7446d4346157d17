"""Gershgorin disc perfect alignment (GDPA) kernels shared by every GDPA solver.

GDPA (SGML paper, Theorem 3; graph-classifier paper, eq. (4)): for the generalized Laplacian ``A``
of a balanced, connected signed graph with first eigenvector ``v``, the similarity transform
``S A S^-1`` with ``S = diag(1 / v_i)`` has every Gershgorin disc left end at ``lambda_min(A)``.

A matrix that is balanced but *disconnected* is handled per connected component (SGML paper,
section 5.3): each component gets the first eigenvector of its own block, normalized to unit
length, so the alignment holds inside every component.  Entries of ``|v|`` are floored at a tiny
fraction of the component's largest entry, so ``s_i = 1 / v_i`` is always defined.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.linalg import LinAlgError
from scipy.linalg.lapack import dsyevr, dsyevr_lwork
from scipy.sparse.csgraph import connected_components
from scipy.sparse.linalg import lobpcg

#: Below this size a component's eigenvector comes from dense LAPACK (LOBPCG needs n >> block size).
DENSE_BELOW = 48


@dataclass
class FirstEig:
    """First eigenpair(s) of a (possibly disconnected) symmetric matrix.

    Attributes
    ----------
    lam_min : float
        Smallest eigenvalue over all components.
    v : ndarray
        Concatenated per-component first eigenvectors (each of unit norm).
    n_components : int
    lobpcg_iters : int
        LOBPCG iterations spent (0 where dense LAPACK was used).
    """

    lam_min: float
    v: np.ndarray
    n_components: int
    lobpcg_iters: int


def _dense_first(A: np.ndarray) -> tuple[float, np.ndarray]:
    """Smallest eigenpair of a small dense symmetric ``A`` by LAPACK ``dsyevr``.

    The call ``scipy.linalg.eigh(A, subset_by_index=[0, 0], driver="evr")`` makes (same workspace
    sizes, so the same numbers), without that wrapper's per-call argument handling, which costs
    more than the LAPACK call itself on the components of a few nodes that block coordinate
    methods solve thousands of times.
    """
    A = np.asarray(A, dtype=float)
    if not np.isfinite(A).all():
        raise ValueError("array must not contain infs or NaNs")
    lwork, liwork, info = dsyevr_lwork(A.shape[0], lower=1)
    w, z, _, _, info = dsyevr(A, compute_v=1, range="I", lower=1, il=1, iu=1, lwork=int(lwork),
                              liwork=int(liwork))
    if info != 0:
        raise LinAlgError(f"dsyevr failed (info = {info})")
    return float(w[0]), z[:, 0]


def _pattern(A: np.ndarray) -> sp.csr_matrix:
    """Nonzero pattern of dense ``A`` as a CSR matrix of ones (the graph whose components are split).

    ``np.nonzero`` of a 2-D array is several times slower than of the flat boolean mask; the flat
    indices come in row-major order, so the CSR arrays are built directly, with no sort.
    """
    n = A.shape[0]
    r, c = np.divmod(np.flatnonzero(A.ravel() != 0), n)
    indptr = np.zeros(n + 1, dtype=np.intp)
    np.cumsum(np.bincount(r, minlength=n), out=indptr[1:])
    return sp.csr_matrix((np.ones(len(c)), c, indptr), shape=(n, n))


def first_eigvec(
    A: np.ndarray,
    v0: np.ndarray | None = None,
    tol: float = 1e-4,
    maxiter: int = 200,
    cache: dict | None = None,
    jacobi: bool = False,
) -> FirstEig:
    """First eigenvector of each connected component of ``A`` (warm-started LOBPCG).

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n, n)
        Symmetric matrix (a generalized graph Laplacian).  A sparse ``A`` is never densified
        (only components smaller than ``DENSE_BELOW`` are), and ``tol=0`` then applies per
        component only to those.
    v0 : ndarray of shape (n,), optional
        Warm start (the previous iterate's eigenvector); graph-classifier paper section 5.1.
    tol, maxiter : float, int
        LOBPCG tolerance and iteration cap (paper: 1e-4 and 200).  ``tol=0`` asks for dense LAPACK.
    cache : dict, optional
        The caller's memo of small components' dense eigenpairs, keyed by the component's nodes
        and entries: when a block coordinate method changes one row, the other components are
        looked up instead of recomputed.
    jacobi : bool
        Precondition LOBPCG with ``diag(A)^-1`` (where the diagonal is positive): on large sparse
        graph Laplacians it converges in tens of iterations where the plain method stalls.
    """
    n = A.shape[0]
    sparse = sp.issparse(A)
    if sparse:  # no dense copy: components of the stored pattern, blocks sliced sparse
        A = sp.csr_matrix(A)
        pattern = A
        diag = A.diagonal()
    else:
        pattern = _pattern(A)
        diag = np.diag(A)
    n_comp, comp = connected_components(pattern, directed=False)
    v = np.zeros(n)
    iters = 0
    rng = np.random.default_rng(0)
    sizes = np.bincount(comp, minlength=n_comp)
    single = sizes[comp] == 1  # isolated nodes: eigenpair (A_ii, e_i), all at once
    v[single] = 1.0
    lam = float(np.min(diag[single])) if single.any() else np.inf
    order = np.argsort(comp, kind="stable")
    starts = np.concatenate([[0], np.cumsum(sizes)])
    for c in np.flatnonzero(sizes > 1):
        idx = order[starts[c]:starts[c + 1]]
        block = A[idx][:, idx] if sparse else A[idx[:, None], idx]
        dense_here = len(idx) < DENSE_BELOW or (tol == 0 and not sparse)
        if sparse and dense_here:
            block = block.toarray()  # a small component only
        if dense_here:
            key = (idx.tobytes(), block.tobytes()) if cache is not None else None
            hit = cache.get(key) if key is not None else None
            if hit is None:
                hit = _dense_first(block)
                if key is not None:
                    cache[key] = hit
            lam_c, vec = hit
        else:
            x0 = v0[idx] if v0 is not None else rng.standard_normal(len(idx))
            if not np.any(x0):
                x0 = rng.standard_normal(len(idx))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                d = block.diagonal() if jacobi else None
                M = sp.diags(1.0 / d) if d is not None and np.all(d > 0) else None
                w, V, hist = lobpcg(block, x0[:, None], M=M, tol=tol or 1e-8, maxiter=maxiter, largest=False,
                                    retResidualNormsHistory=True)
            iters += len(hist)
            lam_c, vec = float(w[0]), V[:, 0]
            if not np.all(np.isfinite(vec)):
                if sparse:
                    raise FloatingPointError("LOBPCG returned a non-finite eigenvector on a sparse block")
                lam_c, vec = _dense_first(block)
        vec = vec / (np.sqrt(vec @ vec) or 1.0)  # np.linalg.norm's own formula, without its checks
        v[idx] = vec
        lam = min(lam, lam_c)
    return FirstEig(lam_min=float(lam), v=v, n_components=int(n_comp), lobpcg_iters=iters)


def magnitudes(v: np.ndarray, floor: float = 1e-10) -> np.ndarray:
    """``|v_i|`` floored at ``floor * max|v|``: the GDPA scalars are ``s_i = 1 / v_i``."""
    a = np.abs(v)
    return np.maximum(a, floor * (a.max() if a.size else 1.0))


def gershgorin_left_ends(A: np.ndarray, v: np.ndarray | None = None) -> np.ndarray:
    """Gershgorin disc left ends of ``S A S^-1`` with ``S = diag(1 / v)`` (eq. (4)).

    Entry ``(i, j)`` of the transform is ``v_j A_ij / v_i``; with ``v=None`` the plain discs of ``A``.
    """
    a = np.ones(A.shape[0]) if v is None else magnitudes(v)
    off = np.abs(A) * (a[None, :] / a[:, None])
    np.fill_diagonal(off, 0.0)
    return np.diag(A) - off.sum(axis=1)
