"""The graph-classification problem against independent references (cvxpy optima, closed forms)."""

import numpy as np
import pytest

from psdbench.api import Budget, DataError, PsdbenchError, Solution, Status
from psdbench.solvers.conic import Clarabel, Scs

from .conftest import random_instance


@pytest.mark.parametrize("graph,seed", [("knn", 0), ("complete", 1), ("knn", 2)])
def test_reduced_sdp_equals_full_sdp(registry, wdbc, graph, seed):
    """The reference's reduced SDP has the optimum of (8) (docstring proof of reduced_sdp)."""
    inst = random_instance(registry, wdbc, n=24, graph=graph, seed=seed)
    sol = Clarabel().solve(inst, Budget())
    assert sol.status is Status.OK
    full = inst.objective(sol)
    ref = inst.certified_reference()
    assert ref["lower"] <= ref["value"]
    assert ref["value"] - ref["lower"] < 1e-5 * max(1, abs(ref["value"]))
    assert full == pytest.approx(ref["value"], rel=1e-6)
    assert inst.verify(sol).ok


def test_scs_matches_certified_reference(registry, wdbc):
    inst = random_instance(registry, wdbc, n=40, graph="knn", seed=4)
    sol = Scs().solve(inst, Budget(), acceleration_lookback=0)
    ref = inst.certified_reference()
    assert inst.verify(sol).ok
    assert inst.objective(sol) == pytest.approx(ref["value"], rel=2e-3)


def test_dual_bound_shift_is_certified(registry, wdbc):
    inst = random_instance(registry, wdbc, n=20, seed=5)
    ref = inst.certified_reference()
    rng = np.random.default_rng(0)
    for _ in range(5):  # arbitrary (y, z), H not PSD: the shifted bound is still below p*
        y, z = rng.normal(size=inst.n + 1), rng.normal(size=inst.m)
        bound, lam = inst.dual_bound(y, z)
        assert bound <= ref["value"] + 1e-9


def test_objective_and_verify_of_labels(registry, wdbc):
    inst = random_instance(registry, wdbc, n=20, seed=0)
    x = inst.x_true.copy()
    sol = Solution(variables={"x": x})
    assert inst.objective(sol) == pytest.approx(x @ inst.L @ x)
    assert inst.verify(sol).ok
    assert inst.evaluate(sol)["error_rate"] == 0.0
    bad = x.copy()
    bad[0] = -bad[0]  # contradicts a known label
    assert not inst.verify(Solution(variables={"x": bad})).ok


def test_label_propagation_baseline_closed_form(registry, wdbc):
    inst = random_instance(registry, wdbc, n=40, graph="complete", seed=1)
    m = inst.m
    f = np.linalg.solve(inst.L[m:, m:], -inst.L[m:, :m] @ inst.xhat)
    expected = np.mean(np.sign(f) != inst.x_true[m:])
    assert inst.baselines()["labelprop_error"] == pytest.approx(expected)
    maj = 1.0 if inst.xhat.sum() >= 0 else -1.0
    assert inst.baselines()["majority_error"] == pytest.approx(np.mean(inst.x_true[m:] != maj))


def test_protocol_properties(registry, wdbc):
    P = registry.problem("graph-classification")
    a = P.build(wdbc, {"n": 50, "graph": "knn"}, 0)
    b = P.build(wdbc, {"n": 50, "graph": "knn"}, 0)
    assert a.fingerprint() == b.fingerprint()  # seeded
    assert a.m == 25 and np.allclose(a.L, a.L.T) and np.allclose(a.L.sum(axis=1), 0)
    fold = P.build(wdbc, {"n": None, "fold": 0}, 1)
    assert abs(fold.n - len(wdbc.y) / 5) <= 1
    with pytest.raises(PsdbenchError):
        P.build(wdbc, {"n": 50, "graph": "star"}, 0)


def test_uci_loader_and_missing_data(registry, data_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("PSDBENCH_DATA", str(data_dir))
    ds = registry.load_dataset("uci/ILPD")
    assert ds.X.shape == (583, 10) and ds.meta["n_nan_replaced"] == 4
    assert set(np.unique(ds.y)) == {-1.0, 1.0} and (ds.y == 1).sum() == 416
    with pytest.raises(DataError, match="missing data file"):
        registry.load_dataset("uci/not-a-dataset")
    monkeypatch.setenv("PSDBENCH_DATA", str(tmp_path / "nowhere"))
    with pytest.raises(DataError, match="PSDBENCH_DATA"):
        registry.load_dataset("uci/sonar")


def test_reduced_formulation_lifts_to_a_feasible_point_of_8(registry, wdbc):
    """Conic solvers on the reduced SDP return an M of (8): exactly feasible, same optimum."""
    inst = random_instance(registry, wdbc, n=24, graph="complete", seed=3)
    full = Clarabel().solve(inst, Budget())
    red = Clarabel().solve(inst, Budget(), formulation="reduced")
    assert red.status is Status.OK
    M = red.variables["M"]
    assert M.shape == (inst.n + 1, inst.n + 1)
    np.testing.assert_allclose(M[: inst.m, inst.n], inst.xhat * M[inst.n, inst.n], atol=1e-12)
    assert inst.verify(red).ok
    assert inst.objective(red) == pytest.approx(inst.objective(full), rel=1e-6)
    with pytest.raises(PsdbenchError):
        inst.reference_formulation("dual")


def test_lift_preserves_objective_and_psd(registry, wdbc):
    inst = random_instance(registry, wdbc, n=20, seed=2)
    Q, const = inst.reduced_sdp()
    rng = np.random.default_rng(0)
    V = rng.normal(size=(3, Q.shape[0]))
    V /= np.linalg.norm(V, axis=0)
    Z = V.T @ V  # any feasible point of the reduced SDP
    M = inst.lift(Z)
    sol = Solution(variables={"M": M})
    assert inst.verify(sol).ok
    assert inst.objective(sol) == pytest.approx(float(np.sum(Q * Z)) + const, rel=1e-10)
