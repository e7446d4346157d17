"""What asv tracks of a suite's case (``psdbench.harness.tracked.case_summary``), against a hand-made tidy frame."""

from __future__ import annotations

import math

import pandas as pd

from psdbench.harness.tracked import TrackedCase, case_summary, labels


def _frame(rows):
    return pd.DataFrame([{"problem": "p", "dataset": "d/x", "instance_params": {"n": 5, "fold": f}, "seed": 0,
                          "solver": s, "solver_params": {}, "gap": g, "verified": v, "metric_error_rate": e}
                         for s, f, g, v, e in rows])


def _case(solver: str) -> TrackedCase:
    iset, config = labels("p", "d/x", {"n": 5, "fold": 0}, solver, {})
    assert iset == "p: d/x (n=5)"  # folds are replicates: one instance set
    return TrackedCase("suite", "fam", iset, config, tuple(("p", "d/x", {"n": 5, "fold": f}, 0, solver, {})
                                                             for f in (0, 1)))


def test_the_worst_gap_of_verified_cells_the_mean_metric_and_the_verified_share():
    frame = _frame([("a", 0, 1e-6, True, 0.1), ("a", 1, 1e-3, True, 0.3),
                    ("b", 0, 1e-9, True, 0.2), ("b", 1, -1e-9, False, 0.4)])  # b's second point did not verify
    a = case_summary(frame, _case("a"), "error_rate")
    assert a == {"gap": 1e-3, "metric": 0.2, "verified": 1.0, "cells": 2.0}
    b = case_summary(frame, _case("b"), "error_rate")
    assert math.isnan(b["gap"]) and b["verified"] == 0.5 and abs(b["metric"] - 0.3) < 1e-12
    none = case_summary(frame, _case("a"), None)
    assert math.isnan(none["metric"]) and case_summary(frame, _case("c"), None)["cells"] == 0.0
