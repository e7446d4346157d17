"""``C = "validate"`` of ``metric/triplet-margin``: the grid, the choice, and the load-time check."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from psdbench.api import Budget, PsdbenchError
from psdbench.families.sdpmetric.instance import knn_error
from psdbench.families.sdpmetric.validation import CBAR_GRID, select_C

SMALL = {"pca": 5, "max_train": 40}  # D = 5, 360 triplets


@pytest.fixture(scope="module")
def wine(registry):
    return registry.load_dataset("sklearn/wine:multiclass")


@pytest.fixture(scope="module")
def validated(registry, wine):
    """Through the problem's build, as a grid cell does (a smaller split: the selection fits run in full)."""
    return registry.problem("metric/triplet-margin").build(wine, {**SMALL, "max_train": 15, "C": "validate"}, 0)


def test_selected_C_is_the_first_best_on_validation(registry, wine):
    base = registry.problem("metric/triplet-margin").build(wine, SMALL, 0)
    inst, rec = select_C(base, tol=1e-3, max_iter=300)
    S = inst.n_triplets
    assert len(rec["val_errors"]) == len(CBAR_GRID) and base.C == 1.0
    # Refit every grid value independently and score it on the validation split.
    errors = []
    for cbar in CBAR_GRID:
        trial = replace(base, C=cbar / S)
        sol = registry.solver("sdpmetric").solve(trial, Budget(), tol=1e-3, max_iter=300)
        errors.append(knn_error(inst.F, inst.y, inst.F_val, inst.y_val, np.asarray(sol.variables["X"])))
    np.testing.assert_allclose(rec["val_errors"], errors)
    best = min(errors)
    first = next(c for c, e in zip(CBAR_GRID, errors) if e == best)
    assert rec["C_times_S"] == first and inst.C == pytest.approx(first / S)
    assert inst.C * S > 1.0  # (8) is bounded in rho for the Huber loss


def test_evaluate_reports_the_selected_C(registry, validated):
    assert validated.params["C"] == "validate" and validated.selection["C_times_S"] in CBAR_GRID
    sol = registry.solver("euclidean").solve(validated, Budget())
    ev = validated.evaluate(sol)
    assert ev["C"] == pytest.approx(validated.C) and ev["C_times_S"] in CBAR_GRID
    assert ev["C_selection_s"] > 0


def test_validated_C_changes_the_objective_like_a_numeric_C(registry, wine, validated):
    fixed = registry.problem("metric/triplet-margin").build(wine, {**SMALL, "max_train": 15, "C": validated.C}, 0)
    X = np.eye(fixed.D) / fixed.D
    assert validated.value(X) == pytest.approx(fixed.value(X), rel=1e-12)


@pytest.mark.parametrize("C", [0, -1.0, "auto", float("nan"), True])
def test_bad_C_is_rejected_by_its_spec(registry, C):
    prob = registry.problem("metric/triplet-margin")
    with pytest.raises(PsdbenchError, match="positive number or 'validate'"):
        from psdbench.api import validate_params

        validate_params(prob, {"C": C}, "grid")


def test_validated_hinge_is_exit_2_at_load(tmp_path, capsys):
    from psdbench.cli.commands import main

    grid = tmp_path / "g.toml"
    grid.write_text('[run]\nname = "g"\nseeds = [0]\n[[problems]]\nname = "metric/triplet-margin"\n'
                    'datasets = ["sklearn/wine:multiclass"]\nparams = { loss = ["hinge"], C = ["validate"] }\n'
                    '[[solvers]]\nname = "clarabel"\n')
    db = tmp_path / "r.sqlite"
    assert main(["run", "--grid", str(grid), "--db", str(db), "--report", "", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "needs a smooth loss" in err[0], err
    assert not db.exists()


def test_reference_falls_back_to_default_settings_and_stays_certified(registry, wine, monkeypatch):
    import cvxpy as cp

    inst = registry.problem("metric/triplet-margin").build(wine, SMALL, 0)
    tight = inst.certified_reference()
    real_solve, calls = cp.Problem.solve, []

    def failing_tight(self, *args, **kwargs):  # Clarabel failing at 1e-10, as on raw Breast-Cancer
        calls.append(kwargs.get("tol_gap_rel"))
        if kwargs.get("tol_gap_rel") == 1e-10:
            raise cp.SolverError("Solver 'CLARABEL' failed.")
        return real_solve(self, *args, **kwargs)

    monkeypatch.setattr(cp.Problem, "solve", failing_tight)
    ref = inst.certified_reference()
    assert calls == [1e-10, None] and ref["status"] == "ok" and "default settings" in ref["message"]
    assert ref["value"] <= ref["lower"] + 1e-12 and ref["lower"] - ref["value"] <= 1e-5 * max(1.0, abs(ref["value"]))
    assert ref["value"] == pytest.approx(tight["value"], rel=1e-5)
