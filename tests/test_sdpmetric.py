"""SDPMetric family: objective (8) and its losses, the exact rho step, the reference, the solver."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.stats

from psdbench.report import findings as fd
from psdbench.api import Budget, Solution, Status
from psdbench.report.blocks import Finding, Text
from psdbench.families.sdpmetric import losses
from psdbench.families.sdpmetric.contract import TripletMarginKind
from psdbench.families.sdpmetric.instance import feasible_point
from psdbench.testing import check_problem, check_solver

SMALL = {"pca": 6, "max_train": 30}  # D = 6, 270 triplets


@pytest.fixture(scope="module")
def wine(registry):
    return registry.load_dataset("sklearn/wine:multiclass")


@pytest.fixture(scope="module")
def small(registry, wine):
    prob = registry.problem("metric/triplet-margin")
    return {loss: prob.build(wine, {**SMALL, "loss": loss}, 0) for loss in ("huber", "squared-hinge", "hinge")}


def random_spectraplex(D: int, rng: np.random.Generator) -> np.ndarray:
    B = rng.standard_normal((D, D))
    X = B @ B.T
    return X / np.trace(X)


def test_wine_protocol(registry, wine):
    inst = registry.problem("metric/triplet-margin").build(wine, {}, 0)
    assert (len(inst.y), len(inst.y_val), len(inst.y_test)) == (126, 26, 26)  # Table I
    assert inst.n_triplets == 9 * 126 == 1134
    i, j, k = inst.triplets.T
    assert np.all(inst.y[i] == inst.y[j]) and np.all(inst.y[i] != inst.y[k])
    assert len(np.unique(inst.y)) == 3 and inst.D == 13
    assert isinstance(inst, TripletMarginKind)


def test_huber_constants():
    h = 0.3
    z = np.array([-1.0, -h, -0.1, 0.0, 0.1, h, 1.0])
    expect = np.array([1.0, h, (h + 0.1) ** 2 / (4 * h), h / 4, (h - 0.1) ** 2 / (4 * h), 0.0, 0.0])
    np.testing.assert_allclose(losses.loss_value(z, "huber", h), expect)


@pytest.mark.parametrize("loss", ["huber", "squared-hinge", "hinge"])
def test_loss_slope_matches_finite_differences(loss):
    z = np.linspace(-2, 2, 41) + 0.0123  # off the kinks
    eps = 1e-6
    fd = (losses.loss_value(z + eps, loss, 0.5) - losses.loss_value(z - eps, loss, 0.5)) / (2 * eps)
    np.testing.assert_allclose(losses.loss_slope(z, loss, 0.5), fd, atol=1e-6)


@pytest.mark.parametrize("loss", ["huber", "squared-hinge"])
def test_gradient_matches_finite_differences(small, loss):
    inst = small[loss]
    rng = np.random.default_rng(1)
    X = random_spectraplex(inst.D, rng)
    rho = inst.best_rho(X) + 0.01
    G = losses.grad_X(inst.U, inst.V, inst.margins(X), rho, inst.C, inst.loss, inst.h)
    for _ in range(3):
        E = rng.standard_normal(X.shape)
        E = 0.5 * (E + E.T)
        eps = 1e-6
        fd = (inst.f(X + eps * E, rho) - inst.f(X - eps * E, rho)) / (2 * eps)
        assert abs(fd - np.sum(G * E)) <= 1e-5 * max(1.0, abs(fd))


@pytest.mark.parametrize("loss", ["huber", "squared-hinge", "hinge"])
def test_exact_rho_beats_a_fine_grid(small, loss):
    inst = small[loss]
    X = random_spectraplex(inst.D, np.random.default_rng(2))
    m = inst.margins(X)
    r = inst.best_rho(X)
    grid = np.linspace(m.min() - 1, m.max() + 1, 20001)
    vals = np.array([inst.f(X, g) for g in grid])
    assert inst.f(X, r) >= vals.max() - 1e-12 * max(1.0, abs(vals.max()))
    assert abs(losses.rho_slope(m, r, inst.C, loss, inst.h)) <= 1e-8 or loss == "hinge"


@pytest.mark.parametrize("loss", ["huber", "squared-hinge", "hinge"])
def test_vectorized_slopes_match_the_pointwise_slope(loss):
    rng = np.random.default_rng(5)
    m = np.concatenate([rng.normal(size=300), np.repeat(0.25, 20)])  # ties included
    ms = np.sort(m)
    r = np.concatenate([rng.normal(scale=2.0, size=200), ms, ms - 0.3, ms + 0.3])  # breakpoints too
    expect = np.array([losses.rho_slope(m, x, 0.05, loss, 0.3) for x in r])
    np.testing.assert_allclose(losses.rho_slopes(ms, r, 0.05, loss, 0.3), expect, rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("loss", ["huber", "squared-hinge", "hinge"])
@pytest.mark.parametrize("C", [0.004, 0.05, 3.0])
def test_best_rho_is_the_root_of_the_slope(loss, C):
    m = np.random.default_rng(7).normal(size=300)
    r = losses.best_rho(m, C, loss, 0.3)
    if loss == "hinge":  # piecewise constant slope: the left derivative is > 0 at r and <= 0 just after
        assert losses.rho_slope(m, r, C, loss, 0.3) > 0 >= losses.rho_slope(m, r + 1e-9, C, loss, 0.3)
    else:
        assert abs(losses.rho_slope(m, r, C, loss, 0.3)) <= 1e-9


@pytest.fixture(scope="module")
def references(small):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {loss: small[loss].certified_reference() for loss in ("huber", "squared-hinge")}


@pytest.mark.parametrize("loss", ["huber", "squared-hinge"])
def test_reference_is_certified(small, references, loss):
    ref = references[loss]
    assert ref["status"] == "ok"
    assert ref["value"] <= ref["lower"] + 1e-12  # upper bound above the feasible value (max)
    assert ref["lower"] - ref["value"] <= 1e-5 * max(1.0, abs(ref["value"]))


@pytest.mark.parametrize("loss", ["huber", "squared-hinge"])
def test_sdpmetric_approaches_reference_and_gap_bounds_the_error(registry, small, references, loss):
    inst, ref = small[loss], references[loss]
    # An iteration budget, not a time budget (the result must not depend on the machine's load):
    # the shortfall decays as about 22 / k on this instance (measured: 2.2e-2, 7.6e-3, 2.4e-3 at
    # k = 1e3, 3e3, 1e4), so 2e-3 needs about 12,000 iterations.
    sol = registry.solver("sdpmetric").solve(inst, Budget(max_iter=20000))
    assert sol.status in (Status.OK, Status.MAX_ITER)
    assert inst.verify(sol).ok
    f = inst.objective(sol)
    f_star = ref["lower"]  # an upper bound on g*
    assert f <= f_star + 1e-9
    assert f_star - f <= 2e-3 * max(1.0, abs(f_star))
    for pt in sol.trace:  # the FW gap bound is never below the true gap
        assert pt["fw_gap"] >= (ref["value"] - pt["objective"]) - 1e-9


@pytest.mark.slow
@pytest.mark.parametrize("loss", ["huber", "squared-hinge"])
def test_sdpmetric_reaches_reference_to_1e_4(registry, small, references, loss):
    """The issue's check: 1e-4 relative to max(|f*|, 1) on a small instance (D = 6, 270 triplets).

    Frank-Wolfe converges as O(1/k): measured shortfalls about 22 / k (huber) and 32 / k (squared
    hinge), so 1e-4 needs about 220,000 and 320,000 iterations (about 45 and 65 s on one core).
    Algorithm 1's line-5 test (eps) is switched off: with steps of order 1/k both changes of f fall
    below 1e-12 near k = 180,000 and it stops the run early (measured: 1.1e-4 short).  The FW-gap
    test (tol) stays on; an iteration budget keeps the check independent of the machine's load.
    """
    inst, ref = small[loss], references[loss]
    sol = registry.solver("sdpmetric").solve(inst, Budget(max_iter=400_000), tol=1e-6, eps=0.0)
    f = inst.objective(sol)
    assert inst.verify(sol).ok
    assert ref["lower"] - f <= 1e-4 * max(1.0, abs(ref["lower"]))  # against the certified upper bound


def test_fw_bound_at_random_points_dominates_reference(small, references):
    inst, ref = small["huber"], references["huber"]
    rng = np.random.default_rng(3)
    for _ in range(5):
        X = random_spectraplex(inst.D, rng)
        assert inst.fw_bound(X) >= ref["value"] - 1e-9
        assert inst.value(X) <= ref["lower"] + 1e-9


def test_verify_and_evaluate(small):
    inst = small["huber"]
    X = np.eye(inst.D) / inst.D
    assert inst.verify(Solution(variables={"X": X})).ok
    assert not inst.verify(Solution(variables={"X": 2 * X})).ok
    Y = X.copy()
    Y[0, 0] -= 0.01
    Y[1, 1] += 0.01
    assert inst.verify(Solution(variables={"X": Y})).ok
    Y[0, 0], Y[1, 1] = -1e-3, Y[1, 1] + Y[0, 0] + 1e-3  # trace 1, one negative eigenvalue
    assert not inst.verify(Solution(variables={"X": Y})).ok
    assert inst.verify(Solution(variables={"X": feasible_point(Y)})).ok
    ev = inst.evaluate(Solution(variables={"X": X}))
    assert {"test_error", "val_error", "euclidean_test_error", "rho"} <= set(ev)
    assert ev["test_error"] == pytest.approx(ev["euclidean_test_error"])  # X = I / D is Euclidean


def test_problem_conforms(registry, wine):
    check_problem(registry.problem("metric/triplet-margin"), wine, {**SMALL, "loss": "huber"}, kind=TripletMarginKind,
                  solve_reference=True)


@pytest.mark.parametrize("name, params", [("sdpmetric", {"tol": 1e-4}), ("pg-spectraplex", {}), ("clarabel", {}),
                                          # SCS at its default eps (1e-4) returns lambda_min ~ -5e-5: infeasible
                                          ("scs", {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200000})])
def test_solvers_conform(registry, small, name, params):
    # the contract, not accuracy (that is the slow 1e-4 test): SDPMetric at tol 1e-4 runs to the deadline here
    report = check_solver(registry.solver(name), [small["huber"], small["squared-hinge"]], params=params,
                          deadline_s=2.0, grace_s=5.0)
    assert len(report.solutions) == 2


def test_repair_maps_to_a_feasible_point(small):
    inst = small["huber"]
    X = np.eye(inst.D) / inst.D
    X[0, 0] -= 2.0 / inst.D
    fixed = inst.repair(Solution(variables={"X": X}))
    assert inst.verify(fixed).ok


def test_sdpmetric_skips_hinge(registry, small):
    assert "differentiable" in registry.solver("sdpmetric").skip_reason(small["hinge"])


def test_table2_section_renders_ours_beside_the_paper():
    import pandas as pd
    from types import SimpleNamespace

    from psdbench.families.sdpmetric.report import Table2, load_table2, load_table3

    paper = load_table2()
    assert paper.set_index(["dataset", "method"]).loc[("Wine", "SDPMetric-H"), "mean"] == 3.08
    assert load_table3().set_index(["dataset", "method"]).loc[("Diabetes", "LMNN"), "seconds"] == 10
    base = {"dataset": "sklearn/wine:multiclass", "p_scaling": "standardize", "feasible": 1,
            "metric_euclidean_test_error": 0.1}
    rows = [{**base, "seed": s, "solver": "sdpmetric", "solver_label": "sdpmetric (tol=0.0001)", "p_loss": "huber",
             "metric_test_error": e, "wall_time_s": t, "metric_C_selection_s": 3.0}
            for s, e, t in ((0, 0.02, 1.0), (1, 0.04, 3.0))]
    rows += [{**base, "seed": s, "solver": "ml-lmnn", "solver_label": "ml-lmnn", "p_loss": "huber",
              "metric_test_error": e, "wall_time_s": 4.0} for s, e in ((0, 0.0), (1, 0.03))]
    rows.append({**base, "seed": 2, "solver": "sdpmetric", "solver_label": "sdpmetric", "p_loss": "huber",
                 "feasible": 0, "metric_test_error": 0.5, "wall_time_s": 1.0})  # unverified: left out
    blocks = Table2().render(SimpleNamespace(frame=pd.DataFrame(rows)))
    t2, pairs, t3 = blocks[:3]
    findings = {f.claim: f for f in blocks[3:]}
    assert all(isinstance(f, Finding) for f in findings.values())
    frame = t2.frame.set_index("dataset")
    assert frame.loc["sklearn/wine:multiclass", "SDPMetric-H"] == "3.00 (1.41)"
    assert frame.loc["sklearn/wine:multiclass", "LMNN"] == "1.50 (2.12)"
    assert frame.loc["sklearn/wine:multiclass", "Euclidean"] == "10.00 (0.00)"
    assert frame.loc["Wine (paper)", "SDPMetric-H"] == "3.08 (2.31)"
    assert t2.shaded == ("Wine (paper)",)
    assert list(t2.frame.columns) == ["dataset", "splits", "Euclidean", "LMNN", "SDPMetric-S", "SDPMetric-H"]
    # paired: H - Euclidean = (2 - 10, 4 - 10) -> -7 (1.41); H - LMNN = (2 - 0, 4 - 3) -> +1.5 (0.71)
    p = pairs.frame.set_index("method")
    assert p.loc["SDPMetric-H", "- Euclidean"] == "-7.00 (1.41)" and p.loc["SDPMetric-H", "- LMNN"] == "+1.50 (0.71)"
    # two splits: the 95 % t interval is mean +- t(0.975, 1) sd / sqrt(2), too wide for a verdict either way
    half = scipy.stats.t.ppf(0.975, 1) * np.std([-8.0, -6.0], ddof=1) / np.sqrt(2)
    eu = findings["sklearn/wine:multiclass (standardize): SDPMetric-H's 3-NN test error is not above Euclidean's"]
    assert eu.interval == f"-7.00 [{-7 - half:+.2f}, {-7 + half:+.2f}] (95 %, 2 splits)"
    assert eu.verdict == "within the spread" and eu.paper_value == f"{3.08 - 24.62:+.2f} points"
    lm = findings["sklearn/wine:multiclass (standardize): SDPMetric-H's 3-NN test error is at most 1 point above LMNN's"]
    assert lm.verdict == "within the spread" and lm.ours.startswith("+1.50 points")
    assert pairs.checks == [fd.finding_line(f) for f in blocks[3:5]]
    assert all("**within the spread**" in c for c in pairs.checks)
    # the same paired data with a tight spread: the verdicts follow the interval
    fd_rows = [r for r in rows if r.get("feasible") != 0]
    tight = [{**r, "seed": r["seed"] + 10 * k, "metric_test_error": r["metric_test_error"] + 1e-4 * k}
             for k in range(5) for r in fd_rows]
    tf = {f.claim: f for f in Table2().render(SimpleNamespace(frame=pd.DataFrame(tight)))[3:]}
    assert tf[eu.claim].verdict == "holds" and tf[lm.claim].verdict == "does not hold"  # +1.5, interval above 1
    # Table III: medians 2 s (H) and 4 s (LMNN): speed-up 2x; the paper's Wine row 9 s / 2 s
    t = t3.frame.set_index("dataset")
    assert t.loc["sklearn/wine:multiclass", "SDPMetric-H"] == "2 s (2x)"
    assert t.loc["sklearn/wine:multiclass", "choosing C (median)"] == "3 s"
    assert t.loc["Wine (paper)", "SDPMetric-H"] == "2 s (4.5x)"
    # LMNN slower on both splits (4 / 1 and 4 / 3), but two splits do not resolve it: the one rule's 95 % interval
    # of the geometric mean straddles 1x (within the spread), against the paper's 4.5x
    speed = findings["sklearn/wine:multiclass (standardize): LMNN is slower than SDPMetric-H (time per run)"]
    assert speed.verdict == "within the spread" and speed.paper_value == "4.5x" and speed.ours == "2.7x [1.3 to 4] (2 splits)"
    # without LMNN cells: no Table III, one sentence that says why, and the claim "not measured"
    no_lmnn = Table2().render(SimpleNamespace(frame=pd.DataFrame([r for r in rows if r["solver"] != "ml-lmnn"])))
    assert not any(getattr(b, "title", "").startswith("Table III") for b in no_lmnn)
    (why,) = [b for b in no_lmnn if isinstance(b, Text) and b.text.startswith("**Table III")]
    assert "no `ml-lmnn` cells" in why.text
    assert [f.verdict for f in no_lmnn if isinstance(f, Finding) and "Table III" in f.claim] == [
        "not measured in this run"]
    # each claim against LMNN left unmeasured says how to measure it: the `peers` extra's command
    unmeasured = [f for f in no_lmnn if isinstance(f, Finding) and "LMNN" in f.claim]
    assert unmeasured and all(f.verdict == "not measured in this run" for f in unmeasured)
    assert all("pip install 'psdbench[peers]'" in f.note and "`ml-lmnn`" in f.note for f in unmeasured)
    assert "pip install 'psdbench[peers]'" in why.text


@pytest.mark.parametrize("name, sizes, n_triplets, D", [
    ("uci/breast-cancer:multiclass", (479, 102, 102), 4311, 10),  # ID column kept: 10 features
    ("uci/diabetes:multiclass", (538, 115, 115), 4842, 8),
])
def test_table1_sizes_on_uci(registry, data_dir, monkeypatch, name, sizes, n_triplets, D):
    monkeypatch.setenv("PSDBENCH_DATA", str(data_dir))
    inst = registry.problem("metric/triplet-margin").build(registry.load_dataset(name), {}, 0)
    assert (len(inst.y), len(inst.y_val), len(inst.y_test)) == sizes
    assert inst.n_triplets == n_triplets and inst.D == D


def test_simplex_and_spectraplex_projections():
    from psdbench.families.sdpmetric.pg_spectraplex import project_simplex, project_spectraplex

    rng = np.random.default_rng(4)
    for _ in range(20):
        w = rng.standard_normal(7) * 2
        x = project_simplex(w)
        assert x.min() >= 0 and abs(x.sum() - 1) < 1e-12
        # optimality: x = max(w - tau, 0): the positive entries share the shift tau, the zeros have w <= tau
        shift = (w - x)[x > 0]
        assert np.ptp(shift) < 1e-12 and np.all(w[x == 0] <= shift[0] + 1e-12)
    A = rng.standard_normal((5, 5))
    X = project_spectraplex(A)
    assert abs(np.trace(X) - 1) < 1e-12 and np.linalg.eigvalsh(X).min() > -1e-12


@pytest.mark.parametrize("loss", ["huber", "squared-hinge"])
def test_pg_spectraplex_reaches_reference_to_1e_4(registry, small, references, loss):
    inst, ref = small[loss], references[loss]
    sol = registry.solver("pg-spectraplex").solve(inst, Budget())
    assert sol.status == Status.OK and inst.verify(sol).ok
    f = inst.objective(sol)
    assert abs(ref["value"] - f) <= 1e-4 * max(1.0, abs(ref["value"]))
    assert f <= ref["lower"] + 1e-9
    for pt in sol.trace:
        assert pt["fw_gap"] >= (ref["value"] - pt["objective"]) - 1e-9


def test_peers_learn_on_the_training_split_and_land_on_the_spectraplex():
    """metric-learn's peers (and the Euclidean metric) run on triplet-margin instances: the learned
    metric is rescaled to trace one, verified by the instance, and its 3-NN error is the peer's own."""
    from psdbench.api import Budget
    from psdbench.registry import discover

    reg = discover()
    inst = reg.problem("metric/triplet-margin").build(reg.load_dataset("sklearn/wine:multiclass"), {}, 0)
    euclid = reg.solver("euclidean")
    assert euclid.skip_reason(inst) is None
    sol = euclid.solve(inst, Budget())
    X = sol.variables["X"]
    assert np.trace(X) == pytest.approx(1.0) and inst.verify(sol).ok
    metrics = inst.evaluate(sol)
    assert metrics["test_error"] == pytest.approx(metrics["euclidean_test_error"])  # identity metric
    itml = reg.solver("ml-itml")
    if itml.skip_reason(inst) is not None:
        pytest.skip(itml.skip_reason(inst))
    sol = itml.solve(inst, Budget(max_iter=50))
    assert inst.verify(sol).ok and np.trace(sol.variables["X"]) == pytest.approx(1.0)


def test_table2_section_ignores_random_triplet_instances():
    import pandas as pd
    from types import SimpleNamespace

    from psdbench.families.sdpmetric.report import Table2

    rows = [{"dataset": "synthetic/gaussian-classes:multiclass", "p_scaling": "standardize", "p_triplets": "random",
             "feasible": 1, "seed": 0, "solver": "sdpmetric", "solver_label": "sdpmetric", "p_loss": "huber",
             "metric_test_error": 0.5, "metric_euclidean_test_error": 0.5, "wall_time_s": 1.0}]
    assert Table2().render(SimpleNamespace(frame=pd.DataFrame(rows))) == []
