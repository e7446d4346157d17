"""SGML's kernels (SGML paper): the initial metric (section 4.2.1), the step size of Frank-Wolfe
along a direction (eqs. (35)-(38)) and the LP (41) with one coupling row.

Pure functions of arrays, used by :mod:`psdbench.families.mahalanobis.sgml`.
"""

from __future__ import annotations

from typing import Callable

import numpy as np


# ------------------------------------------------------------------------------ initialization
def tree_start(F: np.ndarray, C: float, rng: np.random.Generator, positive: bool = False) -> np.ndarray:
    """Section 4.2.1: diagonals ``C/K`` and a spanning tree of largest ``|E_ij|`` with ``sign(E_ij) C/K^2``."""
    K = F.shape[1]
    E = np.cov(F, rowvar=False) if F.shape[0] > 1 else np.eye(K)
    E = np.atleast_2d(E)
    M = (C / K) * np.eye(K)
    start = int(rng.integers(K))
    inside = np.zeros(K, dtype=bool)
    inside[start] = True
    best = np.abs(E[start]).astype(float)
    parent = np.full(K, start)
    best[start] = -np.inf
    for _ in range(K - 1):  # Prim's algorithm on |E| (one leaf at a time keeps a tree)
        j = int(np.argmax(np.where(inside, -np.inf, best)))
        i = int(parent[j])
        s = -1.0 if positive else (1.0 if E[i, j] >= 0 else -1.0)
        M[i, j] = M[j, i] = s * C / K**2
        inside[j] = True
        closer = (~inside) & (np.abs(E[j]) > best)
        best[closer] = np.abs(E[j])[closer]
        parent[closer] = j
    return M


def near_identity_start(K: int, C: float, positive: bool = False) -> np.ndarray:
    """The experiment code's start: ``(C/K) I`` with ``0.1 C/K`` on the first off-diagonals."""
    M = (C / K) * np.eye(K)
    off = (-0.1 if positive else 0.1) * C / K
    idx = np.arange(K - 1)
    M[idx, idx + 1] = M[idx + 1, idx] = off
    return M


# ------------------------------------------------------------------------------------ line search
def newton_step_size(dq: Callable[[float], float], tol: float = 1e-3, xtol: float = 1e-4,
                     max_iter: int = 60, g0: float | None = None) -> float:
    """``argmin_{gamma in [0, 1]} Q(gamma)`` from ``Q'(gamma)`` (eqs. (35)-(38)).

    ``Q`` is convex along the direction, so its minimizer is the root of ``Q'`` clipped to [0, 1]
    (eq. (38)).  The root is found by Newton-Raphson with ``Q''`` replaced by the difference
    quotient of the bracketing points (regula falsi with the Illinois safeguard: one ``Q'`` call
    per step, never leaves the bracket).  It stops when ``|Q'| <= tol |Q'(0)|`` or the bracket is
    narrower than ``xtol`` (piecewise-linear objectives such as LMNN have a kink, not a root).
    ``g0``, if given, is ``Q'(0)`` (the caller usually has the gradient at the current point).
    """
    if g0 is None:
        g0 = dq(0.0)
    if g0 >= 0:
        return 0.0
    g1 = dq(1.0)
    if g1 <= 0:
        return 1.0
    lo, hi, glo, ghi = 0.0, 1.0, g0, g1
    gamma, side = 0.0, 0
    for _ in range(max_iter):
        gamma = hi - ghi * (hi - lo) / (ghi - glo)
        g = dq(gamma)
        if abs(g) <= tol * abs(g0):
            break
        if g < 0:
            lo, glo = gamma, g
            if side == -1:
                ghi *= 0.5
            side = -1
        else:
            hi, ghi = gamma, g
            if side == 1:
                glo *= 0.5
            side = 1
        if hi - lo < xtol:
            return lo  # the side where Q still decreases
    return gamma


# ------------------------------------------------------------------------ the LPs in closed form
def knapsack_lp(kappa: np.ndarray, w: np.ndarray, budget: float) -> np.ndarray | None:
    """``argmin kappa' x`` s.t. ``w' x <= budget``, ``x >= 0`` (``w > 0``): a vertex, in closed form.

    Both LPs of SGML reduce to this form (see :meth:`Sgml._block_knapsack`): every Gershgorin row
    has its own diagonal, so writing ``M_ii`` as its row's lower bound plus a slack ``s_i >= 0``
    leaves the trace as the only coupling constraint.  The optimum puts the whole budget on the
    variable with the most negative ``kappa_k / w_k`` (or nothing if no ``kappa_k`` is negative).
    Returns None when the LP is infeasible (``budget < 0``: with scalars from an inexact
    eigenvector the current point can miss a Gershgorin row by a little; the block is then left
    as it is, never moved to a vertex outside ``tr(M) <= C``).
    """
    if budget < 0:  # the rows' lower bounds alone exceed the trace bound
        return None
    x = np.zeros_like(kappa)
    ratio = kappa / w
    k = int(np.argmin(ratio))
    if ratio[k] < 0:
        x[k] = max(budget, 0.0) / w[k]
    return x


# ------------------------------------------------------------------------------ pair distances
def with_block(M: np.ndarray, j: int, others: np.ndarray, diag: np.ndarray, col: np.ndarray) -> np.ndarray:
    """A copy of ``M`` with the given diagonal and column/row ``j``."""
    out = M.copy()
    out[np.diag_indices(len(diag))] = diag
    out[others, j] = col
    out[j, others] = col
    return out


def dir_distances(F: np.ndarray, Dir: np.ndarray) -> np.ndarray:
    """Pair "distances" of a direction (may be negative): ``(f_i - f_j)' Dir (f_i - f_j)``."""
    G = F @ Dir @ F.T
    g = np.diag(G)
    E = g[:, None] + g[None, :] - 2.0 * G
    np.fill_diagonal(E, 0.0)
    return E


def column_distances(F: np.ndarray, j: int, col: np.ndarray) -> np.ndarray:
    """Pair distances of ``e_j col' + col e_j'`` (``col_j = 0``)."""
    Fc = F @ col
    Gram = np.outer(F[:, j], Fc)
    Gram = Gram + Gram.T
    g = np.diag(Gram)
    E = g[:, None] + g[None, :] - 2.0 * Gram
    np.fill_diagonal(E, 0.0)
    return E
