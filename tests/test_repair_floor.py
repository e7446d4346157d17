"""The repair allowance: how far a verified point may lie beyond the optimum, measured by its repair.

The independent reference is cvxpy: the point of SDP (8) that lies farthest below the optimum while
its violations stay within ``r`` (Clarabel on the relaxed SDP), and the certified interval of the
instance.  The allowance must be at least what that point actually lies below (soundness), and the
verification tolerance is shown not to be such a bound (the reason the floor needs the repair).
"""

import numpy as np
import pandas as pd
import pytest

from psdbench.api import Solution, objective_allowance
from psdbench.harness.store.results import CellResult
from psdbench.harness.workers.worker import run_cell
from psdbench.report import rules

from .conftest import random_instance


def _worst_point(inst, r):
    """The lowest objective of (8) over symmetric M with PSD M, |diag - 1| <= r, |labels| <= r."""
    import cvxpy as cp

    N, m = inst.n, inst.m
    M = cp.Variable((N + 1, N + 1), symmetric=True)
    cons = [M >> 0, cp.abs(cp.diag(M) - 1) <= r, cp.abs(M[:m, N] - inst.xhat) <= r]
    cp.Problem(cp.Minimize(cp.sum(cp.multiply(inst.L, M[:N, :N]))), cons).solve(solver="CLARABEL")
    return Solution(variables={"M": np.asarray(M.value)})


@pytest.mark.parametrize("seed,r", [(0, 1e-4), (1, 1e-5), (2, 3e-4)])
def test_the_repair_allowance_bounds_how_far_a_verified_point_lies_below_the_optimum(registry, wdbc, seed, r):
    inst = random_instance(registry, wdbc, n=16, graph="complete", seed=seed)
    ref = inst.certified_reference()
    sol = _worst_point(inst, r)
    assert inst.verify(sol).ok  # violations of r pass the family's verification (feas_tol 1e-3)
    obj = inst.objective(sol)
    below = ref["lower"] - obj  # at least this far below the optimum (lower <= p*)
    allowance = objective_allowance(inst, sol, obj, "min")
    assert below > 0 and allowance >= below
    rel = below / max(abs(ref["value"]), 1.0)
    assert rel > r  # the tolerance is no bound: the objective moves with about sqrt(r)
    assert allowance <= 10 * below  # and the repair is a near one, not an arbitrary feasible point


def test_the_repair_is_exactly_feasible_and_leaves_an_optimum_where_it_is(registry, wdbc):
    inst = random_instance(registry, wdbc, n=16, graph="complete", seed=3)
    ref = inst.certified_reference()
    sol = _worst_point(inst, 0.0)  # the optimum, to Clarabel's accuracy
    fixed = inst.repair(sol)
    M = fixed.variables["M"]
    assert np.allclose(np.diag(M), 1.0, atol=1e-12) and np.allclose(M[: inst.m, inst.n], inst.xhat, atol=1e-12)
    assert np.linalg.eigvalsh(M)[0] >= -1e-10 * inst.n
    assert inst.objective(fixed) >= ref["lower"] - 1e-9 * abs(ref["value"])
    a = objective_allowance(inst, sol, inst.objective(sol), "min")
    assert a / abs(ref["value"]) < 1e-5
    labels = Solution(variables={"x": np.r_[inst.xhat, np.full(inst.n - inst.m, 0.3)]})
    assert set(inst.repair(labels).variables["x"]) == {-1.0, 1.0}


def test_the_harness_records_the_repair_allowance_of_a_verified_cell():
    base = CellResult(run_id="r0", cell_key="k0", instance_key="i0", problem="graph-classification",
                      dataset="sklearn/breast-cancer",
                      instance_params={"n": 16, "graph": "complete", "k": 5, "scaling": "standardize"}, seed=0,
                      solver="scs", solver_params={"eps_abs": 1e-3, "eps_rel": 1e-3})
    out = run_cell({"result": base})
    assert out.status == "ok", out.message
    assert out.metrics["objective_allowance"] >= 0.0
    assert "objective_allowance_failed" not in out.metrics


def test_the_floor_is_the_largest_of_reference_accuracy_tolerance_and_repair_allowance():
    frame = pd.DataFrame({
        "reference_accuracy": [1e-9, 1e-9, 1e-2],
        "reference_objective": [-200.0, 200.0, 0.5],
        "metrics": [{"tolerances": {"feas_tol": 1e-3}, "objective_allowance": 0.8},
                    {"tolerances": {"feas_tol": 1e-3}, "objective_allowance": 0.02},
                    {"tolerances": {"feas_tol": 1e-3}, "objective_allowance": 0.004}],
    })
    fl = rules.floors(frame).to_numpy()
    assert fl == pytest.approx([4e-3, 1e-3, 1e-2])  # 0.8 / 200; the tolerance; the reference (|ref| < 1: / 1)
    # a verified point 3.84e-3 below a certified reference, its repair allowance 4e-3: a tie at 0
    assert rules.ranked_gap(-3.84e-3, fl[0], True) == 0.0
    assert np.isnan(rules.ranked_gap(-3.84e-3, fl[1], True))  # by the tolerance alone: beyond the bound
