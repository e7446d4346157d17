"""Min / Max / Greed balancing post-steps (BSGL paper, section VI-A1) against brute force and invariants."""

import itertools

import networkx as nx
import numpy as np
import pytest

from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components

from psdbench.families.signed_graph import balancing as signed_balancing
from psdbench.linalg.balance import two_colouring
from psdbench.families.signed_graph.balancing import (
    METHODS,
    balance_graph,
    greedy_polarity,
    max_cut_polarity,
    min_cut_polarity,
)


def random_signed_laplacian(rng, n, p=0.3, pos_frac=0.5):
    """Generalized Laplacian of an Erdos-Renyi signed graph with mixed signs (not balanced in general)."""
    mask = np.triu(rng.random((n, n)) < p, 1)
    mag = rng.uniform(0.01, 1.0, (n, n))
    sign = np.where(rng.random((n, n)) < pos_frac, 1.0, -1.0)  # +1: positive edge
    W = np.triu(mask * mag * sign, 1)
    W = W + W.T
    return np.diag(np.abs(W).sum(axis=1) + 0.5) - W


def random_balanced_laplacian(rng, n, p=0.3):
    """Balanced signed graph: positive edges inside, negative edges across a random polarity (VI-A1)."""
    beta = rng.choice([-1.0, 1.0], size=n)
    mask = np.triu(rng.random((n, n)) < p, 1)
    W = np.triu(mask * rng.uniform(0.01, 1.0, (n, n)), 1) * np.outer(beta, beta)
    W = W + W.T
    return np.diag(2.5 * np.abs(W).sum(axis=1) + 0.1) - W


def bipartitions(n):
    """All +-1 vectors with node 0 at +1 (each bipartition once), including the trivial one first."""
    for bits in itertools.product([1.0, -1.0], repeat=n - 1):
        yield np.array((1.0,) + bits)


def cut(Wnonneg, beta):
    return float(np.triu(Wnonneg * (beta[:, None] != beta[None, :]), 1).sum())


def pos_neg(L):
    off = L - np.diag(np.diag(L))
    return np.where(off < 0, -off, 0.0), np.where(off > 0, off, 0.0)


# --------------------------------------------------------------------------------------------------
# Min: exact global min cut of the positive graph


@pytest.mark.parametrize("seed", range(12))
def test_min_cut_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(6, 10))
    # Low density for some seeds: disconnected positive graphs (min cut 0, component rule).
    L = random_signed_laplacian(rng, n, p=0.25 if seed % 3 == 0 else 0.6)
    pos, _ = pos_neg(L)
    best = min(cut(pos, b) for b in bipartitions(n) if np.any(b < 0))  # both sides non-empty
    beta, value = min_cut_polarity(L)
    assert set(np.unique(beta)) == {-1.0, 1.0}
    assert abs(value - best) <= 1e-9
    assert abs(cut(pos, beta) - value) <= 1e-9


def test_min_cut_disconnected_positive_graph_keeps_negative_edges():
    """Two positive cliques joined only by negative edges: cut 0, cliques on opposite sides, nothing removed."""
    rng = np.random.default_rng(3)
    beta_true = np.array([1.0] * 4 + [-1.0] * 5)
    W = rng.uniform(0.1, 1.0, (9, 9)) * np.outer(beta_true, beta_true)
    W = np.triu(W, 1)
    W = W + W.T
    L = np.diag(np.abs(W).sum(axis=1)) - W
    beta, value = min_cut_polarity(L)
    assert value == 0.0
    np.testing.assert_array_equal(beta, beta_true)
    res = balance_graph(L, "min")
    assert res.n_removed == 0
    np.testing.assert_array_equal(res.L, L)


def test_min_cut_degenerate_inputs():
    beta, value = min_cut_polarity(np.array([[2.0]]))
    assert beta.tolist() == [1.0] and value == 0.0
    beta, value = min_cut_polarity(np.eye(5))  # no edges: still two non-empty sides
    assert value == 0.0 and set(beta.tolist()) == {-1.0, 1.0}
    for method in METHODS:
        res = balance_graph(np.eye(5), method)
        assert res.n_removed == 0
        np.testing.assert_array_equal(res.L, np.eye(5))


# --------------------------------------------------------------------------------------------------
# Max: Goemans-Williamson + local search on the negative graph


def test_max_cut_against_brute_force():
    n_optimal = 0
    for seed in range(10):
        rng = np.random.default_rng(100 + seed)
        n = int(rng.integers(6, 11))
        L = random_signed_laplacian(rng, n, p=0.6)
        _, neg = pos_neg(L)
        best = max(cut(neg, b) for b in bipartitions(n))
        beta, value = max_cut_polarity(L, seed=seed)
        assert abs(cut(neg, beta) - value) <= 1e-9
        assert value <= best + 1e-9
        assert value >= 0.878 * best, f"seed {seed}: cut {value:.6f} < 0.878 x optimum {best:.6f}"
        n_optimal += abs(value - best) <= 1e-9
    assert n_optimal >= 8, f"only {n_optimal}/10 cuts reached the brute-force optimum"


def test_max_cut_without_negative_edges_is_all_plus():
    L = random_balanced_laplacian(np.random.default_rng(0), 8)
    L = np.diag(np.diag(L)) - np.abs(L - np.diag(np.diag(L)))  # all edges positive
    beta, value = max_cut_polarity(L)
    assert value == 0.0
    np.testing.assert_array_equal(beta, np.ones(8))


# --------------------------------------------------------------------------------------------------
# Invariants of every method


def check_balanced_output(L, res, tol=0.0):
    n = L.shape[0]
    off = ~np.eye(n, dtype=bool)
    out = res.L
    np.testing.assert_array_equal(np.diag(out), np.diag(L))
    np.testing.assert_array_equal(out, out.T)
    assert set(np.unique(res.polarity)) <= {-1.0, 1.0} and res.polarity.shape == (n,)
    # Output balanced, and polarity consistent with every remaining edge.
    assert two_colouring(out, tol).balanced
    kept = off & (np.abs(out) > tol)
    assert np.all(np.outer(res.polarity, res.polarity)[kept] * out[kept] <= 0)
    # Each entry is either unchanged or a removed edge; no edge created or re-weighted.
    changed = out != L
    assert np.all(out[changed] == 0)
    assert np.all(np.abs(L[changed]) > tol)
    # Removed edges are exactly the inconsistent ones.
    edges = off & (np.abs(L) > tol)
    inconsistent = edges & (np.outer(res.polarity, res.polarity) * L > 0)
    np.testing.assert_array_equal(changed, inconsistent)
    assert res.n_removed == int(np.triu(inconsistent, 1).sum())


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("seed", range(3))
def test_balancing_invariants_on_random_signed_graphs(method, seed):
    rng = np.random.default_rng(seed)
    L = random_signed_laplacian(rng, 30, p=0.3)
    assert not two_colouring(L).balanced  # the test is not vacuous
    res = balance_graph(L, method, seed=seed)
    check_balanced_output(L, res)
    assert res.n_removed > 0
    pos, neg = pos_neg(L)
    if method == "min":
        assert res.cut_value == pytest.approx(cut(pos, res.polarity), abs=1e-12)
    elif method == "max":
        assert res.cut_value == pytest.approx(cut(neg, res.polarity), abs=1e-12)
    else:
        assert np.isnan(res.cut_value)


@pytest.mark.parametrize("method", METHODS)
def test_tolerance_leaves_small_entries_alone(method):
    rng = np.random.default_rng(7)
    L = random_signed_laplacian(rng, 15, p=0.4)
    noise = np.triu(rng.uniform(-1e-4, 1e-4, (15, 15)) * (L == 0), 1)
    L = L + noise + noise.T
    res = balance_graph(L, method, seed=1, tol=1e-3)
    check_balanced_output(L, res, tol=1e-3)
    small = (np.abs(L) <= 1e-3)
    np.testing.assert_array_equal(res.L[small], L[small])


@pytest.mark.parametrize("seed", range(3))
def test_balanced_graph_passes_through(seed):
    rng = np.random.default_rng(50 + seed)
    L = random_balanced_laplacian(rng, 30, p=0.3)
    assert two_colouring(L).balanced
    for method in ("greedy", "max"):
        res = balance_graph(L, method, seed=seed)
        assert res.n_removed == 0, method
        np.testing.assert_array_equal(res.L, L)
    res = balance_graph(L, "min", seed=seed)
    check_balanced_output(L, res)


@pytest.mark.parametrize("exact_components", [16, 0])
@pytest.mark.parametrize("n, p", [(12, 0.12), (80, 0.02)])
def test_sparse_balanced_graph_passes_through(monkeypatch, exact_components, n, p):
    """Many components in the positive and negative graphs: the component orientations must be
    right too, by exact enumeration and by the greedy fallback (forced with EXACT_COMPONENTS=0)."""
    monkeypatch.setattr(signed_balancing, "EXACT_COMPONENTS", exact_components)
    for seed in range(3):
        L = random_balanced_laplacian(np.random.default_rng(200 + seed), n, p=p)
        for method in METHODS:
            res = balance_graph(L, method, seed=seed)
            assert res.n_removed == 0, (method, seed)
            np.testing.assert_array_equal(res.L, L)


def component_flips(labels, n_comp):
    """All sign patterns over components, component 0 fixed at +1, as per-node multipliers."""
    for s in bipartitions(n_comp) if n_comp > 1 else [np.ones(1)]:
        yield s[labels]


@pytest.mark.parametrize("seed", range(6))
def test_component_orientation_is_optimal(seed):
    """Min: among zero-cut polarities constant on positive components (two non-empty sides), the most
    negative weight is cut.  Max: flipping negative-graph components keeps the negative cut, and the
    chosen orientation keeps the most positive weight."""
    rng = np.random.default_rng(300 + seed)
    L = random_signed_laplacian(rng, 12, p=0.15)
    pos, neg = pos_neg(L)

    n_comp, labels = connected_components(csr_matrix(pos > 0), directed=False)
    beta, value = min_cut_polarity(L)
    if n_comp > 1:
        assert value == 0.0
        best = max(cut(neg, f) for f in component_flips(labels, n_comp) if np.any(f < 0))
        assert cut(neg, beta) == pytest.approx(best, abs=1e-12)

    n_comp, labels = connected_components(csr_matrix(neg > 0), directed=False)
    beta, value = max_cut_polarity(L, seed=seed)
    kept = [np.triu(pos, 1).sum() - cut(pos, beta * f) for f in component_flips(labels, n_comp)]
    assert all(cut(neg, beta * f) == pytest.approx(value, abs=1e-12) for f in component_flips(labels, n_comp))
    assert kept[0] == pytest.approx(max(kept), abs=1e-12)


def test_greedy_keeps_a_maximum_spanning_forest():
    """Greed is Prim's algorithm on |W|: the kept weight is at least a maximum spanning forest's."""
    rng = np.random.default_rng(11)
    L = random_signed_laplacian(rng, 25, p=0.2)
    G = nx.Graph()
    G.add_nodes_from(range(25))
    iu, ju = np.nonzero(np.triu(L, 1))
    G.add_weighted_edges_from((int(i), int(j), abs(L[i, j])) for i, j in zip(iu, ju))
    forest = nx.maximum_spanning_tree(G)
    for seed in range(4):
        beta, out = greedy_polarity(L, seed=seed)
        kept = np.triu(np.abs(out), 1).sum()
        assert kept >= forest.size(weight="weight") - 1e-12
        assert two_colouring(out).balanced
        # every edge of the (here unique) maximum spanning forest survives
        for i, j in forest.edges():
            assert out[i, j] == L[i, j]


@pytest.mark.parametrize("method", METHODS)
def test_deterministic_for_a_seed(method):
    L = random_signed_laplacian(np.random.default_rng(5), 20, p=0.3)
    a = balance_graph(L, method, seed=3)
    b = balance_graph(L, method, seed=3)
    np.testing.assert_array_equal(a.L, b.L)
    np.testing.assert_array_equal(a.polarity, b.polarity)


def test_greedy_start_node_is_seeded():
    """A triangle with one negative edge: the removed edge is always the lightest, start only sets the sign."""
    L = np.array([[2.0, -1.0, 0.5], [-1.0, 2.0, -0.2], [0.5, -0.2, 2.0]])
    outs = {tuple(greedy_polarity(L, seed=s)[0]) for s in range(10)}
    for s in range(10):
        _, out = greedy_polarity(L, seed=s)
        assert out[1, 2] == 0.0 and out[0, 1] == -1.0 and out[0, 2] == 0.5
    assert len(outs) == 2  # overall sign depends on the random start node


def test_unknown_method_raises():
    with pytest.raises(ValueError, match="min, max, greedy"):
        balance_graph(np.eye(3), "none")
    with pytest.raises(ValueError, match="unknown balancing method"):
        balance_graph(np.eye(3), "spectral")


def test_rejects_non_symmetric_input():
    with pytest.raises(ValueError, match="symmetric"):
        balance_graph(np.array([[1.0, -1.0], [0.0, 1.0]]), "greedy")


def test_max_cut_falls_back_to_scs(monkeypatch):
    import cvxpy as cp

    original = cp.Problem.solve
    used = []

    def solve(self, *args, solver=None, **kwargs):
        used.append(solver)
        if solver == cp.CLARABEL:
            raise cp.error.SolverError("simulated Clarabel failure")
        return original(self, *args, solver=solver, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", solve)
    L = random_balanced_laplacian(np.random.default_rng(9), 10, p=0.5)
    res = balance_graph(L, "max")
    assert used[:2] == [cp.CLARABEL, cp.SCS]
    assert res.n_removed == 0
