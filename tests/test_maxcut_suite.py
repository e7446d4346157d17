"""End to end: ``psdbench run --suite maxcut-small`` with the mixing method, as a user runs it."""

from __future__ import annotations

import sqlite3
import subprocess
import sys

import pytest


@pytest.mark.slow
def test_maxcut_small_suite_runs_and_references_are_certified(tmp_path):
    db = tmp_path / "m.db"
    p = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--suite", "maxcut-small", "-s", "maxcut-mixing",
                        "--db", str(db), "--jobs", "1", "--no-ref-cache", "--report", "", "--quiet"],
                       capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    con = sqlite3.connect(db)
    kinds = [r[0] for r in con.execute("select kind from refs")]
    assert len(kinds) == 6 and set(kinds) == {"certified"}
    rows = con.execute("select status, gap_rel from results").fetchall()
    assert len(rows) == 6 and all(s == "ok" and g is not None and g < 1e-6 for s, g in rows)
