"""Claims: which run is computing which cell, so that concurrent runs on one store do each cell once.

A run takes a cell's claim in one ``BEGIN IMMEDIATE`` transaction just before it sends the cell
to a worker (:func:`take`).  The claim is refused when

* the cell already has a history row (stored by another run since this one started; with
  ``--force``, a row stored after this run started), or
* another run holds its claim and that run's process is alive (:func:`holder_alive`).

A claim whose process is gone (``kill -9``, a crash, a reboot) is taken over.  A finished cell's
claim is deleted in the transaction that stores its row, and a run deletes whatever claims it
still holds when it ends (an interrupted run included).  The table is ``claims (cell_key,
run_id, pid, host, claimed_at)``; references are claimed under ``ref:<instance_key>``.
"""

from __future__ import annotations

import os
import socket
import sqlite3
from datetime import datetime, timezone
from typing import Iterable

import psutil

SCHEMA = """
CREATE TABLE IF NOT EXISTS claims (
    cell_key TEXT PRIMARY KEY, run_id TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    claimed_at TEXT NOT NULL
)"""

#: Why a claim was refused (the reasons a run's summary counts).
HELD, STORED = "held by another run", "stored by another run"


def host() -> str:
    """This machine's name, as recorded in a claim."""
    return socket.gethostname()


def holder_alive(pid: int, on_host: str, claimed_at: str) -> bool:
    """Whether the process that took a claim still runs.

    A claim from another host cannot be checked from here and counts as alive.  On this host the
    process must exist, not be a zombie, and have started before the claim (a recycled pid is a
    different process).
    """
    if on_host != host():
        return True
    try:
        proc = psutil.Process(int(pid))
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        started = proc.create_time()
    except (psutil.Error, ValueError):
        return False
    try:
        when = datetime.fromisoformat(claimed_at).timestamp()
    except (TypeError, ValueError):
        return True
    return started <= when + 1.0


def take(con: sqlite3.Connection, keys: Iterable[str], run_id: str, since_seq: int | None) -> dict[str, str]:
    """Claim ``keys`` for ``run_id`` in one immediate transaction; return the refused ones with why.

    Parameters
    ----------
    con : sqlite3.Connection
        A connection with no transaction open.
    since_seq : int or None
        None: a cell with any history row is refused.  Otherwise only a row with ``seq`` above it
        (stored after this run started, by another run) refuses the cell (``--force``).
    """
    keys = list(keys)
    refused: dict[str, str] = {}
    pid, me, stamp = os.getpid(), host(), datetime.now(timezone.utc).isoformat(timespec="seconds")
    con.execute("BEGIN IMMEDIATE")
    try:
        for key in keys:
            cell = key[4:] if key.startswith("ref:") else key
            if key.startswith("ref:"):
                stored = False
            elif since_seq is None:
                stored = con.execute("SELECT 1 FROM history WHERE cell_key=? LIMIT 1", (cell,)).fetchone()
            else:
                stored = con.execute("SELECT 1 FROM history WHERE cell_key=? AND seq>? AND run_id<>? LIMIT 1",
                                     (cell, since_seq, run_id)).fetchone()
            if stored:
                refused[key] = STORED
                continue
            row = con.execute("SELECT run_id, pid, host, claimed_at FROM claims WHERE cell_key=?", (key,)).fetchone()
            if row is not None and row[0] != run_id and holder_alive(row[1], row[2], row[3]):
                refused[key] = HELD
                continue
            con.execute("INSERT OR REPLACE INTO claims (cell_key, run_id, pid, host, claimed_at) "
                        "VALUES (?, ?, ?, ?, ?)", (key, run_id, pid, me, stamp))
        con.execute("COMMIT")
    except BaseException:
        rollback(con)
        raise
    return refused


def rollback(con: sqlite3.Connection) -> None:
    """``ROLLBACK`` the open transaction, if SQLite has not already ended it: on a full disk or an
    I/O error it rolls back by itself, and a second ``ROLLBACK`` ("cannot rollback - no
    transaction is active") would hide the error that matters."""
    if con.in_transaction:
        try:
            con.execute("ROLLBACK")
        except sqlite3.OperationalError:  # ended meanwhile: the original error is raised by the caller
            pass


def release(con: sqlite3.Connection, keys: Iterable[str], run_id: str) -> None:
    """Delete ``run_id``'s claims of ``keys`` (inside the caller's transaction)."""
    con.executemany("DELETE FROM claims WHERE cell_key=? AND run_id=?", [(k, run_id) for k in keys])
