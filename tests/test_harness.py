"""Harness behaviour: failures are results (error / timeout / crashed), resume, bad input exits 2."""

import json
import os
import re
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from psdbench.harness.store.db import RESULT_COLUMNS, Store

FAULTY = '''
import os, signal, time
from psdbench.api import Solution


class _Base:
    kinds = ("graph-classification",)
    default_params = {}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {}


class Raises(_Base):
    name = "faulty-raise"

    def solve(self, instance, budget, **params):
        raise RuntimeError("this solver always fails")


class Hangs(_Base):
    name = "faulty-hang"

    def solve(self, instance, budget, **params):
        time.sleep(3600)


class Crashes(_Base):
    name = "faulty-crash"

    def solve(self, instance, budget, **params):
        os.kill(os.getpid(), signal.SIGKILL)


class Nan(_Base):
    name = "faulty-nan"

    def solve(self, instance, budget, **params):
        import numpy as np
        x = instance.x_true.copy(); x[-1] = np.nan
        return Solution(variables={"x": x})
'''

ENTRY_POINTS = """[psdbench.solvers]
faulty-raise = faulty_solvers:Raises
faulty-hang = faulty_solvers:Hangs
faulty-crash = faulty_solvers:Crashes
faulty-nan = faulty_solvers:Nan
broken-plugin = faulty_solvers_missing_module:Nope
"""


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    """A plugin on PYTHONPATH, discovered through its dist-info entry points like any installed one."""
    d = tmp_path_factory.mktemp("faulty")
    (d / "faulty_solvers.py").write_text(FAULTY)
    info = d / "faulty_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: faulty-solvers\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return d


class Out:
    def __init__(self, returncode, stdout, stderr):
        self.returncode, self.stdout, self.stderr = returncode, stdout, stderr


def cli(args, plugin_path=None):
    """The command line, in process (imports are paid once; cells still run in worker processes)."""
    import contextlib
    import io

    from psdbench.cli.commands import main

    old = list(sys.path)
    if plugin_path is not None:
        sys.path.insert(0, str(plugin_path))
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
    finally:
        sys.path[:] = old
    return Out(code, out.getvalue(), err.getvalue())


#: Seconds per cell (and per reference) where no deadline is tested: far beyond what any cell here
#: needs on a loaded machine, so that its verdict never depends on the machine's speed.  A test of a
#: deadline gives the cell that must time out a short limit and a job that never ends (a hang).
GENEROUS = 600


def grid(tmp_path, solvers, seeds=(0,), timeout=GENEROUS, name="g.toml", dataset="sklearn/breast-cancer"):
    body = f"""
    [run]
    seeds = {list(seeds)}
    timeout = {timeout}
    reference_timeout = {GENEROUS}

    [[problems]]
    name = "graph-classification"
    datasets = ["{dataset}"]
    params = {{ n = [30], graph = ["knn"], k = [5] }}
    """
    for s in solvers:
        body += f'\n[[solvers]]\nname = "{s}"\n'
    p = tmp_path / name
    p.write_text(textwrap.dedent(body))
    return p


def test_failures_are_recorded_and_the_grid_goes_on(tmp_path, plugin_path):
    db = tmp_path / "r.sqlite"
    # the failures beside a good cell, each with a generous limit: no verdict depends on the machine's speed
    g = grid(tmp_path, ["gdpa-lp", "faulty-raise", "faulty-crash", "faulty-nan"])
    out = cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--jobs", "2"], plugin_path)
    assert out.returncode == 0, out.stderr
    # the hang in the same store, 2 s (+ 2 s grace): a job that never ends times out however fast the machine
    hang = grid(tmp_path, ["faulty-hang"], timeout=2, name="hang.toml")
    out = cli(["run", "--grid", str(hang), "--db", str(db), "--report", "", "--quiet", "--jobs", "2"], plugin_path)
    assert out.returncode == 0, out.stderr
    # plugins are imported when a cell needs them: the broken one is not in the grid, so the run
    # never imports it; the commands that do (here list, reading the names) report it, not fatal
    assert "broken-plugin" not in out.stderr
    listed = cli(["list", "solvers"], plugin_path)
    assert listed.returncode == 0 and "plugin solvers:broken-plugin skipped (ModuleNotFoundError" in listed.stderr
    assert "faulty-raise\t" in listed.stdout
    df = Store(db).results_frame()
    assert len(df) == 5  # no row lost
    status = df.groupby("solver")["status"].agg(set).to_dict()
    assert status == {"gdpa-lp": {"ok"}, "faulty-raise": {"error"}, "faulty-hang": {"timeout"},
                      "faulty-crash": {"crashed"}, "faulty-nan": {"diverged"}}
    err = df[df.solver == "faulty-raise"].iloc[0]
    assert "RuntimeError: this solver always fails" in err.message and "Traceback" in err.message
    assert (df[df.solver == "faulty-hang"].wall_time_s >= 2).all()
    ok = df[df.solver == "gdpa-lp"]
    assert ok.reference_kind.eq("certified").all() and ok.gap_abs.notna().all() and (ok.gap_abs >= -1e-6).all()


def test_resume_runs_only_missing_cells(tmp_path):
    # Two fast solvers on two seeds (scs here made this the slowest harness test without testing
    # anything more).
    db = tmp_path / "r.sqlite"
    g = grid(tmp_path, ["gdpa-lp", "gdpa-lp-elim"], seeds=(0, 1))
    assert cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet"]).returncode == 0
    con = sqlite3.connect(db)
    first = dict(con.execute("SELECT cell_key, run_id FROM results").fetchall())
    assert len(first) == 4
    # simulate an interrupted run: two cells never got stored
    missing = sorted(first)[:2]
    con.executemany("DELETE FROM results WHERE cell_key=?", [(k,) for k in missing])
    con.commit()
    con.close()
    assert cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet"]).returncode == 0
    con = sqlite3.connect(db)
    second = dict(con.execute("SELECT cell_key, run_id FROM results").fetchall())
    runs = [r[0] for r in con.execute("SELECT run_id FROM runs ORDER BY started_at")]
    assert set(second) == set(first)
    assert {k for k in second if second[k] != first.get(k)} == set(missing)
    assert len(runs) == 2 and all(second[k] == runs[1] for k in missing)
    # --force re-runs everything
    assert cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--force"]).returncode == 0
    third = dict(sqlite3.connect(db).execute("SELECT cell_key, run_id FROM results").fetchall())
    assert len(set(third.values())) == 1 and set(third.values()).isdisjoint(second.values())


def test_interrupted_run_keeps_stored_rows(tmp_path, plugin_path):
    db = tmp_path / "r.sqlite"
    g = grid(tmp_path, ["gdpa-lp", "faulty-hang"], seeds=(0, 1, 2))
    env = dict(os.environ, PYTHONPATH=str(plugin_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(g), "--db", str(db),
                             "--report", "", "--jobs", "1"], env=env, start_new_session=True,
                            stderr=subprocess.PIPE, text=True)
    import time

    # the event, not a file: the first plain progress line is written once a cell is committed
    # (polling the store raced its creation: "no such table: results" with two suites at once)
    for line in proc.stderr:  # "psdbench: 0/6 cells (refs 1/1), ..." then "psdbench: 1/6 cells (1 ok; ..."
        if re.match(r"psdbench: [1-9]\d*/6 cells", line):
            break
    proc.kill()  # abrupt end: nothing gets a chance to clean up
    proc.wait()
    proc.stderr.close()
    # its workers notice and end on their own (no orphan keeps running the hanging solver)
    import signal

    deadline = time.time() + 120  # ends at the event; generous for a loaded machine
    while time.time() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.5)
    else:
        leftover = subprocess.run(["ps", "-o", "pid,args", "-g", str(proc.pid)], capture_output=True, text=True).stdout
        os.killpg(proc.pid, signal.SIGKILL)
        if "faulty" in leftover or "forkserver" in leftover:
            pytest.fail(f"worker processes outlived the killed run:\n{leftover}")
    stored = sqlite3.connect(db).execute("SELECT count(*) FROM results").fetchone()[0]
    assert 1 <= stored < 6
    g2 = grid(tmp_path, ["gdpa-lp"], seeds=(0, 1, 2), name="g2.toml")
    out = cli(["run", "--grid", str(g2), "--db", str(db), "--report", "", "--quiet"])
    assert out.returncode == 0
    df = Store(db).results_frame()
    assert set(df[df.solver == "gdpa-lp"].seed) == {0, 1, 2}


@pytest.mark.parametrize("case", ["malformed", "unknown-solver", "missing-dataset", "unknown-key"])
def test_bad_input_exits_2_with_one_line(tmp_path, case, monkeypatch):
    db = tmp_path / "keep.sqlite"
    g = grid(tmp_path, ["gdpa-lp"])
    assert cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet"]).returncode == 0
    if case == "malformed":
        bad = tmp_path / "bad.toml"
        bad.write_text("[run\nseeds = [0")
    elif case == "unknown-solver":
        bad = grid(tmp_path, ["no-such-solver"], name="bad.toml")
    elif case == "missing-dataset":
        monkeypatch.setenv("PSDBENCH_DATA", str(tmp_path))
        bad = grid(tmp_path, ["gdpa-lp"], name="bad.toml", dataset="uci/no-such-file")
    else:
        bad = tmp_path / "bad.toml"
        bad.write_text(g.read_text().replace("[run]", "[run]\nseedz = [1]"))
    out = cli(["run", "--grid", str(bad), "--db", str(db), "--report", "", "--quiet"])
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("psdbench: error:"), out.stderr
    assert len(Store(db).results_frame()) == 1  # nothing already stored was lost


def test_results_csv_has_design_columns(tmp_path):
    db = tmp_path / "r.sqlite"
    g = grid(tmp_path, ["gdpa-lp"])
    assert cli(["run", "--grid", str(g), "--db", str(db), "--report", str(tmp_path / "rep"), "--quiet"]).returncode == 0
    out = cli(["results", "--db", str(db), "--format", "csv"])
    header = out.stdout.splitlines()[0].split(",")
    for col in set(RESULT_COLUMNS) - {"trace"}:
        assert col in header
    assert "metric_error_rate" in header and "metric_lower_bound" in header
    assert (tmp_path / "rep" / "report.html").is_file() and (tmp_path / "rep" / "report.md").is_file()
    listed = cli(["list", "solvers"]).stdout
    assert "gdpa-lp" in listed and "scs" in listed and "clarabel" in listed


def test_dask_backend_isolates_cells(tmp_path, plugin_path):
    pytest.importorskip("distributed")
    db = tmp_path / "r.sqlite"
    g = grid(tmp_path, ["gdpa-lp", "faulty-crash"])
    out = cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--backend", "dask", "--jobs", "2"],
              plugin_path)
    assert out.returncode == 0, out.stderr
    df = Store(db).results_frame()
    assert dict(zip(df.solver, df.status)) == {"gdpa-lp": "ok", "faulty-crash": "crashed"}
