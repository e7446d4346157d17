"""Status words that say what happened: a point rejected by verification names the failed check
(value and tolerance), a solver's own infeasibility report and an inaccurate exit are told apart
(``harness.results.outcome``), and every family's ``verify`` lists checks that agree with ``ok``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from psdbench import api
from psdbench.api import (INACCURATE, REJECTED, SOLVER_INFEASIBLE, Budget, Check, Feasibility, Formulation, Solution,
                          Status)
from psdbench.harness.store.results import OUTCOMES, CellResult, outcome, outcome_column
from psdbench.harness.workers.worker import _measure
from psdbench.solvers.conic import Clarabel, CvxpySolver


def test_check_and_reason():
    eig = Check("smallest eigenvalue of X", -2e-5, -1e-6, ">=")
    sym = Check("asymmetry", 0.0, 1e-9)
    assert not eig.ok and sym.ok
    assert Check("x", float("nan"), 1.0).ok is False
    f = Feasibility(ok=False, min_eig=-2e-5, max_residual=0.0, details={"asymmetry": 0.0}, checks=[sym, eig])
    assert f.failed == [eig]
    assert f.reason() == "smallest eigenvalue of X = -2e-05, needs >= -1e-06"
    assert Feasibility(ok=True, min_eig=1.0, max_residual=0.0, checks=[sym]).reason() == ""
    # a plugin that lists no checks: the details and tolerances, as before
    assert "asymmetry" in Feasibility(ok=False, min_eig=0, max_residual=0, details={"asymmetry": 1.0}).reason()
    with pytest.raises(ValueError):
        Check("x", 1.0, 1.0, "=<")


@dataclass
class _Psd:
    """A 2 x 2 instance: X must be PSD with a unit diagonal (the toy max-cut relaxation's checks)."""

    problem: str = "psd2"
    dataset: str = "none"
    params: dict[str, Any] = field(default_factory=dict)
    seed: int = 0
    kind: str = "psd2"
    infeasible: bool = False

    n = 2

    def objective(self, s: Solution) -> float:
        return float(np.sum(s.variables["X"]))

    def verify(self, s: Solution) -> Feasibility:
        X = np.asarray(s.variables["X"], float)
        lam = float(np.linalg.eigvalsh(X)[0])
        diag = float(np.max(np.abs(np.diag(X) - 1)))
        checks = [Check("asymmetry", float(np.max(np.abs(X - X.T))), 1e-9),
                  Check("smallest eigenvalue of X", lam, -1e-6, ">="), Check("largest |X_ii - 1|", diag, 1e-6)]
        return Feasibility(ok=all(c.ok for c in checks), min_eig=lam, max_residual=diag,
                           details={"asymmetry": 0.0, "diag_residual": diag}, checks=checks)

    def evaluate(self, s: Solution) -> dict[str, float]:
        return {}

    def reference_formulation(self, variant: str | None = None) -> Formulation:
        import cvxpy as cp

        X = cp.Variable((2, 2), symmetric=True)
        cons = [X >> 0, cp.diag(X) == 1] + ([X[0, 1] >= 2] if self.infeasible else [])
        return Formulation(cp.Problem(cp.Minimize(cp.sum(X)), cons), lambda: {"X": X.value})


def test_rejected_point_names_the_failed_check():
    """The issue's case: a point failing on its smallest eigenvalue said only `{'asymmetry': 0.0, ...}`."""
    X = np.array([[1.0, 1.0 + 4e-5], [1.0 + 4e-5, 1.0]])  # unit diagonal, smallest eigenvalue -4e-5
    out = _measure(_Psd(), Solution(variables={"X": X}, status=Status.OK), CellResult())
    assert out.status == "infeasible" and out.message.startswith(REJECTED)
    assert "smallest eigenvalue of X = -4e-05, needs >= -1e-06" in out.message
    assert "asymmetry" not in out.message and "largest |X_ii - 1|" not in out.message
    assert out.metrics["verify_failed"] == "smallest eigenvalue of X = -4e-05, needs >= -1e-06"
    assert outcome(out.status, out.message) == "rejected"
    # a timeout's point that does not verify keeps its status; the message says why it is not counted
    late = _measure(_Psd(), Solution(variables={"X": X}, status=Status.TIMEOUT), CellResult())
    assert late.status == "timeout" and f"point {REJECTED}: smallest eigenvalue" in late.message


def test_solver_reported_infeasible_is_not_an_error_nor_a_rejection():
    """Clarabel on an infeasible SDP (|X_12| <= 1 on the PSD unit-diagonal set, X_12 >= 2): status
    infeasible with the solver's word, no point, outcome `solver infeasible`."""
    inst = _Psd(infeasible=True)
    sol = Clarabel().solve(inst, Budget())
    assert sol.status is Status.INFEASIBLE and not sol.variables
    assert sol.message.startswith(SOLVER_INFEASIBLE) and "cvxpy status infeasible" in sol.message
    out = _measure(inst, sol, CellResult())
    assert out.status == "infeasible" and outcome(out.status, out.message) == "solver infeasible"
    # a plugin solver that says infeasible in its own words gets the prefix from the harness
    own = _measure(inst, Solution(variables={}, status=Status.INFEASIBLE, message="dual ray found"), CellResult())
    assert own.message == f"{SOLVER_INFEASIBLE}: dual ray found"


def test_cvxpy_statuses_map_to_distinct_outcomes():
    import cvxpy as cp

    words = {}
    for cvx in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE, cp.USER_LIMIT, cp.INFEASIBLE, cp.INFEASIBLE_INACCURATE,
                cp.UNBOUNDED, cp.SOLVER_ERROR):
        status, message = CvxpySolver.outcome(cvx)
        words[cvx] = outcome(status.value, message)
    assert words == {cp.OPTIMAL: "ok", cp.OPTIMAL_INACCURATE: "inaccurate", cp.USER_LIMIT: "max_iter",
                     cp.INFEASIBLE: "solver infeasible", cp.INFEASIBLE_INACCURATE: "solver infeasible",
                     cp.UNBOUNDED: "diverged", cp.SOLVER_ERROR: "error"}
    assert CvxpySolver.outcome(cp.OPTIMAL_INACCURATE)[1].startswith(INACCURATE)
    assert CvxpySolver.outcome(cp.OPTIMAL_INACCURATE, expired=True)[0] is Status.TIMEOUT
    assert set(words.values()) <= set(OUTCOMES)


def test_outcome_reads_older_stores():
    import pandas as pd

    df = pd.DataFrame({"status": ["infeasible", "max_iter", "max_iter", "ok", "infeasible"],
                       "message": ["verification failed: {'asymmetry': 0.0}", "cvxpy status optimal_inaccurate",
                                   "", None, None]})
    assert list(outcome_column(df)) == ["rejected", "inaccurate", "max_iter", "ok", "rejected"]


def _perturbed(variables: dict[str, np.ndarray], name: str, shift: float) -> dict[str, np.ndarray]:
    """``variables`` with ``shift`` added to the diagonal of matrix ``name`` (a negative eigenvalue)."""
    out = dict(variables)
    out[name] = np.asarray(out[name], float) - shift * np.eye(out[name].shape[0])
    return out


@pytest.mark.parametrize("problem, dataset, params, solver, matrix, word", [
    ("metric/triplet-margin", "sklearn/wine:multiclass", {"pca": 6, "max_train": 30}, "clarabel", "X",
     "smallest eigenvalue of X"),
    ("graph-classification", "sklearn/breast-cancer", {"n": 20, "graph": "knn", "k": 5}, "clarabel", "M",
     "smallest eigenvalue of M"),
    ("metric/bregman-pairs", "synthetic/dykstra-halfspaces", {"divergence": "is", "n": 4, "K": 10}, "clarabel", "W",
     "smallest eigenvalue of W"),
])
def test_families_name_the_eigenvalue_check(registry, problem, dataset, params, solver, matrix, word):
    """A verified point shifted until it is indefinite fails on the eigenvalue check, by name; the
    family's checks agree with its ``ok`` on both points."""
    inst = registry.problem(problem).build(registry.load_dataset(dataset), params, 0)
    sol = registry.solver(solver).solve(inst, Budget())
    good = inst.verify(sol)
    assert good.ok and good.checks and all(c.ok for c in good.checks), good.reason()
    lam = float(np.linalg.eigvalsh(np.asarray(sol.variables[matrix], float))[0])
    bad = inst.verify(Solution(variables=_perturbed(sol.variables, matrix, lam + 1.0)))
    assert not bad.ok and bad.ok == all(c.ok for c in bad.checks)
    assert word in bad.reason(), bad.reason()


def test_api_exports_the_status_words():
    assert {"Check", "REJECTED", "SOLVER_INFEASIBLE", "INACCURATE"} <= set(api.__all__)
