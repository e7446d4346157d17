"""The SDP family's report section on a frame built by hand: the shifted geometric mean and its
failures, Mittelmann's flags, the per-problem count of solvers within tol, and the published digits."""

from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from psdbench.families.sdp.report import MittelmannTables, _digits_agree, _flag, sgm_table, shifted_geomean


def _frame() -> pd.DataFrame:
    rows = []
    # problem, solver, status, time, max err
    for prob, solver, status, t, err in [
        ("p1", "a", "ok", 1.0, 1e-9), ("p1", "b", "ok", 4.0, 1e-7), ("p1", "c", "max_iter", 2.0, 5e-5),
        ("p2", "a", "ok", 9.0, 2e-7), ("p2", "b", "max_iter", 3.0, 3e-4), ("p2", "c", "error", 1.0, np.nan),
    ]:
        rows.append({"dataset": f"sdplib/{prob}", "solver_label": solver, "status": status, "wall_time_s": t,
                     "metric_max_err": err, "p_tol": 1e-6, "instance_key": prob, "seed": 0, "iterations": 10,
                     "objective": 1.0, "instance_reference": 1.0})
    return pd.DataFrame(rows)


def test_sgm_charges_failures_at_the_limit_by_hand():
    t = sgm_table(_frame(), limit=100.0).set_index("solver")
    assert t.loc["a", "sgm_s"] == pytest.approx(math.sqrt(11 * 19) - 10)
    assert t.loc["b", "sgm_s"] == pytest.approx(math.sqrt(14 * 110) - 10)  # p2 fails 1e-6: charged at 100 s
    assert t.loc["b", "sgm_scs_s"] == pytest.approx(math.sqrt(14 * 13) - 10)  # but passes the page's 1e-3 rule
    assert t.loc["a", "solved_pct"] == 100 and t.loc["c", "solved_pct"] == 0
    assert t.loc["a", "scaled"] == 1.0 and shifted_geomean(pd.Series([0.0, 0.0])) == pytest.approx(0.0)


def test_flags_and_digits():
    assert [_flag(e) for e in (1e-5, 2e-4, 0.5, np.nan)] == ["", "a", "f", "f"]
    assert _digits_agree(-2.03260068, -2.0326, 5) and not _digits_agree(44.9435516, 44.9435, 6)
    assert _digits_agree(-1092.6, -1.093e3, 4)


def test_verified_by_counts_solvers_within_tol_fewest_first():
    blocks = MittelmannTables().render(SimpleNamespace(frame=_frame(), options={}, refs=None))
    df = next(b for b in blocks if b.name == "sdp_verified_by").frame
    assert list(df["problem"]) == ["sdplib/p2", "sdplib/p1"]
    assert list(df["verified"]) == ["1/3", "2/3"]
    assert list(df["solvers within tol"]) == ["a", "a, b"]
    assert list(df["smallest max err"]) == ["2.0e-07", "1.0e-09"]
