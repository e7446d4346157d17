"""Every user error is exit 2 with one line on stderr naming the field or file, before any work
starts and with every file left byte-identical.

The table below holds the malformed inputs: grid fields and values, command-line flags, data
files, store files, output paths and plugins.  Each case builds its inputs in a fresh folder that
also holds a psdbench store with one row; after the command, every file of the folder must have
the same bytes and no file may have appeared.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import io
import os
import sqlite3
import sys
from pathlib import Path
from typing import Callable

import pytest

from psdbench.harness.store.results import CellResult
from psdbench.harness.store.db import Store

BASE_RUN = 'seeds = [0]\ntimeout = 600\nreference = false'
BASE_PROBLEM = 'name = "graph-classification"\ndatasets = ["sklearn/breast-cancer"]\nparams = { n = [30], graph = ["knn"], k = [5] }'
BASE_SOLVER = 'name = "gdpa-lp"'

PLUGIN = '''
import sys


class VersionsRaise:
    name = "versions-raise"
    kinds = ("*",)
    default_params = {}

    def supports(self, instance):
        return True

    def library_versions(self):
        raise RuntimeError("version lookup broken")

    def solve(self, instance, budget, **params):
        raise RuntimeError("never called")


class Plain:
    """A plugin solver with plain default_params and no Param specs."""

    name = "plain"
    kinds = ("*",)
    default_params = {"tol": 1e-6, "verbose": False, "method": "fast"}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {}

    def solve(self, instance, budget, **params):
        raise RuntimeError("never called")


class NamesRaise:
    def names(self):
        raise RuntimeError("names broken")

    def load(self, name):
        raise RuntimeError("load broken")


class NamesExit:
    def names(self):
        sys.exit(0)

    def load(self, name):
        sys.exit(0)


class LoadRaise:
    def names(self):
        return ["x"]

    def load(self, name):
        raise KeyError(name)
'''
ENTRY_POINTS = """[psdbench.solvers]
versions-raise = cli_badplug:VersionsRaise
exits-solver = cli_exitplug:Solver
plain = cli_badplug:Plain

[psdbench.datasets]
namesraise = cli_badplug:NamesRaise
namesexit = cli_badplug:NamesExit
loadraise = cli_badplug:LoadRaise
"""


def grid(run: str = BASE_RUN, problem: str = BASE_PROBLEM, solver: str = BASE_SOLVER, extra: str = "") -> str:
    return f"[run]\n{run}\n\n[[problems]]\n{problem}\n\n[[solvers]]\n{solver}\n{extra}"


def problem(datasets: str = '["sklearn/breast-cancer"]', params: str = '{ n = [30], graph = ["knn"], k = [5] }',
            name: str = "graph-classification") -> str:
    return f'name = "{name}"\ndatasets = {datasets}\nparams = {params}'


# ------------------------------------------------------------------------------ the table
# id -> (what to set up, expected text in the message).  A setup gets the case folder and returns
# the command-line arguments; grid cases are written to g.toml and run with --db store.sqlite.
GRID_CASES: dict[str, tuple[str, str]] = {
    "timeout-zero": (grid(run="timeout = 0"), "timeout"),
    "timeout-negative": (grid(run="timeout = -5"), "timeout"),
    "timeout-string": (grid(run='timeout = "10"'), "timeout"),
    "timeout-nan": (grid(run="timeout = nan"), "timeout"),
    "timeout-inf": (grid(run="timeout = inf"), "timeout"),
    "timeout-bool": (grid(run="timeout = true"), "timeout"),
    "reference-timeout-zero": (grid(run="reference_timeout = 0"), "reference_timeout"),
    "reference-timeout-string": (grid(run='reference_timeout = "fast"'), "reference_timeout"),
    "memory-negative": (grid(run="memory_mb = -1"), "memory_mb"),
    "memory-string": (grid(run='memory_mb = "lots"'), "memory_mb"),
    "memory-float": (grid(run="memory_mb = 1.5"), "memory_mb"),
    "reference-string-false": (grid(run='reference = "false"'), "reference"),
    "reference-int": (grid(run="reference = 1"), "reference"),
    "save-solutions-string": (grid(run='save_solutions = "yes"'), "save_solutions"),
    "seeds-empty": (grid(run="seeds = []"), "seeds"),
    "seeds-strings": (grid(run='seeds = ["a"]'), "seeds"),
    "seeds-negative": (grid(run="seeds = [-1]"), "seeds"),
    "seeds-scalar": (grid(run="seeds = 3"), "seeds"),
    "run-unknown-key": (grid(run="seedz = [1]"), "seedz"),
    "run-name-int": (grid(run="name = 5"), "name"),
    "unknown-section": (grid(extra="\n[extra]\nx = 1\n"), "extra"),
    "no-solvers": (f"[run]\n{BASE_RUN}\n\n[[problems]]\n{BASE_PROBLEM}\n", "[[solvers]]"),
    "problem-without-name": (grid(problem='datasets = ["sklearn/wine"]'), "problems[0]"),
    "problem-unknown-key": (grid(problem=BASE_PROBLEM + '\nsize = 3'), "problems[0]"),
    "datasets-empty": (grid(problem=problem(datasets="[]")), "datasets"),
    "datasets-not-list": (grid(problem=problem(datasets='"sklearn/wine"')), "datasets"),
    "dataset-name-int": (grid(problem=problem(datasets="[3]")), "dataset"),
    "dataset-unknown-collection": (grid(problem=problem(datasets='["nope/wine"]')), "nope/wine"),
    "dataset-unknown-name": (grid(problem=problem(datasets='["sklearn/wines"]')), "sklearn/wines"),
    "problem-unknown": (grid(problem=problem(name="graph-clasification")), "graph-clasification"),
    "solver-unknown": (grid(solver='name = "gdpa-l"'), "gdpa-l"),
    "solver-unknown-key": (grid(solver='name = "gdpa-lp"\noptions = {}'), "solvers[0]"),
    "where-not-table": (grid(solver='name = "gdpa-lp"\nwhere = 3'), "where"),
    "where-key-typo": (grid(solver='name = "gdpa-lp"\nwhere = { nn = [30] }'), "nn"),
    "where-matches-nothing": (grid(solver='name = "gdpa-lp"\nwhere = { n = [999] }'), "gdpa-lp"),
    "solver-matches-no-problem": (grid(solver='name = "dykstra"'), "dykstra"),
    "params-empty-list": (grid(problem=problem(params="{ n = [] }")), "empty list"),
    "params-not-table": (grid(problem=problem(params="[1, 2]")), "params"),
    "n-negative": (grid(problem=problem(params="{ n = [-5] }")), "parameter n"),
    "n-string": (grid(problem=problem(params='{ n = ["fifty"] }')), "parameter n"),
    "n-float": (grid(problem=problem(params="{ n = [2.5] }")), "parameter n"),
    "n-larger-than-dataset": (grid(problem=problem(params="{ n = [1000] }")), "n = 1000"),
    "graph-unknown": (grid(problem=problem(params='{ graph = ["foo"] }')), "graph"),
    "k-zero": (grid(problem=problem(params="{ k = [0] }")), "parameter k"),
    "scaling-int": (grid(problem=problem(params="{ scaling = [3] }")), "scaling"),
    "problem-param-unknown": (grid(problem=problem(params="{ nn = [30] }")), "nn"),
    "fold-beyond-folds": (grid(problem=problem(params="{ fold = [7], n_folds = [5] }")), "fold"),
    "solver-option-type": (grid(solver='name = "scs"\nparams = { eps_abs = ["tight"] }'), "eps_abs"),
    "solver-param-unknown": (grid(solver='name = "gdpa-lp"\nparams = { speed = [1] }'), "speed"),
    "malformed-toml": ("[run\nseeds = [0", "g.toml"),
    "plugin-library-versions-raises": (grid(solver='name = "versions-raise"'), "versions-raise"),
    "plugin-exits-at-import": (grid(solver='name = "exits-solver"'), "exits-solver"),
    "plugin-plain-string-for-number": (grid(solver='name = "plain"\nparams = { tol = ["tight"] }'), "tol"),
    "plugin-plain-bool-as-string": (grid(solver='name = "plain"\nparams = { verbose = ["false"] }'), "verbose"),
    "plugin-plain-number-for-string": (grid(solver='name = "plain"\nparams = { method = [3] }'), "method"),
    "plugin-names-raises": (grid(problem=problem(datasets='["namesraise/x"]')), "namesraise/x"),
    "plugin-names-exits": (grid(problem=problem(datasets='["namesexit/x"]')), "namesexit/x"),
    "plugin-load-raises": (grid(problem=problem(datasets='["loadraise/x"]')), "loadraise/x"),
}

# data files under PSDBENCH_DATA/binary_classification/<stem>.csv[.gz]
DATA_CASES: dict[str, tuple[str, bytes]] = {
    "data-nan-labels": ("bad.csv", b"1,2,1\n3,4,nan\n5,6,-1\n"),
    "data-strings": ("bad.csv", b"1,2,1\n3,four,-1\n5,6,1\n"),
    "data-header": ("bad.csv", b"a,b,label\n1,2,1\n3,4,-1\n"),
    "data-one-class": ("bad.csv", b"1,2,1\n3,4,1\n5,6,1\n"),
    "data-empty": ("bad.csv", b""),
    "data-semicolons": ("bad.csv", b"1;2;1\n3;4;-1\n5;6;1\n"),
    "data-ragged": ("bad.csv", b"1,2,1\n3,-1\n5,6,7,1\n"),
    "data-corrupt-gzip": ("bad.csv.gz", gzip.compress("".join(f"{i},{i * 7 % 13},{i % 2}\n" for i in range(2000))
                                                          .encode())[:2000]),
    "data-not-gzip": ("bad.csv.gz", b"1,2,1\n3,4,-1\n"),
    "data-infinite-feature": ("bad.csv", b"1,inf,1\n3,4,-1\n5,6,1\n"),
    "data-label-only": ("bad.csv", b"1\n-1\n1\n"),
}


def _flag_cases() -> dict[str, tuple[Callable[[Path], list[str]], str]]:
    def run(*extra: str) -> Callable[[Path], list[str]]:
        def setup(d: Path) -> list[str]:
            (d / "ok.toml").write_text(grid())
            return ["run", "--grid", str(d / "ok.toml"), "--db", str(d / "store.sqlite"), "--report", "", "--quiet",
                    *extra]
        return setup

    def solutions_file(d: Path) -> list[str]:  # where --save-solutions would put its folder
        (d / "store.solutions").write_text("not a folder\n")
        return run("--save-solutions")(d)

    def sqlite_foreign(d: Path) -> Path:
        p = d / "foreign.sqlite"
        con = sqlite3.connect(p)
        con.execute("CREATE TABLE people (name TEXT)")
        con.execute("INSERT INTO people VALUES ('ada')")
        con.commit()
        con.close()
        return p

    def newer(d: Path) -> Path:
        p = d / "future.sqlite"
        Store(p).close()
        con = sqlite3.connect(p)
        con.execute("UPDATE meta SET value='9' WHERE key='schema_version'")
        con.commit()
        con.close()
        return p

    def text_file(d: Path) -> Path:
        p = d / "notes.txt"
        p.write_text("not a database\n")
        return p

    def empty(d: Path) -> Path:
        p = d / "empty.sqlite"
        p.write_bytes(b"")
        return p

    def run_db(make: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
        def setup(d: Path) -> list[str]:
            (d / "ok.toml").write_text(grid())
            return ["run", "--grid", str(d / "ok.toml"), "--db", str(make(d)), "--report", "", "--quiet"]
        return setup

    def read_db(cmd: str, make: Callable[[Path], Path]) -> Callable[[Path], list[str]]:
        def setup(d: Path) -> list[str]:
            args = {"results": ["results", "--db"], "report": ["report", "--out", str(d / "rep"), "--db"],
                    "compare": ["compare", str(d / "store.sqlite")]}[cmd]
            return [*args, str(make(d))]
        return setup

    folder = lambda d: (d / "adir").mkdir() or d / "adir"  # noqa: E731
    missing_folder = lambda d: d / "no-such-folder" / "s.sqlite"  # noqa: E731
    missing = lambda d: d / "missing.sqlite"  # noqa: E731

    def report_out(where: Callable[[Path], Path], flag: str = "--out") -> Callable[[Path], list[str]]:
        def setup(d: Path) -> list[str]:
            if flag == "--out":
                return ["report", "--db", str(d / "store.sqlite"), "--out", str(where(d))]
            (d / "ok.toml").write_text(grid())
            return ["run", "--grid", str(d / "ok.toml"), "--db", str(d / "store.sqlite"), "--report", str(where(d))]
        return setup

    def under_file(d: Path) -> Path:
        return text_file(d) / "rep"

    def fixed(*args: str) -> Callable[[Path], list[str]]:
        return lambda d: list(args)

    return {
        "flag-jobs-zero": (run("--jobs", "0"), "--jobs"),
        "flag-jobs-negative": (run("--jobs", "-1"), "--jobs"),
        "flag-jobs-word": (run("--jobs", "two"), "--jobs"),
        "flag-timeout-nan": (run("--timeout", "nan"), "--timeout"),
        "flag-timeout-zero": (run("--timeout", "0"), "--timeout"),
        "flag-timeout-negative": (run("--timeout", "-3"), "--timeout"),
        "flag-timeout-word": (run("--timeout", "abc"), "--timeout"),
        "flag-backend-unknown": (run("--backend", "ray"), "--backend"),
        "flag-unknown": (run("--fast"), "--fast"),
        "flag-suite-and-grid": (run("--suite", "smoke"), "--suite"),
        "flag-suite-unknown": (fixed("run", "--suite", "no-such-suite", "--report", ""), "no-such-suite"),
        "flag-solver-unknown": (run("-s", "no-such-solver"), "no-such-solver"),
        "flag-solver-param-type": (run("-s", "scs[eps_abs=tight]"), "eps_abs"),
        "flag-solver-bad-selector": (run("-s", "scs[eps_abs]"), "scs[eps_abs]"),
        "flag-problem-param-range": (run("-p", "graph-classification[n=2]"), "parameter n"),
        "flag-dataset-unknown": (run("-d", "sklearn/no-such"), "sklearn/no-such"),
        "flag-problem-unknown": (run("-p", "no-such-problem"), "no-such-problem"),
        "flag-grid-missing": (fixed("run", "--grid", "/nonexistent/g.toml"), "g.toml"),
        "flag-grid-folder": (lambda d: ["run", "--grid", str(d)], str("grid file")),
        "flag-grid-binary": (lambda d: (d / "b.toml").write_bytes(b"\xff\xfe\x00") and ["run", "--grid", str(d / "b.toml")],
                             "b.toml"),
        "flag-command-unknown": (fixed("rnu"), "rnu"),
        "flag-results-format": (lambda d: ["results", "--db", str(d / "store.sqlite"), "--format", "xml"], "--format"),
        "flag-info-unknown": (fixed("info", "no-such-thing"), "no-such-thing"),
        "flag-compare-factor": (lambda d: ["compare", str(d / "store.sqlite"), str(d / "store.sqlite"), "--factor",
                                           "nan"], "--factor"),
        "db-run-folder": (run_db(folder), "adir"),
        "db-run-text-file": (run_db(text_file), "notes.txt"),
        "db-run-foreign-sqlite": (run_db(sqlite_foreign), "foreign.sqlite"),
        "db-run-missing-folder": (run_db(missing_folder), "no-such-folder"),
        "db-results-folder": (read_db("results", folder), "adir"),
        "db-results-text-file": (read_db("results", text_file), "notes.txt"),
        "db-results-foreign-sqlite": (read_db("results", sqlite_foreign), "foreign.sqlite"),
        "db-results-empty-file": (read_db("results", empty), "empty.sqlite"),
        "db-results-newer-schema": (read_db("results", newer), "schema version 9"),
        "db-run-newer-schema": (run_db(newer), "schema version 9"),
        "db-results-missing": (read_db("results", missing), "missing.sqlite"),
        "db-report-foreign-sqlite": (read_db("report", sqlite_foreign), "foreign.sqlite"),
        "db-report-empty-file": (read_db("report", empty), "empty.sqlite"),
        "db-compare-foreign-sqlite": (read_db("compare", sqlite_foreign), "foreign.sqlite"),
        "db-compare-text-file": (read_db("compare", text_file), "notes.txt"),
        "out-report-is-file": (report_out(text_file), "notes.txt"),
        "out-report-under-file": (report_out(under_file), "notes.txt"),
        "out-run-report-is-file": (report_out(text_file, flag="--report"), "notes.txt"),
        "save-solutions-folder-is-a-file": (solutions_file, "store.solutions"),
    }


FLAG_CASES = _flag_cases()
ALL = sorted([*GRID_CASES, *DATA_CASES, *FLAG_CASES])


@pytest.fixture(scope="module")
def plugin_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("badplug")
    (d / "cli_badplug.py").write_text(PLUGIN)
    (d / "cli_exitplug.py").write_text("import sys\nsys.exit(0)\n")
    info = d / "cli_badplug-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: cli-badplug\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return d


def cli(args: list[str], plugin_dir: Path | None = None) -> tuple[int, str, str]:
    """The command line in process; ``plugin_dir`` is put on ``sys.path`` for discovery."""
    from psdbench.cli.commands import main

    old = list(sys.path)
    if plugin_dir is not None:
        sys.path.insert(0, str(plugin_dir))
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([str(a) for a in args])
    finally:
        sys.path[:] = old
    return code, out.getvalue(), err.getvalue()


def make_store(path: Path) -> None:
    """A psdbench store holding one row."""
    st = Store(path)
    st.write_result(CellResult(run_id="r0", cell_key="k0", instance_key="i0", problem="graph-classification",
                               dataset="sklearn/breast-cancer", instance_params={"n": 30}, solver="gdpa-lp",
                               status="ok", wall_time_s=0.1, objective=1.0, feasible=1))
    st.close()  # checkpoints the WAL (the store is then one file, as a finished run leaves it)


def snapshot(root: Path) -> dict[str, str]:
    """Every file under ``root`` with its SHA-256 (folders included as entries)."""
    out = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
    return out


def test_the_table_holds_at_least_60_inputs():
    assert len(ALL) >= 60
    assert len({*GRID_CASES} | {*DATA_CASES} | {*FLAG_CASES}) == len(ALL)  # no id is shadowed


def test_the_base_grid_is_valid(tmp_path, plugin_dir):
    """The control: the unmodified grid passes every check, so each case fails for its own change."""
    from psdbench.session import prepare

    (tmp_path / "ok.toml").write_text(grid())
    make_store(tmp_path / "store.sqlite")
    p = prepare(tmp_path / "ok.toml", db=tmp_path / "store.sqlite")
    assert len(p.grid.cells) == 1


@pytest.mark.parametrize("case", ALL)
def test_bad_input_exits_2_with_one_line_and_changes_nothing(case, tmp_path, plugin_dir, monkeypatch):
    make_store(tmp_path / "store.sqlite")
    expect: str
    if case in GRID_CASES:
        text, expect = GRID_CASES[case]
        (tmp_path / "g.toml").write_text(text)
        args = ["run", "--grid", str(tmp_path / "g.toml"), "--db", str(tmp_path / "store.sqlite"), "--report",
                str(tmp_path / "rep"), "--quiet"]
    elif case in DATA_CASES:
        fname, content = DATA_CASES[case]
        data = tmp_path / "data" / "binary_classification"
        data.mkdir(parents=True)
        (data / fname).write_bytes(content)
        monkeypatch.setenv("PSDBENCH_DATA", str(tmp_path / "data"))
        (tmp_path / "g.toml").write_text(grid(problem=problem(datasets='["uci/bad"]', params="{ n = [4] }")))
        args = ["run", "--grid", str(tmp_path / "g.toml"), "--db", str(tmp_path / "store.sqlite"), "--report", "",
                "--quiet"]
        expect = "uci/bad"
    else:
        setup, expect = FLAG_CASES[case]
        args = setup(tmp_path)
    before = snapshot(tmp_path)
    code, out, err = cli(args, plugin_dir)
    lines = err.strip().splitlines()
    assert code == 2, (case, code, err)
    assert len(lines) == 1 and lines[0].startswith("psdbench: error:"), (case, err)
    assert "Traceback" not in err + out
    assert expect in lines[0], (case, lines[0])
    assert snapshot(tmp_path) == before, case  # no file changed, none created


@pytest.mark.parametrize("cmd", ["run", "report"])
def test_read_only_targets_exit_2(cmd, tmp_path, monkeypatch):
    """A read-only store (run) or output folder (report): the check uses os.access, patched here
    because the tests may run as root, for whom the kernel grants every write."""
    import psdbench.harness.grid.inputs as inputs

    make_store(tmp_path / "store.sqlite")
    (tmp_path / "rep").mkdir()
    locked = tmp_path / ("store.sqlite" if cmd == "run" else "rep")
    real = os.access
    monkeypatch.setattr(inputs.os, "access", lambda p, mode: False if Path(p) == locked else real(p, mode))
    (tmp_path / "ok.toml").write_text(grid())
    args = (["run", "--grid", str(tmp_path / "ok.toml"), "--db", str(locked), "--report", ""] if cmd == "run"
            else ["report", "--db", str(tmp_path / "store.sqlite"), "--out", str(locked)])
    before = snapshot(tmp_path)
    code, _, err = cli(args)
    assert code == 2 and len(err.strip().splitlines()) == 1 and ("not writable" in err or "read-only" in err), err
    assert snapshot(tmp_path) == before


def test_list_datasets_survives_a_collection_whose_names_raise(plugin_dir):
    code, out, err = cli(["list", "datasets"], plugin_dir)
    assert code == 0
    assert "sklearn/wine" in out.split()
    assert "namesraise/* unavailable" in err and "namesexit/* unavailable" in err


def test_plugin_exiting_at_import_does_not_end_psdbench(plugin_dir):
    code, out, err = cli(["list", "solvers"], plugin_dir)
    assert code == 0 and "gdpa-lp" in out
    assert "exits-solver" in err and "sys.exit" in err
