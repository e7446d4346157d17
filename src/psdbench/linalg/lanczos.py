"""Estimates of the largest eigenvalue of a symmetric matrix (not bounds): where the certificate of
:mod:`.certify` starts its shift search, and what solvers stop on.

* :func:`lanczos_estimate`: the plain three-term Lanczos recurrence with a test invariant under
  ``S -> S - c I`` (the docstring has the measurements), optionally stopped as soon as the estimate
  passes a threshold;
* :func:`lanczos_lambda_max`: ARPACK's Lanczos (``eigsh``), its own relative test.
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla


def _is_sparse(A) -> bool:
    return sp.issparse(A)


def lanczos_lambda_max(S, *, tol: float = 1e-8, seed: int = 0, maxiter: int = 3000) -> float:
    """Largest eigenvalue of symmetric ``S`` by ARPACK's Lanczos (an estimate, not a bound): the
    largest Ritz value found when ARPACK stops at ``maxiter`` restarts unconverged."""
    n = S.shape[0]
    if n <= 400:
        Sd = S.toarray() if _is_sparse(S) else np.asarray(S)
        return float(np.linalg.eigvalsh(Sd)[-1])
    v0 = np.random.default_rng(seed).standard_normal(n)
    try:
        w = spla.eigsh(S, k=1, which="LA", tol=tol, v0=v0, return_eigenvectors=False, maxiter=maxiter)
    except spla.ArpackNoConvergence as exc:  # the Ritz values found so far (lower estimates)
        w = exc.eigenvalues if len(exc.eigenvalues) else np.zeros(1)
    return float(np.max(w))


def lanczos_estimate(S, *, tol: float = 1e-10, max_steps: int = 3000, check: int = 25, seed: int = 0,
                     above: float | None = None, counts: dict | None = None) -> float:
    """An estimate of ``lambda_max(S)`` (not a bound) at a bounded cost that moves by ``-c`` when ``S``
    moves to ``S - c I`` (up to rounding): where :func:`lambda_max_upper` starts its search.

    Up to 400 rows: dense ``eigvalsh``.  Larger: the plain Lanczos recurrence (three terms, no
    reorthogonalization; one product with ``S`` and O(n) more per step, three vectors kept) on
    ``S - mu I``, ``mu`` the mean of the diagonal, from a seeded Gaussian start, returning the
    largest Ritz value of the tridiagonal ``T_m`` plus ``mu``.  Every ``check`` steps it stops when
    that Ritz value's residual estimate ``beta_m |s_m|`` (``s`` its eigenvector of ``T_m``) is at most
    ``tol`` times the spread of ``T_m``'s Ritz values, else at ``max_steps``.  Both the Krylov space and
    that test are invariant under ``S -> S - c I`` (a max-cut dual ``y + c 1``), where ARPACK's test,
    relative to the Ritz value itself, is the strictest at a nearly optimal dual (``lambda_max ~ 0``:
    :func:`lanczos_lambda_max` took 440 s on the 10^6-node torus) and the loosest far from it.  The
    largest Ritz value lies below ``lambda_max`` up to rounding (also after orthogonality is lost:
    C. C. Paige, Linear Algebra Appl. 34 (1980), the loss shows as copies of converged Ritz values,
    not as values outside the spectrum), so an unconverged estimate errs low and the search grows
    its shift from it.  Measured at nearly optimal max-cut duals (errors against ARPACK at 1e-14):
    maxG51 and maxG60 stop converged after 1,175 and 1,575 steps (error below 1e-13); at the
    3,000-step cap the 100 x 200 torus is within 4e-15 (about 1 s), the 300 x 300 torus within
    8e-9 (2 s); the cap costs 33 s on the 10^6-node torus (13 ms per product with ``S``).

    ``above``: when given, the recurrence also stops as soon as the largest Ritz value exceeds it (a
    caller that only needs to know whether ``lambda_max > above``: the Ritz value only grows with
    the steps, so the answer is then known; the value returned is that Ritz value).
    ``counts``: when given, ``counts["steps"]`` is set to the products with ``S`` made.
    """
    from scipy.linalg import eigh_tridiagonal

    n = S.shape[0]
    if n == 0:
        return -math.inf
    if n <= 400:
        Sd = S.toarray() if _is_sparse(S) else np.asarray(S, dtype=float)
        if counts is not None:
            counts["steps"] = n
        return float(np.linalg.eigvalsh(Sd)[-1])
    m = 0
    mu = float(np.mean(S.diagonal() if _is_sparse(S) else np.diag(S)))
    q = np.random.default_rng(seed).standard_normal(n)
    q /= np.linalg.norm(q)
    q_prev = np.zeros(n)
    steps = max(1, min(int(max_steps), 10 * n))
    alpha, beta = np.zeros(steps), np.zeros(steps)
    b = 0.0
    theta = math.nan
    axpy = sla.blas.daxpy  # y += a x in place (no temporaries: O(n) per call at 10^6 rows)
    for j in range(steps):
        w = np.ascontiguousarray(S @ q, dtype=float).ravel()  # a new vector
        w = axpy(q, w, a=-mu)
        if j:
            w = axpy(q_prev, w, a=-b)
        a = float(q @ w)
        w = axpy(q, w, a=-a)
        b = float(np.linalg.norm(w))
        alpha[j], beta[j] = a, b
        m = j + 1
        if not (b > 0.0) or m % check == 0 or m == steps:
            top, vec = eigh_tridiagonal(alpha[:m], beta[:m - 1], select="i", select_range=(m - 1, m - 1))
            low = eigh_tridiagonal(alpha[:m], beta[:m - 1], eigvals_only=True, select="i", select_range=(0, 0))
            theta = float(top[0])
            if not (b > 0.0) or b * abs(vec[-1, 0]) <= tol * float(top[0] - low[0]):
                break
            if above is not None and theta + mu > above:
                break
        w /= b
        q_prev, q = q, w
    if counts is not None:
        counts["steps"] = m
    return theta + mu
