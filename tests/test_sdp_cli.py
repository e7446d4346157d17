"""The SDP family end to end: a user's SDPA folder and a generator through ``psdbench run`` and
``report``, and a malformed user file rejected before any work (exit 2, one line, no store)."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from psdbench.families.sdp.generators import theta
from psdbench.families.sdp.sdpa_io import write_sdpa


def _cli(args: list[str]) -> tuple[int, str, str]:
    from psdbench.cli.commands import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main([str(a) for a in args])
    return code, out.getvalue(), err.getvalue()


GRID = """
[run]
name = "sdp-e2e"
seeds = [0]
timeout = 600
reference_timeout = 600

[[problems]]
name = "sdp/standard"
datasets = ["sdpa-dir/theta9", "sdp-gen/maxcut"]
params = { n = [8] }

[[solvers]]
name = "sdp-clarabel"

[[solvers]]
name = "sdp-scs"
"""


@pytest.mark.slow  # worker processes and references in fresh processes: minutes on a loaded 2-core machine
def test_user_folder_and_generator_run_and_report(tmp_path: Path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    write_sdpa(theta(9, 0.4, 3), folder / "theta9.dat-s")  # a problem psdbench has never seen
    monkeypatch.setenv("PSDBENCH_SDPA_DIR", str(folder))
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    db, rep = tmp_path / "s.sqlite", tmp_path / "rep"
    code, out, err = _cli(["run", "--grid", grid, "--db", db, "--jobs", "1", "--quiet", "--report", rep])
    assert code == 0, err
    md = (rep / "report.md").read_text()
    assert "Per problem and solver" in md and "Shifted geometric mean" in md and "Achieved accuracy" in md
    import pandas as pd

    cells = pd.read_csv(rep / "sdp_cells.csv")
    clar = cells[cells["solver"] == "sdp-clarabel"]
    if set(clar["status"]) != {"ok"}:  # say why, from the store's own record of the cell
        import sqlite3

        with sqlite3.connect(db) as con:
            rows = con.execute("select solver, dataset, status, message, wall_time_s from results where status != 'ok'").fetchall()
        pytest.fail(f"sdp-clarabel cells not ok: {clar.to_dict('records')}\nstore rows: {rows}")
    assert (pd.to_numeric(clar["max DIMACS err"]) <= 1e-6).all()
    import sqlite3

    with sqlite3.connect(db) as con:  # the references, computed in the harness's daemonic workers
        refs = con.execute("select kind, message from refs").fetchall()
    assert refs and all(kind == "certified" for kind, _ in refs), refs  # theta and max-cut fix tr(X)
    assert not any("Error" in msg for _, msg in refs), refs  # no candidate failed to start


def test_malformed_user_file_is_exit_2_before_work(tmp_path: Path, monkeypatch):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "theta9.dat-s").write_text("1\n1\n2\n1.0\n0 1 3 1 1.0\n")
    monkeypatch.setenv("PSDBENCH_SDPA_DIR", str(folder))
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID)
    db = tmp_path / "s.sqlite"
    code, out, err = _cli(["run", "--grid", grid, "--db", db, "--jobs", "1", "--quiet", "--report", ""])
    assert code == 2
    assert "outside its block" in err and len(err.strip().splitlines()) == 1
    assert not db.exists()


def test_folder_run_with_one_bad_file_stops_before_work_naming_it(tmp_path: Path, monkeypatch):
    """A folder run (``sdpa-dir/*``) stops before any work when one file is malformed: exit 2, one
    line naming that file and its line, no store; the good files are not run without it."""
    folder = tmp_path / "mine"
    folder.mkdir()
    write_sdpa(theta(7, 0.4, 1), folder / "a.dat-s")
    write_sdpa(theta(8, 0.4, 2), folder / "c.dat-s")
    (folder / "b.dat-s").write_text("1\n2\n2\n1.0\n0 1 1 1 1.0\n1 1 1 1 1.0\n")  # 2 blocks, one size
    monkeypatch.setenv("PSDBENCH_SDPA_DIR", str(folder))
    grid = tmp_path / "grid.toml"
    grid.write_text(GRID.replace('"sdpa-dir/theta9", "sdp-gen/maxcut"', '"sdpa-dir/*"'))
    db = tmp_path / "s.sqlite"
    code, out, err = _cli(["run", "--grid", grid, "--db", db, "--jobs", "1", "--quiet", "--report", ""])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{folder / 'b.dat-s'}:3: 2 blocks declared but the block-size line holds 1 number" in err
    assert not db.exists()


@pytest.mark.parametrize("value, why", [("nan", "'nan' is not a number (nan)"), ("inf", "'inf' is not a finite number"),
                                        ("1e400", "'1e400' overflows double precision"),
                                        ("1_0", "'1_0' is not a number in the SDPA format")])
@pytest.mark.parametrize("where", ["c", "entry"])
def test_a_non_number_is_exit_2_with_file_and_line_before_work(tmp_path: Path, monkeypatch, value, why, where):
    """``psdbench run -d sdpa-dir/...`` on a file holding nan, inf, 1e400 or 1_0 (in c or an entry's
    value): exit 2, one line naming the file and its line, no store written."""
    folder = tmp_path / "mine"
    folder.mkdir()
    c, v = (value, "1.0") if where == "c" else ("1.0", value)
    (folder / "p.dat-s").write_text(f'"a comment\n1\n1\n2\n{c}\n0 1 1 1 1.0\n1 1 1 1 {v}\n')
    monkeypatch.setenv("PSDBENCH_SDPA_DIR", str(folder))
    db = tmp_path / "s.sqlite"
    code, out, err = _cli(["run", "-p", "sdp/standard", "-d", "sdpa-dir/p", "-s", "sdp-clarabel", "--db", db,
                           "--jobs", "1", "--quiet", "--report", ""])
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert f"{folder / 'p.dat-s'}:{5 if where == 'c' else 7}: " in err and why in err
    assert not db.exists()
