"""Gaps never come from the row itself; points beating a certified bound are flagged; a
scale-aware gap beside ``gap_rel``."""

from __future__ import annotations


import pandas as pd
import pytest

import psdbench
from psdbench.harness.reference import annotate, reference_updates


def rows(*cells):
    return [{"instance_key": "i", "cell_key": c, "run_id": "r", "objective": o, "feasible": f, "status": s}
            for c, o, f, s in cells]


def by_cell(updates):
    return {u[4]: u[:4] for u in updates}


def test_a_lone_solver_is_not_its_own_reference():
    upd = by_cell(reference_updates(rows(("a", 5.0, 1, "ok")), {}, {"i": "min"}))
    assert upd["a"] == (5.0, "best_verified", None, None)


def test_the_best_cell_gets_no_gap_the_others_are_measured_against_it():
    upd = by_cell(reference_updates(rows(("a", 2.0, 1, "ok"), ("b", 3.0, 1, "ok"), ("c", 1.0, 0, "infeasible")),
                                    {}, {"i": "min"}))
    assert upd["a"] == (2.0, "best_verified", None, None)
    assert upd["b"] == (2.0, "best_verified", 1.0, 0.5)
    assert upd["c"] == (2.0, "best_verified", None, None)  # unverified: no gap, as before


def test_a_tie_or_the_reference_point_gives_a_gap_from_another_point():
    tie = by_cell(reference_updates(rows(("a", 2.0, 1, "ok"), ("b", 2.0, 1, "max_iter")), {}, {"i": "max"}))
    assert tie["a"] == (2.0, "best_verified", 0.0, 0.0) and tie["b"] == (2.0, "best_verified", 0.0, 0.0)
    ref = {"i": {"kind": "best_verified", "value": 4.0}}  # the reference solve's own (looser) point
    upd = by_cell(reference_updates(rows(("a", 4.0, 1, "ok")), ref, {"i": "min"}))
    assert upd["a"] == (4.0, "best_verified", 0.0, 0.0)


def test_certified_references_give_every_verified_row_a_gap_even_a_negative_one():
    ref = {"i": {"kind": "certified", "value": 10.0}}
    upd = by_cell(reference_updates(rows(("a", 9.9, 1, "ok")), ref, {"i": "min"}))
    assert upd["a"][:3] == (10.0, "certified", pytest.approx(-0.1))


def _frame(objective, p_star, kind="certified", start=None):
    gap = objective - p_star
    return pd.DataFrame([{"instance_key": "i", "objective": objective, "reference_objective": p_star,
                          "reference_kind": kind, "gap_abs": gap, "gap_rel": gap / max(abs(p_star), 1e-12),
                          "curve": [] if start is None else [{"t": 0.0, "objective": start, "feasible": True}]}])


def test_below_certified_flags_points_beyond_the_certified_bound():
    refs = pd.DataFrame([{"instance_key": "i", "value": 100.0, "lower": 99.999, "kind": "certified"}])
    # the SCS case: 0.28 % below a certified optimum of a minimization
    assert annotate(_frame(99.72, 100.0), refs).loc[0, "below_certified"]
    # inside the certificate's own interval: not a contradiction
    assert not annotate(_frame(99.9995, 100.0), refs).loc[0, "below_certified"]
    assert not annotate(_frame(100.5, 100.0), refs).loc[0, "below_certified"]
    # a best-verified value is no bound: never flagged
    assert not annotate(_frame(99.0, 100.0, kind="best_verified"), refs).loc[0, "below_certified"]


def test_scale_aware_gap_uses_the_start_where_the_optimum_is_near_zero():
    out = annotate(_frame(1e-4, 1e-10, start=5.0))
    assert out.loc[0, "gap_rel"] > 1e5  # the schema's gap_rel, unchanged: huge against p* ~ 1e-10
    assert out.loc[0, "gap_scale"] == 5.0
    assert out.loc[0, "gap_scaled"] == pytest.approx((1e-4 - 1e-10) / 5.0)
    big = annotate(_frame(1010.0, 1000.0, start=3.0))
    assert big.loc[0, "gap_scale"] == 1000.0 and big.loc[0, "gap_scaled"] == pytest.approx(big.loc[0, "gap_rel"])
    small = annotate(_frame(0.5, 0.25))
    assert small.loc[0, "gap_scale"] == 1.0 and small.loc[0, "gap_scaled"] == 0.25


def test_reference_false_run_has_no_self_gap(tmp_path):
    spec = {"run": {"seeds": [0], "timeout": 600, "reference": False},
            "problems": [{"name": "graph-classification", "datasets": ["sklearn/breast-cancer"],
                          "params": {"n": [30], "graph": ["knn"], "k": [5]}}],
            "solvers": [{"name": "gdpa-lp"}]}
    df = psdbench.run(spec, db=tmp_path / "r.sqlite", jobs=1)
    row = df.iloc[0]
    assert row.status == "ok" and row.feasible == 1
    assert row.reference_kind == "best_verified" and row.reference_objective == row.objective
    assert pd.isna(row.gap_rel) and pd.isna(row.gap_scaled) and not row.below_certified
    assert pd.isna(psdbench.load(tmp_path / "r.sqlite").iloc[0].gap_abs)


def test_the_report_names_cells_below_the_reference(tmp_path):
    from psdbench.harness.store.results import CellResult
    from psdbench.harness.store.db import Store
    from psdbench.report import write_report

    store = Store(tmp_path / "s.sqlite")
    base = dict(run_id="r", instance_key="i", problem="graph-classification", dataset="sklearn/breast-cancer",
                instance_params={"n": 30}, seed=0, status="ok", feasible=1, reference_objective=100.0,
                reference_kind="certified", created_at="2025-01-01T00:00:00+00:00")
    store.write_result(CellResult(cell_key="a", solver="scs", objective=99.72, gap_abs=-0.28, gap_rel=-0.0028,
                                  max_residual=9e-4, **base))
    store.write_result(CellResult(cell_key="b", solver="gdpa-lp", objective=100.2, gap_abs=0.2, gap_rel=0.002,
                                  curve=[{"t": 0.0, "objective": 400.0, "feasible": 1, "repaired": 0}], **base))
    store.write_reference({"instance_key": "i", "problem": "graph-classification", "value": 100.0,
                           "lower": 99.999, "kind": "certified"})
    paths = write_report(store, tmp_path / "rep")
    md = paths["markdown"].read_text()
    assert "Points below the reference" in md and "0 within the floor (a tie at 0, reached), 1 beyond it" in md
    table = pd.read_csv(tmp_path / "rep" / "below_reference_graph-classification.csv")
    assert table.solver.tolist() == ["scs"] and table["reference"].tolist() == [100.0]
    assert table["verdict"].tolist() == ["beyond the bound"]
    csv = pd.read_csv(paths["results_csv"]).set_index("cell_key")
    assert csv.loc["a", "below_certified"] and not csv.loc["b", "below_certified"]
    assert csv.loc["b", "gap_scale"] == 400.0 and csv.loc["b", "gap_scaled"] == pytest.approx(0.2 / 400.0)
