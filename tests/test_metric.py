"""Metric learning (SGML paper): objectives, references, PD-cone, SGML/PGML properties."""

import numpy as np
import pytest
from scipy.optimize import linprog

from psdbench.api import Budget, Solution
from psdbench.linalg.balance import sign_violation, two_colouring
from psdbench.linalg.gdpa import first_eigvec, gershgorin_left_ends
from psdbench.linalg.psd import project_spectraplex
from psdbench.families.mahalanobis.problem import MahalanobisInstance, Mcml, objective_fold
from psdbench.families.mahalanobis.objectives import OBJECTIVES, PairObjective, _first_crossing, make_objective, pair_distances
from psdbench.families.mahalanobis.pd_cone import PdCone, project_rescale
from psdbench.families.mahalanobis.sgml import Pgml, Sgml
from psdbench.families.mahalanobis.sgml_kernels import block_vertex, knapsack_lp, newton_step_size, tree_start

TOL = {"psd": 1e-7, "trace": 1e-7, "sym": 1e-9, "zero": 1e-9}


def toy_instance(objective: str, n: int = 16, K: int = 6, seed: int = 0, C: float | None = None) -> MahalanobisInstance:
    """Two overlapping Gaussian classes, rows of unit length: a non-trivial optimum."""
    rng = np.random.default_rng(seed)
    y = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    F = rng.standard_normal((n, K)) + 0.6 * y[:, None] * rng.standard_normal(K)[None, :]
    F /= np.linalg.norm(F, axis=1, keepdims=True)
    obj = make_objective(objective, F, y, {"mu": 0.5, "k_target": 3})
    return MahalanobisInstance(problem=f"metric/{objective}", dataset="toy", params={"k_nn": 3}, seed=seed, F=F, y=y,
                          obj=obj, C=float(K if C is None else C), rho=1e-5, tol=dict(TOL))


# ------------------------------------------------------------------------------------ objectives
@pytest.mark.parametrize("name", list(OBJECTIVES))
def test_gradient_matches_finite_differences(name):
    inst = toy_instance(name, n=11, K=5, seed=3)
    rng = np.random.default_rng(1)
    B = rng.standard_normal((5, 5))
    M = B @ B.T / 5 + 0.5 * np.eye(5)
    q, G = inst.value_and_grad(M)
    assert np.allclose(G, G.T)
    for _ in range(3):
        E = rng.standard_normal((5, 5))
        E = E + E.T
        h = 1e-6
        fd = (inst.value(M + h * E) - inst.value(M - h * E)) / (2 * h)
        assert np.sum(G * E) == pytest.approx(fd, rel=1e-5, abs=1e-8)


def test_pair_distances_and_mcml_closed_form():
    """MCML equals KL(P || Q) computed entry by entry (Table 2 up to the constant sum P log P)."""
    inst = toy_instance("mcml", n=7, K=3, seed=2)
    M = np.diag([1.0, 2.0, 0.5])
    D = pair_distances(inst.F, M)
    i, j = 2, 5
    diff = inst.F[i] - inst.F[j]
    assert D[i, j] == pytest.approx(diff @ M @ diff)
    kl = 0.0
    for a in range(7):
        same = [b for b in range(7) if b != a and inst.y[b] == inst.y[a]]
        logits = np.array([-D[a, b] if b != a else -np.inf for b in range(7)])
        logq = logits - np.log(np.sum(np.exp(logits[np.isfinite(logits)])))
        kl += sum((1 / len(same)) * (np.log(1 / len(same)) - logq[b]) for b in same)
    assert inst.value(M) == pytest.approx(kl, rel=1e-12)


def test_glr_is_ylly():
    inst = toy_instance("glr", n=8, K=4)
    M = np.eye(4)
    W = np.exp(-pair_distances(inst.F, M))
    np.fill_diagonal(W, 0.0)
    L = np.diag(W.sum(axis=1)) - W
    assert inst.value(M) == pytest.approx(inst.y @ L @ inst.y, rel=1e-12)


# ------------------------------------------------------------------------------------ references
def _cvxpy_optimum(inst):
    import cvxpy as cp

    form = inst.reference_formulation("full")
    form.problem.solve(solver="CLARABEL")
    assert form.problem.status == cp.OPTIMAL
    # the reduced formulation (M = rho I + U X U') has the same optimum
    red = inst.reference_formulation("reduced")
    red.problem.solve(solver="CLARABEL")
    assert red.problem.value == pytest.approx(form.problem.value, rel=1e-5)
    return inst.value(project_spectraplex(form.extract()["M"], inst.rho, inst.C))


@pytest.mark.parametrize("name", ["mcml", "deml", "glr"])
def test_pd_cone_matches_cvxpy_optimum(name):
    """The smooth DCP objectives' cvxpy optimum (Clarabel, K <= 10) is matched by pd-cone to 1e-4
    relative with the Euclidean projection; this checks the objective code and the baseline."""
    inst = toy_instance(name, n=14, K=6, seed=5)
    opt = _cvxpy_optimum(inst)
    sol = PdCone().solve(inst, Budget(), tol=1e-12, max_iter=20000, projection="euclidean")
    assert inst.verify(sol).ok
    assert abs(inst.objective(sol) - opt) <= 1e-4 * abs(opt)


def test_pd_cone_paper_rescale_stalls_when_the_trace_binds():
    """Finding: the paper's projection (clip, then rescale the trace to C) is not a projection; where
    the trace bound is active (DEML, GLR here) its fixed points are not optimal.  MCML, whose trace
    bound is inactive on this instance, still reaches the optimum."""
    for name, converges in (("mcml", True), ("deml", False), ("glr", False)):
        inst = toy_instance(name, n=14, K=6, seed=5)
        opt = _cvxpy_optimum(inst)
        got = inst.objective(PdCone().solve(inst, Budget(), tol=1e-12, max_iter=20000, projection="rescale"))
        assert (abs(got - opt) <= 1e-4 * abs(opt)) == converges


@pytest.mark.parametrize("seed", [5, 6])
def test_pd_cone_stalls_above_the_lmnn_optimum(seed):
    """Finding: LMNN is piecewise linear; the paper's descent rule (halve the step on failure) ends at
    a kink where no step along the negative subgradient descends, 0.1-1 % above the cvxpy optimum.
    The harness reports that gap; it is never below the optimum."""
    inst = toy_instance("lmnn", n=14, K=6, seed=seed)
    opt = _cvxpy_optimum(inst)
    sol = PdCone().solve(inst, Budget(), tol=0.0, max_iter=50000, projection="euclidean")
    assert sol.info["final_step"] < 1e-250  # stopped because no step size descends
    assert 1e-4 * opt < inst.objective(sol) - opt < 1e-2 * opt


@pytest.mark.parametrize("name", ["mcml", "deml", "glr", "lmnn"])
def test_certified_reference_brackets_the_optimum(name):
    """Frank-Wolfe bound on one side, the exact feasible value on the other; fold instances are tiny."""
    inst = toy_instance(name, n=5, K=40, seed=1)  # r = 4 << K: the reduced problem is 4 x 4
    assert inst.subspace().shape[1] == 4
    ref = inst.certified_reference()
    value, bound = ref["value"], ref["lower"]
    if inst.sense == "max":
        assert bound >= value - 1e-12
    else:
        assert bound <= value + 1e-12
    assert abs(value - bound) <= 1e-5 * max(1.0, abs(value))
    # any other feasible point is on the right side of the certified bound
    sol = PdCone().solve(inst, Budget())
    got = inst.objective(sol)
    assert (got <= bound + 1e-9) if inst.sense == "max" else (got >= bound - 1e-9)


def test_lsml_has_no_convex_reference():
    inst = toy_instance("lsml", n=6, K=4)
    assert inst.reference_formulation() is None
    assert inst.certified_reference()["value"] is None


def test_objective_protocol_folds(registry, wdbc):
    inst = Mcml().build(wdbc, {"fold": 3}, 0)
    assert inst.K == 30 and 3 <= len(inst.y) <= 5
    np.testing.assert_allclose(np.linalg.norm(inst.F, axis=1), 1.0)
    idx = objective_fold(np.where(wdbc.y > 0, 1.0, -1.0), 3)
    assert len(idx) == len(inst.y)
    assert Mcml().expand_params(lambda: wdbc, {"fold": "all", "max_folds": 4}) == [
        {"fold": f, "max_folds": 4} for f in range(4)]
    assert len(Mcml().expand_params(lambda: wdbc, {"fold": "all"})) == round(569 / 4)


def test_classification_protocol_metrics(wdbc):
    inst = Mcml().build(wdbc, {"protocol": "classification", "k_nn": 10}, 0)
    assert len(inst.y_test) == pytest.approx(0.1 * 569, abs=1)
    out = inst.evaluate(Solution({"M": np.eye(30)}))
    assert 0.85 <= out["accuracy"] <= 1.0 and 0.8 <= out["ncm_accuracy"] <= 1.0


def test_verify_rejects_infeasible_points():
    inst = toy_instance("glr", K=4)
    bad_trace = Solution({"M": 2.0 * np.eye(4)})  # tr = 8 > C = 4
    assert not inst.verify(bad_trace).ok
    bad_psd = Solution({"M": np.diag([1.0, 1.0, 1.0, -1e-3])})
    assert not inst.verify(bad_psd).ok
    # a claimed colouring that the signs contradict fails
    M = np.eye(4)
    M[0, 1] = M[1, 0] = 0.1  # positive entry: a negative edge, needs different colours
    assert inst.verify(Solution({"M": M, "colours": np.array([1.0, -1.0, 1.0, 1.0])})).ok
    assert not inst.verify(Solution({"M": M, "colours": np.ones(4)})).ok


# ----------------------------------------------------------------------------------------- balance
def test_two_colouring_detects_unbalanced_cycle():
    M = np.eye(3) * 3
    M[0, 1] = M[1, 0] = -1.0  # positive edges 0-1, 1-2; a negative edge 0-2 closes an odd cycle
    M[1, 2] = M[2, 1] = -1.0
    M[0, 2] = M[2, 0] = 1.0
    assert not two_colouring(M).balanced
    M[0, 2] = M[2, 0] = -1.0
    col = two_colouring(M)
    assert col.balanced and sign_violation(M, col.colours) == 0.0


# -------------------------------------------------------------------------------------- projections
def test_projections_are_feasible_and_exact():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((8, 8))
    A = A + A.T + 3 * np.eye(8)
    for P in (project_spectraplex(A, 1e-3, 5.0), project_rescale(A, 1e-3, 5.0)[0]):
        w = np.linalg.eigvalsh(P)
        assert w[0] >= 1e-3 - 1e-12 and np.trace(P) <= 5.0 + 1e-9
    # the Euclidean projection is the closest feasible point: check against cvxpy
    import cvxpy as cp

    X = cp.Variable((8, 8), symmetric=True)
    cp.Problem(cp.Minimize(cp.sum_squares(X - A)), [X >> 1e-3 * np.eye(8), cp.trace(X) <= 5.0]).solve(solver="CLARABEL")
    np.testing.assert_allclose(project_spectraplex(A, 1e-3, 5.0), X.value, atol=1e-5)


# -------------------------------------------------------------------------------------------- SGML
def test_knapsack_lp_matches_highs():
    rng = np.random.default_rng(0)
    for _ in range(20):
        k = int(rng.integers(2, 30))
        kappa, w, b = rng.standard_normal(k), rng.uniform(0.1, 3.0, k), float(rng.uniform(0, 5))
        x = knapsack_lp(kappa, w, b)
        ref = linprog(kappa, A_ub=w[None, :], b_ub=[b], bounds=[(0, None)] * k, method="highs")
        assert kappa @ x == pytest.approx(ref.fun, abs=1e-9)
        assert w @ x <= b + 1e-12 and np.all(x >= 0)
    assert knapsack_lp(np.ones(3), np.ones(3), -1.0) is None
    assert knapsack_lp(np.ones(3), np.ones(3), -1e-15) is None  # no tolerance: tr(M) <= C is exact


def test_block_lp_closed_form_equals_highs():
    """LP (41) solved in closed form and by HiGHS reaches the same optimal value."""
    inst = toy_instance("mcml", n=10, K=8, seed=4)
    solver = Sgml()
    M = tree_start(inst.F, inst.C, np.random.default_rng(0)) * (1 - 1e-9)
    from psdbench.families.mahalanobis.sgml import _State

    st = _State(M=M, colours=two_colouring(M).colours, v=first_eigvec(M, tol=0).v, f=0.0)
    a = np.abs(st.v)
    rng = np.random.default_rng(1)
    for j in range(8):
        terms = solver._block_terms(st, j, st.colours, a, inst.rho)
        gd, go = rng.standard_normal(8), rng.standard_normal(7)
        p = {**solver.default_params, "lp_backend": "highs"}
        for flipped in (False, True):  # node j with either colour
            d1, c1 = block_vertex(terms, gd, go, inst.C, flipped)
            rows = terms._replace(sigma=-terms.sigma) if flipped else terms
            d2, c2 = solver._block_lp_highs(rows, gd, go, inst.C, inst.rho, st, p)
            assert gd @ d1 + go @ c1 == pytest.approx(gd @ d2 + go @ c2, rel=1e-7, abs=1e-9)


def test_tree_start_is_a_balanced_pd_metric():
    inst = toy_instance("glr", n=10, K=12, seed=2)
    M = tree_start(inst.F, inst.C, np.random.default_rng(0))
    assert np.count_nonzero(np.triu(M, 1)) == 11  # a spanning tree
    assert two_colouring(M).balanced
    assert gershgorin_left_ends(M).min() > 0 and np.trace(M) == pytest.approx(inst.C)


@pytest.mark.parametrize("name", list(OBJECTIVES))
@pytest.mark.parametrize("solver", [Sgml(), Pgml()])
def test_sgml_iterates_pd_monotone_and_balanced(name, solver):
    """Every Frank-Wolfe iterate is PD (Gershgorin rows, eq. (30)); Q never increases across scalar
    updates (Lemma 2); the output is a balanced signed graph metric that verifies."""
    inst = toy_instance(name, n=12, K=7, seed=6)
    sol = solver.solve(inst, Budget(), check_iterates=True)
    assert sol.info["min_lambda_margin"] >= -1e-12
    feas = inst.verify(sol)
    assert feas.ok and feas.details["balanced"] == 1.0
    q = [pt["objective"] for pt in sol.trace]
    sgn = -1.0 if inst.sense == "max" else 1.0
    assert all(sgn * (b - a) <= 1e-12 * max(1.0, abs(a)) for a, b in zip(q, q[1:]))
    assert sgn * q[-1] < sgn * q[0]  # it made progress from the start
    if solver.name == "pgml":
        off = sol.variables["M"] - np.diag(np.diag(sol.variables["M"]))
        assert off.max() <= 0.0


def test_gdpa_scalars_align_sgml_output():
    """Theorem 3 on SGML's own output: the Gershgorin left ends of S M S^-1 sit at lambda_min."""
    inst = toy_instance("deml", n=12, K=9, seed=7)
    M = Sgml().solve(inst, Budget(), full_phase=False).variables["M"]
    eig = first_eigvec(M, tol=0)
    ends = gershgorin_left_ends(M, eig.v)
    comp_min = np.linalg.eigvalsh(M)[0]
    assert ends.min() == pytest.approx(comp_min, rel=1e-8, abs=1e-10)
    if eig.n_components == 1:
        np.testing.assert_allclose(ends, comp_min, rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("seed", [8, 9])
def test_sgml_and_pgml_stay_above_the_certified_bound(seed):
    """SGML searches a non-convex union of polytopes (section 5.4): it may end above PGML on some
    instances (the paper: better on 14 of 17 datasets), but never below the certified bound."""
    inst = toy_instance("mcml", n=14, K=6, seed=seed)
    ref = inst.certified_reference()
    for solver in (Sgml(), Pgml()):
        assert inst.objective(solver.solve(inst, Budget())) >= ref["lower"] - 1e-9


def test_newton_step_size_finds_the_minimizer():
    for root in (0.0, 0.3, 0.77, 1.0):
        g = newton_step_size(lambda t, r=root: np.exp(t) - np.exp(r), tol=1e-10, xtol=1e-14)
        assert g == pytest.approx(root, abs=1e-8)
    # a kink (piecewise-linear Q, as LMNN): Q' jumps from -1 to +2 at 0.4; found within xtol
    calls = []
    g = newton_step_size(lambda t: calls.append(t) or (-1.0 if t < 0.4 else 2.0), xtol=1e-4)
    assert 0.4 - 1e-4 <= g <= 0.4 and len(calls) < 30
    assert newton_step_size(lambda t: 1.0 + t) == 0.0
    assert newton_step_size(lambda t: -1.0) == 1.0


@pytest.mark.parametrize("name", list(OBJECTIVES))
def test_slope_along_is_the_directional_derivative(name):
    """Each objective's fast ``slope_along`` equals sum(A * E) and, for the smooth ones, a central
    difference of the objective value along the line."""
    inst = toy_instance(name, n=13, K=5, seed=4)
    rng = np.random.default_rng(2)
    for _ in range(3):
        B = rng.standard_normal((5, 5))
        M = np.eye(5) + 0.1 * (B + B.T)
        D0 = pair_distances(inst.F, M)
        E = pair_distances(inst.F, M + 0.3 * np.diag(rng.random(5))) - D0
        fast, slow = inst.obj.slope_along(D0, E), PairObjective.slope_along(inst.obj, D0, E)
        for g in (0.0, 0.37, 1.0):
            assert fast(g) == pytest.approx(slow(g), rel=1e-10, abs=1e-12)
            if name in ("mcml", "deml", "glr"):
                h = 1e-6
                fd = (inst.obj.value_D(D0 + (g + h) * E) - inst.obj.value_D(D0 + (g - h) * E)) / (2 * h)
                assert fast(g) == pytest.approx(fd, rel=1e-5, abs=1e-8)


@pytest.mark.parametrize("name", ["mcml", "glr", "deml"])
def test_sgml_run_is_the_same_with_the_generic_slope(name):
    """The fast ``slope_along`` and ``Q'(0)`` from the gradient leave SGML's iterates unchanged:
    a whole run matches one that evaluates ``Q'`` through ``value_and_coef`` everywhere."""
    fast_inst, slow_inst = toy_instance(name, n=14, K=5, seed=6), toy_instance(name, n=14, K=5, seed=6)
    slow_inst.obj.slope_along = PairObjective.slope_along.__get__(slow_inst.obj)
    fast = Sgml().solve(fast_inst, Budget()).variables["M"]
    slow = Sgml().solve(slow_inst, Budget()).variables["M"]
    assert np.allclose(fast, slow, rtol=1e-7, atol=1e-9)
    assert fast_inst.objective(Solution(variables={"M": fast})) == pytest.approx(
        slow_inst.objective(Solution(variables={"M": slow})), rel=1e-9)


def test_first_crossing_matches_a_full_sort():
    rng = np.random.default_rng(5)
    for size in (0, 1, 7, 1500, 20000):
        b, w = rng.random(size), rng.random(size)
        order = np.argsort(b, kind="stable")
        rise = np.cumsum(w[order])
        for need in (0.5, 0.3 * float(w.sum()), float(w.sum()) + 1.0):
            k = int(np.searchsorted(rise, need, side="left"))
            expect = 1.0 if k >= size else float(b[order][k])
            assert _first_crossing(b, w, need) == expect


def test_lmnn_exact_step_is_the_line_minimizer():
    """LMNN is piecewise linear along a line: exact_step returns the minimizer over [0, 1]."""
    inst = toy_instance("lmnn", n=12, K=5, seed=3)
    rng = np.random.default_rng(0)
    grid = np.linspace(0, 1, 4001)
    for _ in range(5):
        M = np.eye(5)
        B = rng.standard_normal((5, 5))
        Dir = (B + B.T) * 0.3
        D0 = pair_distances(inst.F, M)
        E = pair_distances(inst.F, M + Dir) - D0
        g = inst.obj.exact_step(D0, E)
        vals = [inst.obj.value_D(np.maximum(D0 + t * E, 0.0)) for t in grid]
        assert inst.obj.value_D(np.maximum(D0 + g * E, 0.0)) <= min(vals) + 1e-9
