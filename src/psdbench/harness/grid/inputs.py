"""Checks of user input made before any work starts: store paths, output folders, dataset contents.

Each check raises a one-line :class:`~psdbench.api.PsdbenchError` (exit status 2) naming the
offending file or field, and none of them writes anything: a store is inspected through a
read-only SQLite connection (URI ``mode=ro``), so a foreign or damaged file stays byte-identical.
:class:`ReadOnlyStore` is the store the read commands (``results``, ``report``, ``compare``) use.
"""

from __future__ import annotations

import json
import math
import os
import sqlite3
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator
from urllib.parse import quote

import numpy as np
import pandas as pd

from psdbench.api import DataError, Dataset, PsdbenchError
from psdbench.harness.limits import MAX_SECONDS, cut_line, echo
from psdbench.harness.store.db import SCHEMA_VERSION, Store

SQLITE_MAGIC = b"SQLite format 3\x00"


def _ro_connect(path: Path, immutable: bool = False) -> sqlite3.Connection:
    """A read-only connection (``mode=ro``): SQLite creates nothing, writes nothing.  ``immutable``:
    SQLite's ``immutable=1``, which takes no lock and reads the main file alone (see
    :func:`needs_immutable`)."""
    return sqlite3.connect(f"file:{quote(str(path.resolve()))}?{'immutable=1' if immutable else 'mode=ro'}",
                           uri=True, timeout=60)


def _wal_header(path: Path) -> bool:
    """Whether the file's header says WAL mode (bytes 18 and 19 of an SQLite header are 2)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(20)
    except OSError:
        return False
    return len(head) == 20 and head[18] == 2 and head[19] == 2


def needs_immutable(path: Path) -> bool:
    """Whether a store can be read only in SQLite's immutable mode: it is in WAL mode (a run writing
    now, or killed with ``kill -9``) and a read-only open fails because the WAL's index
    (``-shm``) cannot be created or written beside it (a read-only folder or file system)."""
    if not _wal_header(path):
        return False
    try:
        con = _ro_connect(path)
        try:
            con.execute("SELECT count(*) FROM sqlite_master").fetchone()
        finally:
            con.close()
    except sqlite3.OperationalError as exc:
        low = str(exc).lower()
        return "unable to open" in low or "readonly" in low or "read-only" in low
    return False


def immutable_note(path: Path) -> str | None:
    """The line a read command prints when it reads a store in immutable mode with a ``-wal`` file
    beside it, whose rows that mode does not read (``None`` without one: the file holds every row)."""
    wal = path.with_name(path.name + "-wal")
    if not (wal.is_file() and wal.stat().st_size > 0):
        return None
    return (f"psdbench: warning: {path} is in WAL mode (a run is writing it, or was killed) in a folder psdbench "
            f"cannot write: read as immutable, without {wal.name}, so the rows may be incomplete; copy both files "
            "to a writable folder to read them all")


def _writable_dir(folder: Path, what: str) -> None:
    if not folder.exists():
        raise PsdbenchError(f"{what}: folder {folder} does not exist")
    if not folder.is_dir():
        raise PsdbenchError(f"{what}: {folder} is not a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PsdbenchError(f"{what}: folder {folder} is not writable")


def check_store(path: str | Path, write: bool) -> Path:
    """Check a ``--db`` path without modifying it; returns it as a :class:`Path`.

    Parameters
    ----------
    path : str or Path
        The store file.
    write : bool
        ``True`` for ``run`` (the file may be absent or empty, it and its folder must be
        writable); ``False`` for the read commands (it must exist and be a psdbench store).
    """
    p = Path(path)
    if p.is_symlink() and not p.exists():
        raise PsdbenchError(f"--db {p} is a symbolic link to {os.readlink(p)}, which does not exist; "
                            "remove the link or give the store's own path")
    if p.is_dir():
        raise PsdbenchError(f"--db {p} is a folder, not a results store file")
    if not p.exists():
        if not write:
            raise PsdbenchError(f"--db {p}: no results store at this path")
        _writable_dir(p.parent if str(p.parent) else Path("."), f"--db {p}")
        return p
    if not p.is_file():
        raise PsdbenchError(f"--db {p} is not a regular file")
    size = p.stat().st_size
    if size == 0:
        if write:
            _writable_dir(p.parent if str(p.parent) else Path("."), f"--db {p}")
            if not os.access(p, os.W_OK):
                raise PsdbenchError(f"--db {p} is read-only")
            return p  # an empty file is a new store
        raise PsdbenchError(f"--db {p} is an empty file (0 bytes), not a psdbench results store")
    with open(p, "rb") as fh:
        head = fh.read(len(SQLITE_MAGIC))
    if head != SQLITE_MAGIC:
        raise PsdbenchError(f"--db {p} is not an SQLite file (not a psdbench results store)")
    immutable = not write and needs_immutable(p)
    try:
        con = _ro_connect(p, immutable)
        try:
            tables = {r[0]: r[1] for r in con.execute("SELECT name, type FROM sqlite_master")}
            cols = {r[1] for r in con.execute("PRAGMA table_info(results)")} if "results" in tables else set()
            version = con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone() \
                if tables.get("meta") == "table" else None
        finally:
            con.close()
    except sqlite3.DatabaseError as exc:
        from psdbench.system.oserrors import EXIT_MACHINE, describe

        if (describe(exc) or (0,))[0] == EXIT_MACHINE:  # a full disk, an I/O error: not the file's fault
            raise
        raise PsdbenchError(f"--db {p}: unreadable SQLite file ({str(exc).splitlines()[0]})") from None
    ours = ("history" in tables and "meta" in tables) or (tables.get("results") == "table" and "cell_key" in cols)
    if not ours:
        names = ", ".join(sorted(tables)) or "none"
        raise PsdbenchError(f"--db {p} is an SQLite database but not a psdbench results store (tables: {names})")
    try:
        newer = version is not None and int(version[0]) > SCHEMA_VERSION
    except (TypeError, ValueError):
        raise PsdbenchError(f"--db {p}: unreadable schema_version {version[0]!r}") from None
    if newer:
        raise PsdbenchError(f"--db {p}: store schema version {version[0]} is newer than this psdbench reads "
                            f"({SCHEMA_VERSION}); upgrade psdbench")
    damage = store_damage(p, tables, int(version[0]) if version is not None else 1, immutable)
    if damage:
        raise PsdbenchError(f"--db {p} is damaged: {damage} (the file was not changed)")
    if write:
        _writable_dir(p.parent if str(p.parent) else Path("."), f"--db {p}")
        if not os.access(p, os.W_OK):
            raise PsdbenchError(f"--db {p} is read-only")
    return p


#: A store larger than this is not scanned with ``PRAGMA quick_check`` (the check reads every page).
QUICK_CHECK_MAX_BYTES = 256 * 2**20
#: What a version-3 store holds: name -> type.
SCHEMA_OBJECTS = {"history": "table", "results": "view", "runs": "table", "refs": "table", "meta": "table"}


def store_damage(p: Path, tables: dict[str, str], version: int, immutable: bool = False) -> str:
    """What is damaged in a psdbench store, with what can be recovered ("" if nothing), read-only.

    Checked: SQLite's ``PRAGMA quick_check`` (stores up to :data:`QUICK_CHECK_MAX_BYTES`), the
    tables and views of the schema with the history's columns (version-3 stores; older ones are
    migrated by ``run``), and that every JSON column of every history row decodes.  A store with a
    ``-wal`` file beside it (a run writing now, or killed) gets the schema checks only: its pages
    are in flux, and a concurrent reader must not scan the whole file.
    """
    from psdbench.harness.store.results import JSON_COLUMNS, RESULT_COLUMNS

    salvage = (f"copy out what SQLite can still read with `sqlite3 {p} .recover | sqlite3 recovered.sqlite` "
               "and use that store")
    try:
        con = _ro_connect(p, immutable)
    except sqlite3.DatabaseError as exc:
        return f"SQLite cannot open it ({cut_line(str(exc), 200)}); {salvage}"
    live = Path(f"{p}-wal").exists()  # a run is writing (or was killed): its pages are in flux
    try:
        if not live and p.stat().st_size <= QUICK_CHECK_MAX_BYTES:
            rows = [r[0] for r in con.execute("PRAGMA quick_check(3)")]
            if rows != ["ok"]:
                return f"SQLite integrity check failed ({cut_line('; '.join(rows), 200)}); {salvage}"
        if version < SCHEMA_VERSION:
            return ""
        missing = [f"{kind} {name}" for name, kind in SCHEMA_OBJECTS.items() if tables.get(name) != kind]
        have = {r[1] for r in con.execute("PRAGMA table_info(history)")} if tables.get("history") == "table" else set()
        lost = [c for c in RESULT_COLUMNS if have and c not in have]
        if missing or lost:
            what = ", ".join(missing) + (("; " if missing else "") + f"history columns {', '.join(lost)}" if lost else "")
            kept = (f"its {con.execute('SELECT COUNT(*) FROM history').fetchone()[0]} history rows are readable: "
                    f"export them with `sqlite3 -csv -header {p} 'SELECT * FROM history'`" if have else salvage)
            return f"missing {what}; {kept}"
        if live:
            return ""
        bad: list[tuple[int, str, str]] = []
        try:
            con.execute("SELECT json_valid('1')")
            suspect = "AND json_valid({c}) = 0"  # SQLite's json_valid first (fast)
        except sqlite3.OperationalError:  # an SQLite without JSON functions: Python reads every value
            suspect = ""
        for c in JSON_COLUMNS:  # Python's json decides (it accepts the NaN that json_valid refuses)
            for seq, key, text in con.execute(
                    f"SELECT seq, cell_key, {c} FROM history WHERE {c} IS NOT NULL {suspect.format(c=c)}"):
                try:
                    json.loads(text)
                except (TypeError, ValueError, RecursionError):
                    bad.append((seq, key, c))
        if bad:
            total = con.execute("SELECT COUNT(*) FROM history").fetchone()[0]
            seqs = sorted({b[0] for b in bad})
            shown = ", ".join(str(x) for x in seqs[:10]) + (", ..." if len(seqs) > 10 else "")
            return (f"{len(seqs)} history row(s) hold malformed JSON (seq {shown}; column "
                    f"{', '.join(sorted({b[2] for b in bad}))}); the other {total - len(seqs)} rows are intact: "
                    f"delete the damaged ones with `sqlite3 {p} 'DELETE FROM history WHERE seq IN ({', '.join(map(str, seqs[:20]))}"
                    f"{', ...' if len(seqs) > 20 else ''})'`")
        return ""
    except sqlite3.DatabaseError as exc:
        return f"SQLite cannot read it ({cut_line(str(exc), 200)}); {salvage}"
    finally:
        con.close()


def check_solutions_folder(db: Path) -> Path:
    """Check that the archive folder of ``--save-solutions`` can be created or written (nothing is made)."""
    from psdbench.harness.store.solutions import folder_for

    folder = folder_for(db)
    if folder.absolute() == Path(db).absolute():
        raise PsdbenchError(f"--save-solutions: the store {db} has the name of its own archive folder "
                            f"(<store stem>.solutions); give --db another name, e.g. {Path(db).with_suffix('.sqlite')}")
    if len(os.fsencode(folder.name)) > 255:
        raise PsdbenchError(f"--save-solutions: the archive folder's name ({len(os.fsencode(folder.name))} bytes, "
                            "the store's name + '.solutions') is longer than a file system allows; shorten --db")
    if folder.exists() and not folder.is_dir():
        raise PsdbenchError(f"--save-solutions: {folder} exists and is not a folder")
    if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise PsdbenchError(f"--save-solutions: folder {folder} is not writable")
    return folder


def check_out_dir(path: str | Path, flag: str = "--out") -> Path:
    """Check that a report folder can be created or written, without creating it."""
    p = Path(path)
    if p.exists():
        if not p.is_dir():
            raise PsdbenchError(f"{flag} {p} exists and is not a folder")
        if not os.access(p, os.W_OK | os.X_OK):
            raise PsdbenchError(f"{flag} {p} is not writable")
        return p
    parent = p.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        raise PsdbenchError(f"{flag} {p}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise PsdbenchError(f"{flag} {p}: folder {parent} is not writable")
    return p


class ReadOnlyStore(Store):
    """A :class:`Store` opened read-only (SQLite URI ``mode=ro``): no schema, no migration, no writes.

    Parameters
    ----------
    path : str or Path
        A psdbench store (checked with :func:`check_store`).
    """

    def __init__(self, path: str | Path) -> None:  # no super().__init__: it would create the schema
        self.path = check_store(path, write=False)
        #: read in SQLite's immutable mode (:func:`needs_immutable`): the rows may be incomplete
        self.immutable = needs_immutable(self.path)
        note = immutable_note(self.path) if self.immutable else None
        if note:
            print(note, file=sys.stderr)

    @contextmanager
    def _conn(self) -> Iterator[sqlite3.Connection]:
        con = _ro_connect(self.path, self.immutable)
        try:
            yield con
        finally:
            con.close()

    def results_frame(self, flatten_metrics: bool = True, view: str = "results", traces: bool = True) -> pd.DataFrame:
        """:meth:`Store.results_frame` with the read-time columns of
        :func:`psdbench.harness.reference.annotate` (``below_certified``, ``gap_scale``, ``gap_scaled``)."""
        from psdbench.harness.reference import annotate

        return annotate(super().results_frame(flatten_metrics, view, traces), self.references_frame())


def check_dataset_content(ds: Dataset, name: str) -> None:
    """Reject sample data no problem can use: empty, non-numeric, non-finite, ragged, one class.

    Only the ``X`` / ``y`` of sample datasets are checked (a dataset with other payloads passes).
    The single-class check applies to labelled data: a ``label_coding`` that is not empty and does
    not start with "no labels" (observation datasets carry placeholder labels).
    """
    where = f"dataset {name}" + (f" ({ds.source})" if getattr(ds, "source", "") else "")
    X, y = ds.X, ds.y
    if X is not None:
        try:
            X = np.asarray(X, dtype=float)
        except (TypeError, ValueError):
            raise DataError(f"{where}: features are not numeric") from None
        if X.ndim != 2 or X.shape[0] == 0 or X.shape[1] == 0:
            raise DataError(f"{where}: expected a non-empty 2-D feature table, got shape {X.shape}")
        if not np.isfinite(X).all():
            raise DataError(f"{where}: {int((~np.isfinite(X)).sum())} feature values are NaN or infinite")
        top = float(np.abs(X).max())
        with np.errstate(over="ignore"):  # a squared distance sums d squared differences of up to 2 * top
            overflow = not np.isfinite(X.shape[1] * (2.0 * top) ** 2)
        if overflow:
            raise DataError(f"{where}: feature values up to {top:.3g} overflow squared distances in float64 "
                            "(more than ~1e150); rescale the data")
    if y is not None:
        try:
            y = np.asarray(y, dtype=float)
        except (TypeError, ValueError):
            raise DataError(f"{where}: labels are not numeric") from None
        if y.ndim != 1:
            raise DataError(f"{where}: labels must be one column, got shape {y.shape}")
        if X is not None and len(y) != len(X):
            raise DataError(f"{where}: {len(y)} labels for {len(X)} samples")
        if np.isnan(y).any():
            raise DataError(f"{where}: {int(np.isnan(y).sum())} labels are NaN")
        coding = (getattr(ds, "label_coding", "") or "").strip().lower()
        labelled = bool(coding) and not coding.startswith("no labels")  # api.Dataset: "" without labels
        if labelled and len(np.unique(y)) < 2:
            raise DataError(f"{where}: a single class ({len(y)} samples labelled {y[0]:g}); need at least two")


def positive_seconds(value: Any, field: str) -> float:
    """A finite number of seconds, ``0 < value <= MAX_SECONDS`` (not a bool or a string), else a
    one-line error."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise PsdbenchError(f"{field} must be a number of seconds, not {echo(value)}")
    try:
        ok = math.isfinite(value) and 0 < value <= MAX_SECONDS
    except OverflowError:  # an int too large for a float
        ok = False
    if not ok:
        raise PsdbenchError(f"{field} must be a finite number of seconds, 0 < {field.rsplit(' ', 1)[-1]} <= "
                            f"{MAX_SECONDS:.0e}, not {echo(value)}")
    return float(value)
