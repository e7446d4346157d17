"""The results store: an embedded SQLite database (default ``psdbench-results.sqlite``).

Tables (names are stable; other tools read them):

``results``     one row per cell (primary key ``cell_key``), written in a transaction as each cell
                finishes; columns listed in :data:`RESULT_COLUMNS`.
``runs``        machine, library versions and thread settings, once per run.
``refs``        the reference optimum per instance (``instance_key``), with its certificate.
"""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterator

import pandas as pd

RESULT_COLUMNS = [
    "run_id", "cell_key", "instance_key", "problem", "dataset", "instance_params", "seed", "solver",
    "solver_params", "status", "message", "wall_time_s", "cpu_time_s", "peak_rss_mb", "iterations",
    "objective", "reference_objective", "reference_kind", "gap_abs", "gap_rel", "feasible", "min_eig",
    "max_residual", "metrics", "trace", "created_at",
]
JSON_COLUMNS = ("instance_params", "solver_params", "metrics", "trace")

_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS results (
    {", ".join(c + (" TEXT PRIMARY KEY" if c == "cell_key" else "") for c in RESULT_COLUMNS)}
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


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class Store:
    """Thin wrapper over one SQLite file.  Every write is its own transaction."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        with self._conn() as con:
            con.executescript(_SCHEMA)

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        con = sqlite3.connect(self.path, timeout=60)
        try:
            with con:  # commit on success, roll back on error
                yield con
        finally:
            con.close()

    # ---- cells
    def done_keys(self) -> set[str]:
        with self._conn() as con:
            return {r[0] for r in con.execute("SELECT cell_key FROM results")}

    def write_result(self, row: dict[str, Any]) -> None:
        vals = [json.dumps(row.get(c), default=float) if c in JSON_COLUMNS else row.get(c) for c in RESULT_COLUMNS]
        with self._conn() as con:
            con.execute(
                f"INSERT OR REPLACE INTO results ({', '.join(RESULT_COLUMNS)}) VALUES ({', '.join('?' * len(RESULT_COLUMNS))})",
                vals,
            )

    def update_reference_columns(self, cell_key: str, ref: float | None, kind: str, gap_abs: float | None, gap_rel: float | None) -> None:
        with self._conn() as con:
            con.execute(
                "UPDATE results SET reference_objective=?, reference_kind=?, gap_abs=?, gap_rel=? WHERE cell_key=?",
                (ref, kind, gap_abs, gap_rel, cell_key),
            )

    def rows_for_instance(self, instance_key: str) -> list[dict[str, Any]]:
        with self._conn() as con:
            con.row_factory = sqlite3.Row
            return [dict(r) for r in con.execute("SELECT * FROM results WHERE instance_key=?", (instance_key,))]

    # ---- references
    def reference(self, instance_key: str) -> dict[str, Any] | None:
        with self._conn() as con:
            con.row_factory = sqlite3.Row
            r = con.execute("SELECT * FROM refs WHERE instance_key=?", (instance_key,)).fetchone()
            return dict(r) if r else None

    def write_reference(self, ref: dict[str, Any]) -> None:
        cols = ["instance_key", "problem", "dataset", "instance_params", "seed", "value", "lower", "gap", "kind",
                "solver", "solver_version", "status", "wall_time_s", "message", "created_at"]
        ref = {**ref, "created_at": now()}
        if not isinstance(ref.get("instance_params"), str):
            ref["instance_params"] = json.dumps(ref.get("instance_params"), sort_keys=True, default=str)
        with self._conn() as con:
            con.execute(
                f"INSERT OR REPLACE INTO refs ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})",
                [ref.get(c) for c in cols],
            )

    # ---- runs
    def start_run(self, run_id: str, command: str, machine: dict, versions: dict, threads: dict) -> None:
        with self._conn() as con:
            con.execute(
                "INSERT INTO runs (run_id, started_at, command, machine, versions, threads) VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, now(), command, json.dumps(machine), json.dumps(versions), json.dumps(threads)),
            )

    def finish_run(self, run_id: str) -> None:
        with self._conn() as con:
            con.execute("UPDATE runs SET finished_at=? WHERE run_id=?", (now(), run_id))

    # ---- views
    def results_frame(self, flatten_metrics: bool = True) -> pd.DataFrame:
        """All result rows as a DataFrame; JSON columns decoded, metrics flattened as ``metric_<name>``."""
        with self._conn() as con:
            df = pd.read_sql_query("SELECT * FROM results ORDER BY created_at, cell_key", con)
        for c in JSON_COLUMNS:
            df[c] = df[c].map(lambda s: json.loads(s) if isinstance(s, str) else None)
        if flatten_metrics and len(df):
            met = pd.json_normalize(df["metrics"].map(lambda d: d or {}).tolist()).add_prefix("metric_")
            met.index = df.index
            df = pd.concat([df, met], axis=1)
        return df

    def references_frame(self) -> pd.DataFrame:
        with self._conn() as con:
            return pd.read_sql_query("SELECT * FROM refs", con)

    def runs_frame(self) -> pd.DataFrame:
        with self._conn() as con:
            return pd.read_sql_query("SELECT * FROM runs", con)
