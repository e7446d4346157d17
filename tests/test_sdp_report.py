"""The SDP family's report section on a frame built by hand: the shifted geometric mean and its
failures, Mittelmann's flags, the per-problem count of solvers within tol, and the published digits."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from psdbench.families.sdp.section.judges import disagreements, says_optimal, sgm_table, solved_by
from psdbench.families.sdp.section.report import MittelmannTables, _digits_agree, _flag


def _frame() -> pd.DataFrame:
    rows = []
    # problem, solver, status, time, max DIMACS err, largest SCS-form relative KKT residual, message, solver's word
    for prob, solver, status, t, err, kkt, msg, word in [
        ("p1", "a", "ok", 1.0, 1e-9, 1e-10, "", "solved"), ("p1", "b", "ok", 4.0, 1e-7, 1e-8, "", "pdOPT"),
        ("p1", "c", "max_iter", 2.0, 5e-5, 3e-5, "", "optimal"),
        ("p2", "a", "ok", 9.0, 2e-7, 5e-5, "", "solved"), ("p2", "b", "max_iter", 3.0, 3e-4, 2e-4, "", "pdFEAS"),
        ("p2", "c", "error", 1.0, np.nan, np.nan, "ValueError", ""),
        ("p3", "a", "timeout", 130.0, 1e-8, 1e-9, "", "solved"),
        ("p3", "b", "error", 7.0, np.nan, np.nan, "MemoryError: ...", ""),
        ("p3", "c", "infeasible", 50.0, 5e-3, 2e-3, "rejected by verification", "optimal"),
    ]:
        rows.append({"dataset": f"sdplib/{prob}", "solver_label": solver, "status": status, "wall_time_s": t,
                     "metric_max_err": err, "metric_kkt_worst_rel": kkt, "metric_scs_primal_res_rel": kkt,
                     "metric_scs_dual_res_rel": kkt, "metric_scs_gap_rel": kkt, "metric_scs_primal_cone_res_rel": 0.0,
                     "metric_scs_dual_cone_res_rel": 0.0, "message": msg, "p_tol": 1e-6, "time_limit_s": 100.0,
                     "metrics": {"solver_status": word} if word else {},
                     "instance_key": prob, "seed": 0, "iterations": 10, "objective": 1.0, "instance_reference": 1.0})
    return pd.DataFrame(rows)


def _sgm(*t: float) -> float:
    return float(np.prod(np.asarray(t) + 10.0) ** (1 / len(t)) - 10)


def _table(df: pd.DataFrame, **options) -> pd.DataFrame:
    return sgm_table(df, options)[0].set_index("solver")


def test_the_rules_by_hand():
    """Mittelmann's: f or a time/memory failure fails, flag a counts; the SCS page's: the solver's status
    optimal and KKT residuals <= 1e-4; SCS 3.3's: the same at 1e-6, failures at 300 s; 1e-6: the
    problem's tol, a verified timeout counted at its limit.  Failures at each cell's limit (100 s)."""
    t = _table(_frame())
    # 1e-6: a's timeout verifies (capped at 100 s); b fails p2 (3e-4) and p3 (memory); c fails all
    assert t.loc["a", "sgm_tol_s"] == pytest.approx(_sgm(1, 9, 100))
    assert t.loc["b", "sgm_tol_s"] == pytest.approx(_sgm(4, 100, 100))
    assert t.loc["c", "sgm_tol_s"] == pytest.approx(100)
    # Mittelmann: a's timeout is a time failure; b's p2 (flag a) counts, its memory failure does not;
    # c's p3 (5e-3, flag a, rejected at 1e-6) counts
    assert t.loc["a", "sgm_mittelmann_s"] == pytest.approx(_sgm(1, 9, 100))
    assert t.loc["b", "sgm_mittelmann_s"] == pytest.approx(_sgm(4, 3, 100))
    assert t.loc["c", "sgm_mittelmann_s"] == pytest.approx(_sgm(2, 100, 50))
    # the SCS page: status optimal and KKT <= 1e-4; b's p2 says pdFEAS (and 2e-4), c's p1 says optimal (3e-5)
    assert t.loc["a", "sgm_scs_s"] == pytest.approx(_sgm(1, 9, 100))
    assert t.loc["b", "sgm_scs_s"] == pytest.approx(_sgm(4, 100, 100))
    assert t.loc["c", "sgm_scs_s"] == pytest.approx(_sgm(2, 100, 100))
    # SCS 3.3: 1e-6, failures at 300 s: a's p2 (5e-5) and c's p1 (3e-5) fail
    assert t.loc["a", "sgm_scs33_s"] == pytest.approx(_sgm(1, 300, 300))
    assert t.loc["b", "sgm_scs33_s"] == pytest.approx(_sgm(4, 300, 300))
    assert t.loc["c", "sgm_scs33_s"] == pytest.approx(300)
    assert list(t.index) == ["b", "a", "c"]  # sorted by Mittelmann's: 14 * 13 * 110 < 11 * 19 * 110
    assert t.loc["b", "solved_mittelmann_pct"] == pytest.approx(200 / 3) and t.loc["a", "solved_tol_pct"] == 100
    assert t.loc["b", "scaled_mittelmann"] == 1.0 and t.loc["c", "scaled_tol"] == pytest.approx(100 / _sgm(1, 9, 100))


def _two(skip: str) -> pd.DataFrame:
    """x solves p1 in 1 s and the slow p2 in 90 s; y solves p1 in 1 s and is skipped on p2 (or has no cell)."""
    df = _frame().iloc[:0]
    rows = [("p1", "x", "ok", 1.0), ("p2", "x", "ok", 90.0), ("p1", "y", "ok", 1.0)]
    if skip == "skipped":
        rows.append(("p2", "y", "skipped", 0.0))
    recs = [{**_frame().iloc[0].to_dict(), "dataset": f"sdplib/{p}", "instance_key": p, "solver_label": s,
             "status": st, "wall_time_s": t, "metric_max_err": np.nan if st == "skipped" else 1e-9} for p, s, st, t in rows]
    return pd.concat([df, pd.DataFrame(recs)], ignore_index=True)


@pytest.mark.parametrize("skip", ["skipped", "missing"])
def test_every_solver_is_ranked_over_the_same_problems(skip):
    """A solver skipped on the slow problem (or with no cell there) is unsolved there, charged at the
    limit: not faster for it, and not 100 % solved (dropping the cell made y 23x faster, 100 %)."""
    t = _table(_two(skip))
    assert t.loc["x", "sgm_mittelmann_s"] == pytest.approx(_sgm(1, 90))
    assert t.loc["y", "sgm_mittelmann_s"] == pytest.approx(_sgm(1, 100))
    assert t.loc["y", "solved_mittelmann_pct"] == 50 and t.loc["x", "solved_mittelmann_pct"] == 100
    assert list(t.index) == ["x", "y"] and (t["problems"] == 2).all() and t.loc["y", "skipped"] == 1
    # or the problem is left out for every solver, and named
    tab, info = sgm_table(_two(skip), {"sdp_skipped": "leave out"})
    assert info["left_out"] == ["sdplib/p2"] and (tab["problems"] == 1).all()
    assert tab.set_index("solver")["sgm_mittelmann_s"].tolist() == [pytest.approx(1.0)] * 2


def test_failures_are_charged_at_each_cells_recorded_limit_or_a_pages_value():
    """A timeout run under 300 s is charged 300 s (not the longest time seen, 100 s), one under 100 s
    is charged 100 s; the option charges a page's own value instead (the SCS page's: 1000 s)."""
    rows = [("p1", "x", "ok", 10.0, 300.0), ("p2", "x", "timeout", 100.0, 300.0),
            ("p1", "y", "ok", 20.0, 100.0), ("p2", "y", "timeout", 100.0, 100.0)]
    df = pd.DataFrame([{**_frame().iloc[0].to_dict(), "dataset": f"sdplib/{p}", "instance_key": p, "solver_label": s,
                        "status": st, "wall_time_s": w, "time_limit_s": lim} for p, s, st, w, lim in rows])
    t = _table(df)
    assert t.loc["x", "sgm_mittelmann_s"] == pytest.approx(_sgm(10, 300))
    assert t.loc["y", "sgm_mittelmann_s"] == pytest.approx(_sgm(20, 100))
    assert t.loc["x", "sgm_scs_s"] == pytest.approx(_sgm(10, 300)) and t.loc["x", "sgm_scs33_s"] == pytest.approx(_sgm(10, 300))
    page = _table(df, sdp_failure_charge="page")
    assert page.loc["y", "sgm_scs_s"] == pytest.approx(_sgm(20, 1000))
    assert page.loc["y", "sgm_mittelmann_s"] == pytest.approx(_sgm(20, 100))
    fixed = _table(df, sdp_failure_charge={"mittelmann": 40000.0})
    assert fixed.loc["y", "sgm_mittelmann_s"] == pytest.approx(_sgm(20, 40000))
    # a store without recorded limits: the report's time_limit, then the longest time on the problem
    legacy = df.drop(columns="time_limit_s")
    assert _table(legacy, time_limit=300.0).loc["y", "sgm_mittelmann_s"] == pytest.approx(_sgm(20, 300))
    tab, info = sgm_table(legacy, {})
    assert info["unrecorded"] == 4 and info["limits"] == []
    with pytest.raises(ValueError, match="sdp_failure_charge"):
        sgm_table(df, {"sdp_failure_charge": "mittelmann"})


def test_the_scs_page_needs_status_optimal_and_points_in_the_cones():
    """Residuals alone do not count: lambda_min(X) = -3e-4 (its relative cone distance 3e-4 > 1e-4)
    fails, and so does an inaccurate status; a store without cone distances falls back to err2 / err4."""
    base = {**_frame().iloc[0].to_dict(), "metric_max_err": 3e-4}
    rows = [dict(base, solver_label="in cone"), dict(base, solver_label="X outside", metric_scs_dual_cone_res_rel=3e-4),
            dict(base, solver_label="inaccurate", metrics={"solver_status": "solved_inaccurate"}),
            dict(base, solver_label="no word", metrics={}),
            dict(base, solver_label="cvxpy scs", metrics={"solver_cvxpy_status": "optimal"}),
            dict(base, solver_label="cvxpy inaccurate", metrics={"solver_cvxpy_status": "optimal_inaccurate"})]
    df = pd.DataFrame(rows)
    ok = solved_by(df, "scs").tolist()
    assert ok == [True, False, False, False, True, False]
    old = df.drop(columns=["metric_scs_primal_cone_res_rel", "metric_scs_dual_cone_res_rel"]).assign(
        metric_err2=[0.0, 3e-4, 0.0, 0.0, 0.0, 0.0], metric_err4=0.0)
    assert solved_by(old, "scs").tolist() == [True, False, False, False, True, False]
    assert sgm_table(old, {})[1]["cone_recorded"] is False


def test_says_optimal():
    yes = ["solved", "Solved", "optimal", "pdOPT", "optimal (solved)", "Success: SDP solved", "DSDP Converged."]
    no = ["solved_inaccurate", "AlmostSolved", "optimal_inaccurate", "pdFEAS", "noINFO", "unknown",
          "Partial Success: SDP solved with reduced accuracy", "near_optimal", "", None, "killed at the deadline"]
    assert all(says_optimal(w) for w in yes) and not any(says_optimal(w) for w in no)


def test_where_the_two_sgms_disagree_the_page_says_why():
    """DSDP's control1: a point 2e-6 from the reference whose largest DIMACS error (5e-6) is above tol:
    solved for Mittelmann, not reached at 1e-2 for the generic rule (verified points only)."""
    base = _frame().iloc[0].to_dict()
    df = pd.DataFrame([dict(base, dataset="sdplib/control1", solver_label="sdp-dsdp", status="infeasible",
                            metric_max_err=5e-6, verified=False, ranked_gap=np.nan, objective=-20.8,
                            instance_reference=-20.8 * (1 + 2e-6) / 1, message="rejected by verification: ..."),
                       dict(base, dataset="sdplib/control1", solver_label="sdp-sdpa", verified=True, ranked_gap=0.0),
                       dict(base, dataset="sdplib/theta1", solver_label="sdp-sdpa", status="timeout", verified=True,
                            ranked_gap=1e-9, wall_time_s=130.0)])
    dis = disagreements(df, 1e-2)
    assert list(dis["solver"]) == ["sdp-dsdp", "sdp-sdpa"] and list(dis["runs"]) == ["1", "1"]
    assert "5.0e-06 > tol 1e-06" in dis["why"][0] and "objective 2.0e-06 from the reference" in dis["why"][0]
    assert dis["Mittelmann"].tolist() == ["solved", "failed"] and "status timeout" in dis["why"][1]


def test_the_tables_say_rejected_and_integers_as_integers():
    df = _frame()
    df.loc[0, "dataset"] = "sdp-gen/maxcut"
    df["p_n"] = 20.0
    df["seed"] = 0.0
    df["metric_m"], df["metric_n_total"], df["metric_blocks"] = 20.0, 20.0, 1.0
    blocks = {b.name: b for b in MittelmannTables().render(SimpleNamespace(frame=df, options={}, refs=None))}
    cells = blocks["sdp_cells"].frame
    assert "rejected" in set(cells["status"]) and "infeasible" not in set(cells["status"])
    assert "sdp-gen/maxcut n=20 s=0" in set(cells["problem"])
    assert "rejected" in set(blocks["sdp_runs"].frame["status"])
    assert "infeasible" not in set(blocks["sdp_runs"].frame["status"])
    assert not any(".0" in str(v) for v in blocks["sdp_sizes"].frame[["m", "n", "blocks"]].to_numpy().ravel())
    assert set(blocks["sdp_sgm"].frame["cells"]) == {"3"}


def test_the_section_shows_the_four_rules():
    blocks = MittelmannTables().render(SimpleNamespace(frame=_frame(), options={"time_limit": 100.0}, refs=None))
    t = next(b for b in blocks if b.name == "sdp_sgm")
    cols = list(t.frame.columns)
    assert cols[1].startswith("Mittelmann") and any(c.startswith("SCS page") for c in cols)
    assert any(c.startswith("1e-6") for c in cols) and any(c.startswith("SCS 3.3") for c in cols)
    assert "plato.asu.edu/ftp/sparse_sdp.html" in t.note and "charged its cell's time limit" in t.note


def test_flags_and_digits():
    assert [_flag(e) for e in (1e-5, 2e-4, 0.5, np.nan)] == ["", "a", "f", "f"]
    assert _digits_agree(-2.03260068, -2.0326, 5) and not _digits_agree(44.9435516, 44.9435, 6)
    assert _digits_agree(-1092.6, -1.093e3, 4)


def test_verified_by_counts_solvers_within_tol_fewest_first():
    blocks = MittelmannTables().render(SimpleNamespace(frame=_frame(), options={}, refs=None))
    df = next(b for b in blocks if b.name == "sdp_verified_by").frame
    assert list(df["problem"]) == ["sdplib/p2", "sdplib/p3", "sdplib/p1"]
    assert list(df["verified"]) == ["1/3", "1/3", "2/3"]
    assert list(df["solvers within tol"]) == ["a", "a", "a, b"]
    assert list(df["smallest max err"]) == ["2.0e-07", "1.0e-08", "1.0e-09"]


def test_published_table_shows_the_one_sided_certified_bound():
    """A refs row with no interval but a one-sided bound (gpp100's form: the ``bound`` column) shows it;
    the message is never read back."""
    df = _frame().assign(metric_published=-1.0, metric_published_digits=2)
    refs = pd.DataFrame([
        {"instance_key": "p1", "value": 1.0, "lower": None, "bound": 0.999999, "kind": "bound",
         "message": "agreed interior-point value (not exactly feasible); certified one-sided lower bound "
                    "0.5 (a message only)"},
        {"instance_key": "p2", "value": 1.0, "lower": 0.9999995, "kind": "certified", "message": "..."},
        {"instance_key": "p3", "value": 1.0, "lower": None, "kind": "best_verified", "message": "agreed"}])
    blocks = MittelmannTables().render(SimpleNamespace(frame=df, options={}, refs=refs))
    t = next(b for b in blocks if b.name == "sdp_published").frame.set_index("problem")
    assert list(t["certified lower bound"]) == ["0.999999", "0.9999995", "-"]


def test_a_store_without_the_kkt_residuals_says_so():
    df = _frame().drop(columns="metric_kkt_worst_rel")
    blocks = MittelmannTables().render(SimpleNamespace(frame=df, options={"time_limit": 100.0}, refs=None))
    t = next(b for b in blocks if b.name == "sdp_sgm").frame
    scs = [c for c in t.columns if c.startswith("SCS page")]
    assert scs and all((t[c] == "not recorded").all() for c in scs)
    assert (t[[c for c in t.columns if c.startswith("Mittelmann")][0]] != "not recorded").all()


def test_winners_of_the_sdplib_problems_under_mittelmanns_rule():
    blocks = {b.name: b for b in MittelmannTables().render(SimpleNamespace(frame=_frame(), options={}, refs=None))}
    w = blocks["sdp_winners"].frame.set_index("problem")
    # p1: a 1 s, c 2 s (flag a counts), b 4 s; p2: b 3 s (flag a), a 9 s; p3: c 50 s (a's timeout fails)
    assert w["winner"].tolist() == ["a", "b", "c"] and w.loc["sdplib/p1", "runner-up"] == "c"
    assert w.loc["sdplib/p2", "runner-up's time / winner's"] == "3" and w.loc["sdplib/p3", "runner-up"] == "-"
    # a file's seeds are replicate runs: one row per problem, the median time, the ratios' range
    df = pd.concat([_frame(), _frame().assign(seed=1, instance_key=lambda f: f["instance_key"] + "s1",
                                              wall_time_s=lambda f: f["wall_time_s"] * 2)], ignore_index=True)
    w2 = next(b for b in MittelmannTables().render(SimpleNamespace(frame=df, options={}, refs=None))
              if b.name == "sdp_winners").frame.set_index("problem")
    assert len(w2) == 3 and w2.loc["sdplib/p1", "runs"] == "2" and w2.loc["sdplib/p1", "median time (s)"] == "1.5"
    assert w2.loc["sdplib/p1", "runner-up's time / winner's"] == "2 [2-2]"
    assert "Problems won: a: 1; b: 1; c: 1 (of 3)" in blocks["sdp_winners"].note


def test_a_frame_of_one_generated_cell_renders():
    """One sdp-gen cell (no SDPLIB problem: no winners table; integer columns of one row)."""
    df = _frame().iloc[:1].assign(dataset="sdp-gen/maxcut", p_n=10, seed=0)
    blocks = {b.name: b for b in MittelmannTables().render(SimpleNamespace(frame=df, options={}, refs=None))}
    assert "sdp_winners" not in blocks and blocks["sdp_cells"].frame["problem"].tolist() == ["sdp-gen/maxcut n=10 s=0"]
