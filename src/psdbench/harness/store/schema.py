"""The results store's schema: its tables and views, and the migration of an older store in place.

:class:`~psdbench.harness.store.db.Store` opens a file through :func:`create` (its reading and writing
calls use the columns named here); the read-only opens of :mod:`~psdbench.harness.grid.inputs` check a
store's recorded version against :data:`SCHEMA_VERSION` and migrate nothing.

Schema version 6 (names are stable; other tools read them):

``history``     every run of every cell: one row per ``(cell_key, run_id)`` (unique), columns
                :data:`RESULT_COLUMNS` (from :class:`~psdbench.harness.store.results.CellResult`) plus an
                increasing ``seq``.  ``--force`` adds rows; nothing is replaced but a row of the
                same cell in the same run.
``results``     a VIEW: the latest row (highest ``seq``) of each cell, i.e. one row per cell with
                the columns :data:`RESULT_COLUMNS`.  ``DELETE FROM results WHERE ...`` forgets the
                matching cells (every run of them), so that a later run computes them again.
``current``     a VIEW: the latest row of each cell *description* (``cell_id``: problem, dataset,
                parameters, seed, solver; :func:`~psdbench.harness.store.keys.cell_id`), whatever code or
                library versions computed it: the row a report and ``psdbench results`` show.
                A cell computed again after its code changed has a new ``cell_key`` but the
                same ``cell_id``; the older row stays in ``history`` (``results --all``).
``runs``        machine, library versions and thread settings, once per run, and its ``timing``
                (JSON, written when it ends: the seconds of its cells' solves, of its reference
                solves, of the run and of its process; a column added within version 6, created
                in an older store when it is opened for writing, NULL in the runs before it).
``refs``        the reference optimum per instance (``instance_key``), with its certificate: ``lower``
                (a certified bound on the other side of ``value``, two-sided with an exactly
                feasible ``value``), ``bound`` (a certified one-sided bound where ``value`` is not
                exactly feasible; schema 6), ``spread`` (the relative spread of the reference's
                agreeing solves; schema 6) and ``kind`` (``certified``: a two-sided interval within
                the certification tolerance; ``interval``: a wider one; ``bound``: a one-sided
                bound; ``best_verified``: a point without a bound; ``none``).
``meta``        ``schema_version`` = ``6``.
``claims``      the cells concurrent runs are computing now (:mod:`~psdbench.harness.store.claims`);
                empty when no run is under way.

A version-1 store (``results`` a table keyed by ``cell_key``) is migrated in place when opened for
writing, in one transaction: its rows are copied into ``history`` and the table is replaced by the
view.  A version-2 store gains the ``solution`` column (NULL in its rows) and the view is rebuilt
with it.  A version-3 store gains ``cell_id``, ``solver_code`` and ``problem_code``: ``cell_id`` is
computed for its rows from their description (the code hashes stay NULL: unknown), and the
``current`` view is created.  A version-4 store gains ``time_limit_s`` (NULL in its rows: the report then
charges a failure at the longest wall time of its instance set, and says so).  A version-5 store's
``refs`` gains ``bound`` and ``spread``: a row whose message states a "certified one-sided lower bound
<value>" (how versions up to 5 kept it) gets that value as its ``bound`` and the kind ``bound``,
once, in the migration; nothing reads the message afterwards.  Read-only opens (:class:`~psdbench.harness.grid.inputs.ReadOnlyStore`) migrate nothing.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from psdbench.api import PsdbenchError
from psdbench.harness.store import claims
from psdbench.harness.store.keys import cell_id
from psdbench.harness.store.results import RESULT_COLUMNS, SQL_TYPES

__all__ = ["COLS", "REF_ADDED", "REF_COLUMNS", "SCHEMA_VERSION", "TABLES", "create", "fill_cell_ids", "migrate_refs",
           "version"]

SCHEMA_VERSION = 6
#: The ``history`` columns a row is written with, as SQL lists them.
COLS = ", ".join(RESULT_COLUMNS)

TABLES = f"""
CREATE TABLE IF NOT EXISTS history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    {", ".join(f"{c} {SQL_TYPES[c]}" for c in RESULT_COLUMNS)},
    UNIQUE (cell_key, run_id)
);
CREATE INDEX IF NOT EXISTS history_cell ON history(cell_key, seq);
CREATE INDEX IF NOT EXISTS history_instance ON history(instance_key);
CREATE INDEX IF NOT EXISTS history_cell_id ON history(cell_id, seq);
CREATE VIEW IF NOT EXISTS results AS
    SELECT {COLS} FROM history WHERE seq IN (SELECT MAX(seq) FROM history GROUP BY cell_key);
CREATE TRIGGER IF NOT EXISTS results_delete INSTEAD OF DELETE ON results
    BEGIN DELETE FROM history WHERE cell_key = OLD.cell_key; END;
CREATE VIEW IF NOT EXISTS current AS
    SELECT {COLS} FROM history WHERE seq IN (SELECT MAX(seq) FROM history GROUP BY COALESCE(NULLIF(cell_id, ''), cell_key));
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY, started_at TEXT, finished_at TEXT, command TEXT,
    machine TEXT, versions TEXT, threads TEXT, timing TEXT
);
CREATE TABLE IF NOT EXISTS refs (
    instance_key TEXT PRIMARY KEY, problem TEXT, dataset TEXT, instance_params TEXT, seed INTEGER,
    value REAL, lower REAL, gap REAL, kind TEXT, solver TEXT, solver_version TEXT, status TEXT,
    wall_time_s REAL, message TEXT, created_at TEXT, bound REAL, spread REAL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
"""
#: The columns of the ``refs`` table, in order.
REF_COLUMNS = ["instance_key", "problem", "dataset", "instance_params", "seed", "value", "lower", "gap", "kind",
               "solver", "solver_version", "status", "wall_time_s", "message", "created_at", "bound", "spread"]
#: Columns the ``refs`` table gained after version 1, with the version that added them.
REF_ADDED = {"bound": 6, "spread": 6}


def create(path: Path) -> None:
    """Create the version-6 schema in the store at ``path``, migrating a version-1 to -5 store, in one transaction.

    The file is left in WAL mode (``journal_mode`` is stored in the file); a store of a newer schema is a
    one-line :class:`~psdbench.api.PsdbenchError`, a file that is no SQLite database too.
    """
    con = sqlite3.connect(path, timeout=60, isolation_level=None)
    mode = None
    try:
        mode = con.execute("PRAGMA journal_mode").fetchone()[0]
        con.execute("PRAGMA journal_mode=WAL")  # persistent: stored in the file
        con.execute("BEGIN IMMEDIATE")
        try:
            found = version(con)
            if found > SCHEMA_VERSION:
                raise PsdbenchError(f"{path}: store schema version {found} is newer than this psdbench "
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
            refs_have = {r[1] for r in con.execute("PRAGMA table_info(refs)")}
            for stmt in [*TABLES.split(";\n"), claims.SCHEMA]:
                if stmt.strip():
                    con.execute(stmt)
            if refs_have and set(REF_ADDED) - refs_have:
                migrate_refs(con, refs_have)
            if "timing" not in {r[1] for r in con.execute("PRAGMA table_info(runs)")}:  # a runs table before it
                con.execute("ALTER TABLE runs ADD COLUMN timing TEXT")
            if legacy:
                have = {r[1] for r in con.execute("PRAGMA table_info(results_v1)")}
                cols = [c for c in RESULT_COLUMNS if c in have]
                con.execute(f"INSERT INTO history ({', '.join(cols)}) SELECT {', '.join(cols)} FROM results_v1 "
                            "ORDER BY created_at, cell_key")
                con.execute("DROP TABLE results_v1")
            fill_cell_ids(con)
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
        raise PsdbenchError(f"{path}: not a psdbench results store ({exc})") from None
    finally:
        con.close()


def migrate_refs(con: sqlite3.Connection, have: set[str]) -> None:
    """Give an older ``refs`` table the columns of :data:`REF_ADDED`; a row whose message states a
    certified one-sided bound (versions up to 5 kept it there) gets it as ``bound``, kind ``bound``."""
    import re

    for c in REF_ADDED:
        if c not in have:
            con.execute(f"ALTER TABLE refs ADD COLUMN {c} REAL")
    rows = con.execute("SELECT instance_key, message FROM refs WHERE bound IS NULL AND lower IS NULL AND value IS NOT "
                       "NULL AND message LIKE '%certified one-sided lower bound %'").fetchall()
    for key, message in rows:
        m = re.search(r"certified one-sided lower bound ([-+0-9.eE]+)", message or "")
        try:
            bound = float(m.group(1)) if m else None
        except ValueError:
            bound = None
        if bound is not None and bound == bound and abs(bound) != float("inf"):
            con.execute("UPDATE refs SET bound=?, kind='bound' WHERE instance_key=?", (bound, key))


def fill_cell_ids(con: sqlite3.Connection) -> None:
    """Compute ``cell_id`` for rows stored without one (an older store's, in its migration)."""
    rows = con.execute("SELECT seq, problem, dataset, instance_params, seed, solver, solver_params FROM history "
                       "WHERE cell_id IS NULL").fetchall()
    if rows:
        con.executemany("UPDATE history SET cell_id=? WHERE seq=?",
                        [(cell_id(p, d, ip or "{}", sd or 0, so, sp or "{}"), seq)
                         for seq, p, d, ip, sd, so, sp in rows])


def version(con: sqlite3.Connection) -> int:
    """The schema version a connection's store records in ``meta`` (1: a store without ``meta``)."""
    if con.execute("SELECT 1 FROM sqlite_master WHERE name='meta'").fetchone() is None:
        return 1
    row = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()
    return int(row[0]) if row else 1
