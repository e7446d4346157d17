"""The results store: history of every run, ``results`` one row per cell, schema version, v1 migration."""

import json
import sqlite3
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from psdbench.harness.reference import choose_reference, gaps, reference_record, reference_updates
from psdbench import load
from psdbench.harness.store.results import JSON_COLUMNS, RESULT_COLUMNS, CellResult
from psdbench.harness.store.db import SCHEMA_VERSION, Store

from .test_harness import cli, grid

# The version-1 DDL (psdbench before the history table), verbatim.
V1_COLUMNS = [
    "run_id", "cell_key", "instance_key", "problem", "dataset", "instance_params", "seed", "solver",
    "solver_params", "status", "message", "wall_time_s", "cpu_time_s", "peak_rss_mb", "iterations",
    "objective", "reference_objective", "reference_kind", "gap_abs", "gap_rel", "feasible", "min_eig",
    "max_residual", "metrics", "trace", "created_at",
]
V1_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS results (
    {", ".join(c + (" TEXT PRIMARY KEY" if c == "cell_key" else "") for c in V1_COLUMNS)}
);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started_at TEXT, finished_at TEXT, command TEXT,
    machine TEXT, versions TEXT, threads TEXT
);
CREATE TABLE IF NOT EXISTS refs (
    instance_key TEXT PRIMARY KEY, problem TEXT, dataset TEXT, instance_params TEXT, seed INTEGER,
    value REAL, lower REAL, gap REAL, kind TEXT, solver TEXT, solver_version TEXT, status TEXT,
    wall_time_s REAL, message TEXT, created_at TEXT
);
CREATE INDEX IF NOT EXISTS results_instance ON results(instance_key);
"""


def _row(cell_key, run_id, objective, created_at="2025-01-01T00:00:00+00:00", **kw):
    return CellResult(run_id=run_id, cell_key=cell_key, instance_key="inst", problem="p", dataset="d",
                      instance_params={"n": 3}, seed=0, solver="s", solver_params={}, status="ok",
                      objective=objective, feasible=1, metrics={"m": 1.0}, trace=[{"t": 0.0}],
                      curve=[{"t": 0.1, "objective": objective, "feasible": 1, "repaired": 0}], created_at=created_at,
                      **kw)


def test_columns_are_derived_from_cell_result():
    assert RESULT_COLUMNS[:2] == ["run_id", "cell_key"] and "curve" in RESULT_COLUMNS
    assert set(V1_COLUMNS) <= set(RESULT_COLUMNS)
    assert set(JSON_COLUMNS) == {"instance_params", "solver_params", "metrics", "trace", "curve"}


def test_history_keeps_every_run_and_results_shows_the_latest(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    assert store.schema_version() == SCHEMA_VERSION == 6
    store.write_result(_row("a", "run-1", 1.0))
    store.write_result(_row("b", "run-1", 5.0))
    store.write_result(_row("a", "run-2", 2.0))
    store.write_result(_row("a", "run-2", 3.0))  # same cell and run: replaces, not a duplicate
    hist = store.history_frame()
    assert sorted(zip(hist.cell_key, hist.run_id, hist.objective)) == [
        ("a", "run-1", 1.0), ("a", "run-2", 3.0), ("b", "run-1", 5.0)]
    df = store.results_frame()
    assert dict(zip(df.cell_key, df.objective)) == {"a": 3.0, "b": 5.0}
    assert set(RESULT_COLUMNS) <= set(df.columns)
    assert df.set_index("cell_key").curve["a"] == [{"t": 0.1, "objective": 3.0, "feasible": 1, "repaired": 0}]
    con = sqlite3.connect(tmp_path / "s.sqlite")
    assert con.execute("SELECT type FROM sqlite_master WHERE name='results'").fetchone()[0] == "view"
    with pytest.raises(sqlite3.IntegrityError):  # (cell_key, run_id) is unique in the history
        con.execute("INSERT INTO history (cell_key, run_id) VALUES ('b', 'run-1')")
    # forgetting a cell through the view removes every run of it (a later run computes it again)
    con.execute("DELETE FROM results WHERE cell_key='a'")
    con.commit()
    assert store.done_keys() == {"b"}


def test_version_1_store_is_migrated_in_place(tmp_path):
    path = tmp_path / "v1.sqlite"
    con = sqlite3.connect(path)
    con.executescript(V1_SCHEMA)
    for key, obj in (("a", 1.5), ("b", None)):
        vals = {c: None for c in V1_COLUMNS}
        vals.update(run_id="old-run", cell_key=key, instance_key="inst", problem="p", dataset="d",
                    instance_params=json.dumps({"n": 3}), seed=0, solver="s", solver_params="{}",
                    status="ok" if obj is not None else "error", message="", objective=obj, feasible=1,
                    metrics=json.dumps({"m": 2.0}), trace="[]", created_at="2024-01-01T00:00:00+00:00")
        con.execute(f"INSERT INTO results ({', '.join(V1_COLUMNS)}) VALUES ({', '.join('?' * len(V1_COLUMNS))})",
                    [vals[c] for c in V1_COLUMNS])
    con.execute("INSERT INTO runs (run_id, started_at) VALUES ('old-run', '2024-01-01')")
    con.commit()
    con.close()

    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    df = store.results_frame()
    obj = dict(zip(df.cell_key, df.objective))
    assert obj["a"] == 1.5 and np.isnan(obj["b"]) and dict(zip(df.cell_key, df.status)) == {"a": "ok", "b": "error"}
    assert df.metric_m.tolist() == [2.0, 2.0] and df.curve.map(lambda c: c in (None, [])).all()
    assert len(store.runs_frame()) == 1
    store.write_result(_row("a", "new-run", 0.5))
    assert len(store.history_frame()) == 3
    assert dict(zip(*[store.results_frame()[c] for c in ("cell_key", "objective")]))["a"] == 0.5
    Store(path)  # opening a migrated store again changes nothing
    assert len(Store(path).history_frame()) == 3


def test_version_2_store_gains_the_solution_column_and_keeps_its_rows(tmp_path):
    path = tmp_path / "v2.sqlite"
    first = Store(path)
    first.write_result(_row("a", "run-1", 1.0))
    first.close()
    con = sqlite3.connect(path)  # back to schema 2: history without `solution`, the view without it
    con.executescript("""
        DROP TRIGGER results_delete; DROP VIEW results; DROP VIEW current; DROP INDEX history_cell_id;
        ALTER TABLE history DROP COLUMN solution; ALTER TABLE history DROP COLUMN cell_id;
        ALTER TABLE history DROP COLUMN solver_code; ALTER TABLE history DROP COLUMN problem_code;
        UPDATE meta SET value='2' WHERE key='schema_version';
        CREATE VIEW results AS SELECT * FROM history WHERE seq IN (SELECT MAX(seq) FROM history GROUP BY cell_key);
    """)
    con.commit()
    con.close()
    before = path.read_bytes()
    assert "solution" not in load(path).columns and path.read_bytes() == before  # read-only: not migrated
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    store.write_result(replace(_row("b", "run-2", 2.0), solution="s.solutions/run-2/b.npz"))
    df = store.results_frame().set_index("cell_key")
    assert df.objective.to_dict() == {"a": 1.0, "b": 2.0}
    assert pd.isna(df.solution["a"]) and df.solution["b"] == "s.solutions/run-2/b.npz"
    con = sqlite3.connect(path)
    con.execute("DELETE FROM results WHERE cell_key='a'")  # the rebuilt view keeps its delete trigger
    con.commit()
    assert store.done_keys() == {"b"}


def test_version_3_store_gains_cell_ids_and_the_current_view(tmp_path):
    from psdbench.harness.store.keys import cell_id

    path = tmp_path / "v3.sqlite"
    first = Store(path)
    first.write_result(_row("a", "run-1", 1.0))
    first.write_result(replace(_row("a2", "run-2", 2.0)))  # same description, another key (other code)
    first.close()
    con = sqlite3.connect(path)  # back to schema 3: no cell_id / code columns, no `current` view
    con.executescript("""
        DROP TRIGGER results_delete; DROP VIEW results; DROP VIEW current; DROP INDEX history_cell_id;
        ALTER TABLE history DROP COLUMN cell_id; ALTER TABLE history DROP COLUMN solver_code;
        ALTER TABLE history DROP COLUMN problem_code;
        UPDATE meta SET value='3' WHERE key='schema_version';
        CREATE VIEW results AS SELECT * FROM history WHERE seq IN (SELECT MAX(seq) FROM history GROUP BY cell_key);
    """)
    con.commit()
    con.close()
    before = path.read_bytes()
    assert len(load(path)) == 2 and path.read_bytes() == before  # read-only: not migrated, one row per key
    store = Store(path)
    assert store.schema_version() == SCHEMA_VERSION
    hist = store.history_frame()
    want = cell_id("p", "d", {"n": 3}, 0, "s", {})
    assert hist.cell_id.tolist() == [want, want] and hist.solver_code.isna().all()  # computed, code unknown
    assert len(store.results_frame()) == 2  # one row per cell key
    cur = store.results_frame(view="current")
    assert cur.cell_key.tolist() == ["a2"] and cur.objective.tolist() == [2.0]  # the latest of the description
    assert len(store.results_frame(view="history")) == 2


def test_newer_schema_is_refused_with_one_line(tmp_path):
    path = tmp_path / "future.sqlite"
    Store(path)
    con = sqlite3.connect(path)
    con.execute("UPDATE meta SET value='9' WHERE key='schema_version'")
    con.commit()
    con.close()
    out = cli(["results", "--db", str(path)])
    assert out.returncode == 2 and "schema version 9" in out.stderr and len(out.stderr.strip().splitlines()) == 1


def test_references_and_gaps_follow_the_sense():
    rows = [{"instance_key": "i", "cell_key": c, "run_id": "r", "objective": o, "feasible": f, "status": s}
            for c, o, f, s in (("a", 2.0, 1, "ok"), ("b", 3.0, 1, "max_iter"), ("c", 9.0, 1, "timeout"),
                               ("d", 0.5, 0, "infeasible"))]
    assert choose_reference(None, rows, "min") == (2.0, "best_verified")
    assert choose_reference(None, rows, "max") == (3.0, "best_verified")  # the timeout cell is not a candidate
    assert choose_reference({"kind": "best_verified", "value": 1.0}, rows, "min") == (1.0, "best_verified")
    assert choose_reference({"kind": "certified", "value": 2.5}, rows, "min") == (2.5, "certified")
    assert choose_reference(None, rows[3:], "min") == (None, "none")
    assert gaps(2.0, 3.0, 1, "min") == (1.0, 0.5) and gaps(3.0, 2.0, 1, "max") == (1.0, 1 / 3)
    assert gaps(2.0, 3.0, 0, "min") == (None, None)
    upd = {u[4]: u for u in reference_updates(rows, {}, {"i": "max"})}
    assert upd["a"][:4] == (3.0, "best_verified", 1.0, 1 / 3) and upd["d"][:4] == (3.0, "best_verified", None, None)
    cert = reference_record("i", {"problem": "p"}, {"value": 1.0, "lower": 1.0 - 1e-7})
    loose = reference_record("i", {"problem": "p"}, {"value": 1.0, "lower": 0.9})
    assert cert["kind"] == "certified" and loose["kind"] == "interval"
    # a one-sided certified bound is data, its own kind; a point without a bound is best_verified
    one = reference_record("i", {"problem": "p"}, {"value": 1.0, "bound": 0.99, "spread": -1e-7})
    assert (one["kind"], one["bound"], one["lower"], one["spread"]) == ("bound", 0.99, None, 1e-7)
    assert reference_record("i", {}, {"value": 1.0, "lower_one_sided": 0.9})["bound"] == 0.9  # the older hook key
    assert reference_record("i", {}, {"value": 1.0})["kind"] == "best_verified"
    assert reference_record("i", {}, {"value": 1.0, "bound": float("nan")})["kind"] == "best_verified"


def test_force_adds_history_rows(tmp_path):
    db = tmp_path / "r.sqlite"
    g = grid(tmp_path, ["gdpa-lp"], seeds=(0, 1))
    for extra in ([], ["--force"]):
        assert cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", *extra]).returncode == 0
    store = Store(db)
    hist, df = store.history_frame(), store.results_frame()
    runs = store.runs_frame().sort_values("started_at").run_id.tolist()
    assert len(df) == 2 and len(hist) == 4 and len(runs) == 2
    assert hist.groupby(["cell_key", "run_id"]).size().max() == 1  # no duplicate
    assert set(df.run_id) == {runs[1]}  # results: the latest run of each cell
    assert (hist.groupby("cell_key").objective.nunique() == 1).all()  # the re-run reproduces the objective
    assert df.reference_kind.eq("certified").all() and df.gap_abs.notna().all()
    assert df.curve.map(lambda c: len(c) >= 1 and c[-1]["objective"] is not None).all()


def test_the_run_records_the_commit_of_a_source_checkout(tmp_path):
    """``machine_info`` names the checked-out commit of a git checkout (branch, detached, packed refs)."""
    from psdbench.harness.runner import source_commit

    git = tmp_path / ".git"
    (git / "refs" / "heads").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n")
    (git / "refs" / "heads" / "main").write_text("0123456789abcdef0123456789abcdef01234567\n")
    assert source_commit(tmp_path) == "0123456789ab"
    (git / "refs" / "heads" / "main").unlink()
    (git / "packed-refs").write_text("# pack-refs\nfedcba9876543210fedcba9876543210fedcba98 refs/heads/main\n")
    assert source_commit(tmp_path) == "fedcba987654"
    (git / "HEAD").write_text("89abcdef0123456789abcdef0123456789abcdef\n")  # detached
    assert source_commit(tmp_path) == "89abcdef0123"
    assert source_commit(tmp_path / "elsewhere") == ""  # not a checkout: nothing recorded


def test_a_version_5_store_gains_the_bound_column_and_its_one_sided_bounds_become_data(tmp_path):
    """Schema 6: ``refs.bound`` and ``refs.spread``; a version-5 store's one-sided bound, kept in its message,
    becomes the ``bound`` column and the kind ``bound`` in the migration, once."""
    import sqlite3

    path = tmp_path / "v5.sqlite"
    store = Store(path)
    msg = "agreed value (not exactly feasible); certified one-sided lower bound -44.9490044 from tr(X) <= 100"
    store.write_reference({"instance_key": "gpp", "problem": "sdp/standard", "value": -44.94, "lower": None,
                           "kind": "best_verified", "message": msg})
    store.write_reference({"instance_key": "cut", "problem": "sdp/standard", "value": 2.0, "lower": 2.0,
                           "kind": "certified", "message": "interval"})
    store.close()
    con = sqlite3.connect(path)  # back to schema 5: no bound / spread columns
    con.executescript("""
        ALTER TABLE refs DROP COLUMN bound; ALTER TABLE refs DROP COLUMN spread;
        UPDATE meta SET value='5' WHERE key='schema_version';
    """)
    con.commit()
    con.close()
    migrated = Store(path)
    assert migrated.schema_version() == 6
    refs = migrated.references_frame().set_index("instance_key")
    assert refs.loc["gpp", "bound"] == -44.9490044 and refs.loc["gpp", "kind"] == "bound"
    assert pd.isna(refs.loc["cut", "bound"]) and refs.loc["cut", "kind"] == "certified"
    assert refs["spread"].isna().all()
