"""``--save-solutions``: each cell's returned point kept beside the store, named in its row, and
read back unchanged (the harness's objective recomputed from the archive)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import psdbench
from psdbench.api import PsdbenchError, Solution
from psdbench.harness.store.results import CellResult
from psdbench.harness.workers.worker import _keep

GRID = {
    "run": {"seeds": [0, 1], "timeout": 600, "reference": False},
    "problems": [{"name": "graph-classification", "datasets": ["sklearn/breast-cancer"],
                  "params": {"n": [30], "graph": ["knn"], "k": [5]}}],
    "solvers": [{"name": "gdpa-lp"}, {"name": "gdpa-lp-elim"}],
}


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    db = tmp_path_factory.mktemp("saved") / "runs.sqlite"
    df = psdbench.run(GRID, db=db, jobs=1, save_solutions=True)
    return db, df


def test_each_cell_names_its_archive_and_the_archive_reproduces_the_row(saved, registry, wdbc):
    db, df = saved
    assert len(df) == 4 and set(df.status) == {"ok"}
    problem = registry.problem("graph-classification")
    for _, row in df.iterrows():
        assert row.solution == f"runs.solutions/{row.run_id}/{row.cell_key}.npz"
        assert (db.parent / row.solution).is_file()
        point = psdbench.load_solution(db, row)
        instance = problem.build(wdbc, row.instance_params, int(row.seed))
        sol = Solution(variables=point)
        # the harness's objective and verification, recomputed from the archive alone
        assert instance.objective(sol) == pytest.approx(row.objective, rel=1e-12, abs=1e-12)
        assert bool(instance.verify(sol).ok) == bool(row.feasible)
        assert point["x"].shape == (instance.n,)
    assert not list((db.parent / "runs.solutions").rglob("*.part"))  # no half-written archive left


def test_without_the_flag_nothing_is_saved(tmp_path):
    grid = {**GRID, "solvers": [{"name": "gdpa-lp-elim"}]}
    df = psdbench.run(grid, db=tmp_path / "plain.sqlite", jobs=1)
    assert df.solution.isna().all() and not (tmp_path / "plain.solutions").exists()
    with pytest.raises(PsdbenchError, match="no saved solution.*--save-solutions"):
        psdbench.load_solution(tmp_path / "plain.sqlite", df.iloc[0])


def test_a_missing_archive_is_one_line_error(saved, tmp_path):
    db, df = saved
    with pytest.raises(PsdbenchError, match="saved solution"):
        psdbench.load_solution(tmp_path / "elsewhere.sqlite", df.iloc[0])


def test_a_failed_write_is_noted_in_the_message_and_the_row_kept(tmp_path):
    (tmp_path / "blocked").write_text("a file where the run folder should be\n")
    out = CellResult(cell_key="k", status="ok", objective=1.0, message="converged")
    kept = _keep({"solutions": (str(tmp_path / "blocked" / "run"), "x/run")}, out, {"x": np.ones(3)})
    assert kept.status == "ok" and kept.objective == 1.0 and kept.solution is None
    assert kept.message.startswith("converged; solution not saved:")


def test_the_api_flag_must_be_a_bool(tmp_path):
    with pytest.raises(PsdbenchError, match="save_solutions"):
        psdbench.run(GRID, db=tmp_path / "x.sqlite", save_solutions="yes")
    assert not (tmp_path / "x.sqlite").exists()


def test_results_csv_carries_the_solution_column(saved, capsys):
    from psdbench.cli.commands import main

    db, df = saved
    assert main(["results", "--db", str(db), "--format", "csv"]) == 0
    import io

    out = pd.read_csv(io.StringIO(capsys.readouterr().out))
    assert sorted(out.solution) == sorted(df.solution)
