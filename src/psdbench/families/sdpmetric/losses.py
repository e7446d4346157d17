"""The SDPMetric objective (8) on triplet margins, its losses (4), (9), (10) and the exact rho step.

With margins ``m_r = <A_r, X>`` (5)-(6) the objective (8) is

    f(X, rho) = rho - C sum_r loss(m_r - rho)

and ``g(X) = max_rho f(X, rho)`` is what every solution is scored on (see :mod:`.instance`).
``f`` is jointly concave (``loss`` convex), so ``g`` is concave, and ``phi(rho) = f(X, rho)`` is a
concave piecewise-linear (hinge) or piecewise-quadratic (squared hinge, Huber) function of one
variable: :func:`best_rho` maximizes it exactly from its breakpoints.

Losses (``z = m - rho``):

``hinge``          (4)  ``max(0, -z)``
``squared-hinge``  (9)  ``max(0, -z)^2``
``huber``          (10) ``0`` for ``z >= h``, ``(h - z)^2 / (4 h)`` for ``|z| < h``, ``-z`` for ``z <= -h``
"""

from __future__ import annotations

import numpy as np

LOSSES = ("hinge", "squared-hinge", "huber")


def loss_value(z: np.ndarray, loss: str, h: float) -> np.ndarray:
    """``loss(z)`` element-wise (the paper's ``lambda``)."""
    if loss == "hinge":  # (4): the slack xi_r = max(0, rho - <A_r, X>)
        return np.maximum(0.0, -z)
    if loss == "squared-hinge":  # (9)
        return np.maximum(0.0, -z) ** 2
    if loss == "huber":  # (10)
        return np.where(z >= h, 0.0, np.where(z <= -h, -z, (h - z) ** 2 / (4.0 * h)))
    raise ValueError(f"unknown loss {loss!r} (known: {', '.join(LOSSES)})")


def loss_slope(z: np.ndarray, loss: str, h: float) -> np.ndarray:
    """``loss'(z)`` element-wise (in [-1, 0] for hinge and Huber; at the hinge's kink: 0)."""
    if loss == "hinge":
        return np.where(z < 0, -1.0, 0.0)
    if loss == "squared-hinge":
        return np.where(z < 0, 2.0 * z, 0.0)
    if loss == "huber":
        return np.where(z >= h, 0.0, np.where(z <= -h, -1.0, -(h - z) / (2.0 * h)))
    raise ValueError(f"unknown loss {loss!r} (known: {', '.join(LOSSES)})")


def f_value(m: np.ndarray, rho: float, C: float, loss: str, h: float) -> float:
    """Objective (8) at margins ``m`` and ``rho``."""
    return float(rho - C * np.sum(loss_value(m - rho, loss, h)))


def rho_slope(m: np.ndarray, rho: float, C: float, loss: str, h: float) -> float:
    """``d f / d rho = 1 + C sum_r loss'(m_r - rho)`` (non-increasing in rho)."""
    return float(1.0 + C * np.sum(loss_slope(m - rho, loss, h)))


def rho_slopes(m_sorted: np.ndarray, r: np.ndarray, C: float, loss: str, h: float) -> np.ndarray:
    """:func:`rho_slope` at every point of ``r`` at once, from the sorted margins (prefix sums).

    With ``k(r) = #{m_i < r}`` and ``P_k`` the sum of the ``k`` smallest margins:

    * hinge: ``1 - C k(r)``;
    * squared hinge: ``1 + 2 C (P_k - k r)``;
    * Huber: each term is ``-clip((r - a_i) / (2 h), 0, 1)`` with ``a_i = m_i - h``, so the slope is
      ``1 - C (k2 + ((k1 - k2) r - (P_k1 - P_k2)) / (2 h))`` with ``k1 = #{a_i < r}`` and
      ``k2 = #{a_i <= r - 2 h}`` (the saturated terms).
    """
    P = np.concatenate([[0.0], np.cumsum(m_sorted)])
    if loss == "hinge":
        return 1.0 - C * np.searchsorted(m_sorted, r, side="left")
    if loss == "squared-hinge":
        k = np.searchsorted(m_sorted, r, side="left")
        return 1.0 + 2.0 * C * (P[k] - k * r)
    if loss == "huber":
        a = m_sorted - h  # P shifts by h per term: sum of the k smallest a_i = P_k - k h
        k1 = np.searchsorted(a, r, side="left")
        k2 = np.searchsorted(a, r - 2.0 * h, side="right")
        ramp = (k1 - k2) * r - ((P[k1] - k1 * h) - (P[k2] - k2 * h))
        return 1.0 - C * (k2 + ramp / (2.0 * h))
    raise ValueError(f"unknown loss {loss!r} (known: {', '.join(LOSSES)})")


def best_rho(m: np.ndarray, C: float, loss: str, h: float) -> float:
    """The exact maximizer over rho (free) of ``f(X, rho)``: Algorithm 1, line 3.

    ``d f / d rho`` is non-increasing and piecewise linear (piecewise constant for the hinge) in rho
    with breakpoints at ``m_r`` (hinge, squared hinge) or ``m_r -+ h`` (Huber); it is 1 below all of
    them.  One sort and prefix sums give the slope at every breakpoint (:func:`rho_slopes`); the
    first breakpoint where it is ``<= 0`` and the one before bracket the root, and between them the
    slope is linear, so the root is exact.  For the hinge the maximizer is the left breakpoint of
    that pair (the slope, a left derivative, is > 0 there and <= 0 right of it).  Beyond the last
    breakpoint the slope is ``1 - C |S|`` (hinge, Huber: the problem needs ``C |S| > 1``, else f is
    unbounded in rho) or ``1 + 2 C sum_r (m_r - rho)`` (squared hinge, solved in closed form).

    Algorithm 1 writes ``rho > 0``; (4) and (8) leave rho free, and so does this (the maximizer is
    positive whenever the optimal margin is).
    """
    m_sorted = np.sort(np.asarray(m, float))
    n = m_sorted.size
    bps = np.sort(np.concatenate([m_sorted - h, m_sorted + h])) if loss == "huber" else m_sorted
    vals = rho_slopes(m_sorted, bps, C, loss, h)
    if vals[-1] > 0:
        if loss == "squared-hinge":  # 1 + 2 C sum (m - rho) = 0
            return float((m_sorted.sum() + 1.0 / (2.0 * C)) / n)
        raise ValueError(f"objective unbounded in rho: C |S| = {C * n:g} <= 1")
    hi = int(np.argmax(vals <= 0))  # the slope is non-increasing: the first breakpoint at or past the root
    if hi == 0:  # cannot happen (the slope is 1 left of every breakpoint), but be safe
        return float(bps[0])
    a, b = float(bps[hi - 1]), float(bps[hi])
    if loss == "hinge":
        return a
    if b == a:
        return b
    sa, sb = float(vals[hi - 1]), float(vals[hi])
    return float(a + sa * (b - a) / (sa - sb))  # the slope is linear on [a, b]


def margins(U: np.ndarray, V: np.ndarray, X: np.ndarray) -> np.ndarray:
    """``m_r = <A_r, X> = u_r' X u_r - v_r' X v_r`` (5)-(6) as row-wise quadratic forms.

    ``U`` holds the impostor differences ``a_i - a_k``, ``V`` the target differences ``a_i - a_j``.
    """
    return np.einsum("ij,ij->i", U @ X, U) - np.einsum("ij,ij->i", V @ X, V)


def grad_X(U: np.ndarray, V: np.ndarray, m: np.ndarray, rho: float, C: float, loss: str, h: float) -> np.ndarray:
    """``nabla_X f(X, rho) = -C sum_r loss'(m_r - rho) A_r`` (symmetric D x D)."""
    w = -C * loss_slope(m - rho, loss, h)
    G = (U * w[:, None]).T @ U - (V * w[:, None]).T @ V
    return 0.5 * (G + G.T)
