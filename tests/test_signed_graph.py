"""Balanced signed graph learning (BSGL paper), checked against independent references."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from psdbench.api import Budget, DataError, PsdbenchError, Solution
from psdbench.families.signed_graph.data import balanced_gmrf, generalized_laplacian, read_observations
from psdbench.linalg.balance import two_colouring
from psdbench.families.signed_graph.clime_lp import ColumnLP, ColumnLPError, min_feasible_rho, residual_rho
from psdbench.families.signed_graph.slp_admm import ColumnADMM
from psdbench.families.signed_graph.problem import (SignedGraph, adjacency_error, f_measure, hqic, relative_error,
                                            sample_covariance)
from psdbench.families.signed_graph.balanced_clime import balanced_clime, initial_polarity, voc_weights
from psdbench.families.signed_graph.baselines import clime, glasso


# ----------------------------------------------------------------------------- generator
def test_generator_is_balanced_pd_and_follows_section_6a() -> None:
    s = balanced_gmrf(50, 500, 0.2, 0.0, seed=3)
    L, beta = s.L, s.polarity
    assert np.allclose(L, L.T)
    assert np.linalg.eigvalsh(L)[0] > 0
    col = two_colouring(L)
    assert col.balanced
    off = L - np.diag(np.diag(L))
    assert np.all(np.outer(beta, beta) * off <= 0)  # every edge consistent with the true polarities
    W = -off
    mags = np.abs(W[np.triu_indices(50, 1)])
    mags = mags[mags > 0]
    assert mags.min() >= 0.01 and mags.max() <= 1.0
    neg = np.clip(-W, 0, None).sum(axis=1)
    # D - W + diag(W) with self-loops 2.5 x negative degree: L_ii = sum_j W_ij (self-loop included)
    assert np.allclose(np.diag(L), W.sum(axis=1) + 2.5 * neg)
    assert np.allclose(generalized_laplacian(W + np.diag(2.5 * neg)), L)
    assert 0.1 < len(mags) / (50 * 49 / 2) < 0.3  # Erdos-Renyi p = 0.2
    again = balanced_gmrf(50, 500, 0.2, 0.0, seed=3)
    assert np.array_equal(again.X, s.X)
    noisy = balanced_gmrf(50, 500, 0.2, 0.25, seed=3)
    assert np.array_equal(noisy.L, s.L) and not np.array_equal(noisy.X, s.X)


def test_generator_samples_have_covariance_inverse_laplacian() -> None:
    s = balanced_gmrf(10, 40000, 0.3, 0.0, seed=1)
    C = sample_covariance(s.X)
    Sigma = np.linalg.inv(s.L)
    assert np.linalg.norm(C - Sigma) / np.linalg.norm(Sigma) < 0.05


# ----------------------------------------------------------------------------- metrics
def test_metrics_against_hand_computed_values() -> None:
    L_true = np.array([[2.0, -1.0, 0.0, 0.5], [-1.0, 2.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0], [0.5, 0.0, 0.0, 1.0]])
    L_hat = np.array([[2.0, -0.5, 0.2, 0.0], [-0.5, 2.0, 0.0, 0.0], [0.2, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0]])
    # true edges {01, 03}, estimated {01, 02}: tp 1, fp 1, fn 1
    assert f_measure(L_hat, L_true, 1e-12) == pytest.approx(2 / 4)
    assert relative_error(L_hat, L_true) == pytest.approx(np.linalg.norm(L_hat - L_true) / np.linalg.norm(L_true))
    W_true, W_hat = -(L_true - np.diag(np.diag(L_true))), -(L_hat - np.diag(np.diag(L_hat)))
    assert adjacency_error(L_hat, L_true) == pytest.approx(np.linalg.norm(W_hat - W_true) / np.linalg.norm(W_true))
    C = np.linalg.inv(L_true) + 0.01 * np.eye(4)
    k = 4 + 2  # upper triangle non-zeros of L_hat, diagonal included
    expect = -2 * 25.0 * (np.linalg.slogdet(L_hat)[1] - np.trace(C @ L_hat)) + 2 * k * np.log(np.log(50))
    assert hqic(L_hat, C, 50, 1e-12, weight=25.0) == pytest.approx(expect)
    assert hqic(-L_hat, C, 50) == np.inf


# ----------------------------------------------------------------------------- column LPs
def _instance(n: int = 12, k: int = 200, seed: int = 0):
    s = balanced_gmrf(n, k, 0.3, 0.0, seed)
    return s, sample_covariance(s.X)


@pytest.mark.parametrize("i", [0, 4, 9])
def test_column_lp_matches_cvxpy(i: int) -> None:
    s, C = _instance()
    n = C.shape[0]
    signs = s.polarity[i] * s.polarity
    rho_l, l0 = min_feasible_rho(C, i, signs)
    assert residual_rho(C, i, l0) <= rho_l + 1e-8
    rho = rho_l + 0.05
    l, obj = ColumnLP(C, i, signs).solve(rho)
    x = cp.Variable(n)
    e = np.eye(n)[i]
    mask = np.arange(n) != i
    cons = [cp.abs(C @ x - e) <= rho, cp.multiply(signs[mask], x[mask]) <= 0]
    ref = cp.Problem(cp.Minimize(cp.norm1(x)), cons).solve(solver="CLARABEL")
    assert obj == pytest.approx(ref, rel=1e-6)
    assert residual_rho(C, i, l) <= rho + 1e-8
    assert np.all(signs[mask] * l[mask] <= 1e-12)
    # CLIME (9): no sign constraints
    l9, obj9 = ColumnLP(C, i, None).solve(rho)
    ref9 = cp.Problem(cp.Minimize(cp.norm1(x)), [cp.abs(C @ x - e) <= rho]).solve(solver="CLARABEL")
    assert obj9 == pytest.approx(ref9, rel=1e-6) and obj9 <= obj + 1e-9


def test_min_feasible_rho_is_the_feasibility_threshold() -> None:
    s, C = _instance(seed=2)
    for i in range(3):
        signs = -s.polarity[i] * s.polarity  # the wrong polarity: a positive threshold
        rho_l, _ = min_feasible_rho(C, i, signs)
        lp = ColumnLP(C, i, signs)
        lp.solve(rho_l * (1 + 1e-7) + 1e-10)
        with pytest.raises(ColumnLPError):
            lp.solve(rho_l * 0.99)


@pytest.mark.slow
def test_admm_matches_highs_on_every_column_n50() -> None:
    """The issue's check: ADMM (section V-B) and HiGHS agree to 1e-4 on every column of a seeded N = 50 instance."""
    s = balanced_gmrf(50, 500, 0.2, 0.0, seed=0)
    C = sample_covariance(s.X)
    worst = 0.0
    for i in range(50):
        signs = s.polarity[i] * s.polarity
        rho = min_feasible_rho(C, i, signs)[0] + 0.03
        _, ref = ColumnLP(C, i, signs).solve(rho)
        res = ColumnADMM(C=C, X=None, i=i, signs=signs, linear_solver="cholesky").solve(rho)
        assert res.converged, f"column {i}: ADMM did not converge"
        worst = max(worst, abs(res.objective - ref) / ref)
    assert worst <= 1e-4, worst


@pytest.mark.parametrize("form", ["dense", "sparse"])
def test_standard_forms_encode_lp_12(form: str) -> None:
    """(45) and the K << N form (136): the LP optimum, written as y, satisfies A y = b with q >= 0 and c'x = ||l||_1."""
    s = balanced_gmrf(40, 20, 0.2, 0.0, seed=4)
    C = sample_covariance(s.X)
    for i in (0, 7):
        signs = s.polarity[i] * s.polarity
        rho = min_feasible_rho(C, i, signs)[0] + 0.03
        l, ref = ColumnLP(C, i, signs).solve(rho)
        adm = ColumnADMM(C=C, X=s.X, i=i, signs=signs, form=form)
        adm.warm_start(l, rho)
        y = adm.state.y
        assert np.abs(adm.A @ y - adm.rhs_b(rho)).max() < 1e-9
        assert y[adm.n_main:].min() >= 0
        assert adm.c @ y[: adm.n_main] == pytest.approx(ref)


def test_admm_cg_and_cholesky_give_the_same_iterates() -> None:
    """The two linear solvers of the x-update (CG, cached Cholesky) give the same ADMM iterates:
    after the same 1,000 iterations their iterates agree far below the ADMM tolerance."""
    s = balanced_gmrf(20, 200, 0.3, 0.0, seed=4)
    C = sample_covariance(s.X)
    signs = s.polarity[3] * s.polarity
    rho = min_feasible_rho(C, 3, signs)[0] + 0.03
    a = ColumnADMM(C=C, X=None, i=3, signs=signs, linear_solver="cg", max_iter=1000).solve(rho)
    b = ColumnADMM(C=C, X=None, i=3, signs=signs, linear_solver="cholesky", max_iter=1000).solve(rho)
    assert a.iterations == b.iterations == 1000 and a.cg_iterations > 0
    np.testing.assert_allclose(a.l, b.l, rtol=0, atol=1e-7 * max(1.0, np.abs(b.l).max()))


@pytest.mark.slow  # 15,280 ADMM iterations, CG's in Python: ~6 s
def test_admm_cg_and_cholesky_both_reach_the_lp_optimum() -> None:
    s = balanced_gmrf(20, 200, 0.3, 0.0, seed=4)
    C = sample_covariance(s.X)
    signs = s.polarity[3] * s.polarity
    rho = min_feasible_rho(C, 3, signs)[0] + 0.03
    _, ref = ColumnLP(C, 3, signs).solve(rho)
    a = ColumnADMM(C=C, X=None, i=3, signs=signs, linear_solver="cg").solve(rho)
    b = ColumnADMM(C=C, X=None, i=3, signs=signs, linear_solver="cholesky").solve(rho)
    assert a.converged and b.converged and a.cg_iterations > 0
    assert a.objective == pytest.approx(ref, rel=1e-4) and b.objective == pytest.approx(ref, rel=1e-4)


# ----------------------------------------------------------------------------- balanced CLIME
def test_initial_polarity_recovers_truth_with_many_samples() -> None:
    s = balanced_gmrf(30, 2000, 0.2, 0.0, seed=5)
    C = sample_covariance(s.X)
    beta = initial_polarity(voc_weights(s.X, C) * C)
    agree = max(np.mean(beta == s.polarity), np.mean(beta == -s.polarity))
    assert agree == 1.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_balanced_clime_output_is_balanced_pd_and_l1_is_monotone(seed: int) -> None:
    s = balanced_gmrf(30, 300, 0.2, 0.25 if seed == 2 else 0.0, seed)
    r = balanced_clime(s.X)
    L = r.L
    assert np.array_equal(L, L.T)
    assert np.linalg.eigvalsh(L)[0] > 0
    off = L - np.diag(np.diag(L))
    assert np.all(np.outer(r.polarity, r.polarity) * off <= 0)  # consistent with its own polarities (11)
    assert two_colouring(L).balanced
    # IV-F: once every column has a previous solution, ||L||_1 never increases
    l1 = np.array([t["l1"] for t in r.trace if t["sweep"] > 1])
    assert l1.size and np.all(np.diff(l1) <= 1e-9 * l1.max())
    assert f_measure(L, s.L, 1e-9) > 0.3  # a real graph was learned, not the empty one


@pytest.mark.slow
def test_balanced_clime_admm_backend_agrees_with_highs() -> None:
    """The whole learner with the section V ADMM as its column solver (small N: ADMM is slow).

    ADMM converges slowly on the LP at rho = rho_l (the feasible set shrinks to a point), so the
    learned weights differ at the 1e-1 level; the polarities and the verification must agree.
    """
    s = balanced_gmrf(8, 300, 0.4, 0.0, seed=6)
    kw = {"max_sweeps": 1, "max_rho_steps": 2}
    a = balanced_clime(s.X, **kw)
    b = balanced_clime(s.X, lp_backend="admm", **kw)
    assert b.info["admm_iterations"] > 0
    assert np.array_equal(a.polarity, b.polarity)
    off = b.L - np.diag(np.diag(b.L))
    assert np.all(np.outer(b.polarity, b.polarity) * off <= 0) and np.linalg.eigvalsh(b.L)[0] > 0
    assert np.abs(a.L - b.L).max() <= 0.1 * np.abs(a.L).max()


# ----------------------------------------------------------------------------- baselines
def test_clime_and_glasso_against_cvxpy() -> None:
    s, C = _instance(n=8, k=400, seed=7)
    L = clime(C, 0.1)
    n = 8
    X = cp.Variable((n, n))
    ref = cp.Problem(cp.Minimize(cp.sum(cp.abs(X))), [cp.abs(C @ X - np.eye(n)) <= 0.1]).solve(solver="CLARABEL")
    cols = sum(ColumnLP(C, i, None).solve(0.1)[1] for i in range(n))
    assert cols == pytest.approx(ref, rel=1e-6)  # (8) separates into the columns (9)
    assert np.allclose(L, L.T)
    alpha = 0.05
    P = glasso(C, alpha)
    T = cp.Variable((n, n), PSD=True)
    off = np.ones((n, n)) - np.eye(n)
    obj = cp.Minimize(cp.trace(C @ T) - cp.log_det(T) + alpha * cp.sum(cp.abs(cp.multiply(off, T))))
    val = cp.Problem(obj).solve(solver="CLARABEL")
    mine = np.trace(C @ P) - np.linalg.slogdet(P)[1] + alpha * np.abs(P * off).sum()
    assert mine == pytest.approx(val, rel=1e-4)


@pytest.mark.slow
def test_glasso_cv_choice_matches_scikit_learn_graphical_lasso_cv() -> None:
    """``alpha = "cv"`` picks the grid value scikit-learn's GraphicalLassoCV picks on the same folds."""
    from sklearn.covariance import GraphicalLassoCV
    from sklearn.model_selection import KFold

    from psdbench.families.signed_graph.baselines import _select_cv

    grid = (0.4, 0.2, 0.1, 0.05, 0.02, 0.01, 0.005)
    for seed in (3, 4):
        s = balanced_gmrf(10, 300, seed=seed)
        C = s.X @ s.X.T / (s.X.shape[1] - 1)
        _, _, mine = _select_cv(glasso, grid, C, s.X, folds=5, center=False, standardize=False)
        ref = GraphicalLassoCV(alphas=list(grid), cv=KFold(5), assume_centered=True, tol=1e-6, enet_tol=1e-6,
                               max_iter=500).fit(s.X.T)
        assert mine == ref.alpha_


def test_clime_cv_choice_is_the_held_out_minimum_and_refits_on_all_samples() -> None:
    from psdbench.families.signed_graph.data import balanced_gmrf_dataset
    from psdbench.families.signed_graph.baselines import RHO_GRID, Clime, cv_loss

    inst = SignedGraph().build(balanced_gmrf_dataset(), {"n_nodes": 15, "n_samples": 200}, 2)
    sol = Clime().solve(inst, Budget(), rho="cv", cv_folds=4)
    rho = sol.info["rho"]
    assert rho in RHO_GRID
    k = RHO_GRID.index(rho)
    losses = [cv_loss(clime, v, inst.X, 4) for v in RHO_GRID[max(k - 2, 0): k + 3]]
    assert sol.info["cv_loss"] == pytest.approx(min(losses))  # no neighbour on the grid scores better
    fixed = Clime().solve(inst, Budget(), rho=rho)
    assert np.array_equal(sol.variables["L"], fixed.variables["L"])  # the estimate is refitted on all samples
    with pytest.raises(PsdbenchError, match="cv_folds"):  # the spec: at least 2 folds
        Clime().solve(inst, Budget(), rho="cv", cv_folds=1)
    with pytest.raises(ValueError, match="cv_folds"):  # at most K / 2 folds: known once the instance is
        Clime().solve(inst, Budget(), rho="cv", cv_folds=150)


# ----------------------------------------------------------------------------- problem and harness
def test_problem_verification_rejects_unbalanced_and_indefinite() -> None:
    from psdbench.families.signed_graph.data import balanced_gmrf_dataset

    inst = SignedGraph().build(balanced_gmrf_dataset(), {"n_nodes": 20, "n_samples": 200}, seed=0)
    good = inst.verify(Solution(variables={"L": inst.L_true, "polarity": inst.polarity_true}))
    assert good.ok
    bad = inst.L_true.copy()
    i, j = np.argwhere(np.triu(bad != 0, 1))[0]
    # flip one edge's sign on a cycle-free graph stays balanced, so break a triangle instead
    tri = np.zeros((3, 3)) + np.diag([3.0, 3.0, 3.0])
    tri[0, 1] = tri[1, 0] = tri[1, 2] = tri[2, 1] = tri[0, 2] = tri[2, 0] = -1.0  # all positive: balanced
    tri_bad = tri.copy()
    tri_bad[0, 2] = tri_bad[2, 0] = 1.0  # one negative edge in a triangle: unbalanced
    inst3 = SignedGraph().build(_obs_dataset(np.random.default_rng(0).standard_normal((3, 10))), {}, seed=0)
    assert inst3.verify(Solution(variables={"L": tri})).ok
    assert not inst3.verify(Solution(variables={"L": tri_bad})).ok
    assert not inst3.verify(Solution(variables={"L": -tri})).ok  # not positive definite
    wrong = inst.polarity_true.copy()
    wrong[i] = -wrong[i]
    assert not inst.verify(Solution(variables={"L": inst.L_true, "polarity": wrong})).ok  # false polarity claim


def _obs_dataset(X: np.ndarray):
    from psdbench.api import Dataset

    return Dataset(name="obs/x", X=X, y=np.zeros(len(X)), source="test", label_coding="", meta={"observations": True})


def test_observation_csv_loader(tmp_path) -> None:
    X = np.random.default_rng(0).standard_normal((5, 30))
    f = tmp_path / "obs.csv"
    f.write_text("\n".join(",".join(f"{v:.10g}" for v in row) for row in X))
    assert np.allclose(read_observations(f), X, atol=1e-9)
    g = tmp_path / "header.csv"
    g.write_text("a,b,c\n1,2,3\n4,5,6\n")
    assert read_observations(g).shape == (2, 3)
    with pytest.raises(DataError, match="not found"):
        read_observations(tmp_path / "missing.csv")
    h = tmp_path / "nan.csv"
    h.write_text("1,2,3\n4,nan,6\n")
    with pytest.raises(DataError, match="NaN"):
        read_observations(h)


def test_objective_weighting_ranks_the_truth_above_the_empty_graph() -> None:
    """The default objective (K/2-weighted HQIC) prefers the true Laplacian to the edgeless start;
    (17) as printed (``hqic_weight = "paper"``) prefers the edgeless matrix (the reason for the default)."""
    from psdbench.families.signed_graph.data import balanced_gmrf_dataset

    for weight, truth_wins in (("samples", True), ("paper", False)):
        inst = SignedGraph().build(balanced_gmrf_dataset(), {"n_nodes": 30, "n_samples": 500, "hqic_weight": weight}, 1)
        empty = Solution(variables={"L": np.diag(1.0 / np.diag(inst.C))})
        truth = Solution(variables={"L": inst.L_true})
        assert (inst.objective(truth) < inst.objective(empty)) == truth_wins
        m = inst.evaluate(truth)
        assert m["hqic"] == pytest.approx(inst.objective(truth))
        assert m["hqic"] == pytest.approx(m["hqic_samples" if weight == "samples" else "hqic_printed"])
        K, logdet = 500, np.linalg.slogdet(inst.L_true)[1]
        k = np.count_nonzero(np.triu(inst.L_true))
        fit = logdet - np.sum(inst.C * inst.L_true)
        assert m["hqic_samples"] == pytest.approx(-K * fit + 2 * k * np.log(np.log(K)))
        assert m["hqic_printed"] == pytest.approx(-2 * fit + 2 * k * np.log(np.log(K)))
    with pytest.raises(PsdbenchError, match="hqic_weight"):
        SignedGraph().build(balanced_gmrf_dataset(), {"hqic_weight": "aic"}, 0)


def test_harness_end_to_end(tmp_path) -> None:
    from psdbench.harness.store.db import Store

    from .test_harness import cli

    grid_file = tmp_path / "g.toml"
    grid_file.write_text(
        '[run]\nname = "sg"\nseeds = [0]\ntimeout = 300\n'
        '[[problems]]\nname = "signed-graph"\ndatasets = ["synthetic/balanced-gmrf"]\n'
        'params = { n_nodes = 20, n_samples = 200 }\n'
        '[[solvers]]\nname = "balanced-clime"\n'
        '[[solvers]]\nname = "clime"\nparams = { balance = "greedy" }\n'
        '[[solvers]]\nname = "glasso"\nparams = { balance = "max", alpha = 0.05 }\n'
    )
    db = tmp_path / "r.sqlite"
    out = cli(["run", "--grid", str(grid_file), "--db", str(db), "--quiet", "--report", ""])
    assert out.returncode == 0, out.stderr
    df = Store(db).results_frame()
    assert set(df.solver) == {"balanced-clime", "clime", "glasso"}
    bc = df[df.solver == "balanced-clime"].iloc[0]
    assert bc.status in ("ok", "max_iter") and bc.feasible == 1
    assert 0 < bc.metric_f_measure <= 1 and bc.metric_hqic == pytest.approx(bc.objective)
    assert df.metric_f_measure.notna().all()
    assert df.reference_kind.eq("best_verified").all()


def test_observation_dataset_through_the_cli(tmp_path) -> None:
    from .test_harness import cli

    s = balanced_gmrf(8, 100, 0.4, 0.0, seed=1)
    f = tmp_path / "obs.csv"
    f.write_text("\n".join(",".join(f"{v:.12g}" for v in row) for row in s.X))
    grid = tmp_path / "g.toml"
    grid.write_text(f'[run]\nseeds = [0]\n[[problems]]\nname = "signed-graph"\ndatasets = ["obs/{f}"]\n'
                    '[[solvers]]\nname = "balanced-clime"\n')
    assert cli(["run", "--grid", str(grid), "--db", str(tmp_path / "a.sqlite"), "--quiet", "--report", ""]).returncode == 0
    missing = tmp_path / "m.toml"
    missing.write_text(grid.read_text().replace(str(f), str(tmp_path / "nope.csv")))
    out = cli(["run", "--grid", str(missing), "--db", str(tmp_path / "a.sqlite"), "--quiet", "--report", ""])
    assert out.returncode != 0 and "not found" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_csv_example_prints_the_true_polarities(tmp_path) -> None:
    """The README's worked example (examples/signed_graph_from_csv.py) on a CSV of a known graph."""
    import subprocess
    import sys
    from pathlib import Path

    s = balanced_gmrf(8, 400, 0.4, 0.0, seed=2)
    f = tmp_path / "observations.csv"
    np.savetxt(f, s.X, delimiter=",")
    script = Path(__file__).resolve().parents[1] / "examples" / "signed_graph_from_csv.py"
    out = subprocess.run([sys.executable, str(script), str(f)], capture_output=True, text=True, check=True).stdout
    line = next(x for x in out.splitlines() if x.startswith("polarities:"))
    beta = np.array([int(v) for v in line.split("[")[1].split("]")[0].split()])
    assert np.array_equal(beta, s.polarity) or np.array_equal(beta, -s.polarity)
    edges = [x.split() for x in out.splitlines() if " -- " in x]
    assert edges and all((float(e[4]) > 0) == (beta[int(e[0])] == beta[int(e[2])]) for e in edges)
