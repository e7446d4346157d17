"""Verdicts that claim no more than the data resolve (issue 40), on hand-made frames whose answers are
worked out by hand: a target tighter than the reference's accuracy or the verification floor is not
resolved in any table; one kind name per reference; ties need evidence; one rule for better / within
the spread / does not hold, used by the winners and the findings alike; independent units (folds, not
seeds nested in them); a set with one configuration is uncontested."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from psdbench.report import findings as fd
from psdbench.api import RankingMetric
from psdbench.report.measures import aggregate as agg
from psdbench.report.measures import analysis as an
from psdbench.report import rules
from psdbench.report.blocks import SectionContext
from psdbench.report.sections.status import BelowCertified
from psdbench.report.summary import metric_winner, winners_section
from psdbench.report.tables import reached_measure
from psdbench.report.measures.units import unit_keys

from .test_report_rules import _frame, _row, _sgm_table

KNN400 = {"graph": "knn", "n": 400}
TOLS = (1e-2, 1e-4, 1e-6)


def _wide_interval_rows():
    """The issue's kNN N = 400 case: an SCS reference that ended inaccurate, value and bound 2.4 % apart;
    gdpa-lp-elim's points 1e-4 to 8e-4 below the value, scs's at it."""
    rows, refs = [], []
    for s, (value, lower) in enumerate(((327.10, 323.88), (290.80, 283.85), (274.42, 274.38))):
        key = f"w{s}"
        for lab, t, gap in (("gdpa-lp-elim", 0.02, -1e-4 * (1 + 3 * s)), ("scs", 2.0, 0.0)):
            r = _row(key, lab, t, gap, KNN400, kind="best_verified", ref=value)
            rows.append(r)
        refs.append({"instance_key": key, "value": value, "lower": lower, "kind": "interval"})
    return rows, refs


def test_a_target_tighter_than_the_references_accuracy_is_not_resolved_in_any_table():
    rows, refs = _wide_interval_rows()
    f = _frame(rows, refs)
    known = abs(290.80 - 283.85) / 290.80  # the widest interval of the set: 2.4e-2
    assert f["reference_label"].eq("wide certified interval").all()
    assert f["reference_accuracy"].max() == pytest.approx(known)
    per = winners_section(f, {"tolerances": TOLS})[1].blocks[0].frame
    want = f"not resolved by the reference (known to {known:.2g})"
    assert want == "not resolved by the reference (known to 0.024)"
    assert per[[f"gap ≤ {t:g}" for t in TOLS]].iloc[0].tolist() == [want] * 3  # no winner named at any target
    assert per["reference"].iloc[0].startswith("wide certified interval (known to 0.024)")
    sgm = _sgm_table(f)
    assert sgm["gap ≤ 1e-06: scaled SGM (reached)"].eq(want).all() and sgm["gap ≤ 1e-06: SGM (s)"].eq("n.r.").all()
    m = reached_measure({"tolerances": TOLS})
    g = f[f["solver"] == "gdpa-lp-elim"]
    assert m.compute(g, {}) == "n.r. · n.r. · n.r. of 3"
    # the points-below table gives the reference the same kind name, with its accuracy
    ctx = SectionContext("graph-classification", f, pd.DataFrame(refs), {}, None, {})
    below = BelowCertified().render(ctx)[0].frame
    assert below["reference kind"].eq("wide certified interval").all() and len(below) == 3
    # within its interval the optimum may lie there (a tie at 0); the third instance's interval is 1.5e-4
    # wide and its point 7e-4 below the value: below the certified bound
    assert below["verdict"].tolist() == ["tie at 0", "tie at 0", "beyond the bound"]


def test_a_target_tighter_than_the_verification_floor_is_not_resolved_and_the_rest_is_ranked():
    rows = []
    for s in (0, 1, 2):
        rows.append(_row(f"k{s}", "gdpa-lp-elim", 0.02, 1e-5 * (1 + s), KNN400, tolerances={"feas": 1e-3}))
        rows.append(_row(f"k{s}", "scs", 1.0, 1e-5 * (1 + s), KNN400, tolerances={"feas": 1e-7}))
    refs = [{"instance_key": f"k{s}", "value": 100.0, "lower": 100.0 - 1e-6, "kind": "certified"} for s in (0, 1, 2)]
    f = _frame(rows, refs)
    per = winners_section(f, {"tolerances": TOLS})[1].blocks[0].frame.iloc[0]
    assert per["gap ≤ 0.01"].startswith("**gdpa-lp-elim [tol 0.0001]** 3/3")
    assert per["gap ≤ 0.0001"] == per["gap ≤ 1e-06"] == "not resolved: verification floor 0.001"
    assert reached_measure({"tolerances": TOLS}).compute(f[f["solver"] == "scs"], {}) == "3 · n.r. · n.r. of 3"
    assert rules.resolves(1e-3, 1e-3) and not rules.resolves(1e-4, 1e-3) and rules.resolves(1e-6, math.nan)


def test_a_certified_one_sided_bound_is_its_own_kind_and_bounds_the_ranking():
    rows = [_row("g0", "sdpa", 1.0, 0.0, {"n": 100}, problem="sdp/standard", kind="best_verified", ref=-44.94),
            _row("g0", "scs", 0.5, 5e-3, {"n": 100}, problem="sdp/standard", kind="best_verified", ref=-44.94)]
    refs = [{"instance_key": "g0", "value": -44.94, "lower": None, "bound": -44.9490044, "kind": "bound"}]
    f = _frame(rows, refs)
    assert f["reference_label"].eq("certified one-sided bound").all() and f["reference_bounded"].all()
    acc = abs(-44.94 + 44.9490044) / 44.94
    assert f["reference_accuracy"].iloc[0] == pytest.approx(acc)
    scs = f[f["solver"] == "scs"].iloc[0]
    assert rules.verdict(scs["gap"], 1e-2, scs["floor"], True) == "beyond the bound"  # below the proven bound


def test_a_tie_rests_on_a_unit_the_runner_up_reached_as_fast_never_on_a_shared_failure():
    rows = []
    for s, (w, r) in enumerate(((0.021, 1.2), (0.025, 1.1), (None, None))):  # both fail seed 2
        rows.append(_row(f"n{s}", "gdpa-lp-elim", w or 120.0, 1e-3 if w else 0.5, {"graph": "knn", "n": 200}))
        rows.append(_row(f"n{s}", "scs", r or 120.0, 1e-3 if r else 0.5, {"graph": "knn", "n": 200}))
    f = _frame(rows)
    w = an.set_winner(an.reach_times(f, (1e-2,)), 1e-2)
    assert w["winner"] == "gdpa-lp-elim" and not w["tie"] and w["shared_failures"] == 1
    assert w["low"] == pytest.approx(1.1 / 0.025) and w["high"] == pytest.approx(1.2 / 0.021)
    cell = winners_section(f, {"tolerances": (1e-2,)})[1].blocks[0].frame["gap ≤ 0.01"].iloc[0]
    assert "runner-up scs [tol 0.0001] 2/3" in cell and "1 both failed, left out" in cell and "tie" not in cell


def test_a_set_with_one_configuration_is_uncontested():
    f = _frame([_row(f"u{s}", "scs", 1.0, 1e-3, KNN400) for s in (0, 1)])
    cell = winners_section(f, {"tolerances": (1e-2,)})[1].blocks[0].frame["gap ≤ 0.01"].iloc[0]
    assert cell.endswith("; uncontested")


def _signed(diffs):
    """Two configurations' F-measure on three seeds (each seed draws its own graph)."""
    rows = []
    for s, d in enumerate(diffs):
        for lab, fm in (("balanced-clime", 0.6 + d), ("clime", 0.6)):
            r = _row(f"sg{s}", lab, 1.0, 0.0, {"n_nodes": 30}, problem="signed-graph", kind="none")
            r.update(reference_objective=None, objective=1.0 + s, metrics={"f_measure": fm})
            rows.append(r)
    return _frame(rows).assign(seed=[0, 0, 1, 1, 2, 2])


def test_winners_and_findings_read_one_comparison_with_one_rule():
    # the signed-graph case: per-seed differences in [0.0102, 0.0695] (min-max all above 0), but the
    # 95 % t interval of their mean straddles 0: within the spread in the winners and the findings alike
    f = _signed([0.0102, 0.0115, 0.0695])
    rec = metric_winner(f, RankingMetric("f_measure", "max", "F-measure"))
    iv = agg.paired_difference(f, "metric_f_measure", "balanced-clime", "clime")
    assert rec["winner"] == "balanced-clime" and rec["units"] == iv.n == 3
    assert (rec["low"], rec["high"]) == (pytest.approx(iv.low), pytest.approx(iv.high)) and iv.low < 0 < iv.high
    assert rec["verdict"] == fd.interval_verdict(iv, 0.0, ">") == rules.WITHIN and rec["tie"]
    # a clear difference: better in both
    g = _signed([0.05, 0.051, 0.049])
    rec = metric_winner(g, RankingMetric("f_measure", "max", "F-measure"))
    assert rec["verdict"] == rules.HOLDS and not rec["tie"]
    assert fd.interval_verdict(agg.paired_difference(g, "metric_f_measure", "balanced-clime", "clime"), 0.0,
                               ">") == rules.HOLDS
    assert fd.verdict(-1.0, 2.0, 0.0, ">") == rules.claim_verdict(-1.0, 2.0, 0.0, ">") == rules.WITHIN
    assert rules.claim_verdict(-2.0, -1.0, 0.0, ">") == rules.FAILS
    assert rules.paired_verdict(0.3, math.nan, math.nan, 1, 0.0, ">") == rules.HOLDS  # one unit: its value


def _folds(values):
    """An SGML-like frame: 3 folds x 3 seeds, the seeds nested in each fold (``values[fold][seed]``)."""
    rows = []
    for fold, per_seed in enumerate(values):
        for seed, (a, b) in enumerate(per_seed):
            for lab, obj in (("pgml", a), ("pd-cone", b)):
                r = _row(f"f{fold}s{seed}", lab, 1.0, 0.0, {"fold": fold, "max_folds": 3}, problem="metric/deml")
                r.update(seed=seed, objective=obj, reference_objective=50.0 + fold)
                rows.append(r)
    return _frame(rows)


def test_folds_are_the_units_and_seeds_nested_in_them_count_once():
    same = [[(14.8, 43.0)] * 3, [(8.6, 19.8)] * 3, [(9.15, 25.3)] * 3]  # bit-identical seeds (DEML)
    f = _folds(same)
    assert f["unit"].nunique() == 3
    iv = agg.paired_difference(f, "objective", "pgml", "pd-cone", ratio=True)
    # a ratio is read on the log scale: the t interval of the mean log ratio, exponentiated
    want = agg.t_interval(np.log([14.8 / 43.0, 8.6 / 19.8, 9.15 / 25.3]))
    assert iv.n == 3 and (iv.low, iv.high) == (pytest.approx(math.exp(want.low)), pytest.approx(math.exp(want.high)))
    # seeds that move a solver's result inside a fold (a random start) still do not make more units
    moved = [[(14.8 + 0.1 * s, 43.0) for s in range(3)], [(8.6, 19.8)] * 3, [(9.15, 25.3)] * 3]
    iv = agg.paired_difference(_folds(moved), "objective", "pgml", "pd-cone", ratio=True)
    assert iv.n == 3 and iv.mean == pytest.approx(math.exp(np.mean(np.log([14.9 / 43.0, 8.6 / 19.8, 9.15 / 25.3]))))
    # the reached counts and the winners count folds
    assert reached_measure({"tolerances": (1e-2,)}).compute(f[f["solver"] == "pgml"], {}).endswith(" of 3")
    assert agg.ok_units(f[f["solver"] == "pgml"], "objective") == "3/3"


def test_seeds_that_draw_the_instance_are_units_and_identical_repetitions_are_one():
    base = pd.DataFrame({"problem": "p", "dataset": "d", "instance_params": [{"n": 5}] * 6,
                         "seed": [0, 0, 1, 1, 2, 2], "solver_label": ["a", "b"] * 3})
    drawn = base.assign(objective=[1.0, 2.0, 1.5, 2.5, 1.2, 2.2])
    assert unit_keys(drawn).nunique() == 3
    repeated = base.assign(objective=[1.0, 2.0] * 3)
    assert unit_keys(repeated).nunique() == 1


def test_a_ratio_interval_is_read_on_the_log_scale_and_is_never_negative():
    """The GLR case: per-fold ratios 237.2, 283.5, 135.5 against the paper's 428.  The arithmetic t
    interval [30.7, 407] would call "at most 428" held; the interval of the mean log ratio straddles it."""
    r = [237.2, 283.5, 135.5]
    iv = agg.log_ratio_interval(r)
    logs = agg.t_interval(np.log(r))
    assert (iv.mean, iv.low, iv.high) == (pytest.approx(math.exp(logs.mean)), pytest.approx(math.exp(logs.low)),
                                          pytest.approx(math.exp(logs.high)))
    assert iv.low > 0 and iv.low < 428 < iv.high
    assert fd.interval_verdict(iv, 428, "<=") == rules.WITHIN
    assert fd.interval_verdict(agg.t_interval(r), 428, "<=") == rules.HOLDS  # what the arithmetic rule said
    # widely spread ratios: an arithmetic interval goes negative, the log one stays positive
    wide = [10.0, 300.0, 15.0]
    assert agg.t_interval(wide).low < 0 < agg.log_ratio_interval(wide).low
    # a ratio that is not positive has no log: no interval, not a number read on another scale
    bad = agg.log_ratio_interval([2.0, -1.0, 3.0])
    assert bad.n == 3 and math.isnan(bad.low) and fd.interval_verdict(bad, 1.0, ">=") == rules.NOT_MEASURED
    assert fd.ratio_interval(r) == iv


def test_a_winner_its_own_margin_calls_slower_says_it_won_on_reached_count():
    """The complete n = 100 case: scs reaches the target on 3 of 3 units in ~1 s; gdpa-lp-elim on 2 of 3,
    17-43x faster there, its third cell charged the 120 s limit.  scs has the smaller SGM, but the
    margin (gdpa over scs on the units either reached) is below 1: the cell says what scs won on."""
    rows = []
    params = {"graph": "complete", "n": 100}
    for s, (ts, tg) in enumerate(((0.86, 0.05), (0.85, 0.02), (0.9, None))):
        rows.append(_row(f"c{s}", "scs", ts, 1e-3, params))
        rows.append(_row(f"c{s}", "gdpa-lp-elim", tg or 120.0, 1e-3 if tg else 6e-2, params))
    f = _frame(rows)
    w = an.set_winner(an.reach_times(f, (1e-2,)), 1e-2)
    assert w["winner"] == "scs" and (w["reached"], w["runner_reached"]) == (3, 2)
    want = math.exp(np.mean(np.log([0.05 / 0.86, 0.02 / 0.85, 120.0 / 0.9])))
    assert w["ratio"] == pytest.approx(want) and w["ratio"] < 1
    assert w["won_on"] == "won on reached count"
    cell = winners_section(f, {"tolerances": (1e-2,)})[1].blocks[0].frame["gap ≤ 0.01"].iloc[0]
    assert cell.startswith("**scs [tol 0.0001]** 3/3") and "won on reached count; runner-up gdpa-lp-elim" in cell
    assert "faster where either reached" in cell and "tie with" not in cell
    front = winners_section(f, {"tolerances": (1e-2,)})[0].blocks[0].frame["gap ≤ 0.01"].iloc[0]
    assert "won on reached count or SGM, runner-up faster" in front
    # a margin above 1 is a plain win
    m = rules.Margin(2.0, 1.5, 3.0, False, 0)
    assert rules.won_on(m, 3, 2) == "" and rules.won_on(m._replace(ratio=0.9), 3, 3) == "won on SGM"


def test_results_csv_carries_no_gap_the_store_does_not_have():
    """A rejected cell and a best-verified reference's own point have no gap in the store (``gap_rel``
    NULL); results.csv has none either, and a verified cell keeps the one it has."""
    from psdbench.report import results_csv_frame

    rows = [_row("g0", "scs", 1.0, 1e-3, KNN400), _row("g0", "clarabel", 1.0, 5e-2, KNN400, feasible=0),
            _row("g1", "scs", 1.0, 0.0, KNN400, kind="best_verified")]
    rows[0]["gap_rel"], rows[1]["gap_rel"], rows[2]["gap_rel"] = 1e-3, None, None
    raw = pd.DataFrame(rows)
    f = _frame(rows)
    assert math.isnan(f["gap"].iloc[1])  # not verified: no gap anywhere in the report
    out = results_csv_frame(raw, f)
    assert out["gap"].iloc[0] == pytest.approx(1e-3) and out["ranked_gap"].iloc[0] == pytest.approx(1e-3)
    assert out["gap"].iloc[1:].isna().all() and out["ranked_gap"].iloc[1:].isna().all()
