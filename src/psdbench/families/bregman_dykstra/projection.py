"""Bregman projection of ``(W, xi)`` onto one half-space ``C_k`` (section 4).

``C_k = {(W, xi) : y_k <A_k, W> - y_k b_k xi_k <= 0}`` with the seed
``phi(W, xi) = -log det W + sum_k c_k phi_1(xi_k)``.

Sign convention (derived from stationarity).  The Lagrangian of the projection onto the boundary
of ``C_k`` is ``BD_phi((W, xi), (W0, xi0)) + delta y_k (<A_k, W> - b_k xi_k)``; setting its
gradient to zero gives

    -W^{-1} + W0^{-1} + delta y_k A_k = 0        =>  W^{-1} = W0^{-1} + delta y_k A_k          (4)
    c_k (phi_1'(xi_k) - phi_1'(xi0_k)) - delta y_k b_k = 0
                                                =>  phi_1'(xi_k) = phi_1'(xi0_k) + delta y_k b_k / c_k

which is the ``+`` inside ``grad phi_1^*`` of the paper's ``J_t``, and also Algorithm 1, line 7
(``x_t = grad phi^*(grad phi(x_{t-1}) - delta a_k)`` with ``a_k = y_k (A_k, -b_k e_k)`` and
``grad phi(W) = -W^{-1}``).  The paper's (5) and its printed ``grad J_t`` carry a ``-`` there; we
follow ``J_t`` (the ``-`` would project onto the wrong point).  Then, with ``u = y_k delta``,

    J(u) = sum_i 1 / (d_i + u)  -  b_k (phi_1')^{-1}(phi_1'(xi0_k) + u b_k / c_k)      (J_t, (7))

where ``U D U' = A_k^{-1/2} W0^{-1} A_k^{-1/2}`` (one eigendecomposition).  ``J`` depends on
``delta`` only through ``u``, is strictly decreasing in ``u`` on ``(-d_n, u_max)`` (interval (8):
``y = +1``: ``delta > -d_n``; ``y = -1``: ``delta < d_n``; ISBD adds ``u < c_k / (b_k xi0_k)``, i.e.
``delta < delta_b`` for ``y = +1`` and ``delta > -delta_b`` for ``y = -1``), from ``+inf`` to
``-inf``.  We solve for ``s = u + d_n in (0, s_max)`` (so that ``d_i + u = (d_i - d_n) + s`` keeps
its accuracy next to the pole) by ``brentq`` after bracketing, and update ``W`` by (6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from psdbench.families.bregman_dykstra import divergence as dv


#: ``A_k`` whose condition number exceeds this take the pencil route (:func:`project_pencil`): ``A^{-1/2}``
#: would carry a relative error of about ``cond x 1e-16`` into ``d`` and the root of ``J``
PENCIL_COND = 1e8


def inv_sqrt(A: np.ndarray) -> np.ndarray:
    """``A^{-1/2}`` of a symmetric positive definite matrix (section 4's pre-process)."""
    w, Q = np.linalg.eigh(A)
    if w[0] <= 0:
        raise ValueError(f"A_k is not positive definite (lambda_min = {w[0]:.3g}); add eps I (section 4)")
    return (Q / np.sqrt(w)) @ Q.T


def preprocess(A: np.ndarray, cond_limit: float = PENCIL_COND) -> np.ndarray | None:
    """Section 4's pre-process of one ``A_k``: ``A_k^{-1/2}``, or ``None`` where ``A_k`` is too
    ill-conditioned for it (condition number above ``cond_limit``, or singular): the solver then
    projects by :func:`project_pencil`."""
    w, Q = np.linalg.eigh(0.5 * (A + A.T))
    if not w[-1] > 0:
        raise ValueError("A_k = 0: the half-space does not constrain W")
    if w[0] <= w[-1] / cond_limit:
        return None
    return (Q / np.sqrt(w)) @ Q.T


@dataclass
class Step:
    """One projection: the root ``u = y delta`` of ``J``, its interval, and the eigen-data of (6)."""

    u: float
    lo: float
    hi: float
    d: np.ndarray
    B: np.ndarray  # A_k^{-1/2} U: W(u) = B diag(1 / (d + u)) B'   (6)

    def W(self, u: float | None = None) -> np.ndarray:
        """``Y(delta)`` of (6) at ``u = y delta`` (default: the root)."""
        u = self.u if u is None else u
        Y = (self.B / (self.d + u)) @ self.B.T
        return 0.5 * (Y + Y.T)


def slack_at(u: float, xi0: float, b: float, c: float, div: str) -> float:
    """``xi(u) = (phi_1')^{-1}(phi_1'(xi0) + u b / c)`` (stationarity in xi; see the module docstring)."""
    return float(dv.dphi_inv(dv.dphi(xi0, div) + u * b / c, div))


def J_terms(s: float, gaps: np.ndarray, d_n: float, xi0: float, b: float, c: float,
            div: str) -> tuple[float, float]:
    """The two terms of ``J`` at ``u = s - d_n``: ``(sum_i 1 / (d_i + u), b xi(u))`` (7)."""
    first = float(np.sum(1.0 / (gaps + s)))
    return first, b * slack_at(s - d_n, xi0, b, c, div)


def solve_J(d: np.ndarray, xi0: float, b: float, c: float, div: str) -> tuple[float, float, float]:
    """Root ``u`` of ``J`` and its interval ``(lo, hi)`` in ``u`` (``hi = inf`` for L2BD / REBD)."""
    d_n = float(d[0])  # eigh: ascending, d[0] = d_n of the paper (smallest)
    gaps = d - d_n
    s_max = d_n + c / (b * xi0) if div == "is" else np.inf  # interval (8) n ISBD interval, shifted by d_n

    def J(s: float) -> float:
        f, g = J_terms(s, gaps, d_n, xi0, b, c, div)
        return f - g

    # a point with J > 0: J -> +inf as s -> 0+
    lo = min(d_n, 0.5 * s_max)
    while J(lo) <= 0:
        lo *= 0.5
        if lo < 1e-300:
            raise FloatingPointError("no positive J next to the pole")
    # a point with J < 0: J -> -inf as s -> s_max (ISBD) or s -> inf
    hi = max(2.0 * lo, d_n)
    if np.isfinite(s_max):
        hi = 0.5 * (lo + s_max)
        while J(hi) >= 0:
            hi = 0.5 * (hi + s_max)
            if s_max - hi <= 4 * np.finfo(float).eps * s_max:
                raise FloatingPointError("no negative J next to delta_b")
    else:
        while J(hi) >= 0:
            lo, hi = hi, 2.0 * hi
            if hi > 1e300:
                raise FloatingPointError("no negative J")
    from scipy.optimize import brentq  # at first use: `psdbench info` does not pay SciPy's optimize

    s = brentq(J, lo, hi, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return s - d_n, -d_n, s_max - d_n


def project(Winv: np.ndarray, A_isqrt: np.ndarray, xi0: float, b: float, c: float,
            div: str) -> Step:
    """Projection of ``(W0, xi0)`` onto the boundary of ``C_k`` (``J = 0``): section 4.

    Parameters
    ----------
    Winv : ndarray (n, n)
        ``W0^{-1}``.
    A_isqrt : ndarray (n, n)
        ``A_k^{-1/2}``, precomputed.
    xi0, b, c : float
        ``xi0_k``, ``b_k``, ``c_k``.
    div : str
        ``"is"``, ``"l2"`` or ``"re"``.

    Returns
    -------
    Step
        ``u = y_k delta`` at the root (``delta = y_k u``), the interval, and (6)'s factors.
    """
    M = A_isqrt @ Winv @ A_isqrt
    d, U = np.linalg.eigh(0.5 * (M + M.T))  # U D U' = A^{-1/2} W0^{-1} A^{-1/2}
    u, lo, hi = solve_J(d, xi0, b, c, div)
    return Step(u=u, lo=lo, hi=hi, d=d, B=A_isqrt @ U)


@dataclass
class PencilStep:
    """A projection by the pencil ``(A_k, W0^{-1})``: ``A X = W0^{-1} X diag(mu)``, ``X' W0^{-1} X = I``.

    The same ``J`` and update (6) as :class:`Step`, written without ``A_k^{-1/2}``: ``d_i = 1 / mu_i``
    (``inf`` where ``mu_i = 0``, whose term of (7) vanishes) and ``(W0^{-1} + u A)^{-1} = X diag(1 /
    (1 + u mu)) X'``.  Ours (numerics, not the paper's): used for ill-conditioned or singular
    ``A_k``, where forming ``A_k^{-1/2}`` loses the digits the root of ``J`` needs.
    """

    u: float
    lo: float
    hi: float
    d: np.ndarray
    mu: np.ndarray
    X: np.ndarray

    def W(self, u: float | None = None) -> np.ndarray:
        """``Y(delta)`` of (6) at ``u = y delta`` (default: the root)."""
        u = self.u if u is None else u
        Y = (self.X / (1.0 + u * self.mu)) @ self.X.T
        return 0.5 * (Y + Y.T)


def project_pencil(Winv: np.ndarray, A: np.ndarray, xi0: float, b: float, c: float, div: str) -> PencilStep:
    """:func:`project` through the generalized eigenproblem of ``(A_k, W0^{-1})`` (no ``A_k^{-1/2}``)."""
    from scipy.linalg import eigh

    mu, X = eigh(0.5 * (A + A.T), 0.5 * (Winv + Winv.T))  # ascending mu: descending d
    mu, X = mu[::-1], X[:, ::-1]
    mu = np.where(mu > mu[0] * np.finfo(float).eps, mu, 0.0)  # round-off below the pencil's accuracy
    with np.errstate(divide="ignore"):
        d = np.where(mu > 0, 1.0 / np.where(mu > 0, mu, 1.0), np.inf)
    u, lo, hi = solve_J(d, xi0, b, c, div)
    return PencilStep(u=u, lo=lo, hi=hi, d=d, mu=mu, X=X)


def project_halfspace(W0: np.ndarray, xi0: float, A: np.ndarray, y: float, b: float, c: float,
                      div: str) -> tuple[np.ndarray, float, float]:
    """Bregman projection onto the half-space ``C_k`` itself (not its boundary): ``(W, xi, delta)``.

    ``delta >= 0`` is the multiplier: 0 when ``(W0, xi0)`` is already in ``C_k``.  A reference for
    tests; the solver calls :func:`project` and applies Dykstra's correction.
    """
    if y * (float(np.sum(A * W0)) - b * xi0) <= 0:
        return W0.copy(), float(xi0), 0.0
    A_isqrt = preprocess(A)
    Winv = np.linalg.inv(W0)
    st = project_pencil(Winv, A, xi0, b, c, div) if A_isqrt is None else project(Winv, A_isqrt, xi0, b, c, div)
    return st.W(), slack_at(st.u, xi0, b, c, div), y * st.u


# ---------------------------------------------------------------------------- rank one (eps = 0)
def solve_rank_one(p: float, xi0: float, b: float, c: float, div: str) -> float:
    """Root ``u = y_k delta`` of ``J`` for ``A_k = v v'`` with ``p = v' W0 v > 0``.

    Sherman-Morrison: ``(W0^{-1} + u v v')^{-1} = W0 - u W0 v v' W0 / (1 + u p)``, so the first term
    of ``J_t`` is ``<v v', Y> = p / (1 + u p) = 1 / (1/p + u)``: (7) with the single finite
    eigenvalue ``d = 1/p`` (the others are infinite for ``A_k^{-1/2}`` of a rank-one matrix), and
    (8) becomes ``u > -1/p``.  ISBD in closed form (``phi'(xi) = -1/xi``):

        p / (1 + u p) = b / (1/xi0 - u b / c)   =>   u = c / (c + 1) (1 / (b xi0) - 1 / p),

    which is ITML's step (Davis et al., Algorithm 1; metric-learn's ``alpha = gamma/(gamma+1)
    (1/wtw - 1/bhat)``) with ``alpha = -u``, ``gamma = c``, ``bhat = b xi0``, ``wtw = p``.  L2BD
    (a quadratic) and REBD have their root found by :func:`solve_J` on ``d = [1/p]`` (O(1) per
    evaluation).
    """
    if not p > 0:
        raise ValueError(f"v' W v = {p:.3g} <= 0: a zero pair difference or W not PD")
    if div == "is":
        return c / (c + 1.0) * (1.0 / (b * xi0) - 1.0 / p)
    return solve_J(np.array([1.0 / p]), xi0, b, c, div)[0]


def project_rank_one(W0: np.ndarray, v: np.ndarray, xi0: float, b: float, c: float,
                     div: str) -> tuple[float, np.ndarray, np.ndarray]:
    """Projection of ``(W0, xi0)`` onto the boundary of ``C_k`` for ``A_k = v v'``: ``(u, Wv, p)``.

    O(n^2): ``Wv = W0 v``, ``p = v' W0 v``, ``u`` from :func:`solve_rank_one`.  The caller applies the
    (possibly Dykstra-clipped) step ``u'`` by :func:`rank_one_update`.
    """
    Wv = W0 @ v
    p = float(v @ Wv)
    return solve_rank_one(p, xi0, b, c, div), Wv, p


def rank_one_update(W0: np.ndarray, Wv: np.ndarray, p: float, u: float) -> np.ndarray:
    """``(W0^{-1} + u v v')^{-1} = W0 - u / (1 + u p) (W0 v)(W0 v)'`` (Sherman-Morrison; needs ``1 + u p > 0``)."""
    den = 1.0 + u * p
    if not den > 0:
        raise FloatingPointError(f"1 + u p = {den:.3g} <= 0: the step leaves the PD cone (interval (8))")
    return W0 - (u / den) * np.outer(Wv, Wv)
