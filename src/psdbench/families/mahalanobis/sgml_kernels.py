"""SGML's kernels (SGML paper): the initial metric (section 4.2.1), the step size of Frank-Wolfe
along a direction (section 4.4.2, eqs. (35)-(38)), the LP (41) with one coupling row, and the pieces of one
block's Frank-Wolfe step (section 5.2, Algorithm 1 lines 5 and 7): the scaled Gershgorin radii of
eq. (30), the rows of LP (41) for column ``j``, the block gradient (eq. (32) with column ``j``),
the LP's vertex and the pair distances of the block direction (eq. (25)).

Pure functions of arrays (:func:`zero_small_offdiag` alone works in place), used by
:mod:`psdbench.families.mahalanobis.sgml`.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

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


def step_size(obj: Any, D0: np.ndarray, E: np.ndarray, sign: float = 1.0, tol: float = 1e-3,
              g0: float | None = None) -> float:
    """Frank-Wolfe step (section 4.4.2): ``argmin_{gamma in [0, 1]} sign * Q(max(D0 + gamma E, 0))``.

    ``obj`` is a pair objective (``slope_along`` gives ``Q'(gamma)`` along the pair distances, eq.
    (37)); ``D0`` are the current pair distances and ``E`` those of the direction (eq. (25)).
    ``g0 = sign * Q'(0)`` if known.  Piecewise-linear objectives with an ``exact_step`` (LMNN),
    minimized, get their exact minimizer; every other objective the root of ``Q'`` by
    :func:`newton_step_size` (eqs. (35)-(38)).
    """
    exact = getattr(obj, "exact_step", None)
    if exact is not None and sign > 0:  # piecewise linear: the exact minimizer
        return exact(D0, E)
    slope = obj.slope_along(D0, E)
    return newton_step_size(lambda g: sign * slope(g), tol=tol, g0=g0)


# ------------------------------------------------------------------------ the LPs in closed form
def knapsack_lp(kappa: np.ndarray, w: np.ndarray, budget: float) -> np.ndarray | None:
    """``argmin kappa' x`` s.t. ``w' x <= budget``, ``x >= 0`` (``w > 0``): a vertex, in closed form.

    Both LPs of SGML reduce to this form (see :func:`block_vertex`): every Gershgorin row
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



def full_vertex(G: np.ndarray, colours: np.ndarray, a: np.ndarray, rho: float, C: float) -> np.ndarray | None:
    """Frank-Wolfe vertex of the whole-matrix LP with colours fixed (Algorithm 1, line 14), in closed form.

    The LP is (41) over every ``M_ij`` (``i < j``) and the diagonal, with linear objective
    ``<G, S>`` (``G`` symmetric): with ``u_ij = |M_ij|`` and slacks, each row ``i`` reads
    ``M_ii = rho + sum_j (a_j / a_i) u_ij + s_i`` and the trace is the only coupling row, so
    :func:`knapsack_lp` gives the vertex.  Returns the symmetric vertex ``S``, or None when
    ``K rho > C``.  O(K^2).
    """
    K = len(colours)
    iu, ju = np.triu_indices(K, 1)
    sigma = -colours[iu] * colours[ju]
    gd, go = np.diag(G), 2.0 * G[iu, ju]
    ai, aj = a[ju] / a[iu], a[iu] / a[ju]  # coefficient of |M_ij| in row i and in row j
    kappa = np.concatenate([go * sigma + gd[iu] * ai + gd[ju] * aj, gd])
    w = np.concatenate([ai + aj, np.ones(K)])
    x = knapsack_lp(kappa, w, C - K * rho)
    if x is None:
        return None
    u, slack = x[: len(iu)], x[len(iu):]
    diag = rho + slack
    np.add.at(diag, iu, ai * u)
    np.add.at(diag, ju, aj * u)
    off = sigma * u
    S = np.diag(diag)
    S[iu, ju] = off
    S[ju, iu] = off
    return S


# ------------------------------------------------------------------------------ pair distances
def set_block(M: np.ndarray, j: int, others: np.ndarray, diag: np.ndarray, col: np.ndarray) -> np.ndarray:
    """Write the diagonal ``diag`` and column/row ``j`` (``col`` on rows ``others``) into ``M``, in place; returns ``M``."""
    np.fill_diagonal(M, diag)
    M[:j, j], M[j + 1:, j] = col[:j], col[j:]  # rows ``others`` = every row but j, in order
    M[j, :j], M[j, j + 1:] = col[:j], col[j:]
    return M


def with_block(M: np.ndarray, j: int, others: np.ndarray, diag: np.ndarray, col: np.ndarray) -> np.ndarray:
    """A copy of ``M`` with the given diagonal and column/row ``j``."""
    return set_block(M.copy(), j, others, diag, col)


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


# ------------------------------------------------------------------- one block (section 5.2)
class BlockRows(NamedTuple):
    """The rows of LP (41) for column ``j`` with the scalars fixed (from :func:`block_rows`).

    Row ``i != j`` reads ``M_ii >= low_i + alpha_i |M_ij|``, row ``j`` reads
    ``M_jj >= low_j + sum_i beta_i |M_ij|``, and ``M_ij = sigma_i |M_ij|`` has a fixed sign.

    Attributes
    ----------
    j : int
        The block's column.
    others : ndarray of int, shape (K - 1,)
        The rows ``i != j``, in order.
    sigma : ndarray, shape (K - 1,)
        ``+1`` where ``M_ij >= 0`` (different colours), ``-1`` where ``M_ij <= 0``.
    low : ndarray, shape (K,)
        ``rho`` plus each row's scaled radius without column ``j`` (eq. (30)); ``low_j = rho``.
    alpha, beta : ndarray, shape (K - 1,)
        ``a_j / a_i`` and ``a_i / a_j``: the coefficients of ``|M_ij|`` in row ``i`` and in row ``j``.
    w : ndarray, shape (2K - 1,)
        Trace weights of the LP's variables ``[|M_ij| (i != j), slacks]``: ``[alpha + beta, 1]``.
    low_sum : float
        ``sum(low)``: the trace the rows' bounds alone take (LP (41) is infeasible above ``C``).
    """

    j: int
    others: np.ndarray
    sigma: np.ndarray
    low: np.ndarray
    alpha: np.ndarray
    beta: np.ndarray
    w: np.ndarray
    low_sum: float


def scaled_radii(M: np.ndarray, a: np.ndarray) -> np.ndarray:
    """``|offdiag(M)| a``: row ``i`` times ``a_i`` is the Gershgorin radius of ``S M S^-1`` in eq. (30).

    ``a = |v|`` (the GDPA scalars are ``s_i = 1 / a_i``).  O(K^2); a solver keeps the result until
    ``M`` or the scalars change.
    """
    absM = np.abs(M)
    np.fill_diagonal(absM, 0.0)
    return absM @ a


def block_rows(M: np.ndarray, T: np.ndarray, a: np.ndarray, colours: np.ndarray, j: int, rho: float) -> BlockRows:
    """The rows of LP (41) for column ``j`` (section 5.2), given ``T = scaled_radii(M, a)``.

    Every off-diagonal of column ``j`` is a variable, so its share ``|M_ij| a_j`` leaves each row's
    radius; row ``j``'s radius is all variable.  O(K).
    """
    K = M.shape[0]
    others = np.arange(K - 1)
    others[j:] += 1  # every row but j
    sigma = -colours[others] * colours[j]  # +1: M_ij >= 0 (different colours), -1: M_ij <= 0 (eq. (41))
    colabs = np.abs(M[:, j])
    colabs[j] = 0.0
    low = rho + (T - colabs * a[j]) / a  # fixed radii of eq. (30), column j excluded
    low[j] = rho  # every off-diagonal of row j is a variable
    alpha, beta = a[j] / a[others], a[others] / a[j]
    return BlockRows(j, others, sigma, low, alpha, beta, np.concatenate([alpha + beta, np.ones(K)]), float(low.sum()))


def block_gradient(F: np.ndarray, A: np.ndarray, j: int, F_others: np.ndarray,
                   sign: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """The block's part of ``sign * grad_M Q``: its diagonal (eq. (32)) and twice its column ``j``.

    ``grad_M Q = F' Lap F`` with ``Lap`` the Laplacian of ``A + A'`` (``A = dQ/dD``, n x n, see
    :func:`~psdbench.families.mahalanobis.objectives.gradient_from_pairs`); ``F_others = F[:, others]``
    (rows ``i != j``).  Returns ``(gd, go)``: ``gd_k = (F' Lap F)_kk`` and
    ``go_i = 2 (F' Lap F)_ij`` for ``i != j`` (``M_ij`` and ``M_ji`` move together).  O(n^2 + n K).
    """
    B = sign * (A + A.T)
    Lap = np.diag(B.sum(axis=1)) - B
    LF = Lap @ F
    gd = np.einsum("ak,ak->k", F, LF)  # diagonal of grad = F' Lap F (eq. (32))
    go = 2.0 * (F_others.T @ LF[:, j])  # 2 x column j of grad
    return gd, go


def block_vertex(rows: BlockRows, gd: np.ndarray, go: np.ndarray, C: float,
                 flipped: bool = False) -> tuple[np.ndarray, np.ndarray] | None:
    """Frank-Wolfe vertex of LP (41) for the linear objective ``gd' diag + go' M[others, j]``: ``(diag, column)``.

    Variables ``u_i = |M_ij|`` (``i != j``) and slacks ``s`` (K): ``M_ii = low_i + alpha_i u_i + s_i``,
    ``M_jj = low_j + beta' u + s_j``, so the trace ``sum_i M_ii <= C`` is the only coupling row and
    :func:`knapsack_lp` gives the vertex in closed form.  ``flipped``: node ``j`` with the other
    colour (Algorithm 1, line 7), every sign ``sigma_i`` reversed; the rows are the same, since
    they exclude column ``j``.  None when the rows' lower bounds alone exceed ``C``.  O(K).
    """
    j, others, sigma, low, alpha, beta, w, low_sum = rows
    if flipped:
        sigma = -sigma
    K = len(gd)
    kappa = np.concatenate([go * sigma + gd[others] * alpha + gd[j] * beta, gd])
    x = knapsack_lp(kappa, w, C - low_sum)
    if x is None:
        return None
    u, slack = x[: K - 1], x[K - 1:]
    diag = low + slack
    diag[others] += alpha * u
    diag[j] += float(beta @ u)
    return diag, sigma * u


def block_dir_distances(F: np.ndarray, j: int, F_others: np.ndarray, delta: np.ndarray,
                        dcol: np.ndarray) -> np.ndarray:
    """Pair "distances" (eq. (25), may be negative) of the block direction ``diag(delta) + e_j dcol' + dcol e_j'``.

    ``dcol`` holds the rows ``i != j`` (``F_others = F[:, others]``).  The same numbers as
    :func:`dir_distances` of the K x K direction, in O(n^2 K) without forming it.
    """
    Fj = F[:, j]
    Fc = F_others @ dcol
    Gram = (F * delta) @ F.T + np.outer(Fj, Fc) + np.outer(Fc, Fj)
    g = np.diag(Gram)
    E = g[:, None] + g[None, :] - 2.0 * Gram
    np.fill_diagonal(E, 0.0)
    return E


def zero_small_offdiag(M: np.ndarray, below: float) -> bool:
    """Set off-diagonal entries of symmetric ``M`` with ``0 < |M_ik| < below`` to 0, in place; True if any changed.

    O(K^2).  After a block update only column ``j`` changed: :func:`zero_small` on the column
    as it is written does the same in O(K).
    """
    small = (np.abs(M) < below) & (M != 0)
    np.fill_diagonal(small, False)
    M[small] = 0.0
    return bool(small.any())


def zero_small(x: np.ndarray, below: float) -> tuple[np.ndarray, bool]:
    """``x`` with its entries ``0 < |x_i| < below`` set to 0 (a new array if any), and whether any was."""
    small = (np.abs(x) < below) & (x != 0)
    if not small.any():
        return x, False
    return np.where(small, 0.0, x), True
