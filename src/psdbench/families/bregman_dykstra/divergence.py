"""The slack seed functions of section 2.2 and what the projection needs of them.

``phi_1`` is one of (section 2.2)

* ``"is"``  (ISBD): ``phi(xi) = -log xi``,            ``phi'(xi) = -1 / xi``,  domain ``xi > 0``;
* ``"l2"``  (L2BD): ``phi(xi) = xi^2 / 2``,           ``phi'(xi) = xi``,       domain: all of R
  (section 4 treats ``phi_l2'`` as onto R: "there exists xi even if ... takes any value"; the
  optimum of (2) has ``xi_k = max(1, <A_k, W> / b_k)`` or ``min(1, <A_k, W> / b_k)``, positive,
  so allowing ``xi <= 0`` does not change problem (2));
* ``"re"``  (REBD): ``phi(xi) = (log xi - 1) xi``,    ``phi'(xi) = log xi``,   domain ``xi > 0``.

``BD_1(xi, 1) = phi(xi) - phi(1) - phi'(1) (xi - 1)``: ``xi - log xi - 1``, ``(xi - 1)^2 / 2`` and
``xi log xi - xi + 1``.
"""

from __future__ import annotations

import numpy as np

DIVERGENCES = ("is", "l2", "re")


def phi(xi: np.ndarray, div: str) -> np.ndarray:
    """Seed function ``phi_1`` (section 2.2)."""
    xi = np.asarray(xi, float)
    if div == "is":
        return -np.log(xi)
    if div == "l2":
        return 0.5 * xi**2
    if div == "re":
        return (np.log(xi) - 1.0) * xi
    raise ValueError(f"unknown divergence {div!r}")


def dphi(xi: np.ndarray, div: str) -> np.ndarray:
    """``phi_1'``."""
    xi = np.asarray(xi, float)
    if div == "is":
        return -1.0 / xi
    if div == "l2":
        return xi
    if div == "re":
        return np.log(xi)
    raise ValueError(f"unknown divergence {div!r}")


def dphi_inv(theta: np.ndarray, div: str) -> np.ndarray:
    """``(phi_1')^{-1} = (phi_1^*)'``: the slack whose gradient is ``theta`` (``"is"``: ``theta < 0``)."""
    theta = np.asarray(theta, float)
    if div == "is":
        return -1.0 / theta
    if div == "l2":
        return theta
    if div == "re":
        return np.exp(theta)
    raise ValueError(f"unknown divergence {div!r}")


def bd1(xi: np.ndarray, div: str) -> np.ndarray:
    """``BD_1(xi, 1)``, computed in the stable closed forms of the module docstring."""
    xi = np.asarray(xi, float)
    if div == "is":
        return xi - np.log(xi) - 1.0
    if div == "l2":
        return 0.5 * (xi - 1.0) ** 2
    if div == "re":
        return xi * np.log(xi) - xi + 1.0
    raise ValueError(f"unknown divergence {div!r}")


def in_domain(xi: np.ndarray, div: str) -> np.ndarray:
    """Whether each slack is in the domain of ``phi_1`` (``"l2"``: any finite value)."""
    xi = np.asarray(xi, float)
    return np.isfinite(xi) if div == "l2" else np.isfinite(xi) & (xi > 0)


def conj_min(a: np.ndarray, c: np.ndarray, div: str) -> np.ndarray:
    """``min_xi c BD_1(xi, 1) - a xi`` for each entry (the slack part of the Lagrange dual).

    The minimizer has ``phi'(xi) = phi'(1) + a / c``; for ``"is"`` it exists only for ``a < c``
    (``-inf`` is returned otherwise).
    """
    a, c = np.asarray(a, float), np.asarray(c, float)
    theta = dphi(np.ones_like(a), div) + a / c
    if div == "is":
        ok = theta < 0
        xi = np.where(ok, -1.0 / np.where(ok, theta, -1.0), 1.0)
        return np.where(ok, c * bd1(xi, div) - a * xi, -np.inf)
    xi = dphi_inv(theta, div)
    return c * bd1(xi, div) - a * xi
