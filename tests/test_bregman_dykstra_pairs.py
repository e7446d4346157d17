"""``metric/bregman-pairs`` with ``pairs = "labels"`` (section 5.2, vector data): pairs, scaling,
Sherman-Morrison projection, Dykstra against Clarabel, 3-NN evaluation, the metric-learn peers."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from psdbench.api import Budget, PsdbenchError, Status, Solution
from psdbench.families.bregman_dykstra.pairs import max_sq_distance
from psdbench.families.bregman_dykstra.projection import (inv_sqrt, project, project_halfspace, project_rank_one,
                                                          rank_one_update, slack_at)
from psdbench.solvers import metric_learn as peers

DIVS = ("is", "l2", "re")
SMALL = {"pairs": "labels", "pairs_per_class": 10}
HAVE_ML = peers.import_metric_learn() is not None
needs_ml = pytest.mark.skipif(not HAVE_ML, reason=peers.NOT_INSTALLED)


@pytest.fixture(scope="module")
def iris(registry):
    return registry.load_dataset("sklearn/iris:multiclass")


@pytest.fixture(scope="module")
def inst(registry, iris):
    return registry.problem("metric/bregman-pairs").build(iris, SMALL, 0)


@pytest.fixture(scope="module")
def ref(inst):
    r = inst.certified_reference()
    assert r["status"] == "ok"
    return r


def test_pair_counts_classes_and_split(inst, iris):
    d = inst.data
    assert inst.K == 30 and inst.n == 4 and len(d.y_train) + len(d.y_test) == 150
    assert len(d.y_test) == 38  # stratified, test_size = 0.25 (sklearn rounds the test part up)
    assert set(np.unique(d.y_train)) == set(np.unique(d.y_test)) == {0.0, 1.0, 2.0}
    i, j = d.index[:, 0], d.index[:, 1]
    assert np.all(i < j) and len({(a, b) for a, b in d.index}) == inst.K  # distinct pairs
    same = d.y_train[i] == d.y_train[j]
    assert np.array_equal(same, inst.y > 0) and inst.y.sum() == 0  # half similar, similar first
    assert np.all(inst.y[:15] == 1) and np.all(inst.y[15:] == -1)
    assert np.all(inst.b == np.where(inst.y > 0, 0.05, 0.95))
    assert np.allclose(inst.c, 1.0 / (1e-3 * inst.K))

def test_seed_fixes_split_and_pairs(registry, iris, inst):
    prob = registry.problem("metric/bregman-pairs")
    same, other = prob.build(iris, SMALL, 0), prob.build(iris, SMALL, 1)
    assert np.array_equal(same.data.index, inst.data.index) and np.array_equal(same.A, inst.A)
    assert not np.array_equal(other.data.y_test, inst.data.y_test) or not np.array_equal(other.A, inst.A)


def test_distance_scale(inst):
    d = inst.data
    assert max_sq_distance(d.X_train) == pytest.approx(1.0, rel=1e-12)  # Euclidean training distances in [0, 1]
    assert np.abs(d.X_train.mean(axis=0)).max() <= 1e-12  # z-scored before the scale
    m = inst.inner(np.eye(inst.n))
    assert np.all(m > 0) and np.all(m <= 1.0 + 1e-12)


def test_A_rank_one_plus_eps(registry, iris, inst):
    for k in (0, 17):
        w = np.linalg.eigvalsh(inst.A[k])
        assert w[0] >= -1e-14 and np.sum(w > 1e-12 * w[-1]) == 1
        assert np.allclose(inst.A[k], np.outer(inst.V[k], inst.V[k]))
    assert inst.rank_one
    e = registry.problem("metric/bregman-pairs").build(iris, {**SMALL, "eps": 1e-3}, 0)
    assert not e.rank_one and np.allclose(e.A - inst.A, 1e-3 * np.eye(4))
    assert np.linalg.eigvalsh(e.A[0])[0] == pytest.approx(1e-3)
    W = np.diag([1.0, 2.0, 3.0, 4.0])
    assert np.allclose(e.inner(W), np.einsum("kij,ij->k", e.A, W))


def test_bad_parameter_combinations(registry, iris):
    prob = registry.problem("metric/bregman-pairs")
    with pytest.raises(PsdbenchError, match="do not set"):
        prob.build(iris, {**SMALL, "K": 30}, 0)
    from psdbench.families.bregman_dykstra.data import dykstra_halfspaces_dataset

    with pytest.raises(PsdbenchError, match="needs samples"):
        prob.build(dykstra_halfspaces_dataset(), SMALL, 0)
    with pytest.raises(PsdbenchError, match="pairs = 'labels'"):
        prob.build(iris, {}, 0)


def _rank_one_setup(y: float, seed: int = 0, n: int = 5):
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, n))
    W0 = G @ G.T / n + 0.3 * np.eye(n)
    v = rng.standard_normal(n)
    xi0 = 0.7
    p = float(v @ W0 @ v)
    b = (0.5 if y > 0 else 2.0) * p / xi0  # violated
    return W0, v, xi0, b, 3.0


@pytest.mark.parametrize("div", DIVS)
@pytest.mark.parametrize("y", [1.0, -1.0])
def test_sherman_morrison_matches_general_path(div, y):
    W0, v, xi0, b, c = _rank_one_setup(y)
    u, Wv, p = project_rank_one(W0, v, xi0, b, c, div)
    W = rank_one_update(W0, Wv, p, u)
    xi = slack_at(u, xi0, b, c, div)
    assert float(v @ W @ v) == pytest.approx(b * xi, rel=1e-12)  # on the boundary: J = 0
    assert np.allclose(np.linalg.inv(W), np.linalg.inv(W0) + u * np.outer(v, v), rtol=1e-10, atol=1e-10)
    errs = []
    for eps in (1e-4, 1e-6):
        st = project(np.linalg.inv(W0), inv_sqrt(np.outer(v, v) + eps * np.eye(len(v))), xi0, b, c, div)
        errs.append((abs(st.u - u) / abs(u), np.linalg.norm(st.W() - W) / np.linalg.norm(W)))
    assert errs[1][0] <= 1e-4 and errs[1][1] <= 1e-4
    assert errs[1][0] < errs[0][0]  # converges as eps -> 0


@pytest.mark.parametrize("div", DIVS)
@pytest.mark.parametrize("y", [1.0, -1.0])
def test_sherman_morrison_matches_cvxpy(div, y):
    import cvxpy as cp

    W0, v, xi0, b, c = _rank_one_setup(y, seed=1)
    n = len(v)
    u, Wv, p = project_rank_one(W0, v, xi0, b, c, div)
    W, xi = rank_one_update(W0, Wv, p, u), slack_at(u, xi0, b, c, div)
    Wc, x = cp.Variable((n, n), PSD=True), cp.Variable()
    bd_w = cp.trace(np.linalg.inv(W0) @ Wc) - cp.log_det(Wc)
    bd_x = {"is": lambda: x / xi0 - cp.log(x), "l2": lambda: 0.5 * cp.square(x - xi0),
            "re": lambda: -cp.entr(x) - x - np.log(xi0) * x}[div]()
    prob = cp.Problem(cp.Minimize(bd_w + c * bd_x), [y * (v @ Wc @ v - b * x) <= 0])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == cp.OPTIMAL
    theirs = prob.objective.value
    W_c, x_c = 0.5 * (Wc.value + Wc.value.T), float(x.value)
    Wc.value, x.value = W, xi
    ours = prob.objective.value
    assert abs(ours - theirs) <= 1e-8 * abs(theirs)
    assert np.linalg.norm(W_c - W) <= 1e-4 * np.linalg.norm(W) and abs(x_c - xi) <= 1e-4 * max(1.0, xi)
    # the general routine's projection onto the half-space (A = v v' + 1e-7 I) lands on the same point
    W2, xi2, delta = project_halfspace(W0, xi0, np.outer(v, v) + 1e-7 * np.eye(n), y, b, c, div)
    assert abs(delta) > 0 and np.linalg.norm(W2 - W) <= 1e-4 * np.linalg.norm(W)


def test_evaluate_gives_accuracy_with_W_and_eye(inst):
    out = inst.evaluate(Solution(variables={"W": np.eye(inst.n)}))
    assert 0.0 <= out["acc_W"] <= 1.0 and out["acc_W"] == out["acc_eye"]
    W = np.diag([1e-6, 1e-6, 1.0, 1.0])  # petal features only: still a valid metric
    assert 0.0 <= inst.evaluate(Solution(variables={"W": W}))["acc_W"] <= 1.0


@pytest.mark.parametrize("div", DIVS)
def test_dykstra_reaches_clarabel(registry, iris, inst, ref, div):
    I = inst if div == "is" else registry.problem("metric/bregman-pairs").build(iris, {**SMALL, "divergence": div}, 0)
    r = ref if div == "is" else I.certified_reference()
    sol = registry.solver("dykstra").solve(I, Budget(), order="rand")
    assert sol.status is Status.OK and sol.info["projection"].startswith("rank-one")
    assert I.verify(sol).ok
    assert abs(I.objective(sol) - r["value"]) <= 1e-6 * abs(r["value"])
    assert r["lower"] is not None and r["lower"] <= I.objective(sol) + 1e-9 * abs(r["value"])
    assert set(I.evaluate(sol)) >= {"acc_W", "acc_eye"}


def test_dykstra_general_path_with_eps(registry, iris):
    e = registry.problem("metric/bregman-pairs").build(iris, {**SMALL, "eps": 1e-3}, 0)
    r = e.certified_reference()
    sol = registry.solver("dykstra").solve(e, Budget(), order="perm")
    assert sol.status is Status.OK and sol.info["projection"].startswith("general")
    assert abs(e.objective(sol) - r["value"]) <= 1e-6 * abs(r["value"])


def test_synthetic_instances_offer_no_training_data(registry):
    from psdbench.families.bregman_dykstra.data import dykstra_halfspaces_dataset

    s = registry.problem("metric/bregman-pairs").build(dykstra_halfspaces_dataset(), {"n": 4, "K": 6}, 0)
    assert s.metric_training_data() is None and s.metric_pairs() is None
    assert "no training set" in registry.solver("euclidean").skip_reason(s)


def test_peers_skipped_without_metric_learn(registry, inst, monkeypatch):
    monkeypatch.setitem(sys.modules, "metric_learn", None)  # import metric_learn raises ImportError
    for name in ("ml-itml", "ml-lmnn"):
        assert registry.solver(name).skip_reason(inst) == peers.NOT_INSTALLED
        assert registry.solver(name).solve(inst, Budget()).status is Status.SKIPPED
    sol = registry.solver("euclidean").solve(inst, Budget())
    assert np.allclose(sol.variables["W"], np.eye(inst.n))


@needs_ml
def test_itml_on_the_same_pairs_reaches_the_optimum(registry, inst, ref):
    solver = registry.solver("ml-itml")
    assert solver.skip_reason(inst) is None
    sol = solver.solve(inst, Budget(), tol=1e-9, max_iter=100000)
    m = sol.info["itml_mapping"]
    assert m["exact"] and m["bounds_u_l"] == [0.05, 0.95] and m["gamma"] == pytest.approx(inst.c[0])
    assert "exact" in sol.message and inst.verify(sol).ok
    assert abs(inst.objective(sol) - ref["value"]) <= 1e-6 * abs(ref["value"])
    # an explicit gamma breaks the mapping, and the row says so
    off = solver.solve(inst, Budget(), gamma=1.0, tol=1e-6)
    assert not off.info["itml_mapping"]["exact"] and "NOT exact" in off.message
    assert inst.objective(off) > ref["value"]


@needs_ml
def test_itml_mapping_inexact_for_other_divergences(registry, iris):
    l2 = registry.problem("metric/bregman-pairs").build(iris, {**SMALL, "divergence": "l2"}, 0)
    sol = registry.solver("ml-itml").solve(l2, Budget(), tol=1e-6)
    assert not sol.info["itml_mapping"]["exact"] and "ISBD" in sol.message


@needs_ml
def test_supervised_constraints_still_available(registry, inst):
    sol = registry.solver("ml-itml").solve(inst, Budget(), constraints="supervised")
    assert "itml_mapping" not in sol.info and len(sol.info["bounds"]) == 2
    assert registry.solver("ml-lmnn").skip_reason(inst) is None


@needs_ml
def test_itml_is_cyclic_dykstra(registry, inst):
    """With the exact mapping, metric-learn's ITML sweep is Dykstra's cyclic epoch (similar pairs
    first, then dissimilar): the same iterates after the same number of sweeps."""
    for sweeps in (3, 20):
        dyk = registry.solver("dykstra").solve(inst, Budget(), order="cyclic", max_epochs=sweeps)
        itml = registry.solver("ml-itml").solve(inst, Budget(), tol=0.0, max_iter=sweeps)
        W, W2 = dyk.variables["W"], itml.variables["W"]
        assert np.linalg.norm(W - W2) <= 1e-10 * np.linalg.norm(W)


# ------------------------------------------------------------------ covariance descriptors (digits)
@pytest.fixture(scope="module")
def digits(registry):
    return registry.load_dataset("sklearn/digits:multiclass")


def test_phi_maps_and_descriptor():
    from scipy.linalg import expm

    from psdbench.families.bregman_dykstra.pairs import covariance_descriptor, phi_map, pixel_features

    img = np.arange(64.0).reshape(8, 8) % 7
    assert pixel_features(img).shape == (64, 5)
    C = covariance_descriptor(img)
    assert np.allclose(C, C.T) and np.linalg.eigvalsh(C)[0] > 0
    assert np.allclose(phi_map(C, "id"), C)
    assert np.allclose(expm(phi_map(C, "log")), C)
    S = phi_map(C, "sqrt")
    assert np.allclose(S @ S, C)
    L = phi_map(C, "chol")
    assert np.allclose(np.triu(L, 1), 0) and np.allclose(L @ L.T, C)


@pytest.mark.parametrize("phi", ["log", "chol"])
def test_covariance_pairs_reach_clarabel(registry, digits, phi):
    I = registry.problem("metric/bregman-pairs").build(digits, {"pairs": "covariance", "phi": phi,
                                                                "pairs_per_class": 2}, 0)
    assert I.n == 5 and I.K == 20 and I.descriptors and not I.rank_one
    assert np.linalg.eigvalsh(I.A)[:, 0].min() > 0  # (Phi_i - Phi_j)^2: full rank here
    m = I.inner(np.eye(5))
    assert np.allclose(m, np.einsum("kii->k", I.A)) and m.max() <= 1.0 + 1e-12
    r = I.certified_reference()
    sol = registry.solver("dykstra").solve(I, Budget(), order="rand")
    assert sol.status is Status.OK and sol.info["projection"].startswith("general")
    assert abs(I.objective(sol) - r["value"]) <= 1e-6 * abs(r["value"])
    e = I.evaluate(sol)
    assert 0 <= e["acc_W"] <= 1 and 0 <= e["acc_eye"] <= 1
    assert I.metric_training_data() is None and I.metric_pairs() is None  # vector peers skip
