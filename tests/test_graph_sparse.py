"""Sparse graph-classification instances: the same matrices, bounds and labels as the dense path."""

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, PsdbenchError, Status
from psdbench.families.graph_classification.sparse_elim import split_affine
from psdbench.linalg.gdpa import first_eigvec
from psdbench.linalg.psd import gershgorin_left_end, min_eig, min_eig_estimate

PROBLEM = "graph-classification"


def pair(registry, data, n, seed=0, **params):
    """The same instance built dense (default) and sparse (``dense_n = 0``)."""
    prob = registry.problem(PROBLEM)
    p = {"n": n, "graph": "knn", "k": 6, **params}
    return prob.build(data, p, seed), prob.build(data, {**p, "dense_n": 0}, seed)


@pytest.mark.parametrize("scaling", ["standardize", "minmax"])
def test_sparse_laplacian_equals_dense(registry, wdbc, scaling):
    dense, sparse = pair(registry, wdbc, 120, scaling=scaling)
    assert sp.issparse(sparse.L) and not sp.issparse(dense.L)
    np.testing.assert_allclose(sparse.L.toarray(), dense.L, atol=1e-12)
    Qs, cs = sparse.reduced_sdp()
    Qd, cd = dense.reduced_sdp()
    np.testing.assert_allclose(Qs.toarray(), Qd, atol=1e-12)
    assert cs == pytest.approx(cd, rel=1e-12)
    y, eps = np.random.default_rng(0).normal(size=Qd.shape[0]), 0.3
    np.testing.assert_allclose(sparse.reduced_split_matrix(y, eps).toarray(), dense.reduced_split_matrix(y, eps), atol=1e-12)
    np.testing.assert_allclose(split_affine(Qs).evaluate(np.append(y, eps)).toarray(),
                               dense.reduced_split_matrix(y, eps), atol=1e-12)


def test_complete_graph_refused_past_max_dense_n(registry, wdbc):
    with pytest.raises(PsdbenchError, match=r"N = 200 nodes needs dense N x N matrices \(0\.00032 GB each\)"):
        registry.problem(PROBLEM).build(wdbc, {"n": 200, "graph": "complete", "max_dense_n": 100}, 0)


def test_gershgorin_left_end_bounds_and_aligns():
    """Any scaling gives a lower bound on lambda_min; GDPA's s = 1/v of a balanced Laplacian is tight (eq. (4))."""
    rng = np.random.default_rng(3)
    n = 40
    W = sp.random(n, n, density=0.2, random_state=3)
    W = (W + W.T).toarray()
    np.fill_diagonal(W, 0.0)
    A = np.diag(W.sum(axis=1) + rng.uniform(-0.5, 0.5, n)) - W  # generalized Laplacian, positive edges only
    lam = min_eig(A)
    for s in (None, rng.uniform(0.5, 2.0, n)):
        assert gershgorin_left_end(sp.csr_matrix(A), s) <= lam + 1e-12
    v = np.linalg.eigh(A)[1][:, 0]
    assert gershgorin_left_end(sp.csr_matrix(A), 1.0 / np.abs(v)) == pytest.approx(lam, abs=1e-8)
    est = min_eig_estimate(sp.csr_matrix(A), tol=1e-10)
    assert abs(est.theta - lam) <= max(est.residual, 1e-8)


def test_sparse_first_eigvec_matches_dense(registry, wdbc):
    _, inst = pair(registry, wdbc, 300)
    Q, _ = inst.reduced_sdp()
    H = inst.reduced_split_matrix(np.asarray(abs(Q).sum(axis=1)).ravel(), 0.0)
    got = first_eigvec(H, tol=1e-9, maxiter=2000)
    ref = first_eigvec(H.toarray(), tol=0)
    assert got.lam_min == pytest.approx(ref.lam_min, abs=1e-6)
    assert abs(got.v @ ref.v) / (np.linalg.norm(got.v) * np.linalg.norm(ref.v)) > 1 - 1e-6


def test_label_propagation_sparse_cg_matches_dense_solve(registry, wdbc):
    dense, sparse = pair(registry, wdbc, 300)
    bd, bs = dense.baselines(), sparse.baselines()
    assert bs["labelprop_error"] == bd["labelprop_error"] and bs["majority_error"] == bd["majority_error"]
    assert bs["labelprop_residual"] <= 1e-8
    m = dense.m
    f_ref = np.linalg.solve(dense.L[m:, m:], -dense.L[m:, :m] @ dense.xhat)
    np.testing.assert_allclose(sparse.harmonic().f, f_ref, atol=1e-6 * np.abs(f_ref).max())


@pytest.mark.parametrize("seed", [0, 1])
def test_sparse_elim_certified_and_agrees_with_dense(registry, wdbc, seed):
    """Sparse gdpa-lp-elim: Gershgorin-certified bound = the dense split-dual bound <= the SDP optimum."""
    dense, sparse = pair(registry, wdbc, 80, seed=seed)
    solver = registry.solver("gdpa-lp-elim")
    sol_s = solver.solve(sparse, Budget())
    sol_d = solver.solve(dense, Budget())
    assert sol_s.status == Status.OK
    feas = sparse.verify(sol_s)
    met = sparse.evaluate(sol_s)
    assert feas.ok and met["certificate"] == "gershgorin"
    # the certificate never exceeds dense eigh of the same H-bar
    Hb = dense.reduced_split_matrix(sol_s.variables["y_reduced"], float(sol_s.variables["eps_reduced"]))
    assert met["gershgorin_left_end"] <= min_eig(Hb) + 1e-9
    met_d = dense.evaluate(sol_d)
    assert met["lower_bound"] == pytest.approx(met_d["lower_bound"], rel=1e-5, abs=1e-6)
    assert met_d["gershgorin_left_end"] <= met_d["lambda_min_Hbar"] + 1e-9
    ref = dense.certified_reference()
    assert met["lower_bound"] <= ref["value"] + 1e-6 * abs(ref["value"])
    assert sparse.objective(sol_s) >= ref["lower"] - 1e-6 * abs(ref["lower"])  # labels: an upper bound on p*
    assert abs(met["error_rate"] - met_d["error_rate"]) <= 0.05


def test_certificate_without_s_is_ldlt_of_the_reduced_dual(registry, wdbc):
    """No scaling vector: the reduced dual is certified by LDL^T of Q + diag(y) (formerly a LOBPCG estimate)."""
    _, sparse = pair(registry, wdbc, 200)
    sol = registry.solver("gdpa-lp-elim").solve(sparse, Budget())
    v = {k: val for k, val in sol.variables.items() if k != "s_reduced"}
    shifted = {**v, "y_reduced": v["y_reduced"] + 0.01}  # a different point (the certificate is cached per point)
    met = sparse.evaluate(api.Solution(variables=shifted))
    assert met["certificate"] == "ldlt" and "lobpcg_residual" not in met
    Q, const = sparse.reduced_sdp()
    lam = min_eig(sparse.reduced_dual_matrix(shifted["y_reduced"]).toarray())
    assert lam >= 0 and met["certificate_bound_Hbar"] <= lam
    assert const - shifted["y_reduced"].sum() - 1e-6 <= met["lower_bound"] <= const - shifted["y_reduced"].sum()
    low = {**v, "y_reduced": v["y_reduced"] - (lam + 0.04)}  # lambda_min = -0.03: not psd: the bound is shifted by (|U| + 1) |lambda_min|
    met = sparse.evaluate(api.Solution(variables=low))
    lam = min_eig(sparse.reduced_dual_matrix(low["y_reduced"]).toarray())
    assert lam < 0 and met["certificate"] == "ldlt" and met["certificate_bound_Hbar"] <= lam
    assert met["lower_bound"] <= const - low["y_reduced"].sum() - Q.shape[0] * (-lam) + 1e-9


def test_conic_solvers_skipped_beyond_conic_max_n(registry, wdbc):
    inst = registry.problem(PROBLEM).build(wdbc, {"n": 60, "graph": "knn", "conic_max_n": 50}, 0)
    for name in ("scs", "clarabel"):
        why = api.skip_reason(registry.solver(name), inst)
        assert why is not None and "N = 60 > conic_max_n = 50" in why
    assert api.skip_reason(registry.solver("gdpa-lp-elim"), inst) is None
    assert inst.certified_reference(time_limit_s=10) is None


def test_scaling_report_slope_and_ratio():
    """The gdpa-scaling blocks: slope of a t = c N^1.5 series is 1.5; the ratio column is time / label-prop time."""
    import pandas as pd

    import scipy.stats

    from psdbench.report import findings as fd
    from psdbench.families.graph_classification.report_scaling import flat_memory, loglog_slope, scaling_blocks

    ns = np.array([1000, 4891, 9766, 24432])
    t = 1e-5 * ns ** 1.5  # 0.32 s and more: every size's solve is timed
    assert loglog_slope(ns.astype(float), t) == pytest.approx(1.5, abs=1e-12)
    f = pd.DataFrame({"solver": "gdpa-lp-elim", "status": "ok", "dataset": "uci/cod-rna", "p_graph": "knn",
                      "p_scaling": "minmax", "p_n": ns, "wall_time_s": t, "metric_labelprop_time_s": t / 4,
                      "peak_rss_mb": 100.0 + ns / 100, "metric_error_rate": 0.1, "metric_labelprop_error": 0.1,
                      "metric_majority_error": 0.3, "metric_lower_bound": ns * 1.0,
                      "metrics": [{"certificate": "gershgorin"}] * len(ns)})
    table, fig, slope, ratio = scaling_blocks(f)
    assert list(table.frame["ratio"]) == ["4"] * 4 and set(table.frame["certificate"]) == {"gershgorin"}
    assert slope.ours == "slope 1.50 [1.50, 1.50] (95 %)" and slope.verdict == "does not hold"  # exact N^1.5
    assert ratio.verdict == "holds" and ratio.ours == "4x [4 to 4] (4 sizes)"
    assert table.checks == [fd.finding_line(slope), fd.finding_line(ratio)]
    assert table.frame["paper GDPA (s)"].iloc[1] == "0.366" and fig.png[:4] == b"\x89PNG"
    # noisy times around N^1.2: the slope's 95 % interval straddles 1.3
    noisy = f.assign(wall_time_s=1e-4 * ns ** 1.2 * np.array([1.0, 1.6, 0.7, 1.4]))
    s2 = scaling_blocks(noisy)[2]
    lr = scipy.stats.linregress(np.log(ns), np.log(noisy["wall_time_s"]))
    half = scipy.stats.t.ppf(0.975, 2) * lr.stderr
    assert s2.ours == f"slope {lr.slope:.2f} [{lr.slope - half:.2f}, {lr.slope + half:.2f}] (95 %)"
    assert s2.verdict == "within the spread"
    # the default suite's sizes: no paper time and no label-propagation time, said instead of "-" columns;
    # peak memory flat within 1 % is drawn flat, without a slope
    small = f.assign(p_n=[50, 100, 200, 400], metric_labelprop_time_s=np.nan, peak_rss_mb=[269.5, 270.2, 271.7, 270.0])
    t3 = scaling_blocks(small)[0]
    assert not {"label prop. (s)", "ratio", "paper GDPA (s)"} & set(t3.frame.columns)
    assert "none within 1 % of this group's sizes" in t3.note and "labelprop_time_s" in t3.note
    assert flat_memory(small["peak_rss_mb"].to_numpy(float)) == "flat at 270 MB (269.5 to 271.7)"
    assert flat_memory(f["peak_rss_mb"].to_numpy(float)) == ""  # 110 to 344 MB: a slope is drawn
    assert scaling_blocks(small)[3].verdict == "not measured in this run"
    # times of milliseconds (the default suite's sizes): the harness, not the solve, is timed: nothing fitted
    tiny = f.assign(wall_time_s=1e-8 * ns ** 1.5)  # 0.3 to 38 ms
    t4, _, s4, _ = scaling_blocks(tiny)
    assert s4.verdict == "not measured in this run" and "0 below" not in s4.note and "4 below it" in s4.note
    assert all(v.endswith("(not fitted)") for v in t4.frame["time (s)"])
    # one size below the line: fitted on the other three, said so
    mixed = f.assign(wall_time_s=np.where(ns == 1000, 0.01, t))
    s5 = scaling_blocks(mixed)[2]
    want = scipy.stats.linregress(np.log(ns[1:]), np.log(t[1:])).slope
    assert s5.ours.startswith(f"slope {want:.2f}") and "1 smaller sizes not fitted" in s5.note
    # the paper's algorithm and the variant are read apart, each finding labelled by what it measured
    both = pd.concat([f, f.assign(solver="gdpa-lp")])
    found = [b for b in scaling_blocks(both) if isinstance(b, fd.ShownFinding)]
    papers = sorted({x.paper for x in found})
    assert papers == ["GDPA", "GDPA (psdbench's variant, gdpa-lp-elim)", "GDPA (psdbench's variant, gdpa-lp-elim): "
                      "psdbench target", "GDPA: psdbench target"]
    assert any(x.claim.endswith("GDPA's solve time grows about linearly in N (log-log slope at most 1.3)")
               and x.paper == "GDPA" for x in found)


def test_closed_form_lp_equals_highs(registry, wdbc):
    """The split dual's LP in closed form (every Gershgorin row tight) is HiGHS's optimum, for any scalars."""
    from psdbench.linalg.lp import solve_lp

    _, inst = pair(registry, wdbc, 150)
    Q, _ = inst.reduced_sdp()
    H = split_affine(Q)
    k = Q.shape[0]
    a = np.random.default_rng(0).uniform(0.2, 3.0, k + 1)
    A, b = H.rows(a, 0.1)
    res = solve_lp(np.concatenate([np.ones(k), [0.0]]), A, b, [(None, None)] * (k + 1), tol=1e-9)
    x = H.tight_rows(a, 0.1)
    assert float(np.sum(x[:k])) == pytest.approx(res.fun, rel=1e-9)
    np.testing.assert_allclose(x, res.x, atol=1e-7)
    assert gershgorin_left_end(H.evaluate(x), 1.0 / a) == pytest.approx(0.1, abs=1e-9)
    sol_h = registry.solver("gdpa-lp-elim").solve(inst, Budget(), lp="highs")
    sol_c = registry.solver("gdpa-lp-elim").solve(inst, Budget())
    assert inst.evaluate(sol_h)["lower_bound"] == pytest.approx(inst.evaluate(sol_c)["lower_bound"], rel=1e-7)


def test_fold_selection_is_the_listed_fold(wdbc):
    """Selecting fold f lazily gives the same indices as listing every fold (the original code)."""
    from sklearn.model_selection import StratifiedKFold

    from psdbench.families.graph_classification.problem import _select

    folds = list(StratifiedKFold(n_splits=5, shuffle=True, random_state=0).split(np.zeros(len(wdbc.y)), wdbc.y))
    for fold in (0, 3):
        got = _select(wdbc.y, {"n": None, "n_folds": 5, "fold": fold}, 1)
        np.testing.assert_array_equal(got, np.random.default_rng(1).permutation(np.sort(folds[fold][1])))


def test_sparse_gdpa_lp_rows_and_matrices_equal_dense(registry, wdbc):
    """gdpa-lp's H-bar (15), H (12) and LP rows (21) built sparse equal the dense builder's."""
    from psdbench.families.graph_classification.gdpa_lp import SplitDualLP
    from psdbench.families.graph_classification.sparse_gdpa_lp import split_affine as full_split
    from psdbench.linalg.gershgorin_lp import gershgorin_rows

    dense, sparse = pair(registry, wdbc, 60)
    rng = np.random.default_rng(2)
    N, m = dense.n, dense.m
    y, z = rng.normal(size=N + 1), -np.abs(rng.normal(size=m)) * dense.xhat
    np.testing.assert_allclose(sparse.dual_matrix(y, z).toarray(), dense.dual_matrix(y, z), atol=1e-12)
    np.testing.assert_allclose(sparse.split_dual_matrix(y, z, 0.7).toarray(), dense.split_dual_matrix(y, z, 0.7), atol=1e-12)
    a = rng.uniform(0.3, 2.0, N + 2)
    for free in (False, True):
        A_d, b_d = gershgorin_rows(SplitDualLP(L=dense.L, xhat=dense.xhat, free_eps=free).matrix(0.7), a, 0.1)
        A_s, b_s = full_split(sparse.L, sparse.xhat, 0.7, free).rows(a, 0.1)
        np.testing.assert_allclose(A_s.toarray(), A_d.toarray(), atol=1e-12)
        np.testing.assert_allclose(b_s, b_d, atol=1e-12)


def test_sparse_gdpa_lp_runs_certified(registry, wdbc):
    dense, sparse = pair(registry, wdbc, 80)
    sol = registry.solver("gdpa-lp").solve(sparse, Budget())
    assert sol.status == Status.OK
    feas, met = sparse.verify(sol), sparse.evaluate(sol)
    assert feas.ok and met["certificate"] == "gershgorin"
    Hb = dense.split_dual_matrix(sol.variables["y"], sol.variables["z"], float(sol.variables["eps"]))
    assert met["gershgorin_left_end"] <= min_eig(Hb) + 1e-9
    ref = dense.certified_reference()
    assert met["lower_bound"] <= ref["value"] + 1e-6 * abs(ref["value"])


def test_slackness_rounding_sparse_equals_dense_and_reads_the_sdp_column(registry, wdbc):
    """rounding = slackness: MINRES (sparse) and least squares (dense) agree; at the SDP's optimum
    the t-column of Z* satisfies the slackness system it solves (an independent check of the system)."""
    dense, sparse = pair(registry, wdbc, 120)
    solver = registry.solver("gdpa-lp-elim")
    xd = solver.solve(dense, Budget(), rounding="slackness").variables["x"]
    xs = solver.solve(sparse, Budget(), rounding="slackness").variables["x"]
    assert np.mean(xd != xs) <= 0.01
    small = registry.problem(PROBLEM).build(wdbc, {"n": 40, "graph": "knn", "k": 6}, 0)
    prob, Z, diag, Q = small._reduced_problem()
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    w, zt = np.asarray(diag.dual_value), np.asarray(Z.value)[:, -1]
    k = Q.shape[0] - 1
    resid = (Q[:k, :k] + np.diag(w[:k])) @ zt[:k] + Q[:k, k]
    assert np.abs(resid).max() <= 1e-5 * max(1.0, np.abs(Q).max())


def test_dense_instance_times_label_propagation(registry, wdbc):
    """A dense instance records label propagation's solve time too (the scaling table's column), and
    its labels are the harmonic solution's signs on the unlabelled nodes (the sparse CG's, to round-off)."""
    dense = registry.problem("graph-classification").build(wdbc, {"n": 60, "graph": "knn", "k": 5}, 1)
    sparse = registry.problem("graph-classification").build(wdbc, {"n": 60, "graph": "knn", "k": 5, "dense_n": 0}, 1)
    assert not dense.is_sparse and sparse.is_sparse
    b, s = dense.baselines(), sparse.baselines()
    assert b["labelprop_time_s"] > 0 and s["labelprop_time_s"] > 0
    assert b["labelprop_error"] == s["labelprop_error"]
