"""sdp-burer-monteiro and sdp-sketchycgal against the interior-point optimum (sdp-clarabel, and cvxpy's
Clarabel) on small generated theta, max-cut and graph-partitioning instances; SDPLR's rank rule, the
low-rank storage and the face of gpp's <J, X> = 0; inner solves that pause, never end, at a slice;
their skips; the harness's contract."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.api import Budget, Dataset
from psdbench.families.sdp.lowrank.bm_kernels import SplitData
from psdbench.families.sdp.lowrank.burer_monteiro import SdpBurerMonteiro, exact_step, sdplr_rank
from psdbench.families.sdp.data import from_blocks
from psdbench.families.sdp.solvers.native import SdpClarabel
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.lowrank.sketchycgal import NystromSketch, SdpSketchyCgal
from psdbench.testing import check_solver


def _gen(gen: str, n: int, seed: int, density: float = 0.4):
    return SdpStandard().build(Dataset(name=f"sdp-gen/{gen}", payload={"generator": gen}),
                               {"n": n, "density": density}, seed)


def gpp(n: int, seed: int):
    """Graph bisection (SDPLIB gpp's form): min <L/4, X> s.t. diag(X) = 1, <J, X> = 0, X psd."""
    rng = np.random.default_rng(seed)
    W = np.triu(rng.random((n, n)) < 0.4, 1).astype(float)
    W = W + W.T
    L = np.diag(W.sum(1)) - W
    A = [[sp.csr_matrix(([1.0], ([i], [i])), shape=(n, n))] for i in range(n)] + [[np.ones((n, n))]]
    d = from_blocks((n,), [L / 4], A, np.r_[np.ones(n), 0.0], name=f"gpp({n})")
    return SdpStandard().build(Dataset(name="t/gpp", payload={"sdp": d}), {}, seed)


CASES = {"theta": lambda: _gen("theta", 18, 1, 0.3), "maxcut": lambda: _gen("maxcut", 20, 2)}


@pytest.fixture(scope="module")
def optima():
    out = {}
    for name, make in CASES.items():
        inst = make()
        out[name] = (inst, inst.objective(SdpClarabel().solve(inst, Budget())))
    return out


@pytest.mark.slow
def test_burer_monteiro_on_partitioning_against_sdpa():
    """gpp: <J, X> = 0 with X psd forces X 1 = 0, so no X is strictly feasible and the interior-point
    points are inaccurate too (Clarabel stops at DIMACS error 1.8e-5, 1.5e-5 below SDPA's value,
    error 8.6e-8): SDPA is the reference, agreement to 1e-5.  Burer-Monteiro keeps R'1 = 0 (the face
    of that constraint) and sets its multiplier for the bound: every DIMACS error <= 1e-6."""
    from psdbench.families.sdp.solvers.sdpa import SdpSdpa

    inst = gpp(12, 3)
    if SdpSdpa().skip_reason(inst):
        pytest.skip(SdpSdpa().skip_reason(inst))
    want = inst.objective(SdpSdpa().solve(inst, Budget()))
    sol = SdpBurerMonteiro().solve(inst, Budget())
    ev = inst.evaluate(sol)
    assert sol.info["status"] == "converged" and sol.info["faced_constraints"] == [12]
    assert ev["max_err"] <= 1e-6, ev
    assert inst.objective(sol) == pytest.approx(want, rel=1e-5)
    assert ev["dual_bound_certified"] == 1.0 and ev["dual_bound"] <= want


def test_partitioning_keeps_the_face_of_its_zero_constraint():
    """gpp's <J, X> = 0 is stored as the rank-one V d V' (V = 1 / sqrt(n)) and faced: R'1 = 0 to
    rounding, its residual 0, its multiplier negative (Z gains -y_J J, psd)."""
    inst = gpp(10, 1)
    split = SplitData.of(inst.data)
    assert split.n_lowrank == 1 and list(split.faced) == [10]
    assert np.allclose(np.abs(split.vals), 1 / np.sqrt(10)) and split.d[0] == pytest.approx(10.0)
    sol = SdpBurerMonteiro().solve(inst, Budget())
    R = sol.variables["R"]
    assert np.abs(R.sum(axis=0)).max() <= 1e-12 * max(1.0, np.abs(R).max())
    assert sol.variables["y"][10] < 0 and inst.verify(sol).ok


@pytest.mark.parametrize("case", ["theta", "maxcut"])
def test_burer_monteiro_matches_the_interior_point_optimum(case, optima):
    inst, want = optima[case]
    sol = SdpBurerMonteiro().solve(inst, Budget(), tol=1e-7)
    assert sol.info["status"] == "converged"
    assert "X" not in sol.variables and sol.variables["R"].shape == (inst.n, sdplr_rank(inst.data.m, inst.n))
    ev = inst.evaluate(sol)
    assert inst.verify(sol).ok, ev  # every DIMACS error <= 1e-6, recomputed from R and y
    assert inst.objective(sol) == pytest.approx(want, rel=1e-6, abs=1e-6)
    # the certified lower bound from its y lies below the optimum and within the tolerance of it
    assert ev["dual_bound_certified"] == 1.0
    assert ev["dual_bound"] <= want + 1e-8 * (1 + abs(want))
    assert ev["dual_bound"] >= want - 1e-6 * (1 + abs(want))


@pytest.mark.parametrize("gen, n, seed", [("theta", 24, 4), ("maxcut", 30, 7)])
def test_burer_monteiro_against_cvxpy_clarabel(gen, n, seed):
    """A generated theta and max-cut SDP: the objective matches cvxpy's Clarabel optimum (on the
    instance's own cvxpy form) to 1e-6 relative as DIMACS err5 scales it, the factored point verifies (every DIMACS error <= the
    problem's 1e-6), and the certified bound from the y it returns is valid (below the optimum) and
    within the stated gap: (<C, X> - bound) / (1 + |<C, X>| + |bound|) <= the solver's tol (1e-6)."""
    inst = _gen(gen, n, seed)
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL")
    want = float(form.problem.value)
    sol = SdpBurerMonteiro().solve(inst, Budget())
    assert sol.info["status"] == "converged", sol.info
    assert inst.verify(sol).ok
    obj, ev = inst.objective(sol), inst.evaluate(sol)
    # the DIMACS scale: a point feasible to 1e-6 may lie that far below the optimum
    assert abs(obj - want) / (1 + abs(obj) + abs(want)) <= 1e-6
    assert ev["dual_bound_certified"] == 1.0
    assert ev["dual_bound"] <= want + 1e-7 * (1 + abs(want))  # valid, to Clarabel's own accuracy
    assert (obj - ev["dual_bound"]) / (1 + abs(obj) + abs(ev["dual_bound"])) <= SdpBurerMonteiro.default_params["tol"]


def test_sdplr_rank_rule_and_lowrank_storage():
    """SDPLR's rank min(floor(sqrt(2 m)) + 1, n) (main.c:211); theta's C = -J goes to the low-rank
    storage (rank one), its A_i (the trace and X_ij = 0) stay sparse."""
    assert [sdplr_rank(m, 1000) for m in (1, 2, 104, 2401)] == [2, 3, 15, 70]
    assert sdplr_rank(104, 10) == 10
    inst = _gen("theta", 18, 1, 0.3)
    split = SplitData.of(inst.data)
    assert split.n_lowrank == 1 and split.own[0] == 0 and split.faced.size == 0
    assert split.rows.size == (inst.data.m - 1) + 18  # the edges X_ij = 0 and the diagonal (the trace)


def test_an_inner_solve_pauses_at_a_slice_and_goes_on():
    """slice = 1 (the deadline checked after every line search) runs the same iterations as the
    default: a slice is a pause of the inner solve, the L-BFGS pairs kept, never its end."""
    inst = _gen("maxcut", 16, 3)
    a = SdpBurerMonteiro().solve(inst, Budget())
    b = SdpBurerMonteiro().solve(inst, Budget(), slice=1)
    assert a.info["minor"] == b.info["minor"] and a.info["updates"] == b.info["updates"]
    assert np.array_equal(a.variables["R"], b.variables["R"]) and np.array_equal(a.variables["y"], b.variables["y"])


@pytest.mark.parametrize("case", ["theta", "maxcut"])
def test_sketchycgal_reaches_the_optimum_to_its_tolerance(case, optima):
    inst, want = optima[case]
    sol = SdpSketchyCgal().solve(inst, Budget(), tol=1e-3, sketch=inst.n)
    ev = inst.evaluate(sol)
    assert sol.variables["R"].shape == (inst.n, inst.n)
    # a first-order method: the Nystrom point within 1e-2 relative, feasible to 1e-2
    assert inst.objective(sol) == pytest.approx(want, rel=1e-2)
    assert ev["err1"] <= 1e-2
    assert ev["dual_bound_certified"] == 1.0
    assert want - 2e-3 * (1 + abs(want)) <= ev["dual_bound"] <= want + 1e-8 * (1 + abs(want))


def test_sketchycgal_with_a_known_trace_bound():
    """tr X <= alpha (the LMO may return 0): max-cut with alpha = n gives the same optimum."""
    inst = _gen("maxcut", 12, 5)
    want = inst.objective(SdpClarabel().solve(inst, Budget()))
    sol = SdpSketchyCgal().solve(inst, Budget(), tol=1e-3, alpha=float(inst.n), sketch=12)
    assert inst.objective(sol) == pytest.approx(want, rel=1e-2)
    assert inst.evaluate(sol)["dual_bound"] <= want + 1e-8 * (1 + abs(want))


def test_skips_state_the_reason():
    lp = _gen("infeasible", 6, 0)  # a PSD block and an LP block
    assert "LP (diagonal) blocks" in SdpBurerMonteiro().skip_reason(lp)
    assert "one PSD block" in SdpSketchyCgal().skip_reason(lp)
    # no trace bound: min <C, X> s.t. X_01 = 0.5
    d = from_blocks((2,), [np.eye(2)], [[np.array([[0.0, 0.5], [0.5, 0.0]])]], [0.5])
    free = SdpStandard().build(Dataset(name="t/free", payload={"sdp": d}), {}, 0)
    assert "trace bound" in SdpSketchyCgal().skip_reason(free)
    assert SdpBurerMonteiro().skip_reason(free) is None


def test_a_cells_alpha_reaches_the_skip_check():
    """The harness asks ``skip_reason`` with the cell's parameters: with ``alpha`` the trace-free
    data run (a trace bound tr X <= 4 holds at the optimum of min tr X s.t. X_01 = 0.5: tr X = 1),
    without it they are skipped; the run matches the interior-point optimum (it returned tr X = 4,
    alpha's trace, before the reconstruction kept the iterate's)."""
    from psdbench.api import skip_reason

    d = from_blocks((2,), [np.eye(2)], [[np.array([[0.0, 0.5], [0.5, 0.0]])]], [0.5])
    free = SdpStandard().build(Dataset(name="t/free", payload={"sdp": d}), {}, 0)
    cgal = SdpSketchyCgal()
    assert "trace bound" in skip_reason(cgal, free, {})
    assert skip_reason(cgal, free, {"alpha": 4.0, "tol": 1e-3}) is None
    want = free.objective(SdpClarabel().solve(free, Budget()))
    sol = cgal.solve(free, Budget(), alpha=4.0, tol=1e-5)
    # tr X <= alpha: the returned point keeps the iterate's trace (1 here), not alpha's
    assert free.objective(sol) == pytest.approx(want, abs=1e-3)
    assert np.isnan(free.evaluate(sol)["dual_bound"])  # the data fix no trace: the instance claims no bound


def test_exact_line_search_minimises_the_quartic():
    q = np.array([1.0, -3.0, 0.5, -0.2, 0.4])
    a = exact_step(q)
    grid = np.linspace(0, 5, 200001)
    assert np.polyval(q[::-1], a) <= np.polyval(q[::-1], grid).min() + 1e-9
    assert exact_step(np.array([0.0, 1.0, 1.0, 0.0, 1.0])) == 0.0  # increasing: no step
    # SDPLR's search is over (0, 1] (linesearch.c: max = 1): the end point when the minimiser lies past it
    assert exact_step(q, 1.0) == 1.0 and a > 1.0
    # three real critical points (0.013, 0.93, 2.06): the lower of the two minima, the far one
    q2 = np.array([0.0, -0.1, 3.9, -4.0, 1.0])
    grid = np.linspace(0, 10, 400001)
    assert exact_step(q2) == pytest.approx(2.0586981, rel=1e-6)
    assert np.polyval(q2[::-1], exact_step(q2)) <= np.polyval(q2[::-1], grid).min() + 1e-12


def test_nystrom_sketch_recovers_a_low_rank_psd_matrix():
    """Rank-3 X streamed as rank-one updates with CGAL's weights: reconstruction exact to rounding."""
    rng = np.random.default_rng(0)
    V = np.linalg.qr(rng.standard_normal((30, 3)))[0]
    sk = NystromSketch(30, 6, rng)
    X = np.zeros((30, 30))
    for t in range(1, 40):
        eta = 2.0 / (t + 1)
        v = V @ rng.standard_normal(3)
        sk.rank_one_update(v, eta)
        X = (1 - eta) * X + eta * np.outer(v, v)
    U, lam = sk.reconstruct()
    assert np.allclose((U * lam) @ U.T, X, atol=1e-8 * np.abs(X).max())


def test_contract_of_the_low_rank_solvers():
    insts = [CASES["theta"](), CASES["maxcut"]()]
    check_solver(SdpBurerMonteiro(), insts, deadline_s=60)
    # a first-order method: its points are judged at the problem's tol 1e-2
    loose = [SdpStandard().build(Dataset(name=f"sdp-gen/{g}", payload={"generator": g}),
                                 {"n": 12, "density": 0.4, "tol": 1e-2}, 1) for g in ("theta", "maxcut")]
    check_solver(SdpSketchyCgal(), loose, deadline_s=60, params={"tol": 1e-3, "sketch": 12})
