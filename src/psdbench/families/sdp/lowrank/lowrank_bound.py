"""DIMACS errors of a factored point and the lower bound from a dual ``y``, from the sparse ``Z``.

Sign convention of this family: ``(P) min <C, X> s.t. A(X) = b, X psd``, ``(D) max b'y s.t.
A*(y) + Z = C, Z psd``.  For ANY ``y`` (not only a dual feasible one) and every feasible ``X``
with ``tr X <= T`` (``T`` from :func:`.reference.trace_upper`, where the identity is in the range of
``A*``: theta, thetaG, mcp, gpp, qap)::

    <C, X> = b'y + <Z, X> >= b'y + lambda_min(Z) tr X >= b'y + T min(0, lambda_min(Z))

(Jansson, Chaykin and Keil 2007, Theorem 2, a-priori trace bound form), so the right side is a
LOWER bound on the optimum of (P) (SDPLIB's maximisation problems have the negated optimum, so
it is an upper bound on their published value).  Only a lower bound on ``lambda_min(Z)`` of the
EXACT ``Z = C - A*(y)`` is needed.

How that eigenvalue bound is had, and which KIND of bound the result is:

* ``certified``: a block of order up to :data:`DENSE_MAX`: the computed sparse ``Z_j`` densified
  and ``numpy.linalg.eigvalsh``; lowered by ``n_j eps ||Z_j||_F`` (a backward-stable eigensolver,
  LAPACK's bound with constant 1, assumed as in :func:`.reference.lower_bound`) and by the
  Frobenius norm of the entrywise rounding bound of ``Z`` (Weyl), ``b'y`` lowered by
  ``gamma_m |b|'|y|`` and the result by two units: the same analysis as the dense reference's bound.
  A larger block: the sparse certificate of :mod:`psdbench.linalg.certify` (``lambda_max_upper``
  of ``-Z_j``: an LDL' factorization of ``Z_j - s I`` with its computed residual, rigorous in
  floating point without an eigensolver's assumption), the rounding of ``Z`` by Weyl likewise.
* ``estimate``: where that factorization does not fit its memory budget, the Lanczos value
  (``eigsh``) it falls back to.  A Ritz value lies ABOVE the smallest eigenvalue, so this bound
  may be too high: it is never called certified.
* ``none``: the data bound no trace.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench.families.sdp.data import SdpData
from psdbench.families.sdp.errors import DimacsErrors
from psdbench.families.sdp.lowrank.factored import Factored, gamma

#: blocks up to this order: dense eigenvalues (O(n^2) memory: 32 MB at 2000)
DENSE_MAX = 2000


def lambda_min_estimate(Zj: sp.spmatrix) -> float:
    """The smallest eigenvalue of a sparse symmetric block: dense up to :data:`DENSE_MAX`, else Lanczos."""
    s = Zj.shape[0]
    if s == 0:
        return float("inf")
    if s <= DENSE_MAX:
        return float(np.linalg.eigvalsh(Zj.toarray())[0])
    from scipy.sparse.linalg import eigsh

    return float(eigsh(Zj.tocsr(), k=1, which="SA", tol=1e-10, maxiter=20 * s, return_eigenvectors=False)[0])


def _sparse_certificate(Zj: sp.spmatrix) -> tuple[float, str]:
    """A lower bound on ``lambda_min`` of the computed sparse ``Zj`` and its kind, from
    :func:`psdbench.linalg.certify.lambda_max_upper` on ``-Zj`` (an LDL' factorization with its
    computed residual: certified; a Lanczos value where no factorization fits: estimate)."""
    from psdbench.linalg.certify import lambda_max_upper

    Zs = sp.csr_matrix(Zj)
    out = lambda_max_upper(-Zs, -lambda_min_estimate(Zs))
    return -float(out.value), ("certified" if out.certified else "estimate")


def lambda_min_lower(Zj: sp.spmatrix, Ej: sp.spmatrix) -> tuple[float, str]:
    """A lower bound on ``lambda_min`` of the exact block whose computed value is ``Zj`` with
    entrywise rounding bound ``Ej``, and its kind (``"certified"`` or ``"estimate"``)."""
    s = Zj.shape[0]
    if s == 0:
        return float("inf"), "certified"
    weyl = float(sp.linalg.norm(Ej)) if Ej.nnz else 0.0
    if s <= DENSE_MAX:
        dense = Zj.toarray()
        slack = s * np.finfo(float).eps * float(np.linalg.norm(dense))
        return float(np.linalg.eigvalsh(dense)[0]) - slack - weyl, "certified"
    value, kind = _sparse_certificate(Zj)
    return value - weyl, kind


def shift_dual(data: SdpData, y: np.ndarray) -> np.ndarray:
    """``y + min(0, lambda) w`` with ``A*(w) = I`` and ``lambda`` the estimated ``lambda_min(C - A*(y))``:
    the same lower bound ``b'y + T min(0, lambda)`` where ``T = w'b``, but with ``Z`` moved into the
    cone (``Z - lambda I``), so the point's err4 is rounding and err5 the gap.  ``y`` unchanged where
    the identity is not in the range of ``A*``."""
    w = data.trace_weights()
    y = np.asarray(y, dtype=float)
    if w is None:
        return y
    mats, z_lp = Factored.of(data).slack(y)
    lam = min([lambda_min_estimate(Zj) for Zj in mats] + ([float(z_lp.min())] if z_lp.size else []))
    return y + min(0.0, lam) * (1 + 1e-12) * w


def dual_bound(data: SdpData, y: np.ndarray) -> dict[str, Any]:
    """The lower bound on the optimum of (P) from ``y``, from the sparse ``Z`` (module docstring).

    Returns ``{"bound": float (NaN without a trace bound), "kind": "certified" | "estimate" |
    "none", "trace": T or NaN, "lambda_min_lower": float}``.
    """
    from psdbench.families.sdp.reference import trace_upper

    y = np.asarray(y, dtype=float)
    T = trace_upper(data)
    if T is None:
        return {"bound": float("nan"), "kind": "none", "trace": float("nan"), "lambda_min_lower": float("nan")}
    F = Factored.of(data)
    mats, z_lp = F.slack(y)
    errs, e_lp = F.slack_error(y)
    lam, kinds = np.inf, []
    for Zj, Ej in zip(mats, errs):
        v, k = lambda_min_lower(Zj, Ej)
        lam, kinds = min(lam, v), kinds + [k]
    if z_lp.size:
        lam = min(lam, float(np.min(z_lp - e_lp)))
    by = float(data.b @ y) - gamma(data.m) * float(np.abs(data.b) @ np.abs(y))
    out = by + T * min(0.0, lam)
    out = float(np.nextafter(out - 2 * np.finfo(float).eps * abs(out), -np.inf))
    kind = "estimate" if "estimate" in kinds else "certified"
    return {"bound": out, "kind": kind, "trace": float(T), "lambda_min_lower": float(lam)}


def factored_errors(data: SdpData, R: np.ndarray, x_lp: np.ndarray | None, y: np.ndarray) -> DimacsErrors:
    """The six DIMACS errors (:mod:`.errors`) of the factored point ``(R, x_lp, y)``, ``Z = C - A*(y)``.

    ``err2`` is 0 for the PSD blocks (``R R'`` is psd by construction; an LP block's smallest
    entry otherwise), ``err3`` is 0 (no ``Z`` returned), ``err4`` from :func:`lambda_min_estimate`
    of each sparse block (the same value the dense path computes up to :data:`DENSE_MAX`).
    """
    F = Factored.of(data)
    R = np.asarray(R, dtype=float)
    y = np.asarray(y, dtype=float)
    lp = F.lp_part(x_lp)
    nb, nc = 1.0 + data.norm_b_inf(), 1.0 + data.norm_C_inf()
    pobj, dobj = F.objective(R, lp), float(data.b @ y)
    mats, z_lp = F.slack(y)
    lx = min([0.0] * bool(F.psd) + ([float(lp.min())] if lp.size else []), default=np.inf)
    lz = min([lambda_min_estimate(Zj) for Zj in mats] + ([float(z_lp.min())] if z_lp.size else []), default=np.inf)
    scale = 1.0 + abs(pobj) + abs(dobj)
    err2, err4 = max(0.0, -lx / nb), max(0.0, -lz / nc)
    err6 = F.complementarity(R, lp, y) / scale if err2 == 0.0 and err4 == 0.0 else float("nan")
    err = (float(np.linalg.norm(F.A_op(R, lp) - data.b)) / nb, err2, 0.0, err4, (pobj - dobj) / scale, err6)
    return DimacsErrors(err=err, primal_obj=pobj, dual_obj=dobj, min_eig_X=float(lx), min_eig_Z=float(lz))
