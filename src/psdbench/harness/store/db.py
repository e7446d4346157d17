"""The results store: an embedded SQLite database (default ``psdbench-results.sqlite``).

The schema (tables ``history``, ``refs``, ``runs``, ``meta``, ``claims`` and the views ``results`` and
``current``; version 5) and the migration of an older store are in :mod:`~psdbench.harness.store.schema`.

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

from psdbench.harness.store import claims
from psdbench.harness.store import schema
from psdbench.harness.store.keys import cell_id
from psdbench.harness.store.results import JSON_COLUMNS, RESULT_COLUMNS, CellResult
from psdbench.harness.store.schema import COLS, REF_COLUMNS, SCHEMA_VERSION

__all__ = ["DATASETS_META", "EXPANSIONS_META", "JSON_COLUMNS", "RESULT_COLUMNS", "SCHEMA_VERSION", "Store", "now",
           "read_meta"]

_CHUNK = 500  # SQL variables per IN (...) list


#: ``meta`` keys of what a run keeps for the next one (:meth:`Store.remember`, :func:`read_meta`).
DATASETS_META, EXPANSIONS_META = "dataset_fingerprints", "param_expansions"


def _json_dict(text: str | None) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def read_meta(path: str | Path, key: str) -> dict[str, Any]:
    """The JSON object a store keeps under ``meta[key]`` (:meth:`Store.remember`), read without
    writing anything; ``{}`` for a new, empty, older or unreadable store (a run then loads and
    hashes its datasets, as it would without it)."""
    p = Path(path)
    try:
        if not p.is_file() or p.stat().st_size == 0:
            return {}
        con = sqlite3.connect(f"file:{p}?mode=ro", uri=True)
        try:
            row = con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
        finally:
            con.close()
    except (OSError, sqlite3.Error):
        return {}
    return _json_dict(row[0] if row else None)


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
        schema.create(self.path)
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
    def schema_version(self) -> int:
        """The schema version recorded in ``meta``."""
        with self._conn() as con:
            return schema.version(con)

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
        from psdbench.harness.limits import HARNESS_PREFIX

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
            con.execute(f"INSERT OR REPLACE INTO history ({COLS}) VALUES ({', '.join('?' * len(RESULT_COLUMNS))})",
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
                con.executemany(f"INSERT OR REPLACE INTO history ({COLS}) "
                                f"VALUES ({', '.join('?' * len(RESULT_COLUMNS))})", rows)
            if refs:
                con.executemany(f"INSERT OR REPLACE INTO refs ({', '.join(REF_COLUMNS)}) "
                                f"VALUES ({', '.join('?' * len(REF_COLUMNS))})", refs)

    # ---- claims (concurrent runs)
    def last_seq(self) -> int:
        """The highest history ``seq`` (0 for an empty history)."""
        with self._conn() as con:
            return int(con.execute("SELECT COALESCE(MAX(seq), 0) FROM history").fetchone()[0])

    def claim(self, keys: Iterable[str], run_id: str, since_seq: int | None = None) -> dict[str, str]:
        """Claim cells (``ref:<instance_key>`` for references) for ``run_id`` in one transaction.

        Returns the refused keys with the reason (:func:`psdbench.harness.store.claims.take`).
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
        return [ref.get(c) for c in REF_COLUMNS]

    def write_reference(self, ref: dict[str, Any]) -> None:
        """Store (replace) the reference of one instance."""
        with self._conn() as con:
            con.execute(
                f"INSERT OR REPLACE INTO refs ({', '.join(REF_COLUMNS)}) VALUES ({', '.join('?' * len(REF_COLUMNS))})",
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

    def remember(self, key: str, entries: Mapping[str, Any]) -> None:
        """Merge ``entries`` into the JSON object ``meta[key]`` (beside other grids' entries), read
        back by :func:`read_meta`: the stamped datasets' fingerprints and parameter expansions
        (:attr:`~psdbench.harness.grid.expand.Grid.dataset_fingerprints`, ``.param_expansions``)."""
        if not entries:
            return
        with self._conn() as con:
            row = con.execute("SELECT value FROM meta WHERE key=?", (key,)).fetchone()
            kept = _json_dict(row[0] if row else None)
            kept.update({str(k): v for k, v in entries.items()})
            con.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, json.dumps(kept)))

    def add_run_machine(self, run_id: str, entries: Mapping[str, Any]) -> None:
        """Merge ``entries`` into a run's ``machine`` record (a Dask run's workers, known after it started)."""
        with self._conn() as con:
            row = con.execute("SELECT machine FROM runs WHERE run_id=?", (run_id,)).fetchone()
            machine = _json_dict(row[0]) if row else {}
            con.execute("UPDATE runs SET machine=? WHERE run_id=?", (json.dumps({**machine, **dict(entries)}), run_id))

    def finish_run(self, run_id: str, timing: Mapping[str, Any] | None = None) -> None:
        """Stamp the end of a run, with its ``timing`` (seconds by name: the cells' solves, the run's
        and its process's wall time, :func:`psdbench.harness.runner.run_grid`) where given."""
        with self._conn() as con:
            con.execute("UPDATE runs SET finished_at=?, timing=COALESCE(?, timing) WHERE run_id=?",
                        (now(), None if timing is None else json.dumps(dict(timing), default=str), run_id))

    # ---- frames
    def results_frame(self, flatten_metrics: bool = True, view: str = "results", traces: bool = True) -> pd.DataFrame:
        """The latest row of every cell; JSON columns decoded, metrics flattened as ``metric_<name>``.

        ``view="current"``: the latest row of every cell description (the ``current`` view: what
        the report and ``psdbench results`` show); ``view="history"``: every row of every run.
        ``traces=False`` leaves out the solvers' own ``trace`` (never trusted, and most of the
        decoding time of a large store).
        """
        if view not in ("results", "current", "history"):
            raise ValueError(f"view must be 'results', 'current' or 'history', not {view!r}")
        order = "seq" if view == "history" else "created_at, cell_key"
        with self._conn() as con:
            if view == "current" and con.execute("SELECT 1 FROM sqlite_master WHERE name='current'").fetchone() is None:
                view = "results"  # an older store opened read-only: one row per cell_key is what it has
            df = pd.read_sql_query(f"SELECT * FROM {view} ORDER BY {order}", con)
        df = _decode(df if traces else df.drop(columns=["trace"], errors="ignore"))
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
