"""Graphs of the max-cut family: the cost matrix, cut values, maxG files, seeded generators.

A graph is a scipy.sparse symmetric weighted adjacency matrix ``W`` (n x n, zero diagonal, float
weights of either sign), the dataset payload key ``"graph"``.  The SDP's cost is
``C = L / 4 = (Diag(W 1) - W) / 4``, so ``<C, x x^T> = cut(x)`` for ``x`` in ``{-1, 1}^n``.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from psdbench.api import DataError


def check_graph(W: sp.spmatrix, name: str = "graph") -> sp.csr_matrix:
    """``W`` as canonical CSR after checking it is square, finite, exactly symmetric, zero-diagonal."""
    if not sp.issparse(W):
        raise DataError(f"{name}: payload 'graph' must be a scipy.sparse matrix, got {type(W).__name__}")
    W = sp.csr_matrix(W, dtype=float, copy=True)  # the harness hands datasets read-only
    W.sum_duplicates()
    W.eliminate_zeros()
    if W.shape[0] != W.shape[1]:
        raise DataError(f"{name}: adjacency of shape {W.shape} is not square")
    if not np.all(np.isfinite(W.data)):
        raise DataError(f"{name}: adjacency has non-finite weights")
    if W.diagonal().any():
        raise DataError(f"{name}: adjacency has self-loops (nonzero diagonal)")
    D = (W - W.T).tocsr()
    D.eliminate_zeros()
    if D.nnz:
        raise DataError(f"{name}: adjacency is not symmetric ({D.nnz} asymmetric entries)")
    W.sort_indices()
    return W


def laplacian_cost(W: sp.csr_matrix) -> sp.csr_matrix:
    """``C = (Diag(W 1) - W) / 4`` (CSR, sorted indices, the diagonal stored)."""
    deg = np.asarray(W.sum(axis=1)).ravel()
    C = (sp.diags(deg) - W).tocsr() * 0.25
    C.sort_indices()
    return C


def cut_value(W: sp.csr_matrix, x: np.ndarray) -> float:
    """Total weight of edges ``{i, j}`` with ``x_i != x_j`` (each undirected edge once)."""
    s = np.asarray(x) > 0
    Wc = sp.triu(W, k=1).tocoo()
    return float(Wc.data[s[Wc.row] != s[Wc.col]].sum())


def graph_from_sdp(data, name: str = "sdp") -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """``(W, C)`` of a max-cut SDP read from an SDPA file (SDPLIB maxG: one PSD block, ``F_i = e_i e_i^T``).

    The SDPA file states ``max <F_0, Y> s.t. Y_ii = 1``; the sdp family stores ``C = -F_0``
    (:mod:`psdbench.families.sdp.sdpa_io`).  ``C`` here is ``F_0``, rebuilt from the sparse stacked
    vector without densifying; ``W = -4 offdiag(F_0)``.  When ``F_0`` is not ``L(W) / 4`` (its diagonal
    differs from the row sums), ``C`` stays ``F_0`` and is what the instance uses.
    """
    sizes = tuple(data.block_sizes)
    if len(sizes) != 1 or sizes[0] <= 0:
        raise DataError(f"{name}: a max-cut SDP has one PSD block, this one has blocks {sizes}")
    n = sizes[0]
    A = data.A.tocsr()
    if A.shape[0] != n or not np.allclose(np.asarray(data.b), 1.0, rtol=0, atol=0):
        raise DataError(f"{name}: not diag(X) = 1 (m = {A.shape[0]}, n = {n})")
    Acoo = A.tocoo()
    r, c = np.divmod(Acoo.col, n)
    if Acoo.nnz != n or np.any(r != c) or np.any(Acoo.data != 1.0) or np.any(np.sort(r) != np.arange(n)):
        raise DataError(f"{name}: constraints are not F_i = e_i e_i^T")
    cv = data.c.tocoo()
    rows, cols = np.divmod(cv.col, n)
    F0 = sp.csr_matrix((-cv.data, (rows, cols)), shape=(n, n))  # C_sdp = -F0
    F0.sum_duplicates()
    F0.eliminate_zeros()
    F0.sort_indices()
    off = (F0 - sp.diags(F0.diagonal())).tocsr()
    off.eliminate_zeros()
    W = check_graph(-4.0 * off, name)
    return W, F0


def random_graph(n: int, density: float, seed: int, weights: str = "one") -> sp.csr_matrix:
    """Erdos-Renyi ``G(n, p)`` with ``p = density`` (edges drawn by count, O(m) memory), weights 1 or +-1."""
    rng = np.random.default_rng(seed)
    m = int(rng.binomial(n * (n - 1) // 2, density))
    i = rng.integers(0, n, size=2 * m + 16)
    j = rng.integers(0, n, size=2 * m + 16)
    keep = i < j
    key = np.unique(i[keep].astype(np.int64) * n + j[keep])[:m]
    i, j = np.divmod(key, n)
    w = np.ones(len(i)) if weights == "one" else rng.choice([-1.0, 1.0], size=len(i))
    U = sp.csr_matrix((w, (i, j)), shape=(n, n))
    return check_graph(U + U.T)


def torus_graph(rows: int, cols: int, seed: int, weights: str = "pm1") -> sp.csr_matrix:
    """2-D toroidal grid ``rows x cols`` (Gset's G48-G50, G57, G62-G81 class), weights +-1 (or 1)."""
    rng = np.random.default_rng(seed)
    idx = np.arange(rows * cols).reshape(rows, cols)
    i = np.concatenate([idx.ravel(), idx.ravel()])
    j = np.concatenate([np.roll(idx, -1, axis=1).ravel(), np.roll(idx, -1, axis=0).ravel()])
    w = rng.choice([-1.0, 1.0], size=len(i)) if weights == "pm1" else np.ones(len(i))
    U = sp.csr_matrix((w, (i, j)), shape=(rows * cols,) * 2)
    return check_graph(U + U.T)


def torus_shape(n: int) -> tuple[int, int]:
    """A ``rows x cols`` grid with ``rows * cols = n``, ``rows`` the largest divisor at most ``sqrt(n / 2)``
    (G81's 100 x 200 at n = 20,000), each side >= 3."""
    best = None
    for r in range(3, int(np.sqrt(n / 2)) + 1):
        if n % r == 0:
            best = (r, n // r)
    if best is None:
        raise DataError(f"torus: n = {n} has no factorization rows x cols with both >= 3")
    return best


GENERATORS = ("random", "random-pm1", "torus")


def generate(kind: str, n: int, density: float, seed: int) -> sp.csr_matrix:
    """A seeded graph of one of :data:`GENERATORS`."""
    if kind == "random":
        return random_graph(n, density, seed, "one")
    if kind == "random-pm1":
        return random_graph(n, density, seed, "pm1")
    if kind == "torus":
        r, c = torus_shape(n)
        return torus_graph(r, c, seed, "pm1")
    raise DataError(f"unknown max-cut generator {kind!r}; known: {', '.join(GENERATORS)}")
