"""The dual bound of the max-cut SDP from any ``y``, rounded up, with its kind.

Sign conventions.  Primal ``p* = max <C, X> s.t. diag(X) = 1, X psd``; dual
``min 1'y s.t. Z = Diag(y) - C psd``.  For any ``y`` and any feasible ``X`` (``tr X = n``):

    <C, X> = 1'y - <Diag(y) - C, X> = 1'y + <C - Diag(y), X> <= 1'y + n lambda_max(C - Diag(y)),

since ``<S, X> <= lambda_max(S) tr(X)`` for ``X`` psd.  So ``U(y) = 1'y + n lambda_max(C - Diag y)``
is an upper bound on ``p*`` for every ``y`` (dual feasible or not; it is ``1'y`` when
``lambda_max = 0``), and ``U`` is invariant under ``y -> y + c 1``.  ``lambda_max`` comes from
:func:`psdbench.linalg.certify.lambda_max_upper` (certified, or an estimate where the factor does not
fit) searched up from a Lanczos estimate, so the certified ``U`` is invariant too (up to rounding),
``1'y`` from ``math.fsum`` (correctly rounded), and every operation after is rounded up with
``nextafter``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from psdbench.linalg.certify import CERTIFIED, EigBound, lambda_max_upper, lanczos_estimate


@dataclass(frozen=True)
class DualBound:
    """``value`` >= p* when ``kind == "certified"``; ``eig`` is the eigenvalue bound behind it."""

    value: float
    kind: str
    reason: str
    sum_y: float
    eig: EigBound


def _up(x: float) -> float:
    return float(np.nextafter(np.float64(x), np.inf))


def slack_matrix(C: sp.csr_matrix, y: np.ndarray) -> sp.csr_matrix:
    """``S = C - Diag(y)`` (sparse, exactly symmetric)."""
    S = (C - sp.diags(np.asarray(y, dtype=float))).tocsr()
    S.sort_indices()
    return S


def dual_bound(C: sp.csr_matrix, y: np.ndarray, *, estimate: float | None = None, rtol: float = 1e-9,
               max_fill: int = 60_000_000, dense_max: int = 9000) -> DualBound:
    """``U(y) = 1'y + n lambda_max(C - Diag y)`` rounded up, with its kind.

    Parameters
    ----------
    C : csr_matrix
        The cost (symmetric).
    y : ndarray of shape (n,)
    estimate : float, optional
        An estimate of ``lambda_max(C - Diag y)``; default
        :func:`psdbench.linalg.certify.lanczos_estimate`, which moves with ``y -> y + c 1`` as
        ``lambda_max`` does, so the shift the certificate finds (from the estimate up) and the
        bound do not depend on ``c``.  (A fixed 0, right only for a nearly optimal dual, left
        ``y + c 1`` on Gershgorin's bound: 63 % to 715 % above ``U(y)`` on the graphs of
        ``benchmarks/scripts/maxcut/maxcut_bound_shift.py``.)
    rtol : float
        The certificate's first shift margin is ``rtol max(1, |1'y + n estimate|) / n``: its share
        of the bound (an estimate of ``U(y)``, invariant under ``y -> y + c 1`` where ``|1'y|`` is not).
    """
    y = np.asarray(y, dtype=float).ravel()
    n = y.size
    sy = math.fsum(y.tolist())
    S = slack_matrix(C, y)
    est = lanczos_estimate(S) if estimate is None else float(estimate)
    slack = max(rtol * max(1.0, abs(sy + n * est)) / max(n, 1), 1e-12)
    eb = lambda_max_upper(S, est, slack=slack, max_fill=max_fill, dense_max=dense_max)
    value = _up(_up(sy) + _up(n * eb.value))
    if eb.kind == CERTIFIED and not math.isfinite(value):
        return DualBound(math.inf, "none", eb.reason, sy, eb)
    return DualBound(value, eb.kind, eb.reason, sy, eb)
