"""PSD checks used by every verifier."""

from __future__ import annotations

import numpy as np
import scipy.linalg as sla


def asymmetry(A: np.ndarray) -> float:
    """Largest absolute entry of ``A - A.T``."""
    return float(np.max(np.abs(A - A.T))) if A.size else 0.0


def min_eig(A: np.ndarray) -> float:
    """Smallest eigenvalue of the symmetric part of ``A`` (dense LAPACK, exact to rounding)."""
    S = 0.5 * (A + A.T)
    return float(sla.eigh(S, eigvals_only=True, subset_by_index=[0, 0], driver="evr")[0])


def nearest_psd(A: np.ndarray) -> np.ndarray:
    """Frobenius projection of the symmetric part of ``A`` onto the PSD cone (eigenvalue clipping)."""
    w, V = np.linalg.eigh(0.5 * (A + A.T))
    return (V * np.clip(w, 0.0, None)) @ V.T


def project_spectraplex(A: np.ndarray, rho: float, C: float) -> np.ndarray:
    """Frobenius projection of sym(A) onto ``{M : M >= rho I, tr(M) <= C}`` (needs ``K rho <= C``).

    The eigenvectors stay; the eigenvalues ``w`` go to ``max(rho, w - tau)`` with the smallest
    ``tau >= 0`` that makes their sum at most ``C`` (found by bisection to rounding).
    """
    w, V = np.linalg.eigh(0.5 * (A + A.T))
    lam = np.maximum(w, rho)
    if lam.sum() > C:
        lo, hi = 0.0, float(w.max() - rho)
        for _ in range(200):
            tau = 0.5 * (lo + hi)
            if np.maximum(w - tau, rho).sum() > C:
                lo = tau
            else:
                hi = tau
        lam = np.maximum(w - hi, rho)
    return (V * lam) @ V.T


def scale_to_trace_floor(M: np.ndarray, C: float, rho: float) -> tuple[np.ndarray, float, float]:
    """``a sym(M) + b I`` with ``tr = C`` and ``lambda_min >= rho``, ``b >= 0`` as small as possible.

    Maps a learned metric into ``{tr(M) = C, M >= rho I}`` changing only its scale where it can: with
    ``t = tr(M)``, ``l = lambda_min(M)``, ``a = C / t, b = 0`` when ``a l >= rho``; otherwise
    ``a = (C - K rho) / (t - K l)`` and ``b = rho - a l``, the smallest shift.  Needs ``t > 0`` and
    ``K rho <= C``.

    Returns
    -------
    M_mapped : ndarray
    a, b : float
        The scale and the shift.
    """
    S = 0.5 * (M + M.T)
    K = S.shape[0]
    t = float(np.trace(S))
    if not t > 0:
        raise ValueError(f"cannot scale a metric of trace {t:g} to trace {C:g}")
    lam = min_eig(S)
    a, b = C / t, 0.0
    if a * lam < rho:
        a = (C - K * rho) / (t - K * lam)
        b = rho - a * lam
    return a * S + b * np.eye(K), float(a), float(b)
