"""Compiled row kernels of ``maxcut-rtr`` (:mod:`.solver`): the cost, gradient and Hessian on the
product of spheres ``M_p = {V in R^{n x p} : ||v_i|| = 1}``, one pass over ``C``'s CSR rows each.

With ``F(V) = -<C, V V'>`` (the minimization :mod:`.rtr` runs), ``H = C V`` and the multipliers
``y_i = v_i' h_i`` (so ``sum_i y_i = <C, V V'>``), the Riemannian gradient (the Euclidean gradient
``-2 C V`` projected row by row on the tangent space ``{U : u_i' v_i = 0}``) and Hessian are

    grad F(V)      = 2 (Diag(y) V - C V)       = 2 S V,        S = Diag(y) - C
    Hess F(V)[U]   = P_V(2 (Diag(y) U - C U))  = P_V(2 S U),   P_V(Z)_i = z_i - (z_i' v_i) v_i

(the Hessian of a function on a Riemannian submanifold: the projected Euclidean Hessian plus the
Weingarten term ``-Diag(v_i' (-2 C V)_i) U = 2 Diag(y) U``; P.-A. Absil, R. Mahony, R. Sepulchre,
*Optimization Algorithms on Matrix Manifolds*, Princeton 2008, Section 5.5; N. Boumal, *An
Introduction to Optimization on Smooth Manifolds*, Cambridge 2023, Section 7.7, the oblique
manifold).  Each kernel reads a row of ``C`` (all its entries, the diagonal included) once and
writes one row of its output, so a product costs ``O(nnz(C) p)`` with no n x p temporary; sums run
over the columns in their stored order (deterministic, no fastmath).
"""

from __future__ import annotations

import numpy as np

try:
    from numba import njit
except ImportError:  # pragma: no cover - numba is a dependency of the family
    njit = None


def _gradient_py(indptr, indices, data, V, H, G, y):
    """``H = C V``, ``y_i = v_i' h_i``, ``G = 2 (Diag(y) V - H)`` (the Riemannian gradient, tangent
    at ``V`` when its rows are unit); returns ``sum_i y_i = <C, V V'>``."""
    n, p = V.shape
    total = 0.0
    for i in range(n):
        for t in range(p):
            H[i, t] = 0.0
        for q in range(indptr[i], indptr[i + 1]):
            j = indices[q]
            c = data[q]
            for t in range(p):
                H[i, t] += c * V[j, t]
        d = 0.0
        for t in range(p):
            d += H[i, t] * V[i, t]
        y[i] = d
        total += d
        for t in range(p):
            G[i, t] = 2.0 * (d * V[i, t] - H[i, t])
    return total


def _hessian_py(indptr, indices, data, V, U, y, out):
    """``out = P_V(2 (Diag(y) U - C U))``, the Riemannian Hessian at ``V`` applied to ``U``; returns
    ``<U, out>`` (summed as the rows are written: no second pass).

    The row's neighbours are taken two at a time (``z <- (z - 2 c_a u_a) - 2 c_b u_b``: the same
    order of additions as one at a time, with half the loads and stores of ``z``; 15-20 % faster on
    maxG11 and maxG60 at ranks 14-22).
    """
    n, p = V.shape
    z = np.empty(p)
    uh = 0.0
    for i in range(n):
        q = indptr[i]
        q1 = indptr[i + 1]
        yi2 = 2.0 * y[i]
        for t in range(p):
            z[t] = yi2 * U[i, t]
        while q + 1 < q1:
            ja = indices[q]
            ca = 2.0 * data[q]
            jb = indices[q + 1]
            cb = 2.0 * data[q + 1]
            for t in range(p):
                z[t] = (z[t] - ca * U[ja, t]) - cb * U[jb, t]
            q += 2
        if q < q1:
            ja = indices[q]
            ca = 2.0 * data[q]
            for t in range(p):
                z[t] -= ca * U[ja, t]
        d = 0.0
        for t in range(p):
            d += z[t] * V[i, t]
        for t in range(p):
            zt = z[t] - d * V[i, t]
            out[i, t] = zt
            uh += U[i, t] * zt
    return uh


def _retract_py(V, E, out):
    """``out_i = (v_i + e_i) / ||v_i + e_i||``: the metric projection retraction of ``M_p``
    (Absil, Mahony and Sepulchre 2008, Example 4.1.1, row by row)."""
    n, p = V.shape
    for i in range(n):
        s = 0.0
        for t in range(p):
            w = V[i, t] + E[i, t]
            out[i, t] = w
            s += w * w
        inv = 1.0 / np.sqrt(s)
        for t in range(p):
            out[i, t] *= inv


def _project_py(V, Z):
    """``Z <- P_V(Z)`` in place: each row minus its component along ``v_i``."""
    n, p = V.shape
    for i in range(n):
        d = 0.0
        for t in range(p):
            d += Z[i, t] * V[i, t]
        for t in range(p):
            Z[i, t] -= d * V[i, t]


def _sum_diff_py(Vn, V, Hn, H):
    """``<C, Vn Vn'> - <C, V V'> = sum((Vn - V) * (Hn + H))`` with ``H = C V``, ``Hn = C Vn`` (exact for a
    symmetric ``C``): the decrease of ``F`` at the accuracy of the step, not of ``|F|``."""
    n, p = V.shape
    s = 0.0
    for i in range(n):
        for t in range(p):
            s += (Vn[i, t] - V[i, t]) * (Hn[i, t] + H[i, t])
    return s


def _dot(A, B):
    s = 0.0
    n, p = A.shape
    for i in range(n):
        for t in range(p):
            s += A[i, t] * B[i, t]
    return s


def _tcg_py(indptr, indices, data, V, y, G, delta, kappa, theta, max_inner, eta, r, d, Hd):
    """Truncated CG (Steihaug-Toint; Absil, Mahony and Sepulchre 2008, Algorithm 11) on the model
    ``<G, eta> + <eta, Hess[eta]> / 2`` in ``||eta|| <= delta``, identity preconditioner, in place.

    ``eta`` is written (``Hess[eta]`` is not carried: one product after, by the caller); ``r``, ``d``,
    ``Hd`` are work arrays (n x p).
    Stops at negative curvature or the boundary (then ``eta`` is moved to the boundary along ``d``),
    or when ``||r_j|| <= ||r_0|| min(||r_0||^theta, kappa)``, or after ``max_inner`` steps.  Returns
    ``(at_boundary, steps)``.  The residual is projected back on the tangent space every step (rounding
    drifts it off), fused with the updates in one pass over the rows.
    """
    n, p = V.shape
    for i in range(n):
        for t in range(p):
            eta[i, t] = 0.0
            r[i, t] = G[i, t]
            d[i, t] = -G[i, t]
    rr = _dot(r, r)
    r0 = np.sqrt(rr)
    stop_at = r0 * min(r0 ** theta, kappa)
    e_e = 0.0
    e_d = 0.0
    d_d = rr
    dd2 = delta * delta
    for j in range(1, max_inner + 1):
        dHd = _hessian(indptr, indices, data, V, d, y, Hd)
        if dHd > 0.0:
            alpha = rr / dHd
            e_e_new = e_e + 2.0 * alpha * e_d + alpha * alpha * d_d
        if dHd <= 0.0 or e_e_new >= dd2:
            tau = (-e_d + np.sqrt(max(e_d * e_d + d_d * (dd2 - e_e), 0.0))) / d_d
            for i in range(n):
                for t in range(p):
                    eta[i, t] += tau * d[i, t]
            return True, j
        e_e = e_e_new
        rr_new = 0.0
        for i in range(n):
            dv = 0.0
            for t in range(p):
                eta[i, t] += alpha * d[i, t]
                r[i, t] += alpha * Hd[i, t]
                dv += r[i, t] * V[i, t]
            for t in range(p):
                r[i, t] -= dv * V[i, t]
                rr_new += r[i, t] * r[i, t]
        if np.sqrt(rr_new) <= stop_at:
            return False, j
        beta = rr_new / rr
        rr = rr_new
        for i in range(n):
            for t in range(p):
                d[i, t] = -r[i, t] + beta * d[i, t]
        e_d = beta * (e_d + alpha * d_d)
        d_d = rr + beta * beta * d_d
    return False, max_inner


if njit is not None:
    gradient = njit(cache=True, nogil=True)(_gradient_py)
    hessian = _hessian = njit(cache=True, nogil=True)(_hessian_py)
    _dot = njit(cache=True, nogil=True)(_dot)
    tcg = njit(cache=True, nogil=True)(_tcg_py)
    retract = njit(cache=True, nogil=True)(_retract_py)
    project = njit(cache=True, nogil=True)(_project_py)
    sum_diff = njit(cache=True, nogil=True)(_sum_diff_py)
else:  # pragma: no cover
    gradient = hessian = retract = project = sum_diff = tcg = None


def csr_arrays(C) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(indptr, indices, data)`` of a CSR matrix with sorted rows (new, writable arrays), indices in
    int32 when they fit."""
    C = C.tocsr()
    if not C.has_sorted_indices:
        C = C.sorted_indices()
    itype = np.int32 if max(C.shape[0], C.nnz) < 2**31 - 1 else np.int64
    # always copies: the harness freezes an instance's arrays (read-only), and numba compiles a
    # read-only argument as another type, which would compile the kernels again in the timed solve
    return (np.array(C.indptr, dtype=itype), np.array(C.indices, dtype=itype), np.array(C.data, dtype=float))
