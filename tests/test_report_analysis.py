"""The pure computations of the generic comparisons (report/measures/analysis.py, report/render/htmltable.py) on
hand-made frames with answers worked out by hand."""

import math

import numpy as np
import pandas as pd
import pytest

from psdbench.report.measures import analysis as an
from psdbench.report.render.htmltable import html_table, leading_number, shades


def test_data_profile_by_hand():
    cost = pd.DataFrame({"A": [1.0, 3.0, np.inf, 2.0], "B": [5.0, np.nan, 1.0, 1.0]})
    d = an.data_profile(cost, np.array([0.5, 1.0, 2.5, 10.0]))
    assert d["A"].tolist() == [0.0, 0.25, 0.5, 0.75]
    assert d["B"].tolist() == [0.0, 0.5, 0.5, 0.75]  # NaN: not run, never solved


def _cell(inst, label, t_final, gap, curve=(), below=False, params=None, verified=True):
    return {"instance_key": inst, "solver_label": label, "problem": "p", "dataset": "d",
            "instance_params": params or {"n": 10}, "reference_objective": 1.0, "reference_kind": "certified",
            "sense": "min", "wall_time_s": t_final, "gap": gap, "verified": verified, "below_certified": below,
            "curve": list(curve), "cert_width_rel": 1e-8}


def test_instance_sets_ignore_replicates():
    f = pd.DataFrame([_cell("a", "A", 1, 0, params={"n": 10, "fold": 0}),
                      _cell("b", "A", 1, 0, params={"n": 10, "fold": 1}),
                      _cell("c", "A", 1, 0, params={"n": 20, "fold": 0})])
    assert an.instance_sets(f).tolist() == ["p: d (n=10)", "p: d (n=10)", "p: d (n=20)"]


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
    width) reaches every tolerance when it is within the floor, and nothing when it is beyond it."""
    # certificate width 1e-8 (relative) in _cell, no verification tolerance recorded: floor 1e-7 by default
    f = pd.DataFrame([_cell("i1", "A", 2.0, -5e-8, below=True), _cell("i1", "B", 3.0, -1e-3, below=True)])
    tb = an.reach_times(f, (1e-2, 1e-6)).set_index("solver_label")
    assert an.DEFAULT_ALLOWANCE == 1e-7
    assert tb.loc["A", "t_0.01"] == 2.0 and tb.loc["A", "t_1e-06"] == 2.0
    assert math.isinf(tb.loc["B", "t_0.01"]) and math.isinf(tb.loc["B", "t_1e-06"])
    # a floor below the point's distance (here the certificate's width, 1e-8) makes it beyond the bound
    assert math.isinf(an.reach_times(f, (1e-2,), 1e-9).set_index("solver_label").loc["A", "t_0.01"])
