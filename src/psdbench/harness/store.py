"""The results store: an embedded SQLite database (default ``psdbench-results.sqlite``).

Schema version 5 (names are stable; other tools read them):

``history``     every run of every cell: one row per ``(cell_key, run_id)`` (unique), columns
                :data:`RESULT_COLUMNS` (from :class:`~psdbench.harness.results.CellResult`) plus an
                increasing ``seq``.  ``--force`` adds rows; nothing is replaced but a row of the
                same cell in the same run.
``results``     a VIEW: the latest row (highest ``seq``) of each cell, i.e. one row per cell with
                the columns :data:`RESULT_COLUMNS`.  ``DELETE FROM results WHERE ...`` forgets the
                matching cells (every run of them), so that a later run computes them again.
``current``     a VIEW: the latest row of each cell *description* (``cell_id``: problem, dataset,
                parameters, seed, solver; :func:`~psdbench.harness.keys.cell_id`), whatever code or
                library versions computed it: the row a report and ``psdbench results`` show.
                A cell computed again after its code changed has a new ``cell_key`` but the
                same ``cell_id``; the older row stays in ``history`` (``results --all``).
``runs``        machine, library versions and thread settings, once per run.
``refs``        the reference optimum per instance (``instance_key``), with its certificate.
``meta``        ``schema_version`` = ``5``.
``claims``      the cells concurrent runs are computing now (:mod:`~psdbench.harness.claims`);
                empty when no run is under way.

A version-1 store (``results`` a table keyed by ``cell_key``) is migrated in place when opened for
writing, in one transaction: its rows are copied into ``history`` and the table is replaced by the
view.  A version-2 store gains the ``solution`` column (NULL in its rows) and the view is rebuilt
with it.  A version-3 store gains ``cell_id``, ``solver_code`` and ``problem_code``: ``cell_id`` is
computed for its rows from their description (the code hashes stay NULL: unknown), and the
``current`` view is created.  A version-4 store gains ``time_limit_s`` (NULL in its rows: the report then
charges a failure at the longest wall time of its instance set, and says so).  Read-only opens (:class:`~psdbench.harness.inputs.ReadOnlyStore`) migrate nothing.

The file is in WAL mode (``journal_mode=WAL``, ``synchronous=NORMAL``): a committed row survives
the end of any process (``kill -9`` included) without an fsync per row; only a power loss or OS
crash can drop the last commits, never corrupt the file.  Readers (``psdbench results``, a
notebook) read while a run writes.  :meth:`Store.close` at the end of a run switches the file back
to ``journal_mode=DELETE``: a finished store is one file, and read-only opens leave it (and its
folder) exactly as they found it.
"""

from __future__ import annotations

import errno
import json
import os
import sqlite3
import threading
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import pandas as pd

from ..api import PsdbenchError
from . import claims
from .keys import cell_id
from .results import JSON_COLUMNS, RESULT_COLUMNS, SQL_TYPES, CellResult

__all__ = ["JSON_COLUMNS", "RESULT_COLUMNS", "SCHEMA_VERSION", "Store", "now"]

SCHEMA_VERSION = 5
_COLS = ", ".join(RESULT_COLUMNS)

_TABLES = f"""
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join(f"{c} {SQL_TYPES[c]}" for c in RESULT_COLUMNS)},
    UNIQUE (cell_key, run_id)
);
CREATE INDEX IF NOT EXISTS history_cell ON history(cell_key, seq);
CREATE INDEX IF NOT EXISTS history_instance ON history(instance_key);
CREATE INDEX IF NOT EXISTS history_cell_id ON history(cell_id, seq);
CREATE VIEW IF NOT EXISTS results AS
    SELECT {_COLS} FROM history WHERE seq IN (SELECT MAX(seq) FROM history GROUP BY cell_key);
CREATE TRIGGER IF NOT EXISTS results_delete INSTEAD OF DELETE ON results
    BEGIN DELETE FROM history WHERE cell_key = OLD.cell_key; END;
CREATE VIEW IF NOT EXISTS current AS
    SELECT {_COLS} FROM history WHERE seq IN (SELECT MAX(seq) FROM history GROUP BY COALESCE(NULLIF(cell_id, ''), cell_key));
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started_at TEXT, finished_at TEXT, command TEXT,
    machine TEXT, versions TEXT, threads TEXT
);
CREATE TABLE IF NOT EXISTS refs (
    instance_key TEXT PRIMARY KEY, problem TEXT, dataset TEXT, instance_params TEXT, seed INTEGER,
    value REAL, lower REAL, gap REAL, kind TEXT, solver TEXT, solver_version TEXT, status TEXT,
    wall_time_s REAL, message TEXT, created_at TEXT
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
_REF_COLUMNS = ["instance_key", "problem", "dataset", "instance_params", "seed", "value", "lower", "gap", "kind",
                "solver", "solver_version", "status", "wall_time_s", "message", "created_at"]
_CHUNK = 500  # SQL variables per IN (...) list


def now() -> str:
    """The current UTC time, ISO 8601 to the microsecond (rows of one second still sort by time)."""
    return datetime.now(timezone.utc).isoformat(timespec="microseconds")


def _complete(res: CellResult) -> CellResult:
    """``res`` with ``created_at`` and ``cell_id`` set where they are missing."""
    if res.created_at is None:
        res = replace(res, created_at=now())
    if not res.cell_id:
        res = replace(res, cell_id=cell_id(res.problem, res.dataset, res.instance_params, res.seed, res.solver,
                                           res.solver_params))
    return res


def _decode(df: pd.DataFrame) -> pd.DataFrame:
    for c in JSON_COLUMNS:
        if c in df.columns:
            df[c] = df[c].map(lambda s: json.loads(s) if isinstance(s, str) else None)
    return df


#: The least free space a run starts with on the store's file system: its write-ahead log, the
#: log's index (32 KiB) and the first commits.  Below it a run is refused (exit 3) before the
#: store is opened, so a full disk leaves the store byte-identical.
MIN_FREE_BYTES = 1 << 20


def check_space(path: Path) -> None:
    """Raise ``ENOSPC`` (the machine's condition, exit 3) when the store's file system has less than
    :data:`MIN_FREE_BYTES` free for an unprivileged writer."""
    try:
        st = os.statvfs(path.parent if str(path.parent) else ".")
    except OSError:  # a missing folder: the store's own open names it
        return
    free = st.f_bavail * st.f_frsize
    if free < MIN_FREE_BYTES:
        raise OSError(errno.ENOSPC, f"disk full: {free // 1024} KiB free on its file system (a run needs "
                                    f"{MIN_FREE_BYTES >> 20} MiB for the store's journal)", str(path))


class Store:
    """Thin wrapper over one SQLite file (WAL mode).  Every write call is one transaction.

    Parameters
    ----------
    path : str or Path
        The database file (created if absent; a version-1 store is migrated in place).
    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        check_space(self.path)
        self._open()
        # Opened by the first batch of results and held until close(): while it is open, closing
        # the short-lived reading connections does not checkpoint (fsync) the WAL.  A Store that
        # only reads never holds a connection.
        self._writer: sqlite3.Connection | None = None
        self._lock = threading.Lock()

    def _writing(self) -> sqlite3.Connection:
        """The writing connection (call with ``self._lock`` held)."""
        if self._writer is None:
            self._writer = sqlite3.connect(self.path, timeout=60, check_same_thread=False)
            self._writer.execute("PRAGMA synchronous=NORMAL")
        return self._writer

    def close(self) -> None:
        """Close the writing connection and leave the store as one file in rollback-journal mode.

        WAL mode is what makes per-batch commits cheap during a run; afterwards the file goes back
        to ``journal_mode=DELETE`` (which checkpoints the WAL), so that read-only opens of a
        finished store (``results``, ``report``, ``compare``) create no ``-wal`` / ``-shm`` files
        beside it.  Where another connection is still open (a second run on the same store) the
        switch is left to the last one to close.
        """
        with self._lock:
            if self._writer is not None:
                self._writer.close()
                self._writer = None
            try:
                con = sqlite3.connect(self.path, timeout=1, isolation_level=None)
                try:
                    con.execute("PRAGMA journal_mode=DELETE")
                finally:
                    con.close()
            except sqlite3.Error:
                pass

    # ---- schema
    def _open(self) -> None:
        """Create the version-5 schema, migrating a version-1 to -4 store, in one transaction."""
        con = sqlite3.connect(self.path, timeout=60, isolation_level=None)
        mode = None
        try:
            mode = con.execute("PRAGMA journal_mode").fetchone()[0]
            con.execute("PRAGMA journal_mode=WAL")  # persistent: stored in the file
            con.execute("BEGIN IMMEDIATE")
            try:
                version = self._version(con)
                if version > SCHEMA_VERSION:
                    raise PsdbenchError(f"{self.path}: store schema version {version} is newer than this psdbench "
                                        f"reads ({SCHEMA_VERSION}); upgrade psdbench")
                old = con.execute("SELECT type FROM sqlite_master WHERE name='results'").fetchone()
                legacy = old is not None and old[0] == "table"
                if legacy:
                    con.execute("ALTER TABLE results RENAME TO results_v1")
                    con.execute("DROP INDEX IF EXISTS results_instance")
                have = {r[1] for r in con.execute("PRAGMA table_info(history)")}
                if have and set(RESULT_COLUMNS) - have:  # an older history: add the new columns, rebuild the view
                    for c in RESULT_COLUMNS:
                        if c not in have:
                            con.execute(f"ALTER TABLE history ADD COLUMN {c} {SQL_TYPES[c]}")
                    con.execute("DROP TRIGGER IF EXISTS results_delete")
                    con.execute("DROP VIEW IF EXISTS results")
                    con.execute("DROP VIEW IF EXISTS current")
                for stmt in [*_TABLES.split(";\n"), claims.SCHEMA]:
                    if stmt.strip():
                        con.execute(stmt)
                if legacy:
                    have = {r[1] for r in con.execute("PRAGMA table_info(results_v1)")}
                    cols = [c for c in RESULT_COLUMNS if c in have]
                    con.execute(f"INSERT INTO history ({', '.join(cols)}) SELECT {', '.join(cols)} FROM results_v1 "
                                "ORDER BY created_at, cell_key")
                    con.execute("DROP TABLE results_v1")
                self._fill_cell_ids(con)
                con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('schema_version', ?)",
                            (str(SCHEMA_VERSION),))
                con.execute("COMMIT")
            except BaseException:
                claims.rollback(con)
                raise
        except sqlite3.OperationalError:  # a full disk, an I/O error, a lock: the machine's condition (oserrors)
            if mode not in (None, "wal"):  # nothing committed: the file goes back to its journal mode, as it was
                try:
                    con.execute(f"PRAGMA journal_mode={mode}")
                except sqlite3.Error:
                    pass
            raise
        except sqlite3.DatabaseError as exc:
            raise PsdbenchError(f"{self.path}: not a psdbench results store ({exc})") from None
        finally:
            con.close()

    @staticmethod
    def _fill_cell_ids(con: sqlite3.Connection) -> None:
        """Compute ``cell_id`` for rows stored without one (an older store's, in its migration)."""
        rows = con.execute("SELECT seq, problem, dataset, instance_params, seed, solver, solver_params FROM history "
                           "WHERE cell_id IS NULL").fetchall()
        if rows:
            con.executemany("UPDATE history SET cell_id=? WHERE seq=?",
                            [(cell_id(p, d, ip or "{}", sd or 0, so, sp or "{}"), seq)
                             for seq, p, d, ip, sd, so, sp in rows])

    @staticmethod
    def _version(con: sqlite3.Connection) -> int:
        if con.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone() is None:
            return 1
        row = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
        return int(row[0]) if row else 1

    def schema_version(self) -> int:
        """The schema version recorded in ``meta``."""
        with self._conn() as con:
            return self._version(con)

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        con = sqlite3.connect(self.path, timeout=60)
        try:
            con.execute("PRAGMA synchronous=NORMAL")
            with con:  # commit on success, roll back on error
                yield con
        finally:
            con.close()

    # ---- cells
    def done_keys(self) -> set[str]:
        """Cell keys whose latest row is a result: every stored cell but those the harness itself
        failed (``crashed`` with a message starting with
        :data:`~psdbench.harness.limits.HARNESS_PREFIX`), which a later run computes again."""
        from .limits import HARNESS_PREFIX

        with self._conn() as con:
            return {r[0] for r in con.execute(
                "SELECT cell_key FROM results WHERE NOT (status = 'crashed' AND substr(message, 1, ?) = ?)",
                (len(HARNESS_PREFIX), HARNESS_PREFIX))}

    def stored_keys(self) -> set[str]:
        """Cell keys with at least one stored row."""
        with self._conn() as con:
            return {r[0] for r in con.execute("SELECT DISTINCT cell_key FROM history")}

    def latest_by_cell_id(self, ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The latest stored row (``cell_key``, ``solver_code``, ``problem_code``) of each of these cell ids."""
        keys = list(dict.fromkeys(ids))
        out: dict[str, dict[str, Any]] = {}
        with self._conn() as con:
            for i in range(0, len(keys), _CHUNK):
                part = keys[i:i + _CHUNK]
                for cid, ckey, sc, pc in con.execute(
                        "SELECT cell_id, cell_key, solver_code, problem_code FROM history WHERE seq IN "
                        f"(SELECT MAX(seq) FROM history WHERE cell_id IN ({', '.join('?' * len(part))}) "
                        "GROUP BY cell_id)", part):
                    out[cid] = {"cell_key": ckey, "solver_code": sc, "problem_code": pc}
        return out

    def write_result(self, result: CellResult | Mapping[str, Any]) -> None:
        """Add one row to the history (replacing only a row of the same cell and run)."""
        res = _complete(result if isinstance(result, CellResult) else CellResult.from_row(result))
        with self._conn() as con:
            con.execute(f"INSERT OR REPLACE INTO history ({_COLS}) VALUES ({', '.join('?' * len(RESULT_COLUMNS))})",
                        res.to_values())

    def write_many(self, results: Iterable[CellResult], references: Iterable[dict[str, Any]] = (),
                   release: str | None = None) -> None:
        """Add history rows and store references, all in one transaction (all or none are stored).

        With ``release`` (a run id), that run's claims of these cells and references are deleted in
        the same transaction.
        """
        results, references = list(results), list(references)
        rows = [_complete(r).to_values() for r in results]
        refs = [self._ref_values(ref) for ref in references]
        if not rows and not refs:
            return
        with self._lock, self._writing() as con:
            if release is not None:
                claims.release(con, [r.cell_key for r in results]
                               + [f"ref:{ref.get('instance_key')}" for ref in references], release)
            if rows:
                con.executemany(f"INSERT OR REPLACE INTO history ({_COLS}) "
                                f"VALUES ({', '.join('?' * len(RESULT_COLUMNS))})", rows)
            if refs:
                con.executemany(f"INSERT OR REPLACE INTO refs ({', '.join(_REF_COLUMNS)}) "
                                f"VALUES ({', '.join('?' * len(_REF_COLUMNS))})", refs)

    # ---- claims (concurrent runs)
    def last_seq(self) -> int:
        """The highest history ``seq`` (0 for an empty history)."""
        with self._conn() as con:
            return int(con.execute("SELECT COALESCE(MAX(seq), 0) FROM history").fetchone()[0])

    def claim(self, keys: Iterable[str], run_id: str, since_seq: int | None = None) -> dict[str, str]:
        """Claim cells (``ref:<instance_key>`` for references) for ``run_id`` in one transaction.

        Returns the refused keys with the reason (:func:`psdbench.harness.claims.take`).
        """
        with self._lock:
            return claims.take(self._writing(), keys, run_id, since_seq)

    def release_run(self, run_id: str) -> None:
        """Delete every claim ``run_id`` still holds (the end of a run, interrupted or not)."""
        with self._lock, self._writing() as con:
            con.execute("DELETE FROM claims WHERE run_id=?", (run_id,))

    def claims_frame(self) -> pd.DataFrame:
        """The ``claims`` table (cells runs are computing now)."""
        with self._conn() as con:
            return pd.read_sql_query("SELECT * FROM claims", con)

    def latest_rows(self, instance_keys: Iterable[str]) -> list[dict[str, Any]]:
        """The latest row of every cell of these instances (JSON columns as text)."""
        keys = list(dict.fromkeys(instance_keys))
        out: list[dict[str, Any]] = []
        with self._conn() as con:
            con.row_factory = sqlite3.Row
            for i in range(0, len(keys), _CHUNK):
                part = keys[i:i + _CHUNK]
                out += [dict(r) for r in con.execute(
                    f"SELECT * FROM results WHERE instance_key IN ({', '.join('?' * len(part))})", part)]
        return out

    def rows_for_instance(self, instance_key: str) -> list[dict[str, Any]]:
        """The latest row of every cell of one instance."""
        return self.latest_rows([instance_key])

    def write_reference_columns(self, updates: Iterable[tuple[Any, ...]]) -> None:
        """Set reference and gap columns of given rows, in one transaction.

        ``updates`` holds ``(reference_objective, reference_kind, gap_abs, gap_rel, cell_key, run_id)``.
        """
        with self._conn() as con:
            con.executemany("UPDATE history SET reference_objective=?, reference_kind=?, gap_abs=?, gap_rel=? "
                            "WHERE cell_key=? AND run_id=?", list(updates))

    # ---- references
    def reference(self, instance_key: str) -> dict[str, Any] | None:
        """The stored reference of one instance, or None."""
        return self.references([instance_key]).get(instance_key)

    def references(self, instance_keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """Stored references by instance key (instances without one are absent)."""
        keys = list(dict.fromkeys(instance_keys))
        out: dict[str, dict[str, Any]] = {}
        with self._conn() as con:
            con.row_factory = sqlite3.Row
            for i in range(0, len(keys), _CHUNK):
                part = keys[i:i + _CHUNK]
                for r in con.execute(f"SELECT * FROM refs WHERE instance_key IN ({', '.join('?' * len(part))})", part):
                    out[r["instance_key"]] = dict(r)
        return out

    @staticmethod
    def _ref_values(ref: dict[str, Any]) -> list[Any]:
        ref = {**ref, "created_at": now()}
        if not isinstance(ref.get("instance_params"), str):
            ref["instance_params"] = json.dumps(ref.get("instance_params"), sort_keys=True, default=str)
        return [ref.get(c) for c in _REF_COLUMNS]

    def write_reference(self, ref: dict[str, Any]) -> None:
        """Store (replace) the reference of one instance."""
        with self._conn() as con:
            con.execute(
                f"INSERT OR REPLACE INTO refs ({', '.join(_REF_COLUMNS)}) VALUES ({', '.join('?' * len(_REF_COLUMNS))})",
                self._ref_values(ref),
            )

    # ---- runs
    def start_run(self, run_id: str, command: str, machine: dict, versions: dict, threads: dict) -> None:
        """Record a run's machine, library versions and thread settings."""
        with self._conn() as con:
            con.execute(
                "INSERT INTO runs (run_id, started_at, command, machine, versions, threads) VALUES (?, ?, ?, ?, ?, ?)",
                (run_id, now(), command, json.dumps(machine), json.dumps(versions), json.dumps(threads)),
            )

    def finish_run(self, run_id: str) -> None:
        """Stamp the end of a run."""
        with self._conn() as con:
            con.execute("UPDATE runs SET finished_at=? WHERE run_id=?", (now(), run_id))

    # ---- frames
    def results_frame(self, flatten_metrics: bool = True, view: str = "results") -> pd.DataFrame:
        """The latest row of every cell; JSON columns decoded, metrics flattened as ``metric_<name>``.

        ``view="current"``: the latest row of every cell description (the ``current`` view: what
        the report and ``psdbench results`` show); ``view="history"``: every row of every run.
        """
        if view not in ("results", "current", "history"):
            raise ValueError(f"view must be 'results', 'current' or 'history', not {view!r}")
        order = "seq" if view == "history" else "created_at, cell_key"
        with self._conn() as con:
            if view == "current" and con.execute("SELECT 1 FROM sqlite_master WHERE name='current'").fetchone() is None:
                view = "results"  # an older store opened read-only: one row per cell_key is what it has
            df = _decode(pd.read_sql_query(f"SELECT * FROM {view} ORDER BY {order}", con))
        if flatten_metrics and len(df):
            met = pd.json_normalize(df["metrics"].map(lambda d: d or {}).tolist()).add_prefix("metric_")
            met.index = df.index
            df = pd.concat([df, met], axis=1)
        return df

    def history_frame(self) -> pd.DataFrame:
        """Every stored row of every run (``seq`` ascending), JSON columns decoded."""
        with self._conn() as con:
            return _decode(pd.read_sql_query("SELECT * FROM history ORDER BY seq", con))

    def references_frame(self) -> pd.DataFrame:
        """The ``refs`` table."""
        with self._conn() as con:
            return pd.read_sql_query("SELECT * FROM refs", con)

    def runs_frame(self) -> pd.DataFrame:
        """The ``runs`` table."""
        with self._conn() as con:
            return pd.read_sql_query("SELECT * FROM runs", con)
