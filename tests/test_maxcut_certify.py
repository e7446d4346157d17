"""The rigorous eigenvalue bounds of psdbench.linalg.certify against dense eigvalsh."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.linalg.certify import certify_psd, envelope_size, lambda_max_upper, lanczos_estimate


def _random_sym(n: int, density: float, seed: int) -> sp.csr_matrix:
    A = sp.random(n, n, density, random_state=seed, data_rvs=np.random.default_rng(seed).standard_normal)
    return sp.csr_matrix(A + A.T)


def _laplacian(n: int, density: float, seed: int) -> sp.csr_matrix:
    W = abs(_random_sym(n, density, seed))
    return sp.csr_matrix(sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W)


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_lambda_max_upper_brackets_eigvalsh(dense, seed):
    for S in (_random_sym(150, 0.05, seed), _laplacian(150, 0.05, seed)):
        lam = np.linalg.eigvalsh(S.toarray())[-1]
        M = S.toarray() if dense else S
        b = lambda_max_upper(M)
        assert b.certified, b.reason
        assert b.value >= lam
        assert b.value - lam <= 1e-6 * max(1.0, abs(lam))


@pytest.mark.parametrize("dense", [False, True])
def test_certify_psd_lower_bound(dense):
    L = _laplacian(200, 0.04, 3)
    w = np.linalg.eigvalsh(L.toarray())
    A = L + sp.eye(200) * 1e-3  # smallest eigenvalue 1e-3 (L is singular)
    M = A.toarray() if dense else sp.csr_matrix(A)
    b = certify_psd(M, 0.5e-3)
    assert b.certified and np.isfinite(b.value)
    assert b.value <= w[0] + 1e-3 and b.value >= 0.4e-3


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("eps", [1e-13, 1e-10, 1e-6])
def test_tiny_negative_eigenvalue_never_certified_psd(dense, eps):
    """A matrix with lambda_min = -eps: no shift makes the certified lower bound nonnegative."""
    rng = np.random.default_rng(7)
    n = 80
    Q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    ev = np.concatenate([[-eps], rng.uniform(0.1, 2.0, n - 1)])
    A = (Q * ev) @ Q.T
    A = 0.5 * (A + A.T)
    true_min = np.linalg.eigvalsh(A)[0]
    M = A if dense else sp.csr_matrix(A)
    for s in (-1e-3, -1e-9, 0.0, 1e-16, eps / 2, 1e-3):
        b = certify_psd(M, s)
        assert b.value <= true_min + 1e-15 * n  # eigvalsh itself is exact to about n u ||A||
        assert not b.value >= 0.0


def test_laplacian_singular_not_certified_positive():
    L = _laplacian(120, 0.05, 5)  # L 1 = 0 exactly in real arithmetic
    for M in (L, L.toarray()):
        for s in (0.0, 1e-12, -1e-12):
            assert not certify_psd(M, s).value > 0.0


def test_envelope_bounds_fill():
    n = 30
    P = sp.diags([np.ones(n - 1), 2 * np.ones(n), np.ones(n - 1)], [-1, 0, 1]).tocsr()  # a path
    assert envelope_size(P) == 2 * n - 1


def test_fill_budget_gives_estimate_with_reason():
    S = _random_sym(3000, 0.003, 4)
    b = lambda_max_upper(S, max_fill=50_000, dense_max=100)
    assert b.kind == "estimate" and "fill" in b.reason


@pytest.mark.parametrize("dense", [False, True])
def test_gershgorin_is_an_upper_bound(dense):
    from psdbench.linalg.certify import gershgorin_lambda_max

    S = _random_sym(100, 0.1, 9)
    M = S.toarray() if dense else S
    assert gershgorin_lambda_max(M) >= np.linalg.eigvalsh(S.toarray())[-1]


def test_far_estimate_still_certified():
    S = _laplacian(150, 0.05, 1)
    lam = np.linalg.eigvalsh(S.toarray())[-1]
    b = lambda_max_upper(S, 0.0, slack=1e-9)
    assert b.certified and b.value >= lam


def test_lanczos_estimate_moves_with_a_shift_and_errs_low():
    """Over 400 rows the estimate is the plain Lanczos recurrence on the centred matrix: ``S - c I``
    moves it by ``-c`` up to rounding, it matches eigvalsh here, and an unconverged one (few steps)
    lies below ``lambda_max`` (a Ritz value)."""
    for S in (_random_sym(600, 0.01, 3), _laplacian(600, 0.01, 4)):
        lam = np.linalg.eigvalsh(S.toarray())[-1]
        scale = float(abs(S).sum(axis=1).max())
        est = lanczos_estimate(S)
        assert abs(est - lam) <= 1e-9 * scale
        for c in (1e3 * scale, -1e3 * scale, 0.5):
            shifted = lanczos_estimate(sp.csr_matrix(S - c * sp.eye(600)))
            assert abs((shifted + c) - est) <= 1e-9 * scale, c
        assert lanczos_estimate(S, max_steps=20) <= lam + 1e-12 * scale


@pytest.mark.parametrize("dense", [False, True])
def test_lambda_max_upper_is_as_tight_at_any_offset(dense):
    """The search starts from the estimate: ``S - c I`` is certified at ``lambda_max - c`` within the
    first shift margin for offsets far on either side of 0 (from 0 it ended on Gershgorin's bound),
    and a fixed estimate far above or below ``lambda_max`` is still a valid (looser) bound."""
    S = _laplacian(600, 0.01, 6)
    lam = np.linalg.eigvalsh(S.toarray())[-1]
    for c in (0.0, 50.0, -50.0, 1e4, -1e4):
        Sc = sp.csr_matrix(S - c * sp.eye(600))
        b = lambda_max_upper(Sc.toarray() if dense else Sc, slack=1e-9 * max(1.0, lam))
        assert b.certified and "Gershgorin" not in b.reason, (c, b.reason)
        assert b.value >= lam - c
        assert b.value - (lam - c) <= 1e-8 * max(1.0, lam) + 1e-13 * abs(c), c
    for guess in (lam + 10.0, lam - 10.0):
        b = lambda_max_upper(S, guess)
        assert b.certified and b.value >= lam


def test_left_looking_residual_matches_sparse_product():
    import scipy.sparse.linalg as spla

    from psdbench.linalg.ldlt_residual import residual_rowsums

    A = (_laplacian(300, 0.02, 8) + sp.eye(300) * 0.1).tocsc()
    lu = spla.splu(A, permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0, options=dict(SymmetricMode=True))
    p = np.argsort(lu.perm_c)
    Mp = A.tocsr()[p][:, p]
    L, d = lu.L.tocsc(), lu.U.diagonal()
    ref = np.asarray(abs(Mp - L @ sp.diags(d) @ L.T).sum(axis=1)).ravel()
    got = residual_rowsums(Mp, L, d)
    assert np.allclose(got, ref, rtol=1e-6, atol=1e-14)
    assert ref.max() < 1e-12  # a residual, not the matrix


def test_max_envelope_lets_a_factor_within_max_fill_be_tried():
    """``max_envelope``: the envelope precheck refuses at max_fill by default; a larger envelope cap
    factors, and the factor's own fill check (max_fill) still decides."""
    S = _laplacian(400, 0.05, 2)
    env = envelope_size(S.tocsr())
    lam = np.linalg.eigvalsh(S.toarray())[-1]
    small = env // 2
    assert "envelope" in lambda_max_upper(S, max_fill=small, dense_max=0).reason
    b = lambda_max_upper(S, max_fill=small, dense_max=0, max_envelope=10 * env)
    assert "envelope" not in b.reason
    if b.certified:
        assert b.value >= lam
    else:
        assert "factor fill" in b.reason
