"""What asv tracks of a suite's case (``psdbench.asvbench.tracked``), against a hand-made tidy frame:
every value a cost, 0 at best, and a lost value raised with its reason."""

from __future__ import annotations

import math

import pandas as pd
import pytest

from psdbench.api import PsdbenchError
from psdbench.asvbench.tracked import (LostValue, TrackedCase, asv_settings, case_skip_reason, case_summary, labels,
                                     tracked_value)


def _frame(rows, metric="error_rate"):
    return pd.DataFrame([{"problem": "p", "dataset": "d/x", "instance_params": {"n": 5, "fold": f}, "seed": 0,
                          "solver": s, "solver_params": {}, "gap": g, "ranked_gap": r, "verified": v,
                          f"metric_{metric}": e}
                         for s, f, g, r, v, e in rows])


def _case(solver: str) -> TrackedCase:
    iset, config = labels("p", "d/x", {"n": 5, "fold": 0}, solver, {})
    assert iset == "p: d/x (n=5)"  # folds are replicates: one instance set
    return TrackedCase("suite", "fam", iset, config, tuple(("p", "d/x", {"n": 5, "fold": f}, 0, solver, {})
                                                             for f in (0, 1)))


def test_the_worst_ranked_gap_the_unverified_share_and_the_metric_distance():
    frame = _frame([("a", 0, 1e-6, 1e-6, True, 0.1), ("a", 1, -1e-9, 0.0, True, 0.3),  # a tie: ranked 0
                    ("b", 0, 1e-9, 1e-9, True, 0.2), ("b", 1, -1e-9, 0.0, False, 0.4)])  # b's second did not verify
    a = case_summary(frame, _case("a"), "error_rate")
    assert (a["gap"], a["unverified"], a["cells"], a["no_reference"], a["beyond_bound"]) == (1e-6, 0.0, 2.0, 0.0, 0.0)
    assert a["metric"] == pytest.approx(0.2) and a["metric_from_best"] == pytest.approx(0.2)  # best 0: the error
    assert tracked_value(a, "gap") == 1e-6 and tracked_value(a, "unverified") == 0.0
    b = case_summary(frame, _case("b"), "error_rate")
    assert math.isnan(b["gap"]) and b["unverified"] == 0.5 and b["metric_from_best"] == pytest.approx(0.3)
    none = case_summary(frame, _case("a"), None)
    assert math.isnan(none["metric_from_best"]) and none["metric_missing"] == 0.0
    assert case_summary(frame, _case("c"), None)["cells"] == 0.0


def test_a_lost_gap_raises_with_its_reason():
    frame = _frame([("b", 0, 1e-9, 1e-9, True, 0.2), ("b", 1, -1e-9, 0.0, False, 0.4),
                    ("c", 0, math.nan, math.nan, True, 0.2), ("c", 1, 1e-8, 1e-8, True, 0.2),  # no reference
                    ("d", 0, -1e-3, math.nan, True, 0.2), ("d", 1, 0.0, 0.0, True, 0.2)])  # beyond the bound
    for solver, reason in (("b", "gap lost: 1 of 2 cells did not verify"),
                           ("c", "gap lost: 1 of 2 cells have no reference"),
                           ("d", "gap lost: 1 of 2 cells lie below the reference beyond its floor")):
        summary = case_summary(frame, _case(solver), "error_rate")
        with pytest.raises(LostValue, match=f"^{reason}$"):
            tracked_value(summary, "gap")
        assert tracked_value(summary, "unverified") == (0.5 if solver == "b" else 0.0)  # the others still read
    with pytest.raises(LostValue, match="no cell of this case was measured"):
        tracked_value(case_summary(frame.iloc[:0], _case("b"), None), "unverified")


def test_a_higher_is_better_metric_that_drops_tracks_a_larger_distance():
    before = _frame([("a", 0, 0.0, 0.0, True, 1.0), ("a", 1, 0.0, 0.0, True, 0.9)], "f_measure")
    after = _frame([("a", 0, 0.0, 0.0, True, 0.7), ("a", 1, 0.0, 0.0, True, 0.6)], "f_measure")
    was, now = (tracked_value(case_summary(f, _case("a"), "f_measure", 1.0), "metric_from_best", "f_measure")
                for f in (before, after))
    assert was == pytest.approx(0.05) and now == pytest.approx(0.35)  # 1 - mean F-measure: the drop is a rise
    missing = _frame([("a", 0, 0.0, 0.0, True, 0.7), ("a", 1, 0.0, 0.0, True, math.nan)], "f_measure")
    with pytest.raises(LostValue, match="^metric_from_best lost: 1 of 2 cells lack the metric f_measure$"):
        tracked_value(case_summary(missing, _case("a"), "f_measure", 1.0), "metric_from_best", "f_measure")


def test_skipped_cells_are_left_out_and_a_case_of_skipped_cells_is_skipped():
    """A solver whose library is absent skips its cells: asv shows n/a, not a lost gap."""
    frame = _frame([("a", 0, 1e-7, 1e-7, True, 0.1), ("a", 1, math.nan, math.nan, False, math.nan),
                    ("b", 0, math.nan, math.nan, False, math.nan), ("b", 1, math.nan, math.nan, False, math.nan)])
    frame["status"] = ["ok", "skipped", "skipped", "skipped"]
    a = case_summary(frame, _case("a"), "error_rate")
    assert (a["cells"], a["skipped"], a["unverified"]) == (2.0, 1.0, 0.0) and case_skip_reason(a) is None
    assert tracked_value(a, "gap") == 1e-7 and tracked_value(a, "metric_from_best") == pytest.approx(0.1)
    b = case_summary(frame, _case("b"), "error_rate")
    assert case_skip_reason(b) == "every cell of this case was skipped (2): its solver did not run"
    with pytest.raises(LostValue, match="^every cell of this case was skipped"):
        tracked_value(b, "gap")


def test_the_verified_share_is_tracked_inverted():
    frame = _frame([("a", f, 0.0, 0.0, v, 0.0) for f, v in ((0, True), (1, False))] +
                   [("b", f, 0.0, 0.0, True, 0.0) for f in (0, 1)])
    assert tracked_value(case_summary(frame, _case("a"), None), "unverified") == 0.5
    assert tracked_value(case_summary(frame, _case("b"), None), "unverified") == 0.0  # all verified: 0, the best


@pytest.mark.parametrize("table, words", [
    ({"metric": "f1", "metric_best": "one"}, "grid g: [asv] metric_best must be a finite number (the metric's best "
                                             "value), not 'one'"),
    ({"metric": "f1", "metric_best": True}, "[asv] metric_best must be a finite number"),
    ({"metric": "f1", "metric_best": math.inf}, "[asv] metric_best must be a finite number"),
    ({"metric_best": 1}, "grid g: [asv] metric_best needs a metric")])
def test_metric_best_is_checked_in_one_line(table, words):
    with pytest.raises(PsdbenchError) as err:
        asv_settings({"asv": table}, "g", [0])
    assert words in str(err.value) and "\n" not in str(err.value)


def test_metric_best_defaults_to_zero():
    assert asv_settings({"asv": {"metric": "error_rate"}}, "g", [3, 4]) == {
        "seeds": [3], "metric": "error_rate", "metric_best": 0.0}
    assert asv_settings({"asv": {"metric": "f_measure", "metric_best": 1}}, "g", [0])["metric_best"] == 1.0


def test_asv_flags_a_rise_from_zero():
    """asv 0.6's comparison (``a < b / factor``, no statistics for a ``track_`` value) reads 0 -> 0.3
    as worse and 0.3 -> 0 as better, so a perfect value needs no offset (module docstring)."""
    compare = pytest.importorskip("asv.commands.compare")
    better = compare._is_result_better
    assert better(0.0, 0.3, None, None, 1.1) and not better(0.3, 0.0, None, None, 1.1)
    assert not better(0.0, 0.0, None, None, 1.1)
    assert compare._isna(None) and compare._isna(math.nan)  # failed and skipped: both out of the ratio
