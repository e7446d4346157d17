"""Seeded, offline generators with the structure of SDPLIB's families, and an infeasible one.

* ``maxcut`` (SDPLIB ``mcp``, Goemans-Williamson relaxation): ``C = -L/4`` with ``L`` the
  Laplacian of a G(n, p) graph with unit weights, ``A_i = e_i e_i'``, ``b = 1`` (``diag(X) = 1``):
  min <-L/4, X>, i.e. max <L/4, X>; ``tr(X) = n`` on the feasible set.
* ``theta`` (SDPLIB ``theta``, Lovasz theta of a G(n, p) graph): ``C = -J`` (all ones),
  ``A_0 = I`` with ``b_0 = 1`` (``tr X = 1``), ``A_ij = e_i e_j' + e_j e_i'`` with ``b_ij = 0``
  for each edge ``ij``: min <-J, X>, i.e. max <J, X> = theta(G); ``tr(X) = 1``.
* ``infeasible``: a primal-infeasible SDP with a hidden Farkas certificate: random symmetric
  ``A_1..A_{m-1}`` and ``b``, then ``A_m = -sum_i w_i A_i - P`` (``P`` positive definite) and
  ``b_m = 1 - w'b``, so ``y = (w, 1)`` has ``A*(y) = -P`` negative definite and ``b'y = 1 > 0``.
  ``C = I`` (its dual is unbounded).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from psdbench.api import DataError

from .data import SdpData, from_blocks

GENERATORS = ("maxcut", "theta", "infeasible")


def _graph(n: int, p: float, rng: np.random.Generator) -> np.ndarray:
    """Edges ``(i, j)``, ``i < j``, of a G(n, p) graph (at least one edge)."""
    iu = np.triu_indices(n, 1)
    keep = rng.random(iu[0].size) < p
    if not keep.any():
        keep[rng.integers(iu[0].size)] = True
    return np.column_stack([iu[0][keep], iu[1][keep]])


def maxcut(n: int, p: float, seed: int) -> SdpData:
    """Max-cut relaxation of a G(n, p) graph (see the module docstring)."""
    rng = np.random.default_rng(seed)
    E = _graph(n, p, rng)
    W = sp.coo_matrix((np.ones(len(E)), (E[:, 0], E[:, 1])), shape=(n, n)).tocsr()
    W = W + W.T
    L = sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W
    # A_i = e_i e_i': row i of A picks the (i, i) entry of the row-major vec
    A = sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n) * (n + 1))), shape=(n, n * n))
    c = sp.csr_matrix((-L / 4.0).toarray().reshape(1, -1))
    return SdpData(block_sizes=(n,), A=A, b=np.ones(n), c=c, name=f"maxcut(n={n}, p={p}, seed={seed})")


def theta(n: int, p: float, seed: int) -> SdpData:
    """Lovasz theta SDP of a G(n, p) graph (see the module docstring)."""
    rng = np.random.default_rng(seed)
    E = _graph(n, p, rng)
    m = 1 + len(E)
    rows = np.concatenate([np.zeros(n, np.int64), np.repeat(np.arange(1, m), 2)])
    cols = np.concatenate([np.arange(n) * (n + 1), np.column_stack([E[:, 0] * n + E[:, 1], E[:, 1] * n + E[:, 0]]).ravel()])
    A = sp.csr_matrix((np.ones(rows.size), (rows, cols)), shape=(m, n * n))
    b = np.zeros(m)
    b[0] = 1.0
    c = sp.csr_matrix(-np.ones((1, n * n)))
    return SdpData(block_sizes=(n,), A=A, b=b, c=c, name=f"theta(n={n}, p={p}, seed={seed})")


def infeasible(n: int, p: float, seed: int) -> SdpData:
    """A primal-infeasible SDP on one n x n block and an LP block of n entries (see the module docstring).

    ``p`` is the density of the random constraint matrices.
    """
    rng = np.random.default_rng(seed)
    m = max(2, n // 2)
    As, bs = [], []
    for _ in range(m - 1):
        M = sp.random(n, n, density=max(p, 2.0 / n), random_state=rng).toarray()
        As.append([(M + M.T) / 2, rng.standard_normal(n)])
        bs.append(rng.standard_normal())
    w = rng.standard_normal(m - 1)
    G = rng.standard_normal((n, n))
    P = G @ G.T / n + np.eye(n)
    last_psd = -sum(wi * a[0] for wi, a in zip(w, As)) - P
    last_lp = -sum(wi * a[1] for wi, a in zip(w, As)) - (1.0 + rng.random(n))
    As.append([last_psd, last_lp])
    bs.append(1.0 - float(w @ np.asarray(bs)))
    return from_blocks((n, -n), [np.eye(n), np.ones(n)], As, bs, name=f"infeasible(n={n}, seed={seed})")


def generate(kind: str, n: int, p: float, seed: int) -> SdpData:
    """One of :data:`GENERATORS` with order ``n``, density ``p`` and ``seed``."""
    makers = {"maxcut": maxcut, "theta": theta, "infeasible": infeasible}
    if kind not in makers:
        raise DataError(f"unknown SDP generator {kind!r}; known: {', '.join(GENERATORS)}")
    return makers[kind](int(n), float(p), int(seed))
