"""The verdict rules (report/rules.py) and the tables that apply them, on hand-made cells whose answers
are worked out by hand: reached / tie at 0 / beyond the bound, the floor, the per-set shifted
geometric mean with failures at each cell's recorded time limit, winners per instance set with the
runner-up and the margin, no winner by gap against a competitor's own objective."""

from __future__ import annotations

import math
import sqlite3

import numpy as np
import pandas as pd
import pytest

from psdbench.harness.reference import annotate
from psdbench.harness.store.db import RESULT_COLUMNS, Store
from psdbench.registry import discover
from psdbench.report.measures import analysis as an
from psdbench.report import rules
from psdbench.report.blocks import SectionContext
from psdbench.report.frame import tidy_frame
from psdbench.report.sections.profiles import PerformanceProfiles
from psdbench.report.summary import winners_section


def test_ranked_gap_and_verdicts_by_hand():
    fl = 1e-6
    assert rules.ranked_gap(3e-4, fl, True) == 3e-4
    assert rules.ranked_gap(-4e-7, fl, True) == 0.0  # below by less than the floor: a tie at 0
    assert math.isnan(rules.ranked_gap(-2e-6, fl, True))  # beyond the bound
    assert math.isnan(rules.ranked_gap(math.nan, fl, True))
    assert rules.verdict(-1.4e-7, 1e-6, fl, True) == "tie at 0"  # clarabel's 1.4e-7 point: reached
    assert rules.reaches(-1.4e-7, 1e-6, fl, True) and rules.reaches(-1.4e-7, 1e-2, fl, True)
    assert rules.verdict(-2e-6, 1e-2, fl, True) == "beyond the bound" and not rules.reaches(-2e-6, 1e-2, fl, True)
    assert rules.verdict(-2e-6, 1e-2, fl, False) == "below a more accurate point"
    assert rules.verdict(5e-5, 1e-4, fl, True) == "reached" and rules.verdict(5e-5, 1e-6, fl, True) == "not reached"
    assert set(rules.VERDICTS) >= {rules.verdict(g, 1e-4, fl, c) for g in (-1, -1e-9, 0, 1e-5, 1, math.nan)
                                   for c in (True, False)}


def test_the_floor_is_the_larger_of_the_certificate_and_the_verification_tolerance():
    assert rules.allowance({"max_dimacs_error": 1e-6}) == 1e-6
    assert rules.allowance({"psd": 1e-7, "sym": 1e-9, "note": "x"}) == 1e-7
    assert rules.allowance({}) == rules.DEFAULT_ALLOWANCE and rules.allowance(None, 3e-8) == 3e-8
    assert rules.floor(2e-5, 1e-6) == 2e-5 and rules.floor(None, 1e-6) == 1e-6 and rules.floor(math.nan, 1e-7) == 1e-7
    f = pd.DataFrame({"cert_width_rel": [1e-8, 1e-3, np.nan],
                      "metrics": [{"tolerances": {"max_dimacs_error": 1e-6}}, {}, {"tolerances": {"a": 1e-9}}]})
    assert rules.floors(f, 1e-7).tolist() == [1e-6, 1e-3, 1e-9]


def test_reach_times_of_a_curve_by_hand():
    t = np.array([1.0, 2.0, 3.0])
    g = np.array([-1e-3, 1e-5, 1e-7])  # certified reference, floor 1e-6: the first point is beyond the bound
    feas = np.array([True, True, True])
    assert rules.reach_times_of_curve(t, g, feas, (1e-4, 1e-6), 1e-6, True, 4.0, 1e-7, True) == [2.0, 3.0]
    # within a wide certificate (floor 1e-2) the first point is a tie at 0: reached at once
    assert rules.reach_times_of_curve(t, g, feas, (1e-4,), 1e-2, True, 4.0, 1e-7, True) == [1.0]
    # no curve: the verified final point counts at the wall time; an unverified one never
    e = np.array([])
    assert rules.reach_times_of_curve(e, e, e.astype(bool), (1e-4,), 1e-6, True, 4.0, 1e-5, True) == [4.0]
    assert rules.reach_times_of_curve(e, e, e.astype(bool), (1e-4,), 1e-6, True, 4.0, 1e-5, False) == [math.inf]
    # a final point beyond the bound reaches nothing, whatever its curve did before
    assert rules.reach_times_of_curve(t, np.array([1e-3, 1e-5, -1e-3]), feas, (1e-2,), 1e-6, True, 4.0, -1e-3,
                                      True) == [math.inf]


def test_shifted_geomean_charges_failures_at_each_cells_limit():
    # exp(mean(log(1 + 10), log(4 + 10))) - 10 = sqrt(11 * 14) - 10
    assert rules.shifted_geomean([1.0, 4.0], 100.0, 10.0) == pytest.approx(math.sqrt(154) - 10)
    # a failure and a time above its limit are both charged at that cell's limit (here 50 and 100)
    assert rules.shifted_geomean([1.0, math.inf], [100.0, 50.0], 10.0) == pytest.approx(math.sqrt(11 * 60) - 10)
    assert rules.shifted_geomean([1.0, 500.0], [100.0, 100.0], 10.0) == pytest.approx(math.sqrt(11 * 110) - 10)
    assert rules.shifted_geomean([2.0, 8.0], 100.0, 0.0) == pytest.approx(4.0)  # plain geometric mean
    assert math.isnan(rules.shifted_geomean([], 1.0, 1.0))
    # the shift follows the set's own scale: milliseconds for a millisecond set, 10 s for slow ones
    assert rules.set_shift([0.018, 0.02, 0.016]) == pytest.approx(0.018)
    assert rules.set_shift([1e-6]) == rules.MIN_SHIFT and rules.set_shift([300.0, 900.0]) == rules.MAX_SHIFT
    assert rules.set_shift([math.inf]) == rules.MAX_SHIFT


def test_margin_and_tie():
    ratio, low, high, tie, shared = rules.margin([1.0, 2.0], [2.0, 8.0], 100.0)
    assert ratio == pytest.approx(math.sqrt(2 * 4)) and (low, high) == (2.0, 4.0) and not tie and shared == 0
    # the bregman case: the order flips on one seed, so a tie
    assert rules.margin([0.0425, 0.121], [0.0409, 0.13], 100.0).tie
    assert rules.margin([1.0], [1.0], 100.0).tie  # the runner-up reached it as fast: the order is not settled
    assert not rules.margin([1.0], [1.5], 100.0).tie


def test_a_tie_needs_a_unit_the_runner_up_reached_at_least_as_fast():
    # the kNN N = 200 case: both failed on one seed (both charged 120 s), gdpa-lp-elim 44-57x faster on
    # the other two: a shared failure is no evidence of a tie, and it is left out of the ratio
    inf = math.inf
    m = rules.margin([0.021, 0.025, inf], [1.2, 1.1, inf], 120.0)
    assert not m.tie and m.shared_failures == 1
    assert (m.low, m.high) == (pytest.approx(1.1 / 0.025), pytest.approx(1.2 / 0.021))
    assert m.ratio == pytest.approx(math.sqrt(1.2 / 0.021 * 1.1 / 0.025))
    # the winner failed where the runner-up reached it: the runner-up was faster there, a tie
    assert rules.margin([0.02, inf], [1.2, 30.0], 120.0).tie
    # the runner-up failed everywhere the winner did not: no tie, whatever the limits
    assert not rules.margin([0.02, inf], [inf, inf], 120.0).tie
    # nothing reached by either: no ratio, no tie
    m = rules.margin([inf, inf], [inf, inf], 120.0)
    assert math.isnan(m.ratio) and not m.tie and m.shared_failures == 2


def _row(inst, solver, wall, gap, params, problem="graph-classification", limit=120.0, kind="certified",
         ref=100.0, feasible=1, curve=None, tolerances=None):
    row = {c: None for c in RESULT_COLUMNS}
    row.update(run_id="r", cell_key=f"{inst}-{solver}", instance_key=inst, problem=problem,
               dataset="sklearn/breast-cancer", instance_params=params, seed=int(inst[-1]), solver=solver,
               solver_params={}, status="ok", message="", wall_time_s=wall, objective=ref * (1 + gap),
               reference_objective=ref, reference_kind=kind, feasible=feasible,
               metrics={"tolerances": tolerances or {"feas_tol": 1e-7}}, curve=curve or [],
               created_at="2024-01-01T00:00:00", time_limit_s=limit)
    return row


def _frame(rows, refs=None):
    reg = discover()
    store_refs = pd.DataFrame(refs or [])
    raw = annotate(pd.DataFrame(rows), store_refs)
    return tidy_frame(raw, store_refs, reg.problems, reg.solvers)


def _sgm_table(frame, family="graph-classification"):
    ctx = SectionContext(family, frame, pd.DataFrame(), {}, None, {})
    (table,) = [b for b in PerformanceProfiles().render(ctx) if getattr(b, "name", "").startswith("sgm_")]
    return table.frame


KNN = {"graph": "knn", "n": 200}
COMPLETE = {"graph": "complete", "n": 50}


def _two_sets():
    rows = []
    for s in (0, 1, 2):  # kNN N = 200: gdpa-lp-elim in milliseconds, scs in a second, scs fails one seed
        rows.append(_row(f"knn{s}", "gdpa-lp-elim", 0.018 + 0.001 * s, 1e-3, KNN))
        rows.append(_row(f"knn{s}", "scs", 1.2, 1e-3 if s else 0.5, KNN))
    for s in (0, 1, 2):  # complete N = 50: scs is faster
        rows.append(_row(f"cpl{s}", "gdpa-lp-elim", 2.0, 1e-3, COMPLETE))
        rows.append(_row(f"cpl{s}", "scs", 0.5, 1e-3, COMPLETE))
        rows.append(_row(f"cpl{s}", "clarabel", 0.9, 1e-3, COMPLETE))
    return rows


def test_winners_are_per_instance_set_with_runner_up_and_margin():
    f = _frame(_two_sets())
    times = an.reach_times(f, (1e-2,))
    w = an.winners(times, (1e-2,)).set_index("set")
    knn = w.loc[[s for s in w.index if "knn" in s][0]]
    cpl = w.loc[[s for s in w.index if "complete" in s][0]]
    assert knn["winner"] == "gdpa-lp-elim" and knn["reached"] == 3 and knn["runner_up"] == "scs"
    assert knn["runner_reached"] == 2 and not knn["tie"] and knn["low"] > 60  # 1.2 s / 0.02 s or the limit
    assert cpl["winner"] == "scs" and cpl["runner_up"] == "clarabel" and cpl["ratio"] == pytest.approx(0.9 / 0.5)
    assert knn["shift"] == pytest.approx(0.019)  # the set's own scale, not a 10 s shift
    sec = winners_section(f, {"tolerances": (1e-2,)})
    fam = sec[0].blocks[0].frame
    assert fam["family"].tolist() == ["graph-classification ([2 sets](#s-winners-per-instance-set))"]
    assert fam["gap ≤ 0.01"].tolist() == ["gdpa-lp-elim [tol 0.0001]: 1; scs [tol 0.0001]: 1"]
    per = sec[1].blocks[0].frame
    assert per["reference"].eq("certified interval").all()  # no refs row: its width is not at hand


def test_the_sgm_of_one_set_does_not_move_when_another_set_is_added():
    rows = _two_sets()
    only_knn = _sgm_table(_frame([r for r in rows if r["instance_key"].startswith("knn")]))
    both = _sgm_table(_frame(rows))
    knn_rows = both[both["instance set"].str.contains("knn")].reset_index(drop=True)
    pd.testing.assert_frame_equal(only_knn.reset_index(drop=True), knn_rows[only_knn.columns])
    # scs's failure on one seed is charged at that cell's own 120 s limit
    scs = knn_rows.set_index("configuration").loc["scs [tol 0.0001]"]
    want = rules.shifted_geomean([1.2, 1.2, 120.0], 120.0, 0.019)
    assert scs["gap ≤ 0.01: SGM (s)"] == f"{want:.3g}" and scs["limit"] == "recorded"


def test_no_winner_by_gap_against_a_competitors_own_objective_and_a_declared_metric_ranks():
    rows = [_row(f"knn{s}", lab, t, gap, {"graph": "knn", "n": 400}, kind="best_verified")
            for s in (0, 1) for lab, t, gap in (("gdpa-lp-elim", 0.1, 0.0), ("scs", 1.0, 1e-3))]
    f = _frame(rows, [{"instance_key": f"knn{s}", "value": 123.0, "kind": "best_verified"} for s in (0, 1)])
    per = winners_section(f, {"tolerances": (1e-2,)})[1].blocks[0].frame
    assert per["reference"].tolist() == ["best verified: gdpa-lp-elim (known to 1e-07)"]
    assert per["gap ≤ 0.01"].tolist() == ["no winner by gap: the reference is a competitor's own objective"]
    from psdbench.api import RankingMetric

    f = f.assign(metric_f_measure=np.where(f["solver"] == "scs", 0.66, 0.60))
    per = winners_section(f, {"tolerances": (1e-2,), "ranking_metrics": {
        "graph-classification": RankingMetric("f_measure", "max", "F-measure")}})[1].blocks[0].frame
    # ranked by its metric in a column of its own: no gap target is claimed for it
    assert per["by its declared metric"].iloc[0].startswith("by F-measure: **scs [tol 0.0001]** 0.66")
    assert per["gap ≤ 0.01"].iloc[0].startswith("(ranked by F-measure, not by gap")


def test_a_version_4_store_is_read_and_its_failures_charged_at_the_sets_longest_time(tmp_path):
    path = tmp_path / "v4.sqlite"
    store = Store(path)
    for r in _two_sets():
        store.write_result({**r, "time_limit_s": None})
    store.close()
    con = sqlite3.connect(path)  # back to schema 4: no time_limit_s column
    con.executescript("""
        DROP TRIGGER results_delete; DROP VIEW results; DROP VIEW current;
        ALTER TABLE history DROP COLUMN time_limit_s;
        UPDATE meta SET value='4' WHERE key='schema_version';
    """)
    con.commit()
    con.close()
    Store(path)  # migrated on open for writing: the column is back, NULL in the old rows
    df = Store(path).results_frame()
    assert "time_limit_s" in df.columns and df["time_limit_s"].isna().all() and len(df) == 15
    knn = _sgm_table(_frame(df.to_dict("records")))
    scs = knn[knn["instance set"].str.contains("knn")].set_index("configuration").loc["scs [tol 0.0001]"]
    assert scs["limit"].startswith("longest wall time")
    assert scs["gap ≤ 0.01: SGM (s)"] == f"{rules.shifted_geomean([1.2, 1.2, 1.2], 1.2, 0.019):.3g}"


def test_one_vocabulary_with_the_solvers_word_and_the_configured_tolerance():
    from psdbench import api
    from psdbench.harness.store.results import solver_word
    from psdbench.report import failures_frame

    assert solver_word("solver reported an inaccurate solution (cvxpy status optimal_inaccurate)") == \
        "optimal_inaccurate"
    assert solver_word(api.REJECTED + ": x (solver: pdFEAS)") == "pdFEAS"
    assert solver_word("", {"solver_status": "solved"}) == "solved" and solver_word("deadline") == ""
    assert rules.stopping_tolerance({"eps_abs": 1e-4, "max_iters": 100}) == 1e-4
    assert rules.stopping_tolerance({"tol": 1e-5, "eps_abs": 1e-4}) == 1e-5 and rules.stopping_tolerance({}) is None
    assert rules.configured_for(1e-4, 1e-6) == "configured for 0.0001" and rules.configured_for(1e-8, 1e-6) == ""
    # SCS at its default eps (1e-4) rejected by a 1e-6 verification asked for less: the table says so
    row = _row("k0", "scs", 1.0, 1e-3, KNN, tolerances={"max_dimacs_error": 1e-6}, feasible=0)
    row.update(status="infeasible", message=api.REJECTED + ": DIMACS err1 = 8e-5, needs <= 1e-6 (solver: solved)")
    fails = failures_frame(_frame([row, _row("k0", "gdpa-lp-elim", 0.1, 0.0, KNN)]))
    assert fails["outcome"].tolist() == ["rejected (configured for 0.0001)"]
    assert fails["solver's word"].tolist() == ["solved"]
    assert an.tolerance_labels(_frame([row]), {"scs": "scs"}) == {"scs": "scs [tol 0.0001]"}


def test_the_sgm_table_says_a_rejected_configuration_asked_for_less():
    from psdbench import api

    rows = _two_sets()
    rej = _row("knn0", "scs", 1.2, 1e-3, KNN, tolerances={"max_dimacs_error": 1e-6}, feasible=0)
    rej.update(status="infeasible", message=api.REJECTED + ": DIMACS err1 = 8e-5, needs <= 1e-6")
    rows = [r for r in rows if r["cell_key"] != "knn0-scs"] + [rej]
    t = _sgm_table(_frame(rows))
    note = t[t["instance set"].str.contains("knn")].set_index("configuration").loc["scs [tol 0.0001]", "note"]
    assert note == "1 rejected: configured for 0.0001"
