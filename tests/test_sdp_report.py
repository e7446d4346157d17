"""The SDP family's report section on a frame built by hand: the shifted geometric mean and its
failures, Mittelmann's flags, the per-problem count of solvers within tol, and the published digits."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from psdbench.families.sdp.report import MittelmannTables, _digits_agree, _flag, sgm_table


def _frame() -> pd.DataFrame:
    rows = []
    # problem, solver, status, time, max DIMACS err, largest SCS-form relative KKT residual, message
    for prob, solver, status, t, err, kkt, msg in [
        ("p1", "a", "ok", 1.0, 1e-9, 1e-10, ""), ("p1", "b", "ok", 4.0, 1e-7, 1e-8, ""),
        ("p1", "c", "max_iter", 2.0, 5e-5, 3e-5, ""),
        ("p2", "a", "ok", 9.0, 2e-7, 5e-5, ""), ("p2", "b", "max_iter", 3.0, 3e-4, 2e-4, ""),
        ("p2", "c", "error", 1.0, np.nan, np.nan, "ValueError"),
        ("p3", "a", "timeout", 130.0, 1e-8, 1e-9, ""), ("p3", "b", "error", 7.0, np.nan, np.nan, "MemoryError: ..."),
        ("p3", "c", "infeasible", 50.0, 5e-3, 2e-3, "rejected by verification"),
    ]:
        rows.append({"dataset": f"sdplib/{prob}", "solver_label": solver, "status": status, "wall_time_s": t,
                     "metric_max_err": err, "metric_kkt_worst_rel": kkt, "message": msg, "p_tol": 1e-6,
                     "instance_key": prob, "seed": 0, "iterations": 10, "objective": 1.0, "instance_reference": 1.0})
    return pd.DataFrame(rows)


def _sgm(*t: float) -> float:
    return float(np.prod(np.asarray(t) + 10.0) ** (1 / len(t)) - 10)


def test_the_three_rules_by_hand():
    """Mittelmann's: f or a time/memory failure fails, flag a counts; the SCS page's: KKT residual
    <= 1e-4, failures at 1000 s; 1e-6: the problem's tol, a verified timeout counted at the limit."""
    t = sgm_table(_frame(), limit=100.0).set_index("solver")
    # 1e-6: a's timeout verifies (capped at 100 s); b fails p2 (3e-4) and p3 (memory); c fails all
    assert t.loc["a", "sgm_tol_s"] == pytest.approx(_sgm(1, 9, 100))
    assert t.loc["b", "sgm_tol_s"] == pytest.approx(_sgm(4, 100, 100))
    assert t.loc["c", "sgm_tol_s"] == pytest.approx(100)
    # Mittelmann: a's timeout is a time failure; b's p2 (flag a) counts, its memory failure does not;
    # c's p3 (5e-3, flag a, rejected at 1e-6) counts
    assert t.loc["a", "sgm_mittelmann_s"] == pytest.approx(_sgm(1, 9, 100))
    assert t.loc["b", "sgm_mittelmann_s"] == pytest.approx(_sgm(4, 3, 100))
    assert t.loc["c", "sgm_mittelmann_s"] == pytest.approx(_sgm(2, 100, 50))
    # the SCS page: KKT <= 1e-4, failures at 1000 s
    assert t.loc["a", "sgm_scs_s"] == pytest.approx(_sgm(1, 9, 1000))
    assert t.loc["b", "sgm_scs_s"] == pytest.approx(_sgm(4, 1000, 1000))
    assert t.loc["c", "sgm_scs_s"] == pytest.approx(_sgm(2, 1000, 1000))
    assert list(t.index) == ["b", "a", "c"]  # sorted by Mittelmann's: 14 * 13 * 110 < 11 * 19 * 110
    assert t.loc["b", "solved_mittelmann_pct"] == pytest.approx(200 / 3) and t.loc["a", "solved_tol_pct"] == 100
    assert t.loc["b", "scaled_mittelmann"] == 1.0 and t.loc["c", "scaled_tol"] == pytest.approx(100 / _sgm(1, 9, 100))


def test_the_section_shows_the_three_rules():
    blocks = MittelmannTables().render(SimpleNamespace(frame=_frame(), options={"time_limit": 100.0}, refs=None))
    cols = list(next(b for b in blocks if b.name == "sdp_sgm").frame.columns)
    assert cols[1].startswith("Mittelmann") and any(c.startswith("SCS page") for c in cols)
    assert any(c.startswith("1e-6") for c in cols)


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
