"""The max-cut family: graphs, factored verification, the mixing method against Clarabel, the certified
bound, Goemans-Williamson rounding."""

from __future__ import annotations

import os
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.api import Budget, Dataset, Solution
from psdbench.families.maxcut.bound import dual_bound
from psdbench.families.maxcut.graph import (cut_value, graph_from_sdp, laplacian_cost, random_graph,
                                            torus_graph)
from psdbench.families.maxcut.mixing import MaxcutMixing, dual_from_point
from psdbench.families.maxcut.problem import MaxcutSdp
from psdbench.families.maxcut.rounding import GW_ALPHA, gw_round, local_search


def _instance(W, seed=0, **params):
    return MaxcutSdp().build(Dataset(name="test/graph", payload={"graph": W}), params, seed)


def _clarabel_opt(C: sp.csr_matrix) -> float:
    n = C.shape[0]
    X = cp.Variable((n, n), PSD=True)
    prob = cp.Problem(cp.Maximize(cp.trace(C.toarray() @ X)), [cp.diag(X) == 1])
    prob.solve(solver=cp.CLARABEL, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert prob.status == "optimal"
    return float(prob.value)


GRAPHS = [("random", 20, 0.3, 0), ("random", 40, 0.15, 1), ("torus", 36, 0, 3),
          pytest.param("random-pm1", 60, 0.1, 2, marks=pytest.mark.slow)]  # Clarabel: 2-12 s at n = 60


def _graph(kind, n, density, seed):
    if kind == "torus":
        return torus_graph(6, n // 6, seed)
    return random_graph(n, density, seed, "one" if kind == "random" else "pm1")


@pytest.mark.parametrize("kind,n,density,seed", GRAPHS)
def test_mixing_matches_clarabel_and_bound_is_above(kind, n, density, seed):
    W = _graph(kind, n, density, seed)
    inst = _instance(W, seed)
    p_star = _clarabel_opt(inst.C)
    sol = MaxcutMixing().solve(inst, Budget(), tol=1e-13)
    assert inst.verify(sol).ok
    obj = inst.objective(sol)
    scale = max(1.0, abs(p_star))
    assert abs(obj - p_star) <= 1e-6 * scale  # Clarabel's tolerance is 1e-10, the mixing method's 1e-13 per sweep
    b = dual_bound(inst.C, sol.variables["y"])
    assert b.kind == "certified"
    assert b.value >= p_star - 1e-9 * scale  # Clarabel's own optimum is within its tolerance of p*
    assert b.value - obj <= 1e-6 * scale
    ev = inst.evaluate(sol)
    assert ev["dual_bound_certified"] == 1.0 and ev["bound_gap_rel"] >= 0


def test_bound_of_any_y_is_an_upper_bound():
    W = random_graph(30, 0.2, 5)
    inst = _instance(W)
    p_star = _clarabel_opt(inst.C)
    rng = np.random.default_rng(0)
    for y in (np.zeros(30), rng.standard_normal(30), np.asarray(W.sum(axis=1)).ravel()):
        b = dual_bound(inst.C, y)
        assert b.kind == "certified" and b.value >= p_star


def _exact_bound(C: sp.csr_matrix, y: np.ndarray) -> tuple[float, float]:
    """``U(y) = 1'y + n lambda_max(C - Diag y)`` by dense eigvalsh, and eigvalsh's error margin on it
    (``n`` times ``n u ||S||_1``, a backward-stable eigensolver's bound with room to spare)."""
    S = C.toarray() - np.diag(y)
    n = y.size
    margin = n * n * 2.0**-53 * float(np.abs(S).sum(axis=1).max())
    return float(np.sum(y)) + n * float(np.linalg.eigvalsh(S)[-1]), margin


OFFSETS = (10.0, -10.0, 1e3, -1e3)  # times the scale of C (its largest absolute row sum)


@pytest.mark.parametrize("kind,n,density,seed", [("random", 30, 0.2, 5), ("torus", 36, 0, 3)])
def test_bound_of_a_dual_plus_a_constant_is_the_bound_of_the_dual(kind, n, density, seed):
    """Issue 49: ``U(y + c 1) = U(y)`` in exact arithmetic; the certified bounds agree within 1e-9
    relative and stay above Clarabel's optimum (the search starts from an estimate of
    ``lambda_max(C - Diag y)``, not from 0, so a dual far from ``lambda_max = 0`` is not left on
    Gershgorin's bound)."""
    inst = _instance(_graph(kind, n, density, seed), seed)
    p_star = _clarabel_opt(inst.C)
    y = MaxcutMixing().solve(inst, Budget(), tol=1e-13).variables["y"]
    scale = float(abs(inst.C).sum(axis=1).max())
    base = dual_bound(inst.C, y)
    exact, _ = _exact_bound(inst.C, y)
    assert base.kind == "certified" and base.value >= p_star - 1e-9 * abs(p_star)
    assert (base.value - exact) / abs(exact) <= 1e-8  # close to the exact U(y), not only above it
    for c in OFFSETS:
        b = dual_bound(inst.C, y + c * scale)
        assert b.kind == "certified", (c, b.reason)
        assert "Gershgorin" not in b.reason
        assert abs(b.value - base.value) <= 1e-9 * abs(base.value), (c, b.value, base.value)
        assert b.value >= p_star - 1e-9 * abs(p_star)


def test_bound_of_a_shifted_dual_on_the_lanczos_path():
    """Over 400 nodes the estimate is the Lanczos recurrence's (not eigvalsh): a 24 x 24 torus's
    mixing dual and its offsets certified within 1e-9 of each other and above the exact U (dense
    eigvalsh, with its error margin)."""
    inst = _instance(torus_graph(24, 24, 1), 1)
    y = MaxcutMixing().solve(inst, Budget(), rank=8, tol=1e-12).variables["y"]
    scale = float(abs(inst.C).sum(axis=1).max())
    base = dual_bound(inst.C, y)
    exact, margin = _exact_bound(inst.C, y)
    assert base.kind == "certified" and base.value >= exact - margin
    assert (base.value - exact) / abs(exact) <= 1e-8
    for c in OFFSETS:
        yc = y + c * scale
        b = dual_bound(inst.C, yc)
        exact_c, margin_c = _exact_bound(inst.C, yc)
        assert b.kind == "certified" and "Gershgorin" not in b.reason, (c, b.reason)
        assert b.value >= exact_c - margin_c
        assert abs(b.value - base.value) <= 1e-9 * abs(base.value), (c, b.value, base.value)


def test_bound_is_never_below_the_optimum_on_adversarial_duals():
    """Soundness where the estimate is wrong or the matrix nearly singular: random ``y`` (with
    offsets), ``y`` moved so ``lambda_max(C - Diag y)`` is 0 up to rounding or just either side of
    it, one coordinate pushed far out; every certified bound is at least Clarabel's optimum and at
    least the exact ``U(y)`` less eigvalsh's margin."""
    W = random_graph(30, 0.2, 5)
    inst = _instance(W)
    C = inst.C
    p_star = _clarabel_opt(C)
    scale = float(abs(C).sum(axis=1).max())
    rng = np.random.default_rng(49)
    y_opt = MaxcutMixing().solve(inst, Budget(), tol=1e-13).variables["y"]
    ys = []
    for _ in range(4):
        y0 = rng.standard_normal(30) * scale
        ys += [y0, y0 + 1e3 * scale, y0 - 1e3 * scale]
        lam = float(np.linalg.eigvalsh(C.toarray() - np.diag(y0))[-1])
        ys += [y0 + lam, y0 + lam - 1e-12 * scale, y0 + lam + 1e-12 * scale]  # lambda_max(C - Diag y) ~ 0, -, +
    for c in (0.0, 1e-12, -1e-12, 7.0, -7.0):
        ys.append(y_opt + c * scale)
    spike = y_opt.copy()
    spike[3] += 1e4 * scale
    ys.append(spike)
    for y in ys:
        b = dual_bound(C, y)
        exact, margin = _exact_bound(C, y)
        assert b.kind == "certified", b.reason
        assert b.value >= p_star - 1e-9 * abs(p_star)
        assert b.value >= exact - margin


def test_mixing_is_deterministic_given_seed_and_respects_max_iter():
    inst = _instance(random_graph(50, 0.1, 7), seed=3)
    a = MaxcutMixing().solve(inst, Budget(max_iter=5))
    b = MaxcutMixing().solve(inst, Budget(max_iter=5))
    assert a.iterations == 5 and a.status.value == "max_iter"
    assert np.array_equal(a.variables["R"], b.variables["R"])


def test_verification_and_objective_from_factor():
    W = random_graph(25, 0.3, 1)
    inst = _instance(W)
    R = np.random.default_rng(0).standard_normal((25, 4))
    R /= np.linalg.norm(R, axis=1, keepdims=True)
    sol = Solution(variables={"R": R})
    X = R @ R.T
    assert inst.objective(sol) == pytest.approx(float(np.sum(inst.C.toarray() * X)), rel=1e-12)
    assert inst.verify(sol).ok
    bad = Solution(variables={"R": R * 1.001})
    assert not inst.verify(bad).ok
    # without y the bound uses the point's own dual, still an upper bound
    assert inst.evaluate(sol)["dual_bound"] >= _clarabel_opt(inst.C)


def test_cut_of_sign_vector_is_quadratic_form():
    W = random_graph(40, 0.2, 2, "pm1")
    C = laplacian_cost(W)
    x = np.where(np.random.default_rng(1).random(40) < 0.5, -1.0, 1.0)
    assert cut_value(W, x) == pytest.approx(float(x @ (C @ x)), abs=1e-12)


def test_gw_rounding_ratio_and_cut_recomputed():
    W = random_graph(60, 0.15, 11)
    inst = _instance(W, seed=11)
    sol = MaxcutMixing().solve(inst, Budget(), tol=1e-12)
    sdp = dual_bound(inst.C, sol.variables["y"]).value
    rd = gw_round(W, sol.variables["R"], k=50, seed=0, local=False)
    Wu = sp.triu(W, 1).tocoo()
    s = rd.x > 0
    assert rd.cut == pytest.approx(float(sum(w for i, j, w in zip(Wu.row, Wu.col, Wu.data) if s[i] != s[j])))
    assert rd.cut >= GW_ALPHA * sdp  # best of 50: the expectation alone is >= 0.878 SDP (GW Thm 3.3)
    rl = gw_round(W, sol.variables["R"], k=50, seed=0, local=True)
    assert rl.cut >= rd.cut and rl.cut <= sdp
    x, _ = local_search(W, rl.x)
    assert np.array_equal(x, rl.x)  # 1-opt: no flip gains


@pytest.mark.skipif(not (Path(os.environ.get("PSDBENCH_DATA", "/nonexistent")) / "sdplib" / "maxG51.dat-s").is_file(),
                    reason="needs PSDBENCH_DATA with sdplib/maxG51.dat-s")
def test_maxG51_reads_into_a_graph():
    from psdbench.families.sdp.datasets import SdplibCollection

    ds = SdplibCollection().load("maxG51")
    W, C = graph_from_sdp(ds.payload["sdp"])
    assert W.shape == (1000, 1000) and (W != W.T).nnz == 0
    assert abs(C - laplacian_cost(W)).max() == 0.0  # F_0 = L(W) / 4 exactly
    inst = MaxcutSdp().build(ds, {}, 0)
    assert inst.published == pytest.approx(4006.256)


def test_mixing_continued_from_a_point_equals_one_longer_run():
    """``V0``: 3 sweeps then 4 more from where they stopped are the 7 sweeps of one run."""
    from psdbench.families.maxcut.mixing import mixing

    C = _instance(random_graph(40, 0.2, 4)).C
    V3, _, _ = mixing(C, 6, 1, tol=0.0, max_sweeps=3)
    V3_copy = V3.copy()
    V7a, _, _ = mixing(C, 6, 1, tol=0.0, max_sweeps=4, V0=V3)
    V7b, _, _ = mixing(C, 6, 1, tol=0.0, max_sweeps=7)
    assert np.array_equal(V3, V3_copy)  # the start is not changed
    assert np.array_equal(V7a, V7b)
    with pytest.raises(ValueError):
        mixing(C, 5, 1, max_sweeps=1, V0=V3)
