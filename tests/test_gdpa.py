"""GDPA properties: disc alignment (Theorem 3 / eq. (4)), the degeneracy identity of (20), GDPA-LP certificates."""

import numpy as np
import pytest

from psdbench.api import Budget, Status
from psdbench.linalg.gdpa import first_eigvec, gershgorin_left_ends
from psdbench.linalg.gershgorin_lp import gershgorin_rows
from psdbench.linalg.psd import min_eig
from psdbench.families.graph_classification.gdpa_lp import GdpaLp

from .conftest import random_instance


def random_balanced_laplacian(rng, n, density=0.5):
    """Generalized Laplacian of a random connected balanced signed graph with random self-loops."""
    colour = rng.choice([-1.0, 1.0], size=n)
    W = rng.uniform(0.1, 1.0, (n, n)) * (rng.random((n, n)) < density)
    W = np.triu(W, 1)
    W[np.arange(n - 1), np.arange(1, n)] = rng.uniform(0.1, 1.0, n - 1)  # a path keeps it connected
    W = W + W.T
    signs = np.outer(colour, colour)  # same colour: positive edge, different: negative
    A = W * signs
    L = np.diag(np.abs(A).sum(axis=1)) - A + np.diag(rng.uniform(-0.5, 1.0, n))
    return L


@pytest.mark.parametrize("seed", range(10))
def test_gershgorin_left_ends_align_at_lambda_min(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    L = random_balanced_laplacian(rng, n)
    eig = first_eigvec(L, tol=0)
    ends = gershgorin_left_ends(L, eig.v)
    lam = min_eig(L)
    assert eig.n_components == 1
    np.testing.assert_allclose(ends, lam, rtol=1e-8, atol=1e-8 * np.abs(L).max())
    # Without the similarity transform the plain discs are looser (eq. (2)).
    assert gershgorin_left_ends(L).min() <= lam + 1e-12


def test_lobpcg_warm_start_matches_dense():
    rng = np.random.default_rng(1)
    L = random_balanced_laplacian(rng, 150, density=0.1)
    dense = first_eigvec(L, tol=0)
    warm = first_eigvec(L + 1e-3 * np.eye(150), v0=dense.v, tol=1e-8, maxiter=500)
    assert warm.lobpcg_iters > 0
    assert abs(abs(warm.v @ dense.v) - 1) < 1e-6
    np.testing.assert_allclose(warm.lam_min, dense.lam_min + 1e-3, atol=1e-7)


def test_disconnected_node_gets_defined_scalars():
    """A node cut off by the LP (zero row) must not give s_i = 1/0 (reference-settings pitfall)."""
    rng = np.random.default_rng(2)
    L = random_balanced_laplacian(rng, 20)
    L[5, :] = 0.0
    L[:, 5] = 0.0
    L[5, 5] = 3.0
    eig = first_eigvec(L, tol=0)
    assert eig.n_components == 2
    assert np.all(np.abs(eig.v) > 0)
    ends = gershgorin_left_ends(L, eig.v)
    # each component's discs align at its own lambda_min; the isolated node's disc is its diagonal
    mask = np.arange(20) != 5
    np.testing.assert_allclose(ends[mask], min_eig(L[np.ix_(mask, mask)]), atol=1e-8)
    assert ends[5] == pytest.approx(3.0)


@pytest.mark.parametrize("seed", range(5))
def test_split_dual_objective_identity(registry, wdbc, seed):
    """u' H-bar u = 1'y + b'z for u = [1_N; 1; -1], any y, z, eps: (20) has optimum 0."""
    inst = random_instance(registry, wdbc, n=24 + 4 * seed, seed=seed)
    rng = np.random.default_rng(seed)
    N, m = inst.n, inst.m
    y = rng.normal(size=N + 1) * 3
    z = np.abs(rng.normal(size=m)) * np.where(inst.xhat > 0, -1.0, 1.0)
    eps = float(rng.normal() * 10)
    Hb = inst.split_dual_matrix(y, z, eps)
    u = np.concatenate([np.ones(N), [1.0, -1.0]])
    assert u @ Hb @ u == pytest.approx(y.sum() + inst.b @ z, rel=1e-10, abs=1e-9)
    # Lemma 1's use: H-bar PSD implies H PSD (shift both to PSD through the y's)
    delta = max(0.0, -min_eig(Hb))
    y_psd = y + delta * np.append(np.ones(N), 2.0)  # H-bar + delta I
    assert min_eig(inst.split_dual_matrix(y_psd, z, eps)) >= -1e-9
    assert min_eig(inst.dual_matrix(y_psd, z)) >= -1e-9


@pytest.mark.parametrize("graph", ["complete", "knn"])
def test_gdpa_lp_returns_certified_dual_point(registry, wdbc, graph):
    inst = random_instance(registry, wdbc, n=60, graph=graph, seed=3)
    sol = GdpaLp().solve(inst, Budget())
    assert sol.status is Status.OK
    feas = inst.verify(sol)
    assert feas.ok, feas.details
    assert feas.details["min_eig_Hbar"] >= -1e-7 * np.abs(inst.L).sum()
    ref = inst.certified_reference()
    metrics = inst.evaluate(sol)
    # the bound is a lower bound on p*, the labels' x'Lx an upper bound (rank-one feasible point)
    assert metrics["lower_bound"] <= ref["lower"] + 1e-9
    assert inst.objective(sol) >= ref["lower"] - 1e-9
    # (20) is degenerate: its optimum is 0, so the certified bound can never exceed 0
    assert metrics["lower_bound"] <= 1e-7


def test_paper_epsilon_rule_diverges(registry, wdbc):
    inst = random_instance(registry, wdbc, n=30, seed=0)
    sol = GdpaLp().solve(inst, Budget(), epsilon="paper")
    assert sol.status is Status.DIVERGED
    lp = [p["lp_objective"] for p in sol.trace]
    assert lp[-1] > 1e6 * abs(lp[0])  # eps roughly triples at every LP


@pytest.mark.parametrize("free_eps", [True, False])
def test_affine_split_matrix_matches_the_instance(registry, wdbc, free_eps):
    """The LP's H-bar(x) is the instance's H-bar of (15) (two independent constructions)."""
    from psdbench.families.graph_classification.gdpa_lp import SplitDualLP

    inst = random_instance(registry, wdbc, n=26, seed=1)
    rng = np.random.default_rng(0)
    N, m = inst.n, inst.m
    y = rng.normal(size=N + 1)
    z = np.abs(rng.normal(size=m)) * np.where(inst.xhat > 0, -1.0, 1.0)
    eps = 0.7
    lp = SplitDualLP(inst.L, inst.xhat, free_eps=free_eps)
    x = np.concatenate([y, z, [eps] if free_eps else []])
    H = lp.matrix(0.0 if free_eps else eps).evaluate(x)
    np.testing.assert_allclose(H, inst.split_dual_matrix(y, z, eps), atol=1e-12)
    # Gershgorin rows: A x <= b  <=>  left ends of S H S^-1 >= 0, checked against the direct formula
    a = rng.uniform(0.5, 2.0, N + 2)
    A, b = gershgorin_rows(lp.matrix(0.0 if free_eps else eps), a)
    np.testing.assert_allclose(b - A @ x, gershgorin_left_ends(H, a), atol=1e-9)
