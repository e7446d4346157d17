"""The command line a new user expects: help, --version, run -s / -d / -p, info,
list -v, results with solver parameters and real JSON, compare, the Python API, and read
commands that never modify a store."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pandas as pd
import pytest

import psdbench
from psdbench.harness.store.results import CellResult
from psdbench.harness.store.db import Store

from .test_cli_bad_input import cli, grid

GRID = {"run": {"seeds": [0], "timeout": 600, "reference": False},
        "problems": [{"name": "graph-classification", "datasets": ["sklearn/breast-cancer"],
                      "params": {"n": [30], "graph": ["knn"], "k": [5]}}],
        "solvers": [{"name": "gdpa-lp"}]}


def sha(path: Path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.fixture(scope="module")
def ran(tmp_path_factory):
    """One small run through the Python API (two solver configurations), shared by the tests."""
    d = tmp_path_factory.mktemp("ran")
    spec = {**GRID, "solvers": [{"name": "scs", "params": {"eps_abs": [1e-3, 1e-4]}}]}
    df = psdbench.run(spec, db=d / "r.sqlite", jobs=1)
    return d, df


def test_no_arguments_prints_help_and_runs_nothing(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, out, err = cli([])
    assert code == 0 and "usage: psdbench" in out and "compare" in out
    assert list(tmp_path.iterdir()) == []  # no store, no report


def test_version():
    code, out, _ = cli(["--version"])
    assert code == 0 and out.strip() == f"psdbench {psdbench.__version__}"


def test_info_lists_every_parameter_with_default_type_and_meaning(registry):
    from psdbench.api import param_specs

    code, out, _ = cli(["info", "graph-classification"])
    assert code == 0
    specs = param_specs(registry.problem("graph-classification"))
    for name, p in specs.items():
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(name + " "))
        assert json.dumps(p.default) in line and p.describe() in line and p.doc in line
    assert "'complete' or 'knn'" in out  # the choices of graph
    code, out, _ = cli(["info", "scs"])
    assert code == 0 and "eps_abs" in out and "passed on to the backend" in out


def test_either_params_describe_their_alternatives():
    from psdbench.api import choice, either, number

    p = either("hqic", "cv", number(low=0), default="hqic")
    assert p.describe() == "'hqic' | 'cv' | int or float in [0, inf]"
    assert choice("a", "b").describe() == "'a' or 'b'"
    assert number(low=1, integer=True, default=None).describe() == "int in [1, inf] or None"


def test_plain_defaults_check_the_kind_of_value():
    from psdbench.api import Param

    assert Param(default=1e-6).error(1) is None and Param(default=10).error(2.5) is None
    assert "a number" in Param(default=1e-6).error("tight")
    assert "a number" in Param(default=1e-6).error(True)
    assert "boolean" in Param(default=False).error("false") and Param(default=False).error(True) is None
    assert "a string" in Param(default="fast").error(3) and Param(default="fast").error("slow") is None
    assert Param(default=None).error("anything") is None and Param(default=1.0).error(None) is None


def test_list_verbose_shows_parameters():
    code, out, _ = cli(["list", "solvers", "-v"])
    assert code == 0
    block = out.split("\ngdpa-lp\t", 1)[1].split("\ngdpa-lp-elim\t", 1)[0]
    assert "(no parameters)" in block or " = " in block
    assert "eps_abs" in out.split("\nscs\t", 1)[1]


def test_api_run_returns_the_grid_cells_and_load_reads_them(ran):
    d, df = ran
    assert isinstance(df, pd.DataFrame) and len(df) == 2
    assert sorted(p["eps_abs"] for p in df["solver_params"]) == [1e-4, 1e-3]
    loaded = psdbench.load(d / "r.sqlite")
    assert set(loaded["cell_key"]) == set(df["cell_key"])


def test_api_rejects_bad_arguments_before_running(tmp_path):
    from psdbench.api import PsdbenchError

    with pytest.raises(PsdbenchError, match="jobs"):
        psdbench.run(GRID, db=tmp_path / "x.sqlite", jobs=0)
    with pytest.raises(PsdbenchError, match="timeout"):
        psdbench.run(GRID, db=tmp_path / "x.sqlite", timeout=math.nan)
    assert not (tmp_path / "x.sqlite").exists()


def test_results_table_shows_solver_params_and_json_is_objects(ran):
    d, _ = ran
    code, out, _ = cli(["results", "--db", d / "r.sqlite"])
    assert code == 0 and "solver_params" in out.splitlines()[0]
    assert '{"eps_abs": 0.001}' in out and '{"eps_abs": 0.0001}' in out  # the two configurations differ
    code, out, _ = cli(["results", "--db", d / "r.sqlite", "--format", "json"])
    rows = json.loads(out)
    assert len(rows) == 2
    for r in rows:
        assert isinstance(r["solver_params"], dict) and isinstance(r["instance_params"], dict)
        assert isinstance(r["metrics"], dict) and isinstance(r["curve"], list)
        assert r["instance_params"]["n"] == 30


def test_read_commands_never_modify_the_store(ran, tmp_path):
    d, _ = ran
    db = d / "r.sqlite"
    before = sha(db)
    files = sorted(p.name for p in d.iterdir())
    assert cli(["results", "--db", db, "--format", "csv"])[0] == 0
    assert cli(["report", "--db", db, "--out", tmp_path / "rep"])[0] == 0
    assert cli(["compare", db, db])[0] == 0
    assert sha(db) == before and sorted(p.name for p in d.iterdir()) == files
    assert (tmp_path / "rep" / "report.html").is_file()


def test_run_selects_solvers_and_datasets_without_a_toml(tmp_path):
    g = tmp_path / "g.toml"
    g.write_text(grid())
    code, out, err = cli(["run", "--grid", g, "-s", "gdpa-lp-elim", "-d", "sklearn/wine", "--db",
                          tmp_path / "s.sqlite", "--report", "", "--quiet"])
    assert code == 0, err
    df = Store(tmp_path / "s.sqlite").results_frame()
    assert list(df["solver"]) == ["gdpa-lp-elim"] and list(df["dataset"]) == ["sklearn/wine"]


def test_restrict_keeps_and_adds_entries():
    from psdbench.harness.grid.expand import restrict

    spec = {"problems": [{"name": "a", "datasets": ["x/1"], "params": {"n": [3]}}, {"name": "b", "datasets": ["x/2"]}],
            "solvers": [{"name": "s1", "params": {"t": [1]}}, {"name": "s2"}]}
    out = restrict(spec, solvers=["s1", "s3"], datasets=["y/9"], problems=["a"])
    assert out["problems"] == [{"name": "a", "datasets": ["y/9"], "params": {"n": [3]}}]
    assert out["solvers"] == [{"name": "s1", "params": {"t": [1]}}, {"name": "s3"}]
    assert restrict(spec) == spec


def test_selectors_set_parameters_as_benchopt_does(tmp_path):
    from psdbench.harness.grid.expand import parse_selector, restrict
    from psdbench.session import prepare

    assert parse_selector("scs[eps_abs=1e-3, max_iters=[100, 200]]") == ("scs", {"eps_abs": 1e-3,
                                                                               "max_iters": [100, 200]})
    assert parse_selector("graph-classification[graph=knn]") == ("graph-classification", {"graph": "knn"})
    assert parse_selector(" gdpa-lp ") == ("gdpa-lp", None)
    spec = {"problems": [{"name": "a", "datasets": ["x/1"], "params": {"n": [3], "k": [1]}}], "solvers": []}
    assert restrict(spec, problems=["a[n=[5, 6]]"])["problems"][0]["params"] == {"n": [5, 6], "k": [1]}
    p = prepare(GRID, solvers=["scs[eps_abs=[1e-3, 1e-4]]"], problems=["graph-classification[n=40]"],
                db=tmp_path / "x.sqlite")
    assert sorted(c.solver_params["eps_abs"] for c in p.grid.cells) == [1e-4, 1e-3]
    assert {c.instance_params["n"] for c in p.grid.cells} == {40}
    assert not (tmp_path / "x.sqlite").exists()


def _row(key: str, solver: str, time: float, gap: float | None, status: str = "ok", err: float = 0.1,
         **kw) -> CellResult:
    return CellResult(run_id="r", cell_key=key, instance_key="i" + key, problem="p", dataset="d/x",
                      instance_params={"n": int(key[-1])}, solver=solver, status=status, wall_time_s=time,
                      objective=1.0, gap_rel=gap, feasible=1, metrics={"error_rate": err, "other": 1.0}, **kw)


def test_compare_flags_regressions_per_cell_and_per_solver(tmp_path):
    a, b = Store(tmp_path / "a.sqlite"), Store(tmp_path / "b.sqlite")
    for r in [_row("k1", "s", 1.0, 0.0), _row("k2", "s", 1.0, 0.0), _row("k3", "t", 0.5, 1e-3, err=0.2),
              _row("k4", "t", 1.0, 0.0)]:
        a.write_result(r)
    # B: k1 twice as slow, k2 unchanged, k3 better gap and error, k4 ok -> error; keys differ (as
    # across psdbench versions): cells are matched on what they are; k5 only in B
    for r in [_row("K1", "s", 2.0, 0.0), _row("K2", "s", 1.0, 0.0), _row("K3", "t", 0.5, 0.0, err=0.1),
              _row("K4", "t", 1.0, None, status="error"), _row("K5", "t", 1.0, 0.0)]:
        b.write_result(r)
    code, out, err = cli(["compare", tmp_path / "a.sqlite", tmp_path / "b.sqlite", "--format", "json"])
    assert code == 0, err
    res = json.loads(out)
    flags = {c["instance_params"]["n"]: c["flags"] for c in res["cells"]}
    assert flags == {1: "slower", 2: "", 3: "", 4: "status,gap"}
    cell1 = next(c for c in res["cells"] if c["instance_params"]["n"] == 1)
    assert cell1["time_ratio"] == 2.0 and cell1["d_metric_error_rate"] == 0.0
    cell3 = next(c for c in res["cells"] if c["instance_params"]["n"] == 3)
    assert cell3["gap_change"] == -1e-3 and cell3["d_metric_error_rate"] == pytest.approx(-0.1)
    solvers = {s["solver"]: s for s in res["solvers"]}
    assert solvers["s"]["time_ratio_gmean"] == pytest.approx(math.sqrt(2.0))
    assert solvers["s"]["regressions"] == 1 and solvers["t"]["status_regressions"] == 1
    assert res["only_in_a"] == 0 and res["only_in_b"] == 1
    code, out, _ = cli(["compare", tmp_path / "a.sqlite", tmp_path / "b.sqlite", "--only-flagged"])
    assert code == 0 and "4 matched cells (0 only in" in out and "2 flagged" in out


def _seeded(solver: str, seed: int, time: float, gap: float, err: float = 0.1, status: str = "ok") -> CellResult:
    # graph-classification: its tracked suite (gdpa-wdbc-small) declares error_rate, lower is better
    return CellResult(run_id="r", cell_key=f"{solver}{seed}", instance_key=f"i{seed}", problem="graph-classification",
                      dataset="d/x",
                      instance_params={"n": 5, "fold": seed}, seed=seed, solver=solver, status=status,
                      wall_time_s=time, objective=10.0 + gap, reference_objective=10.0, gap_abs=gap,
                      gap_rel=gap / 10.0, feasible=1, metrics={"error_rate": err})


def test_compare_names_the_configurations_worse_beyond_their_spread_and_fails_when_asked(tmp_path):
    a, b = Store(tmp_path / "a.sqlite"), Store(tmp_path / "b.sqlite")
    for seed in range(3):  # three folds of one instance set (fold is a replicate) per configuration
        a.write_result(_seeded("noisy", seed, [1.0, 1.2, 1.4][seed], 0.0))
        b.write_result(_seeded("noisy", seed, [1.5, 1.3, 1.6][seed], 0.0))  # 1.25x, but within A's 0.4 s spread
        a.write_result(_seeded("slow", seed, 1.0, 0.0))
        b.write_result(_seeded("slow", seed, 2.0, 0.0))
        a.write_result(_seeded("gap", seed, 1.0, [0.0, 0.1, 0.2][seed]))
        b.write_result(_seeded("gap", seed, 1.0, [0.5, 0.6, 0.7][seed]))  # ranked gap 0.1 -> 0.6, spread 0.2
        a.write_result(_seeded("metric", seed, 1.0, 0.0, err=[0.10, 0.11, 0.12][seed]))
        b.write_result(_seeded("metric", seed, 1.0, 0.0, err=[0.30, 0.31, 0.32][seed]))
    code, out, err = cli(["compare", tmp_path / "a.sqlite", tmp_path / "b.sqlite", "--format", "json"])
    assert code == 0, err  # regressions are named; the status changes only when asked
    worse = {r["config"]: r["worse"] for r in json.loads(out)["regressions"]}
    assert worse == {"slow": "time", "gap": "gap", "metric": "metric_error_rate"}
    assert all(r["cells"] == 3 and r["instance_set"] == "graph-classification: d/x (n=5)" for r in json.loads(out)["regressions"])
    code, out, err = cli(["compare", tmp_path / "a.sqlite", tmp_path / "b.sqlite", "--fail-on-regression"])
    assert code == 4 and "3 configurations worse beyond their spread" in out, out + err
    assert "  slow on graph-classification: d/x (n=5): time (time 1 -> 2 s" in out
    assert max(len(line) for line in out.splitlines() if not line.startswith(("A = ", "B = "))) <= 120
    code, out, _ = cli(["compare", tmp_path / "a.sqlite", tmp_path / "a.sqlite", "--fail-on-regression"])
    assert code == 0 and "0 configurations worse" in out


def test_compare_flags_a_metric_by_its_declared_direction_only():
    """Directions come from declarations (a suite's [asv] table, a family's ranking metric), never
    from a metric's name: max_err on an SDP problem (sdp-generated declares it) rising is flagged,
    error_rate of an undeclared problem is not."""
    from psdbench.report.compare import compare_cells
    from psdbench.harness.asvspec import Direction, declared_directions
    from psdbench.registry import discover

    directions = declared_directions(discover())
    assert directions[("sdp/standard", "max_err")] == Direction(0.0, "min", "suite sdp-generated's [asv] table")
    assert directions[("graph-classification", "error_rate")].best == 0.0
    assert ("p", "error_rate") not in directions
    row = _row("k1", "s", 1.0, 0.0, err=0.1).as_dict()
    a = pd.DataFrame([{**row, "problem": "sdp/standard", "metric_max_err": 1e-8, "metric_other": 1.0},
                      {**row, "cell_key": "k2", "metric_error_rate": 0.1}])
    b = a.assign(metric_max_err=[1e-3, math.nan], metric_error_rate=[0.1, 0.3], metric_other=5.0)
    flags = compare_cells(a, b, directions=directions)["flags"].tolist()
    assert flags == ["metric_max_err", ""]  # problem "p" declares nothing: its error_rate is shown, not flagged
    assert compare_cells(b, a, directions=directions)["flags"].tolist() == ["", ""]  # a fall of max_err is better
    better = Direction(1.0, "min")  # an F-measure's declaration: 0.9 -> 0.8 is worse, 0.9 -> 1.0 better
    assert better.cost(0.8) > better.cost(0.9) > better.cost(1.0)


def test_compare_agrees_with_asv_on_every_tracked_metric_of_the_default_suites():
    """psdbench compare's direction of each tracked suite's metric is asv's: the cost |metric - best|
    of the same [asv] table, for every problem of the suite."""
    from psdbench.harness.asvspec import declared_directions
    from psdbench.asvbench.tracked import tracked_cases, tracked_suites
    from psdbench.registry import discover

    reg = discover()
    directions = declared_directions(reg)
    checked = 0
    for suite in tracked_suites(reg):
        grid, settings, _ = tracked_cases(suite, reg)
        if settings["metric"] is None:
            continue
        for problem in {c.problem for c in grid.cells}:
            d = directions[(problem, settings["metric"])]
            assert d.best == settings["metric_best"], (suite, problem)
            checked += 1
    assert checked >= 5


def test_a_version_1_store_is_read_as_it_is_not_migrated(tmp_path):
    import sqlite3

    from .test_harness_store import V1_COLUMNS, V1_SCHEMA

    path = tmp_path / "v1.sqlite"
    con = sqlite3.connect(path)
    con.executescript(V1_SCHEMA)
    vals = {c: None for c in V1_COLUMNS}
    vals.update(run_id="old", cell_key="a", instance_key="i", problem="p", dataset="d", instance_params='{"n": 3}',
                seed=0, solver="s", solver_params="{}", status="ok", message="", objective=1.5, feasible=1,
                metrics='{"m": 2.0}', trace="[]", created_at="2024-01-01T00:00:00+00:00")
    con.execute(f"INSERT INTO results ({', '.join(V1_COLUMNS)}) VALUES ({', '.join('?' * len(V1_COLUMNS))})",
                [vals[c] for c in V1_COLUMNS])
    con.commit()
    con.close()
    before = sha(path)
    code, out, err = cli(["results", "--db", path, "--format", "json"])
    assert code == 0, err
    (row,) = json.loads(out)
    assert row["objective"] == 1.5 and row["instance_params"] == {"n": 3} and row["metric_m"] == 2.0
    assert sha(path) == before  # still version 1: only a run migrates it


def test_the_command_process_stays_single_threaded_so_its_workers_fork(tmp_path):
    """Without BLAS variables in the environment, numpy's pool would start threads in the command's
    process and rule out forking its workers (each would wait for the fork server's imports)."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")}
    code = ("import os, psdbench.cli.commands, numpy\n"
            "from psdbench.registry import discover\n"
            "from psdbench.harness.workers.process import fork_context\n"
            "discover()\n"
            "print(len(os.listdir('/proc/self/task')), fork_context() is not None)\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["1", "True"]


def test_a_run_with_nothing_to_do_leaves_its_report_as_it_is(tmp_path):
    """The report is rewritten when what it shows changed (a cell ran) or on request (`report`),
    not by a resumed run that computed nothing: same inode, same modification time, same bytes."""
    (tmp_path / "g.toml").write_text(grid(run="seeds = [0]\ntimeout = 600\nreference = false",
                                          solver='name = "gdpa-lp"'))
    out, db = tmp_path / "rep", tmp_path / "s.sqlite"
    run = ["run", "--grid", tmp_path / "g.toml", "--db", db, "--report", out, "--quiet", "--jobs", "1"]
    code, stdout, err = cli(run)
    assert code == 0 and "report: " in stdout, err

    def state() -> tuple[int, int, str]:
        st = (out / "report.html").stat()
        return st.st_ino, st.st_mtime_ns, sha(out / "report.html")

    first = state()
    code, stdout, err = cli(run)
    assert code == 0 and "(0 run now" in stdout and "unchanged (no cell changed" in stdout, stdout + err
    assert state() == first
    code, stdout, err = cli(["report", "--db", db, "--out", out])  # on request: written again
    assert code == 0 and state()[0] != first[0], err
    requested = state()
    code, stdout, err = cli([*run, "--force"])  # a cell ran: written again
    assert code == 0 and "(1 run now" in stdout and "unchanged" not in stdout, stdout + err
    assert state()[:2] != requested[:2]
