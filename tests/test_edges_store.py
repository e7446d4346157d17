"""Edges of the store: a run on a full disk (a real tmpfs), and a store left in WAL mode read from a
read-only folder."""

from __future__ import annotations

import os
import resource
import sqlite3
import subprocess
import sys
from pathlib import Path

from psdbench.harness.store import claims

from .test_cli_bad_input import cli, grid, snapshot
from .test_edges import _fill, _store_with_rows, small_disk  # noqa: F401 (fixture)


def test_run_on_a_full_disk_exits_3_and_leaves_the_store_byte_identical(small_disk):
    """A real 4 MiB tmpfs filled until it is full, then with 32 KiB and 512 KiB left: the run is refused
    before the store is opened (exit 3, one line), the store and its folder byte-identical."""
    _store_with_rows(small_disk / "s.sqlite", 5)
    (small_disk.parent / "g.toml").write_text(grid())
    for left in (0, 32 << 10, 512 << 10):
        _fill(small_disk)
        os.truncate(small_disk / "filler", os.path.getsize(small_disk / "filler") - left)
        before = snapshot(small_disk)
        code, out, err = cli(["run", "--grid", small_disk.parent / "g.toml", "--db", small_disk / "s.sqlite",
                              "--report", "", "--quiet"])
        assert code == 3 and out == "" and len(err.strip().splitlines()) == 1, err
        assert "disk full" in err and str(small_disk / "s.sqlite") in err and "internal error" not in err
        assert snapshot(small_disk) == before, left
        (small_disk / "filler").unlink()


def test_store_failing_inside_its_first_transaction_is_the_machines_condition(tmp_path):
    """A real file-size limit reached while the store opens (the write-ahead log's index cannot
    grow): exit 3 with one line, never SQLite's "cannot rollback" as an internal error; the rows kept."""
    _store_with_rows(tmp_path / "s.sqlite", 5)
    (tmp_path / "g.toml").write_text(grid())
    for kib in (8, 16, 32):
        res = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(tmp_path / "g.toml"), "--db",
                              str(tmp_path / "s.sqlite"), "--report", "", "--quiet", "--force"],
                             capture_output=True, text=True, timeout=300,
                             preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (kib << 10, kib << 10)))
        assert res.returncode == 3 and len(res.stderr.strip().splitlines()) == 1, (kib, res.stderr[-2000:])
        assert "internal error" not in res.stderr and "Traceback" not in res.stderr
        con = sqlite3.connect(tmp_path / "s.sqlite")
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert con.execute("SELECT count(*) FROM history").fetchone()[0] >= 5
        con.close()


def test_rollback_after_sqlite_ended_the_transaction_keeps_quiet(tmp_path):
    con = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    con.execute("CREATE TABLE t (x)")
    con.execute("BEGIN IMMEDIATE")
    con.execute("INSERT INTO t VALUES (1)")
    con.execute("ROLLBACK")  # as SQLite does by itself on SQLITE_FULL
    claims.rollback(con)  # no "cannot rollback - no transaction is active"
    assert not con.in_transaction


KILLED_WRITER = '''
import os, signal, sys
from psdbench.harness.store.results import CellResult
from psdbench.harness.store.db import Store
st = Store(sys.argv[1])
st.write_many([CellResult(run_id="r0", cell_key=f"k{i}", instance_key=f"i{i}", problem="graph-classification",
                          dataset="sklearn/breast-cancer", instance_params={"n": 30 + i}, solver="gdpa-lp",
                          status="ok", wall_time_s=0.1, objective=float(i), feasible=1) for i in range(5)])
os.kill(os.getpid(), signal.SIGKILL)
'''


def test_store_left_in_wal_mode_by_kill_9_is_read_from_a_read_only_folder(tmp_path):
    """A real ``kill -9`` of a writer, a real read-only file system (a tmpfs remounted read-only, as
    root; skipped where mounting is not permitted).  With the WAL's index beside it SQLite reads every
    row; without it (a copy of the store and its -wal) psdbench reads the store in SQLite's immutable
    mode, says that the rows may be incomplete, and changes nothing."""
    where = tmp_path / "ro"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=8m", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        import pytest

        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        writer = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(where / "s.sqlite")], timeout=120)
        assert writer.returncode == -9
        assert (where / "s.sqlite-wal").stat().st_size > 0  # the rows are in the WAL, not yet in the file
        (where / "s.sqlite-shm").unlink()  # as a copy of the store and its log has none
        assert subprocess.run(["mount", "-o", "remount,ro", str(where)]).returncode == 0
        before = snapshot(where)
        for cmd in (["results", "--all", "--format", "csv"], ["report", "--out", str(tmp_path / "rep")]):
            res = subprocess.run([sys.executable, "-m", "psdbench.cli", *cmd, "--db", str(where / "s.sqlite")],
                                 capture_output=True, text=True, timeout=300)
            assert res.returncode == 0, res.stderr
            assert res.stderr.count("\n") == 1 and "rows may be incomplete" in res.stderr and "immutable" in res.stderr
        assert snapshot(where) == before
        assert (tmp_path / "rep" / "report.html").is_file()
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)
