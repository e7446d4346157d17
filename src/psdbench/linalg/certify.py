"""Eigenvalue bounds of symmetric matrices that are rigorous in floating point, without an eigensolver.

The certificate is an exactly PSD matrix close to ``A - s I`` and a rigorous bound on the distance.

Method (Weyl's inequality on an LDL^T factorization with a computed residual)
-----------------------------------------------------------------------------
Let ``A`` be symmetric (its stored floats), ``s`` a float. Factor ``M = fl(A - s I)`` as
``M ~ L D L^T`` with any floating-point code (dense: LAPACK Cholesky, ``L = R^T``, ``D = I``;
sparse: SuperLU on a symmetric fill-reducing ordering with no pivoting, ``D = diag(U)``). Nothing
of the analysis depends on how accurate the factorization is: the stored ``L`` and ``D`` are exact
real numbers, and if every ``d_k >= 0`` then ``P = L D L^T`` (computed in exact arithmetic) is
positive semidefinite. With ``E = (A - s I) - P`` (exact), Weyl's inequality gives

    lambda_min(A) >= s + lambda_min(P) - ||E||_2 >= s - ||E||_2.

``E`` is bounded from computed quantities. Let ``P^ = fl(L (D L^T))`` (each entry a sum of at most
``k`` products, ``k`` the largest number of nonzeros in a row of ``L``; one more rounding for the
product with ``D``) and ``R^ = fl(M - P^)``. With ``u = 2^-53`` and ``gamma_m = m u / (1 - m u)``
(Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed., Lemma 3.1 and eq. (3.5) for inner
products in any order):

    |M - (A - s I)|  <= u |M|            (diagonal entries only: one subtraction each)
    |P^ - P|         <= gamma_{k+1} |L| |D| |L^T|
    |R^ - (M - P^)|  <= u |R^|

so ``|E| <= (1 + u) |R^| + u |diag M| + gamma_{k+1} |L||D||L^T|`` entrywise (``gamma_{k+2}`` in the
sparse path, whose products ``(l_jk d_k) l_ik`` round twice: :mod:`.ldlt_residual`). For a symmetric
matrix, ``||E||_2 <= || |E| ||_inf`` (the spectral radius is at most any induced norm), hence

    ||E||_2 <= max_i [ (1+u) |R^| 1 + u |diag M| + gamma_{k+1} |L| (|D| (|L^T| 1)) ]_i.

The right side is a sum of nonnegative terms computed in floating point; each computed row sum of
at most ``m`` nonnegative terms is within a factor ``(1 + gamma_m)`` of the exact one, so the
computed value is multiplied by ``(1 + gamma_{m + 4})^2`` (``m`` = the largest row length among
``R^``, ``L``, ``L^T``) and rounded up with ``nextafter``; so are the final ``s - bound`` (rounded
down) and every bound this module returns. Wherever an IEEE operation rounds to nearest, its
result is within a relative ``u`` of the exact one; the final inflations by ``nextafter`` cover it.

Cost: the factorization and the product ``L D L^T``, whose pattern lies inside that of
``L + L^T`` (the rows of a column of ``L`` form a clique of the filled graph), so the residual adds
no fill. The ordering: SuperLU's minimum degree where the reverse Cuthill-McKee envelope (an
O(nnz) bound on the fill) fits the budget; otherwise METIS's nested dissection, whose factor's fill
is counted exactly before factoring (:mod:`.ordering`; a 1000 x 1000 torus: 4.4e7 nonzeros against
an envelope of 1.3e9). Where neither fits the memory budget (a random graph with 10^6 nodes) the
bound falls back to a Lanczos estimate and says so: its ``kind`` is ``"estimate"`` with the reason.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from .lanczos import lanczos_estimate, lanczos_lambda_max  # noqa: F401 (re-exported: estimates live there)
from .ordering import dissection_within, envelope_size

U = 2.0**-53

CERTIFIED = "certified"
ESTIMATE = "estimate"


@dataclass(frozen=True)
class EigBound:
    """An eigenvalue bound with its kind.

    Attributes
    ----------
    value : float
        The bound (a lower bound of ``lambda_min`` or an upper bound of ``lambda_max``).
    kind : str
        ``"certified"`` (rigorous in floating point, see the module docstring) or ``"estimate"``
        (a Lanczos value, not a bound).
    reason : str
        How it was obtained, or why no certificate could be had.
    shift : float
        The shift of the certificate (``nan`` for an estimate).
    residual : float
        The bound on ``||E||_2`` (``nan`` for an estimate).
    """

    value: float
    kind: str
    reason: str
    shift: float = math.nan
    residual: float = math.nan

    @property
    def certified(self) -> bool:
        return self.kind == CERTIFIED


def gamma(m: int) -> float:
    """``gamma_m = m u / (1 - m u)`` (Higham eq. (3.8)), rounded up."""
    mu = m * U
    if mu >= 0.5:
        return math.inf
    return float(np.nextafter(mu / (1.0 - mu) * (1 + 4 * U), np.inf))


def _up(x: float) -> float:
    return float(np.nextafter(np.float64(x), np.inf))


def _down(x: float) -> float:
    return float(np.nextafter(np.float64(x), -np.inf))


def _is_sparse(A) -> bool:
    return sp.issparse(A)


def _dense_factor(M: np.ndarray) -> tuple[np.ndarray | None, str]:
    """Upper Cholesky factor of dense ``M`` or None (with the reason) when a pivot is not positive."""
    try:
        R = sla.cholesky(M, lower=False, check_finite=False, overwrite_a=False)
    except np.linalg.LinAlgError as exc:
        return None, f"Cholesky failed: {exc}"
    if not np.all(np.isfinite(np.diag(R))) or np.any(np.diag(R) <= 0):
        return None, "Cholesky returned a nonpositive pivot"
    return R, ""


def _dense_residual_bound(M: np.ndarray, R: np.ndarray) -> float:
    """Rigorous bound on ``||M_exact - R^T R||_2`` (``D = I``, ``L = R^T``); see the module docstring."""
    n = M.shape[0]
    # P^ = fl(R^T R) by the BLAS rank-k update (upper triangle), symmetrised by copy
    P = sla.blas.dsyrk(1.0, R, trans=1, lower=0)
    P = np.triu(P) + np.triu(P, 1).T
    Rh = M - P
    del P
    absR = np.abs(Rh)
    rowR = absR.sum(axis=1)
    del absR, Rh
    aR = np.abs(R)
    rowLL = aR.T @ (aR @ np.ones(n))  # |L| (|L^T| 1) with L = R^T
    k = int(np.max(np.count_nonzero(R, axis=0))) if n else 0
    tot = (1 + U) * rowR + U * np.abs(np.diag(M)) + gamma(k + 1) * rowLL
    m = n + 4
    return _up(float(np.max(tot)) * (1 + gamma(m)) ** 2) if n else 0.0


def _sparse_factor(M: sp.csc_matrix, max_fill: int, ordering: dict | None = None, max_envelope: int | None = None):
    """LDL^T of sparse ``M`` by SuperLU with no pivoting on a symmetric ordering: minimum degree
    (SuperLU's MMD on ``A + A^T``) when the envelope fits, else METIS's nested dissection with its
    fill counted exactly first (:func:`.ordering.dissection_within`).

    Returns ``(L, d, perm, reason)`` with ``L D L^T ~ M[perm][:, perm]``; ``L`` is None when a pivot
    is not positive, the ordering is not symmetric or the fill exceeds ``max_fill`` nonzeros.
    ``ordering`` (a dict the caller keeps between calls on one pattern, e.g. several shifts) keeps
    the permutation: later calls factor the permuted matrix in its natural order, with no new
    minimum-degree ordering and no envelope check.  ``max_envelope`` (default ``max_fill``) is the
    envelope refused before factoring: the envelope overstates the minimum-degree fill, on kNN
    graphs by 50x (30,537 nodes of cod-rna: 312M against 5.5M), so a caller may allow a larger one
    and rely on the fill check after the factorization.  Whenever the envelope exceeds ``max_fill``,
    a nested-dissection ordering whose exact fill fits ``max_fill`` is used first (a factor known
    to fit before it runs; on cod-rna's kNN graphs it is also the sparser: 2.2e7 nonzeros at
    244,284 nodes, where minimum degree had 3.1e7 at 81,429); minimum degree only when it does not.
    """
    n = M.shape[0]
    known = ordering is not None and ordering.get("n") == n and "perm" in ordering
    if not known:
        env = envelope_size(M)
        cap = max_fill if max_envelope is None else max_envelope
        if env > max_fill:  # the envelope does not show that a minimum-degree factor fits
            perm, why = dissection_within(M, max_fill, f"fill: the reverse Cuthill-McKee envelope has {env}"
                                                      f" nonzeros, over the budget of {cap}")
            if perm is not None:  # a factor known to fit before it runs
                if ordering is None:
                    ordering = {}
                ordering.update(n=n, perm=perm, method="METIS nested dissection")
                known = True
            elif env > cap:
                return None, None, None, why
    opts = dict(SymmetricMode=True)
    try:
        if known:
            perm = ordering["perm"]
            lu = spla.splu(M.tocsr()[perm][:, perm].tocsc(), permc_spec="NATURAL", diag_pivot_thresh=0.0,
                           options=opts)
            if not (np.array_equal(lu.perm_r, np.arange(n)) and np.array_equal(lu.perm_c, np.arange(n))):
                return None, None, None, "SuperLU pivoted off the diagonal"
        else:
            lu = spla.splu(M, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options=opts)
            if not np.array_equal(lu.perm_r, lu.perm_c):
                return None, None, None, "SuperLU pivoted off the diagonal"
            perm = np.argsort(lu.perm_c)
            if ordering is not None:
                ordering.update(n=n, perm=perm, method="MMD")
    except (RuntimeError, MemoryError) as exc:  # singular pivot or SuperLU out of memory
        return None, None, None, f"SuperLU failed: {type(exc).__name__}: {exc}"
    if lu.L.nnz > max_fill:
        return None, None, None, f"factor fill {lu.L.nnz} nonzeros exceeds the budget {max_fill}"
    d = lu.U.diagonal()
    if not np.all(np.isfinite(d)) or np.any(d <= 0):
        return None, None, None, f"{int(np.sum(~(d > 0)))} nonpositive pivots"
    return lu.L.tocsc(), d, perm, ""


def _sparse_residual_bound(Mp: sp.csr_matrix, L: sp.csc_matrix, d: np.ndarray) -> float:
    """Rigorous bound on ``||Mp_exact - L D L^T||_2`` for the permuted sparse ``Mp``.

    ``|R^| 1`` comes from :func:`.ldlt_residual.residual_rowsums` (left-looking, on ``L``'s pattern;
    each product ``(l_jk d_k) l_ik`` has two roundings, hence ``gamma_{k+2}``).
    """
    from .ldlt_residual import residual_rowsums

    n = Mp.shape[0]
    if n == 0:
        return 0.0
    Lc = sp.csc_matrix(L)
    rowR = residual_rowsums(Mp, Lc, d)
    aL = abs(Lc)
    rowLL = aL @ (np.abs(d) * (aL.T @ np.ones(n)))
    Lr = Lc.tocsr()
    k = int(np.max(np.diff(Lr.indptr)))
    tot = (1 + U) * rowR + U * np.abs(Mp.diagonal()) + gamma(k + 2) * rowLL
    m = 2 * max(k, int(np.max(np.diff(Lc.indptr))), int(np.max(np.diff(sp.csr_matrix(Mp).indptr)))) + 4
    return _up(float(np.max(tot)) * (1 + gamma(m)) ** 2)


def _symmetric(A) -> bool:
    if _is_sparse(A):
        D = (A - A.T).tocoo()
        return D.nnz == 0 or not np.any(D.data)
    return bool(np.array_equal(A, A.T))


def certify_psd(A, shift: float, *, max_fill: int = 60_000_000, dense_max: int = 9000,
                residual: bool = True, ordering: dict | None = None, max_envelope: int | None = None) -> EigBound:
    """A lower bound on ``lambda_min(A)`` from one factorization of ``A - shift I``.

    Parameters
    ----------
    A : ndarray or scipy.sparse matrix
        Symmetric (exactly, as stored).
    shift : float
        ``s``; choose it slightly below an estimate of ``lambda_min(A)``.
    max_fill : int
        Largest number of nonzeros of a sparse factor (about 12 bytes each, twice).
    dense_max : int
        A sparse ``A`` with at most this many rows is factored densely when its factor's fill would
        exceed a quarter of ``n^2`` (a random graph): LAPACK's blocked Cholesky is faster then.
    ordering : dict, optional
        Kept by the caller between calls on one sparsity pattern (:func:`_sparse_factor`).
    max_envelope : int, optional
        The reverse Cuthill-McKee envelope refused before factoring (default ``max_fill``).
    residual : bool
        False: only whether every pivot is positive (``value`` is ``shift`` then, NOT a bound:
        ``kind="estimate"``); used to search for a shift before the one certified.

    Returns
    -------
    EigBound
        ``kind="certified"`` and ``value = s - ||E||`` rounded down when every pivot is positive;
        otherwise ``value = -inf`` (``kind="certified"`` still: nothing is claimed) with the reason.
    """
    n = A.shape[0]
    if A.shape != (n, n):
        raise ValueError("A must be square")
    if not _symmetric(A):
        raise ValueError("A must be exactly symmetric")
    s = float(shift)
    if n == 0:
        return EigBound(math.inf, CERTIFIED, "empty matrix", s, 0.0)
    if _is_sparse(A):
        M = (A.tocsc() - s * sp.eye(n, format="csc")).tocsc()
        M.sum_duplicates()
        ordering = {} if ordering is None else ordering
        L, d, perm, why = _sparse_factor(M, max_fill, ordering, max_envelope)
        if L is None and n <= dense_max and "fill" in why:
            return certify_psd(A.toarray(), s, residual=residual)
        if L is None:
            return EigBound(-math.inf, CERTIFIED, f"no certificate at shift {s:g}: {why}", s)
        if not residual:
            return EigBound(s, ESTIMATE, "pivots positive (no residual computed)", s)
        Mp = M.tocsr()[perm][:, perm].tocsr()
        res = _sparse_residual_bound(Mp, L, d)
        how = f"sparse LDL^T (SuperLU, {ordering.get('method', 'MMD')} ordering, {L.nnz} nonzeros)"
    else:
        A = np.asarray(A, dtype=float)
        M = A - s * np.eye(n)
        R, why = _dense_factor(M)
        if R is None:
            return EigBound(-math.inf, CERTIFIED, f"no certificate at shift {s:g}: {why}", s)
        if not residual:
            return EigBound(s, ESTIMATE, "pivots positive (no residual computed)", s)
        res = _dense_residual_bound(M, R)
        how = "dense Cholesky (LAPACK)"
    value = _down(_down(s) - res) if math.isfinite(res) else -math.inf
    return EigBound(value, CERTIFIED, f"{how} at shift {s:.6g}, residual bound {res:.3g}", s, res)


def gershgorin_lambda_max(S) -> float:
    """``max_i (s_ii + sum_{j != i} |s_ij|)``, rounded up: a rigorous upper bound on ``lambda_max(S)``.

    The off-diagonal row sums of ``m`` nonnegative terms are inflated by ``1 + gamma_{m+2}``, the
    final sum with the diagonal rounded up with ``nextafter``.
    """
    n = S.shape[0]
    if n == 0:
        return -math.inf
    if _is_sparse(S):
        Sc = sp.csr_matrix(S)
        d = Sc.diagonal()
        r = np.asarray(abs(Sc - sp.diags(d)).sum(axis=1)).ravel()
        m = int(np.max(np.diff(Sc.indptr)))
    else:
        Sd = np.asarray(S, dtype=float)
        d = np.diag(Sd).copy()
        r = np.abs(Sd).sum(axis=1) - np.abs(d)
        r = np.maximum(r, 0.0) * (1 + gamma(n + 2)) + np.abs(d) * gamma(n + 2)  # |d| was subtracted in rounding
        m = n
    vals = np.nextafter(d + r * (1 + gamma(m + 2)), np.inf)
    return _up(float(np.max(vals)))


def lambda_max_upper(S, estimate: float | None = None, *, slack: float | None = None,
                     tries: int = 14, growth: float = 8.0, refine: int = 3, max_fill: int = 60_000_000,
                     dense_max: int = 9000, max_envelope: int | None = None) -> EigBound:
    """An upper bound on ``lambda_max(S)``, certified where a factorization fits.

    ``lambda_max(S) = -lambda_min(-S)``: the bound certifies ``t I - S`` PSD at
    ``t = estimate + delta``, with ``delta`` grown ``growth``-fold from ``slack`` (default
    ``1e-9 max(1, ||S||_inf)``) until a factorization has positive pivots (a failed one costs one
    factorization, no residual).  The estimate only chooses where the search starts; what is
    certified is decided by the factorization alone.

    Parameters
    ----------
    S : ndarray or scipy.sparse matrix
        Symmetric.
    estimate : float, optional
        An estimate of ``lambda_max(S)``; when omitted, :func:`lanczos_estimate` (bounded cost, and
        moved by ``-c`` when ``S`` is, so the shift found and the bound are too).  A fixed guess
        is only as good as its distance to ``lambda_max``: above it, the bound is that much loose
        (the first shift succeeds at once); far below it, the search may end on Gershgorin's bound.
    slack : float, optional
        The first ``delta``.
    tries, growth : int, float
        Factorizations at most, and the factor ``delta`` grows by after a failed one.
    max_envelope : int, optional
        Passed to :func:`certify_psd`.
    refine : int
        Geometric bisections between the last failed and the first successful ``delta`` (pivots
        only); the residual is computed once, at the shift kept (with the first factorization
        when the first shift succeeds: one factorization in all).

    Returns
    -------
    EigBound
        ``kind="certified"`` (``value`` rounded up) or ``"estimate"`` with the reason (the Lanczos
        value when no factorization fits the budget or none succeeded).
    """
    scale = float(abs(S).sum(axis=1).max()) if S.shape[0] else 0.0
    gersh = gershgorin_lambda_max(S)
    if estimate is None:
        estimate = lanczos_estimate(S)
    delta = slack if slack is not None else 1e-9 * max(1.0, scale)
    negS = -S
    ordering: dict = {}  # one minimum-degree ordering for every shift
    last = ""
    lo, hi = None, None  # the largest shift whose factorization failed, the smallest certified
    kept = None  # the certificate at hi when the first shift tried succeeded
    for _ in range(tries):
        t = estimate + delta
        if t >= gersh:
            return EigBound(gersh, CERTIFIED, "Gershgorin's bound (below every shift tried)", gersh, 0.0)
        first = lo is None  # no failed shift below: a success ends the search, so its residual is computed at once
        b = certify_psd(negS, -t, max_fill=max_fill, dense_max=dense_max, residual=first, ordering=ordering,
                         max_envelope=max_envelope)
        if b.kind == ESTIMATE or not math.isnan(b.residual):  # every pivot positive
            hi = delta
            kept = b if first else None
            break
        last = b.reason
        if "fill" in last or "MemoryError" in last:
            hi = None
            break
        lo = delta
        delta *= growth
    if hi is not None:
        if kept is None:
            # geometric bisection between the last failed and the first successful shift (pivots only)
            for _ in range(refine):
                mid = math.sqrt(lo * hi)
                if certify_psd(negS, -(estimate + mid), max_fill=max_fill, dense_max=dense_max,
                               residual=False, ordering=ordering).value > -math.inf:
                    hi = mid
                else:
                    lo = mid
            t = estimate + hi
            kept = certify_psd(negS, -t, max_fill=max_fill, dense_max=dense_max, ordering=ordering,
                               max_envelope=max_envelope)
        b = kept
        if math.isfinite(b.value):
            return EigBound(_up(-b.value), CERTIFIED,
                            b.reason.replace(f"at shift {-t:.6g}", f"of tI - S at t = {t:.6g}"), t, b.residual)
        last = b.reason
    est = lanczos_lambda_max(S)
    return EigBound(est, ESTIMATE, f"Lanczos estimate; no certificate: {last}")
