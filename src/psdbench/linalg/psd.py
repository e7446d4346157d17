"""PSD checks used by every verifier."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp


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


# ----------------------------------------------------------------------------- sparse certificates
def gershgorin_left_end(A: "np.ndarray | sp.spmatrix", s: np.ndarray | None = None) -> float:
    """Smallest Gershgorin disc left end of ``S A S^-1``, ``S = diag(s)``, in O(nnz).

    Entry ``(i, j)`` of the transform is ``s_i A_ij / s_j`` and the transform has the spectrum of
    ``A``, so for symmetric ``A`` the result ``g`` proves ``lambda_min(A) >= g`` (Gershgorin circle
    theorem; GDPA graph-classifier paper, eq. (4) with ``s_i = 1 / v_i``).

    Parameters
    ----------
    A : ndarray or sparse matrix of shape (n, n)
    s : ndarray of shape (n,), optional
        Positive scaling vector; ``None`` gives the plain discs of ``A``.
    """
    A = sp.csr_matrix(A)
    s = np.ones(A.shape[0]) if s is None else np.asarray(s, float)
    if np.any(~np.isfinite(s)) or np.any(s <= 0):
        return float("-inf")
    coo = A.tocoo()
    off = coo.row != coo.col
    radius = np.bincount(coo.row[off], weights=np.abs(coo.data[off]) * s[coo.row[off]] / s[coo.col[off]],
                         minlength=A.shape[0])
    return float(np.min(A.diagonal() - radius))


@dataclass
class EigEstimate:
    """A Ritz estimate ``theta`` of ``lambda_min`` with its residual ``||A u - theta u||`` (``||u|| = 1``).

    Some eigenvalue of ``A`` lies in ``[theta - residual, theta + residual]`` (Bauer-Fike for
    symmetric matrices); that it is the smallest one is not proven, so the estimate is not a certificate.
    """

    theta: float
    residual: float
    method: str


def min_eig_estimate(A: "np.ndarray | sp.spmatrix", v0: np.ndarray | None = None, tol: float = 1e-8,
                     maxiter: int = 500) -> EigEstimate:
    """Smallest eigenvalue of a sparse symmetric matrix by LOBPCG, with its residual bound."""
    from scipy.sparse.linalg import lobpcg

    A = sp.csr_matrix(A)
    n = A.shape[0]
    x0 = np.random.default_rng(0).standard_normal(n) if v0 is None or not np.any(v0) else np.asarray(v0, float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        w, V = lobpcg(A, x0[:, None], tol=tol, maxiter=maxiter, largest=False)
    u = V[:, 0] / np.linalg.norm(V[:, 0])
    theta = float(u @ (A @ u))
    return EigEstimate(theta=theta, residual=float(np.linalg.norm(A @ u - theta * u)), method="lobpcg")
