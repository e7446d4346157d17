"""The pure computations of the generic comparisons (report/analysis.py, report/htmltable.py) on
hand-made frames with answers worked out by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from psdbench.report import analysis as an
from psdbench.report.htmltable import html_table, leading_number, shades


def test_shifted_geomean_by_hand():
    # exp(mean(log(1 + 10), log(4 + 10))) - 10 = sqrt(11 * 14) - 10
    assert an.shifted_geomean([1.0, 4.0], limit=100.0) == pytest.approx(math.sqrt(154) - 10)
    # a failure (inf) and a time above the limit are both charged at the limit
    assert an.shifted_geomean([1.0, math.inf], 100.0) == pytest.approx(math.sqrt(11 * 110) - 10)
    assert an.shifted_geomean([1.0, 500.0], 100.0) == pytest.approx(math.sqrt(11 * 110) - 10)
    assert an.shifted_geomean([2.0, 8.0], 100.0, shift=0.0) == pytest.approx(4.0)  # plain geometric mean
    assert math.isnan(an.shifted_geomean([], 1.0))


def test_sgm_table_scaled_and_solved():
    cost = pd.DataFrame({"A": [1.0, 4.0], "B": [2.0, np.inf]})
    t = an.sgm_table(cost, limit=100.0, shift=0.0)
    assert t.loc["A", "sgm"] == pytest.approx(2.0) and t.loc["B", "sgm"] == pytest.approx(math.sqrt(200))
    assert t.loc["A", "scaled"] == 1.0 and t.loc["B", "scaled"] == pytest.approx(math.sqrt(200) / 2)
    assert t["solved"].tolist() == [1.0, 0.5]


def test_data_profile_by_hand():
    cost = pd.DataFrame({"A": [1.0, 3.0, np.inf, 2.0], "B": [5.0, np.nan, 1.0, 1.0]})
    d = an.data_profile(cost, np.array([0.5, 1.0, 2.5, 10.0]))
    assert d["A"].tolist() == [0.0, 0.25, 0.5, 0.75]
    assert d["B"].tolist() == [0.0, 0.5, 0.5, 0.75]  # NaN: not run, never solved


def test_reach_time_skips_points_beyond_a_certified_bound():
    # min sense, certified reference 10, floor 1e-6: a point at 9.99 is 1e-3 below the bound
    curve = [{"t": 1.0, "objective": 9.99}, {"t": 2.0, "objective": 10.0001}, {"t": 3.0, "objective": 10.000001}]
    assert an.reach_time(curve, 10.0, "min", 1e-4, 1e-6, True, 4.0, 1e-7, True) == 2.0
    assert an.reach_time(curve, 10.0, "min", 1e-6, 1e-6, True, 4.0, 1e-7, True) == 3.0
    # not certified: the point below the reference is just a good point
    assert an.reach_time(curve, 10.0, "min", 1e-4, 1e-6, False, 4.0, 1e-7, True) == 1.0
    # within the certificate's width (floor 1e-2) the point at 9.99 is a tie, so it counts
    assert an.reach_time(curve, 10.0, "min", 1e-4, 1e-2, True, 4.0, 1e-7, True) == 1.0
    # no curve: the final point counts only when acceptable
    assert an.reach_time([], 10.0, "min", 1e-4, 1e-6, True, 4.0, 1e-5, True) == 4.0
    assert an.reach_time([], 10.0, "min", 1e-4, 1e-6, True, 4.0, 1e-5, False) == math.inf


def _cell(inst, label, t_final, gap, curve=(), below=False, params=None, verified=True):
    return {"instance_key": inst, "solver_label": label, "problem": "p", "dataset": "d",
            "instance_params": params or {"n": 10}, "reference_objective": 1.0, "reference_kind": "certified",
            "sense": "min", "wall_time_s": t_final, "gap": gap, "verified": verified, "below_certified": below,
            "curve": list(curve), "cert_width_rel": 1e-8}


def test_reach_times_and_winners():
    f = pd.DataFrame([
        _cell("i1", "A", 2.0, 1e-7), _cell("i2", "A", 4.0, 1e-7),
        _cell("i1", "B", 1.0, 1e-3), _cell("i2", "B", 1.0, -1e-3, below=True),
        _cell("i1", "C", 0.5, 1e-7),  # C ran i1 only
    ])
    times = an.reach_times(f, (1e-2, 1e-6), default_floor=1e-9)
    tb = times.set_index(["instance_key", "solver_label"])
    assert tb.loc[("i1", "B"), "t_0.01"] == 1.0 and math.isinf(tb.loc[("i1", "B"), "t_1e-06"])
    assert math.isinf(tb.loc[("i2", "B"), "t_0.01"])  # below the certified bound: never reached
    assert an.common_instances(times) == (["i1"], ["i2"])
    w = an.winners(times, (1e-2, 1e-6), shift=0.0).set_index("tol")
    # on the common instance i1: C (0.5 s) beats B (1 s) and A (2 s) at both tolerances
    assert w.loc[1e-2, "winner"] == "C" and w.loc[1e-2, "reached"] == 1 and w.loc[1e-2, "instances"] == 1
    assert w.loc[1e-6, "winner"] == "C" and w.loc[1e-6, "left_out"] == 1
    # without C both instances are common; at 1e-2 A reaches both (2 s, 4 s: SGM sqrt(8) with shift 0),
    # B reaches i1 in 1 s and its failure on i2 is charged at the limit, the largest wall time 4 s:
    # SGM sqrt(1 * 4) = 2 < sqrt(8), so B is fastest although it reached 1 of 2 (the table says so)
    w2 = an.winners(times[times["solver_label"] != "C"], (1e-2,), shift=0.0).set_index("tol")
    assert w2.loc[1e-2, "winner"] == "B" and w2.loc[1e-2, "reached"] == 1 and w2.loc[1e-2, "instances"] == 2
    assert w2.loc[1e-2, "sgm"] == pytest.approx(2.0)
    none = an.winners(times[times["solver_label"] == "B"], (1e-6,)).iloc[0]
    assert none["winner"] == "" and none["reached"] == 0


def test_instance_sets_ignore_replicates_and_floor():
    f = pd.DataFrame([_cell("a", "A", 1, 0, params={"n": 10, "fold": 0}),
                      _cell("b", "A", 1, 0, params={"n": 10, "fold": 1}),
                      _cell("c", "A", 1, 0, params={"n": 20, "fold": 0})])
    assert an.instance_sets(f).tolist() == ["p: d (n=10)", "p: d (n=10)", "p: d (n=20)"]
    f.loc[1, "cert_width_rel"] = 1e-3
    f.loc[2, "cert_width_rel"] = np.nan
    assert an.cell_floor(f, 1e-6).tolist() == [1e-6, 1e-3, 1e-6]


def test_natural_order_of_sets():
    sets = ["p: d (n=100)", "p: d (n=50)", "p: d (n=200, k=5)", "p: c (n=400)"]
    assert sorted(sets, key=an.natural_key) == ["p: c (n=400)", "p: d (n=50)", "p: d (n=100)", "p: d (n=200, k=5)"]


def test_short_labels_and_decimate():
    labs = ["s (a=1, b=2)", "s (a=1, b=3)", "t (a=1)", "u"]
    assert an.short_labels(labs) == {"s (a=1, b=2)": "s (b=2)", "s (a=1, b=3)": "s (b=3)", "t (a=1)": "t", "u": "u"}
    x = np.arange(1000.0)
    dx, dy = an.decimate(x, x * 2, 50)
    assert len(dx) <= 50 and dx[0] == 0 and dx[-1] == 999 and np.all(dy == 2 * dx)


def test_table_shading_against_the_best():
    df = pd.DataFrame({"row": ["r1", "r2"], "a": ["1.0 (3/3)", "10"], "b": ["2", "-"]})
    s = shades(df, "row-min")
    assert s[(0, 1)] == 1.0 and s[(0, 2)] == 0.0  # twice the best: no shade left
    assert (1, 1) not in s  # a row with one number has nothing to compare
    c = shades(df, "col-max")
    assert c[(1, 1)] == 1.0 and c[(0, 1)] == 0.0
    assert shades(pd.DataFrame({"r": ["a", "b"], "x": ["1.0", "1.25"]}), "col-min")[(1, 1)] == pytest.approx(0.75)
    assert leading_number("1.5e-3 [1-2]") == 1.5e-3 and math.isnan(leading_number("none"))
    page = html_table(df, best="row-min")
    assert 'class="sortable"' in page and 'class="best"' in page and page.startswith('<div class="scroll">')


def test_a_point_below_the_bound_within_the_floor_is_a_tie():
    """A verified point a hair below a certified optimum (the store flags it: beyond the certificate's
    width) reaches every tolerance when it is within the gap floor, and nothing when it is beyond it."""
    # certificate width 1e-8 (relative) in _cell; A is 5e-8 below, B 1e-3 below
    f = pd.DataFrame([_cell("i1", "A", 2.0, -5e-8, below=True), _cell("i1", "B", 3.0, -1e-3, below=True)])
    tb = an.reach_times(f, (1e-2, 1e-6)).set_index("solver_label")
    assert an.GAP_FLOOR == 1e-7  # the default floor the report states
    assert tb.loc["A", "t_0.01"] == 2.0 and tb.loc["A", "t_1e-06"] == 2.0
    assert math.isinf(tb.loc["B", "t_0.01"]) and math.isinf(tb.loc["B", "t_1e-06"])
    # a floor below the point's distance (here the certificate's width, 1e-8) makes it beyond the bound
    assert math.isinf(an.reach_times(f, (1e-2,), default_floor=1e-9).set_index("solver_label").loc["A", "t_0.01"])
