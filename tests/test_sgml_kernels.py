"""SGML's block kernels (SGML paper, section 5.2): each against the formula it implements, written out."""

import numpy as np
import pytest
from scipy.optimize import linprog

from psdbench.families.mahalanobis.objectives import gradient_from_pairs, make_objective, pair_distances
from psdbench.families.mahalanobis.sgml_kernels import (block_dir_distances, block_gradient, block_rows, block_vertex,
                                                        column_distances, dir_distances, full_vertex, scaled_radii,
                                                        set_block, step_size, tree_start, zero_small,
                                                        zero_small_offdiag)
from psdbench.linalg.balance import two_colouring
from psdbench.linalg.gdpa import first_eigvec, gershgorin_left_ends, magnitudes


def _setting(K: int = 9, n: int = 7, seed: int = 0):
    """A balanced tree-start metric with extra edges, its scalars and colours, and toy features."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, K))
    M = tree_start(F, float(K), rng)
    colours = two_colouring(M).colours
    for _ in range(K):  # more edges of the right sign keep the graph balanced
        i, k = rng.choice(K, 2, replace=False)
        M[i, k] = M[k, i] = -colours[i] * colours[k] * rng.uniform(0.01, 0.1)
    M[np.diag_indices(K)] += np.abs(M).sum(axis=1)
    a = magnitudes(first_eigvec(M, tol=0).v)
    return F, M, colours, a


def test_scaled_radii_are_the_gershgorin_radii_of_eq_30():
    F, M, colours, a = _setting()
    T = scaled_radii(M, a)
    np.testing.assert_allclose(np.diag(M) - T / a, gershgorin_left_ends(M, a), rtol=1e-13)


@pytest.mark.parametrize("j", [0, 4, 8])
def test_block_rows_written_out(j):
    F, M, colours, a = _setting()
    K, rho = len(a), 1e-3
    rows = block_rows(M, scaled_radii(M, a), a, colours, j, rho)
    assert rows.j == j and list(rows.others) == [i for i in range(K) if i != j]
    for r, i in enumerate(rows.others):
        assert rows.sigma[r] == (1.0 if colours[i] != colours[j] else -1.0)
        radius = sum(abs(M[i, k]) * a[k] / a[i] for k in range(K) if k not in (i, j))
        assert rows.low[i] == pytest.approx(rho + radius, rel=1e-13, abs=1e-15)
        assert rows.alpha[r] == pytest.approx(a[j] / a[i]) and rows.beta[r] == pytest.approx(a[i] / a[j])
    assert rows.low[j] == rho
    np.testing.assert_array_equal(rows.w, np.concatenate([rows.alpha + rows.beta, np.ones(K)]))


@pytest.mark.parametrize("sign", [1.0, -1.0])
def test_block_gradient_is_part_of_the_full_gradient(sign):
    F, M, colours, a = _setting()
    y = np.where(np.arange(F.shape[0]) % 2 == 0, 1.0, -1.0)
    obj = make_objective("mcml", F, y)
    _, A = obj.value_and_coef(pair_distances(F, M))
    G = sign * gradient_from_pairs(F, A)
    j = 3
    others = np.flatnonzero(np.arange(len(a)) != j)
    gd, go = block_gradient(F, A, j, F[:, others], sign)
    np.testing.assert_allclose(gd, np.diag(G), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(go, 2.0 * G[others, j], rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("flipped", [False, True])
@pytest.mark.parametrize("seed", range(5))
def test_block_vertex_solves_lp_41(seed, flipped):
    """The closed-form vertex reaches the optimum of LP (41) as written (HiGHS) and satisfies it;
    ``flipped`` (node j with the other colour) is the LP with every sign of column j reversed."""
    F, M, colours, a = _setting(seed=seed)
    K, rho, C = len(a), 1e-3, float(np.trace(M)) * 1.5
    rng = np.random.default_rng(seed)
    j = int(rng.integers(K))
    rows = block_rows(M, scaled_radii(M, a), a, colours, j, rho)
    assert rows.low_sum == float(rows.low.sum())
    sigma = -rows.sigma if flipped else rows.sigma
    gd, go = rng.standard_normal(K), rng.standard_normal(K - 1)
    diag, col = block_vertex(rows, gd, go, C, flipped)
    A = np.zeros((K + 1, 2 * K - 1))
    A[rows.others, K + np.arange(K - 1)] = rows.alpha * sigma
    A[j, K:] = rows.beta * sigma
    A[np.arange(K), np.arange(K)] = -1.0
    A[K, :K] = 1.0
    bounds = [(None, None)] * K + [(0.0, None) if s > 0 else (None, 0.0) for s in sigma]
    ref = linprog(np.concatenate([gd, go]), A_ub=A, b_ub=np.concatenate([-rows.low, [C]]), bounds=bounds,
                  method="highs")
    assert gd @ diag + go @ col == pytest.approx(ref.fun, rel=1e-9, abs=1e-12)
    assert np.all(A @ np.concatenate([diag, col]) <= np.concatenate([-rows.low, [C]]) + 1e-12)
    assert np.all(sigma * col >= 0)
    assert block_vertex(rows, gd, go, float(rows.low.sum()) * (1 - 1e-12), flipped) is None  # bounds alone exceed C


def test_block_dir_distances_match_the_whole_direction():
    F, M, colours, a = _setting()
    K, j = len(a), 5
    others = np.flatnonzero(np.arange(K) != j)
    rng = np.random.default_rng(2)
    delta, dcol = rng.standard_normal(K), rng.standard_normal(K - 1)
    Dir = np.diag(delta)
    Dir[others, j] = Dir[j, others] = dcol
    np.testing.assert_allclose(block_dir_distances(F, j, F[:, others], delta, dcol), dir_distances(F, Dir),
                               rtol=1e-12, atol=1e-12)
    col = np.zeros(K)
    col[others] = dcol
    Dcol = np.zeros((K, K))
    Dcol[:, j] = Dcol[j, :] = col
    np.testing.assert_allclose(column_distances(F, j, col), dir_distances(F, Dcol), rtol=1e-12, atol=1e-12)


def test_zero_small_on_the_written_column_equals_a_full_scan_after_a_block_update():
    F, M, colours, a = _setting()
    M[2, 6] = M[6, 2] = 1e-7
    M[0, 0] = 1e-8  # the diagonal is never touched
    full = M.copy()
    assert zero_small_offdiag(full, 1e-5)
    assert full[2, 6] == full[6, 2] == 0.0 and full[0, 0] == 1e-8
    assert not zero_small_offdiag(full.copy(), 1e-5)
    j, K = 4, M.shape[0]
    others = np.delete(np.arange(K), j)
    written = full.copy()
    full[[1, 7], j] = full[j, [1, 7]] = [3e-6, -2e-6]  # a block update of column j leaves small entries there only
    col, any_small = zero_small(full[others, j], 1e-5)
    assert any_small and not zero_small(col, 1e-5)[1]
    assert zero_small_offdiag(full, 1e-5)
    set_block(written, j, others, np.diag(full).copy(), col)
    np.testing.assert_array_equal(full, written)


@pytest.mark.parametrize("j", [0, 3, 9])
def test_set_block_writes_the_diagonal_and_column_j(j):
    rng = np.random.default_rng(j)
    M = rng.standard_normal((10, 10))
    M = M + M.T
    others = np.delete(np.arange(10), j)
    diag, col = rng.standard_normal(10), rng.standard_normal(9)
    expected = M.copy()
    expected[np.arange(10), np.arange(10)] = diag
    expected[others, j] = expected[j, others] = col
    np.testing.assert_array_equal(set_block(M, j, others, diag, col), expected)


@pytest.mark.parametrize("name", ["mcml", "glr", "lmnn"])
def test_step_size_minimizes_q_along_the_direction(name):
    """The step minimizes Q(max(D0 + gamma E, 0)) over [0, 1] (section 4.4.2), checked on a fine grid."""
    F, M, colours, a = _setting(n=12)
    y = np.where(np.arange(F.shape[0]) % 2 == 0, 1.0, -1.0)
    obj = make_objective(name, F, y, {"mu": 0.5, "k_target": 3})
    rng = np.random.default_rng(3)
    B = rng.standard_normal(M.shape)
    D0, E = pair_distances(F, M), dir_distances(F, 0.5 * (B + B.T))
    gamma = step_size(obj, D0, E, 1.0, tol=1e-8)
    assert 0.0 <= gamma <= 1.0
    q = lambda g: obj.value_D(np.maximum(D0 + g * E, 0.0))  # noqa: E731
    grid = min(q(g) for g in np.linspace(0.0, 1.0, 2001))
    assert q(gamma) <= grid + 1e-6 * max(1.0, abs(grid))


@pytest.mark.parametrize("seed", range(3))
def test_full_vertex_solves_the_whole_matrix_lp(seed):
    """Algorithm 1, line 14: the closed-form vertex reaches HiGHS's optimum of the LP written out."""
    F, M, colours, a = _setting(K=7, seed=seed)
    K, rho, C = len(a), 1e-3, 7.0
    rng = np.random.default_rng(seed)
    B = rng.standard_normal((K, K))
    G = B + B.T
    S = full_vertex(G, colours, a, rho, C)
    pairs = [(i, k) for i in range(K) for k in range(i + 1, K)]
    A = np.zeros((K + 1, K + len(pairs)))
    bounds = [(None, None)] * K
    for p, (i, k) in enumerate(pairs):
        s = 1.0 if colours[i] != colours[k] else -1.0  # |M_ik| = s M_ik
        A[i, K + p], A[k, K + p] = s * a[k] / a[i], s * a[i] / a[k]
        bounds.append((0.0, None) if s > 0 else (None, 0.0))
    A[np.arange(K), np.arange(K)] = -1.0
    A[K, :K] = 1.0
    c = np.concatenate([np.diag(G), [2.0 * G[i, k] for i, k in pairs]])
    ref = linprog(c, A_ub=A, b_ub=np.concatenate([np.full(K, -rho), [C]]), bounds=bounds, method="highs")
    assert np.sum(G * S) == pytest.approx(ref.fun, rel=1e-9, abs=1e-12)
    np.testing.assert_array_equal(S, S.T)
    assert np.trace(S) <= C * (1 + 1e-12) and gershgorin_left_ends(S, a).min() >= rho * (1 - 1e-9)
    assert full_vertex(G, colours, a, rho, K * rho * (1 - 1e-12)) is None
