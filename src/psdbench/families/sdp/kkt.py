"""SCS-form relative KKT residuals of a point: the SCS benchmark page's accuracy measures.

The page (SCS's benchmarks, run with bodono/solver_benchmarks) judges a point by residuals it
recomputes from the returned vectors and the problem data (``solver_benchmarks/analysis/kkt.py``,
``cone_residuals``), on the cone form SCS is given.  Its SDPA transform hands SCS the dual of an
SDP: ``min q'x s.t. A x + s = b, s in K`` with ``x = y``, ``q = -b_sdp``, ``A x = svec(A*(y))``,
``b = svec(C)``, ``s = svec(Z)``, and the cone's dual variable ``svec(X)``; ``svec`` scales
off-diagonal entries by sqrt(2) (:mod:`.svec`).  In that form, for psdbench's (X, y, Z)::

    primal_res_rel = ||svec(A*(y) + Z - C)||_inf / (1 + max(||svec(A*(y))||_inf, ||svec(Z)||_inf, ||svec(C)||_inf))
    dual_res_rel   = ||A(X) - b||_inf / (1 + max(||A(X)||_inf, ||b||_inf))
    gap_rel        = |<C, X> - b'y| / (1 + |<C, X>| + |b'y|)

(SCS's "primal" residual is the SDP's dual one and vice versa.)  The page's tables bucket a point
by the largest of these three (``kkt_worst_rel`` here; its ``tables.py`` ``residual_fields``).
When a solver returns no ``Z``, ``s = svec(C - A*(y))`` and ``primal_res_rel`` is 0.

The cone conditions.  The page's verification of a claimed optimum (``analysis/derive.py``,
``kkt_verify``: ``CONE_FIELDS``) also holds the distances of ``s`` and of the cone's dual variable
to their cones, "scaled like the equality residuals (by 1 + the size of the primal, respectively
dual, data)" (its comment), since "a point that satisfies Ax + s = b with s outside K is not
feasible"::

    primal_cone_res_rel = ||svec(Z - Pi(Z))||_inf / (1 + max(||svec(A*(y))||_inf, ||svec(Z)||_inf, ||svec(C)||_inf))
    dual_cone_res_rel   = ||svec(X - Pi(X))||_inf / (1 + max(||A(X)||_inf, ||b||_inf))

``Pi`` the projection on the PSD cone (per block: negative eigenvalues set to 0; an LP block's
negative entries).  They are 0 for a point inside the cone, and recorded as ``scs_primal_cone_res_rel``
and ``scs_dual_cone_res_rel`` beside the three residuals.
"""

from __future__ import annotations

import numpy as np

from .data import SdpData
from psdbench.families.sdp.solvers.svec import SQRT2


def svec_weights(data: SdpData) -> np.ndarray:
    """Per stacked entry, its factor in svec: sqrt(2) off the diagonal of a PSD block, else 1."""
    parts = []
    for s in data.block_sizes:
        if s > 0:
            w = np.full((s, s), SQRT2)
            np.fill_diagonal(w, 1.0)
            parts.append(w.ravel())
        else:
            parts.append(np.ones(-s))
    return np.concatenate(parts) if parts else np.zeros(0)


def scs_residuals(data: SdpData, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None) -> dict[str, float]:
    """The three relative residuals and their largest (see the module docstring).

    Parameters
    ----------
    data : SdpData
    x, z : ndarray of shape (N,)
        ``X`` and (optional) ``Z``, stacked (see :mod:`.data`).
    y : ndarray of shape (m,)
    """
    w = svec_weights(data)

    def inf(v: np.ndarray) -> float:  # ||svec(V)||_inf of a stacked V
        return float(np.max(np.abs(v) * w, initial=0.0))

    c = data.c_dense()
    aty = data.At_op(y)
    z = c - aty if z is None else np.asarray(z, dtype=float)
    ax = data.A_op(x)
    pobj, dobj = float(c @ x), float(data.b @ y)
    out = {"scs_primal_res_rel": inf(aty + z - c) / (1 + max(inf(aty), inf(z), inf(c))),
           "scs_dual_res_rel": float(np.max(np.abs(ax - data.b), initial=0.0))
           / (1 + max(float(np.max(np.abs(ax), initial=0.0)), data.norm_b_inf())),
           "scs_gap_rel": abs(pobj - dobj) / (1 + abs(pobj) + abs(dobj))}
    out["kkt_worst_rel"] = max(out.values())
    out["scs_primal_cone_res_rel"] = inf(negative_part(data, z)) / (1 + max(inf(aty), inf(z), inf(c)))
    out["scs_dual_cone_res_rel"] = inf(negative_part(data, x)) / (1 + max(float(np.max(np.abs(ax), initial=0.0)),
                                                                          data.norm_b_inf()))
    return out


def negative_part(data: SdpData, v: np.ndarray) -> np.ndarray:
    """``v - Pi(v)`` of a stacked ``v``: per PSD block the part of its negative eigenvalues
    (``sum_{lambda_i < 0} lambda_i u_i u_i'``), per LP entry ``min(v, 0)``; zero for a block whose
    smallest eigenvalue is not negative (no eigenvectors computed)."""
    parts = []
    for B, s in zip(data.split(np.asarray(v, dtype=float)), data.block_sizes):
        if s > 0:
            S = (B + B.T) / 2
            if float(np.linalg.eigvalsh(S)[0]) >= 0.0:
                parts.append(np.zeros(s * s))
                continue
            lam, U = np.linalg.eigh(S)
            neg = lam < 0
            parts.append(((U[:, neg] * lam[neg]) @ U[:, neg].T).ravel())
        else:
            parts.append(np.minimum(B, 0.0))
    return np.concatenate(parts) if parts else np.zeros(0)
