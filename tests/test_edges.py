"""Trust at the edges: paths that escape, values that would fail late, damaged stores, operating-
system failures, outputs half-replaced, signals and grids that should warn.

:data:`EDGE_CASES` extends the malformed-input table of ``test_cli_bad_input.py`` (same contract:
exit 2, one line on stderr naming the field or file, before any work, every file of the folder
byte-identical, none created).  The tests after it cover the conditions that are not the user's
input: a full disk or a file-size limit (exit 3, the previous report intact), a closed pipe
(141, quiet), an interrupted report, the harness's own failures recomputed, and the limits
checked against the machine.
"""

from __future__ import annotations

import errno
import json
import os
import resource
import socket
import sqlite3
import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Callable

import pytest

from psdbench.api import PsdbenchError
from psdbench.harness.store.results import CellResult
from psdbench.harness.store.db import Store

from .test_cli_bad_input import cli, grid, make_store, plugin_dir, problem, snapshot  # noqa: F401 (fixture)

Setup = Callable[[Path], list[str]]


# ------------------------------------------------------------------------------ set-ups
def _run(*extra: str, text: str | None = None) -> Setup:
    def setup(d: Path) -> list[str]:
        (d / "g.toml").write_text(grid() if text is None else text)
        return ["run", "--grid", str(d / "g.toml"), "--db", str(d / "store.sqlite"), "--report", "", "--quiet", *extra]
    return setup


def _data(files: dict[str, bytes], dataset: str, outside: bool = True) -> Setup:
    """A data folder (PSDBENCH_DATA is set to ``d/data`` by the test) and a run on ``dataset``;
    ``outside`` also puts a valid "secret" file beside the data folder, which a name must not reach."""
    def setup(d: Path) -> list[str]:
        base = d / "data" / "binary_classification"
        base.mkdir(parents=True)
        for name, content in files.items():
            (base / name).write_bytes(content)
        if outside:
            (d / "elsewhere").mkdir()
            (d / "elsewhere" / "secret.csv").write_bytes(b"".join(b"%d,%d,%d\n" % (i, i * 7 % 5, i % 2 * 2 - 1)
                                                                  for i in range(40)))
        return _run("-d", dataset.replace("ABS", str(d)), "-p", "graph-classification[n=4]")(d)
    return setup


def _seeds(text: str) -> Setup:
    return _run(text=grid(run=f"seeds = {text}\ntimeout = 600\nreference = false"))


def _nested(depth: int, where: str = "grid") -> Setup:
    value = "[" * depth + "30" + "]" * depth
    if where == "grid":
        return _run(text=grid(problem=problem(params=f"{{ n = {value} }}")))
    return _run("-s", f"gdpa-lp[max_iters={value}]")


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _report(out: Callable[[Path], Path]) -> Setup:
    return lambda d: ["report", "--db", str(d / "store.sqlite"), "--out", str(out(d))]


def _foreign_folder(d: Path) -> Path:
    (d / "mine").mkdir()
    (d / "mine" / "thesis.tex").write_text("my own file\n")
    return d / "mine"


def _names_taken(d: Path) -> Path:
    """A folder whose report names are taken by folders of the user's (nothing psdbench wrote)."""
    for name in ("report.html", "results.csv"):
        (d / "taken" / name).mkdir(parents=True)
        (d / "taken" / name / "notes.txt").write_text("mine\n")
    return d / "taken"


def _dangling(d: Path) -> Path:
    (d / "link").symlink_to(d / "gone")
    return d / "link"


def _damaged(kind: str) -> Callable[[Path], Path]:
    """A copy of the store with one kind of damage."""
    def make(d: Path) -> Path:
        p = d / f"damaged-{kind}.sqlite"
        st = Store(p)
        for i in range(3):
            st.write_result(CellResult(run_id="r0", cell_key=f"k{i}", instance_key="i0", problem="graph-classification",
                                       dataset="sklearn/breast-cancer", instance_params={"n": 30}, solver="gdpa-lp",
                                       status="ok", wall_time_s=0.1, objective=1.0, feasible=1))
        st.close()
        con = sqlite3.connect(p)
        if kind == "json":
            con.execute("UPDATE history SET metrics='{\"error_rate\": 0.1' WHERE cell_key='k1'")
        elif kind == "view":
            con.execute("DROP TRIGGER results_delete")
            con.execute("DROP VIEW results")
        elif kind == "table":
            con.execute("DROP TABLE runs")
        con.commit()
        con.close()
        if kind == "page":  # overwrite the second page (the first page of a table) with noise
            raw = bytearray(p.read_bytes())
            page = int.from_bytes(raw[16:18], "big")
            raw[page + 8: 2 * page] = bytes((i * 37 + 11) % 256 for i in range(page - 8))
            p.write_bytes(bytes(raw))
        return p
    return make


def _read(cmd: str, make: Callable[[Path], Path]) -> Setup:
    def setup(d: Path) -> list[str]:
        db = str(make(d))
        return {"results": ["results", "--db", db], "report": ["report", "--db", db, "--out", str(d / "rep")],
                "compare": ["compare", str(d / "store.sqlite"), db],
                "run": _run()(d)[:4] + [db, "--report", "", "--quiet"]}[cmd]
    return setup


LONG = "n" * 300

# id -> (set-up, text the one line must contain)
EDGE_CASES: dict[str, tuple[Setup, str]] = {
    # paths that escape the data folder
    "dataset-dotdot": (_data({"ok.csv": b"1,2,1\n"}, "uci/../../elsewhere/secret"), "uci/../../elsewhere/secret"),
    "dataset-abs-path": (_data({"ok.csv": b"1,2,1\n"}, "uci//ABS/elsewhere/secret"), "elsewhere/secret"),
    "dataset-dot": (_data({"ok.csv": b"1,2,1\n"}, "uci/."), "uci/."),
    "dataset-symlink-out": (lambda d: (_data({}, "uci/link")(d),
                                       (d / "data" / "binary_classification" / "link.csv").symlink_to(
                                           d / "elsewhere" / "secret.csv"))[0], "leads outside"),
    # values that used to fail late
    "seed-2-pow-32": (_seeds("[4294967296]"), "seed"),
    "seed-int64-max": (_seeds("[9223372036854775807]"), "seed"),
    "memory-beyond-machine": (_run(text=grid(run="timeout = 600\nreference = false\nmemory_mb = 1000000000")),
                              "memory_mb"),
    "memory-below-worker": (_run(text=grid(run="timeout = 600\nreference = false\nmemory_mb = 64")), "memory_mb"),
    "backend-option-unknown": (_run(text=grid(solver='name = "clarabel"\nparams = { tol_gapp = [1e-3] }')),
                               "tol_gapp"),
    "backend-option-unknown-flag": (_run("-s", "clarabel[max_iters=5]"), "max_iters"),
    "backend-option-unknown-scs": (_run("-s", "scs[no_such_option=1]"), "no_such_option"),
    "scheduler-without-dask": (_run("--scheduler", "tcp://127.0.0.1:8786"), "--scheduler"),
    "scheduler-unreachable": (lambda d: _run("--backend", "dask", "--scheduler", f"tcp://127.0.0.1:{_closed_port()}")(d),
                              "--scheduler"),
    "scheduler-malformed": (_run("--backend", "dask", "--scheduler", "nowhere"), "--scheduler"),
    "nested-5000-grid": (_nested(5000), "nested"),
    "nested-40-grid": (_nested(40), "nested"),
    "nested-5000-selector": (_nested(5000, "selector"), "nested"),
    "value-1e6-characters": (_run("-s", "x" * 1_000_000), "xxxx"),
    "grid-too-large": (_seeds(str(list(range(20_001)))), "--yes"),
    "features-1e308": (_data({"big.csv": b"1,1e308,1\n3,4,-1\n5,6,1\n7,8,-1\n9,1,1\n"}, "uci/big", outside=False),
                       "overflow"),
    "db-named-like-archive-folder": (lambda d: _run("--save-solutions")(d)[:4] + [str(d / "res.solutions"),
                                                                                  "--save-solutions", "--report", ""],
                                     "res.solutions"),
    "db-dangling-symlink": (lambda d: _run()(d)[:4] + [str(_dangling(d)), "--report", ""], "link"),
    "db-archive-folder-name-too-long": (lambda d: _run()(d)[:4] + [str(d / ("n" * 248 + ".db")), "--save-solutions",
                                                                  "--report", ""], "archive folder"),
    "db-name-too-long": (lambda d: _run()(d)[:4] + [str(d / LONG), "--report", ""], "longer than"),
    # outputs checked before anything runs
    "out-dangling-symlink": (_report(_dangling), "link"),
    "out-foreign-folder": (_report(_foreign_folder), "not a psdbench report"),
    "out-name-too-long": (_report(lambda d: d / LONG), "longer than"),
    "run-report-foreign-folder": (lambda d: _run()(d)[:-3] + ["--report", str(_foreign_folder(d)), "--quiet"],
                                  "not a psdbench report"),
    "out-names-taken-by-folders": (_report(_names_taken), "report.html is a folder"),
    "run-report-names-taken-by-folders": (lambda d: _run()(d)[:-3] + ["--report", str(_names_taken(d)), "--quiet"],
                                          "report.html is a folder"),
    "run-report-dangling-symlink": (lambda d: _run()(d)[:-3] + ["--report", str(_dangling(d)), "--quiet"], "link"),
    # damaged stores, for every command that opens one
    **{f"damaged-{kind}-{cmd}": (_read(cmd, _damaged(kind)), "damaged")
       for kind in ("json", "view", "table", "page") for cmd in ("results", "report", "compare", "run")},
}


def test_the_edge_table_and_the_bad_input_table_hold_at_least_140_inputs():
    from .test_cli_bad_input import ALL

    assert len(EDGE_CASES) >= 40
    assert not set(EDGE_CASES) & set(ALL)
    assert len(EDGE_CASES) + len(ALL) >= 140


@pytest.mark.parametrize("case", sorted(EDGE_CASES))
def test_edge_input_exits_2_with_one_short_line_and_changes_nothing(case, tmp_path, plugin_dir, monkeypatch):
    make_store(tmp_path / "store.sqlite")
    monkeypatch.chdir(tmp_path)
    setup, expect = EDGE_CASES[case]
    if case.startswith(("dataset-", "features-")):
        monkeypatch.setenv("PSDBENCH_DATA", str(tmp_path / "data"))
    args = setup(tmp_path)
    before = snapshot_links(tmp_path)
    code, out, err = cli(args, plugin_dir)
    lines = err.strip().splitlines()
    assert code == 2, (case, code, err[:500])
    assert len(lines) == 1 and lines[0].startswith("psdbench: error:"), (case, err[:500])
    assert len(lines[0]) < 2500, (case, len(lines[0]))
    assert "Traceback" not in err + out and "internal error" not in err
    assert expect in lines[0], (case, lines[0][:500])
    assert snapshot_links(tmp_path) == before, case


def snapshot_links(root: Path) -> dict[str, str]:
    """:func:`snapshot`, dangling links included (as their target)."""
    out = {}
    for p in sorted(root.rglob("*")):
        key = str(p.relative_to(root))
        out[key] = f"link:{os.readlink(p)}" if p.is_symlink() and not p.exists() else snapshot_one(p)
    return out


def snapshot_one(p: Path) -> str:
    import hashlib

    return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"


# ------------------------------------------------------------------------------ machine's conditions
def _store_with_rows(path: Path, n: int) -> None:
    st = Store(path)
    st.write_many([CellResult(run_id="r0", cell_key=f"k{i}", instance_key=f"i{i}", problem="graph-classification",
                              dataset="sklearn/breast-cancer", instance_params={"n": 30}, solver="gdpa-lp",
                              status="ok", wall_time_s=0.1, objective=float(i), feasible=1) for i in range(n)])
    st.close()


def test_report_failing_on_a_full_disk_exits_3_and_keeps_the_previous_report(tmp_path, monkeypatch):
    import psdbench.report as report

    make_store(tmp_path / "s.sqlite")
    assert cli(["report", "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep"])[0] == 0
    before = snapshot(tmp_path)
    real = report.write_report

    def half_then_full(store, out, *a, **k):  # writes the whole report, then the disk is full
        real(store, out, *a, **k)
        (Path(out) / "results.csv").write_text("truncated")
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(Path(out) / "failures.csv"))

    monkeypatch.setattr(report, "write_report", half_then_full)
    code, _, err = cli(["report", "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep"])
    assert code == 3 and len(err.strip().splitlines()) == 1, err
    assert "failures.csv" in err and "no space left" in err.lower() and "internal error" not in err
    assert snapshot(tmp_path) == before  # previous report intact, no temporary folder left


def test_report_interrupted_keeps_the_previous_report_and_says_so(tmp_path, monkeypatch):
    import psdbench.report as report

    make_store(tmp_path / "s.sqlite")
    assert cli(["report", "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep"])[0] == 0
    before = snapshot(tmp_path)

    def interrupted(store, out, *a, **k):
        (Path(out) / "results.csv").write_text("half")
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "write_report", interrupted)
    code, _, err = cli(["report", "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep"])
    assert code == 130 and "finished cells" not in err and "previous report" in err
    assert snapshot(tmp_path) == before


def test_report_replaces_the_previous_one_whole(tmp_path):
    """A second report replaces the folder: no file of the first one that the second does not write."""
    make_store(tmp_path / "s.sqlite")
    assert cli(["report", "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep"])[0] == 0
    (tmp_path / "rep" / "stale-figure.png").write_bytes(b"old")
    code, out, _ = cli(["report", "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep"])
    assert code == 0 and str(tmp_path / "rep") in out
    assert not (tmp_path / "rep" / "stale-figure.png").exists() and (tmp_path / "rep" / "results.csv").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "s.sqlite"]  # no temporary folder left


def _fsize_limit(nbytes: int) -> Callable[[], None]:
    return lambda: resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))


def test_file_size_limit_during_report_exits_3_with_one_line(tmp_path):
    """A real ``ulimit -f``: the write fails with EFBIG (SIGXFSZ ignored), reported as the machine's condition."""
    _store_with_rows(tmp_path / "s.sqlite", 400)
    assert cli(["report", "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep"])[0] == 0
    before = snapshot(tmp_path)
    res = subprocess.run([sys.executable, "-m", "psdbench.cli", "report", "--db", str(tmp_path / "s.sqlite"), "--out",
                          str(tmp_path / "rep")], capture_output=True, text=True, preexec_fn=_fsize_limit(256),
                         timeout=300)
    assert res.returncode == 3, res.stderr[-2000:]
    assert len(res.stderr.strip().splitlines()) == 1 and "ulimit -f" in res.stderr and "Traceback" not in res.stderr
    assert str(tmp_path / "rep") in res.stderr  # the line names the path
    assert snapshot(tmp_path) == before


def test_store_full_during_run_exits_3(tmp_path, monkeypatch):
    (tmp_path / "g.toml").write_text(grid())
    monkeypatch.setattr(Store, "write_many", lambda self, *a, **k: (_ for _ in ()).throw(
        sqlite3.OperationalError("database or disk is full")))
    code, _, err = cli(["run", "--grid", tmp_path / "g.toml", "--db", tmp_path / "s.sqlite", "--report", "",
                        "--quiet"])
    assert code == 3 and len(err.strip().splitlines()) == 1 and "full" in err and "internal error" not in err, err


def test_broken_pipe_ends_quietly_with_141(tmp_path):
    """`psdbench results --all | head -1`, independent of the machine's load: the pipe is shrunk to
    one page and the output is many times larger, so the command is still writing (blocked on the
    full pipe) when the reader closes its end, however slowly either side runs.  (The store's
    current view holds one row here: its output fitted in a pipe, and a loaded reader closed it only
    after the command had written everything and ended with 0.)"""
    import fcntl

    _store_with_rows(tmp_path / "s.sqlite", 3000)
    size = len(cli(["results", "--all", "--db", tmp_path / "s.sqlite", "--format", "csv"])[1].encode())
    read_end, write_end = os.pipe()
    capacity = fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, 4096)
    assert size > 10 * capacity
    proc = subprocess.Popen([sys.executable, "-m", "psdbench.cli", "results", "--all", "--db",
                             str(tmp_path / "s.sqlite"), "--format", "csv"], stdout=write_end, stderr=subprocess.PIPE)
    os.close(write_end)
    line = b""
    while not line.endswith(b"\n"):  # `head -1`: one line, read byte by byte (no read-ahead)
        byte = os.read(read_end, 1)
        assert byte, "the command ended before writing a line"
        line += byte
    os.close(read_end)
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=600) == 141
    assert err == ""


def test_deleted_working_folder_is_one_line(tmp_path, monkeypatch):
    make_store(tmp_path / "s.sqlite")
    (tmp_path / "gone").mkdir()
    monkeypatch.chdir(tmp_path / "gone")
    (tmp_path / "gone").rmdir()
    code, _, err = cli(["results", "--db", tmp_path / "s.sqlite"])
    assert code == 2 and "working folder" in err and len(err.strip().splitlines()) == 1


def test_umask_0777_is_refused_before_anything(tmp_path):
    (tmp_path / "g.toml").write_text(grid())
    old = os.umask(0o777)
    try:
        code, _, err = cli(["run", "--grid", tmp_path / "g.toml", "--db", tmp_path / "s.sqlite", "--report", ""])
    finally:
        os.umask(old)
    assert code == 2 and "umask" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.toml"]


# ------------------------------------------------------------------------------ results never served wrongly
def test_a_cell_the_harness_failed_is_computed_again_without_force(tmp_path):
    """A ``crashed`` row marked as the harness's own failure is not a result: the next run redoes it;
    a solver's own crash stays cached."""
    from psdbench.harness.limits import harness_failure
    from psdbench.harness.runner import run_grid
    from psdbench.session import prepare

    # a limit far above the cell's milliseconds: its outcome must not depend on the machine's load
    (tmp_path / "g.toml").write_text(grid(run="seeds = [0, 1]\ntimeout = 600\nreference = false"))
    p = prepare(tmp_path / "g.toml", db=tmp_path / "s.sqlite")
    mine, theirs = p.grid.cells
    st = Store(p.db)
    st.write_result(replace(CellResult.for_cell(mine, "old"), status="crashed",
                            message=harness_failure("worker process died under a memory cap below its need")))
    st.write_result(replace(CellResult.for_cell(theirs, "old"), status="crashed",
                            message="worker process died (signal 9)"))
    assert st.done_keys() == {theirs.cell_key}
    run_grid(p.grid, st, jobs=1, progress=False)
    df = st.results_frame().set_index("cell_key")
    st.close()
    assert df.loc[mine.cell_key, "status"] == "ok"  # computed again
    assert df.loc[theirs.cell_key, "status"] == "crashed"  # a solver's crash is a result


def test_plan_workers_never_caps_a_worker_below_what_it_needs():
    from psdbench.harness.limits import MEMORY_SHARE, plan_workers

    jobs, cap, notes = plan_workers(64, None, cores=2, machine_mb=24000, need_mb=700)
    assert jobs == int(24000 * MEMORY_SHARE // 700) and cap >= 700
    assert any("lowered" in n for n in notes) and any("cores" in n for n in notes)
    for machine in (500, 2000, 8000, 64000):
        for asked in (1, 2, 8, 64, 1000):
            j, c, _ = plan_workers(asked, None, cores=8, machine_mb=machine, need_mb=700)
            assert 1 <= j <= asked and (c >= 700 or j == 1)
    assert plan_workers(4, None, cores=8, machine_mb=64000, need_mb=700)[:1] == (4,)  # nothing to lower
    assert plan_workers(2, 1500, cores=2, machine_mb=64000, need_mb=700) == (2, 1500, [])


def test_check_memory_mb_against_the_machine():
    from psdbench.harness.limits import check_memory_mb

    check_memory_mb(1500, "g", need_mb=700, machine_mb=8000)
    with pytest.raises(PsdbenchError, match="below what a worker needs"):
        check_memory_mb(500, "g", need_mb=700, machine_mb=8000)
    with pytest.raises(PsdbenchError, match="more than this machine"):
        check_memory_mb(9000, "g", need_mb=700, machine_mb=8000)


# ------------------------------------------------------------------------------ grids that should warn
def test_repeated_solvers_seeds_and_datasets_are_one_cell(tmp_path):
    from psdbench.session import prepare

    text = grid(run="seeds = [0, 0, 1]\ntimeout = 600\nreference = false",
                problem=problem(datasets='["sklearn/breast-cancer", "sklearn/breast-cancer"]'),
                solver='name = "gdpa-lp"\n\n[[solvers]]\nname = "gdpa-lp"')
    (tmp_path / "g.toml").write_text(text)
    cells = prepare(tmp_path / "g.toml", db=tmp_path / "s.sqlite").grid.cells
    assert len(cells) == 2 and len({c.cell_key for c in cells}) == 2


def test_a_large_grid_runs_with_yes_and_says_how_many_cells_without(tmp_path):
    from psdbench.session import prepare

    (tmp_path / "g.toml").write_text(grid(run=f"seeds = {list(range(20_001))}\ntimeout = 600\nreference = false"))
    with pytest.raises(PsdbenchError, match="20001 cells, more than 20000"):
        prepare(tmp_path / "g.toml", db=tmp_path / "s.sqlite")
    assert len(prepare(tmp_path / "g.toml", db=tmp_path / "s.sqlite", yes=True).grid.cells) == 20_001
    assert not (tmp_path / "s.sqlite").exists()


def test_list_datasets_lists_files_once(tmp_path, monkeypatch):
    import gzip

    base = tmp_path / "binary_classification"
    base.mkdir()
    (base / "haberman.csv").mkdir()  # a folder, not a data file
    (base / "pair.csv").write_bytes(b"1,2,1\n3,4,-1\n")
    (base / "pair.csv.gz").write_bytes(gzip.compress(b"1,2,1\n3,4,-1\n"))
    (base / "notes.txt").write_text("x")
    monkeypatch.setenv("PSDBENCH_DATA", str(tmp_path))
    code, out, _ = cli(["list", "datasets"])
    names = out.split()
    assert code == 0 and names.count("uci/pair") == 1 and "uci/haberman" not in names and "uci/notes" not in names


def test_compare_of_stores_sharing_no_cell_says_so(tmp_path):
    make_store(tmp_path / "a.sqlite")
    st = Store(tmp_path / "b.sqlite")
    st.write_result(CellResult(run_id="r1", cell_key="other", instance_key="i9", problem="graph-classification",
                               dataset="sklearn/wine", instance_params={"n": 40}, solver="scs", status="ok",
                               wall_time_s=0.2, objective=2.0, feasible=1))
    st.close()
    for fmt in ("table", "csv", "json"):
        code, out, err = cli(["compare", tmp_path / "a.sqlite", tmp_path / "b.sqlite", "--format", fmt])
        assert code == 0 and "share no cell" in err and "Traceback" not in err, (fmt, err)
    assert json.loads(cli(["compare", tmp_path / "a.sqlite", tmp_path / "b.sqlite", "--format", "json"])[1]) == {
        "cells": [], "solvers": [], "only_in_a": 1, "only_in_b": 1, "regressions": []}


def test_nested_values_from_python_are_one_error(tmp_path):
    import psdbench

    deep: list = [30]
    for _ in range(5000):
        deep = [deep]
    spec = {"run": {"reference": False}, "problems": [{"name": "graph-classification",
                                                        "datasets": ["sklearn/breast-cancer"], "params": {"n": deep}}],
            "solvers": [{"name": "gdpa-lp"}]}
    with pytest.raises(PsdbenchError, match="nested"):
        psdbench.run(spec, db=tmp_path / "s.sqlite")
    assert not (tmp_path / "s.sqlite").exists()


# ------------------------------------------------------------------------------ a real full disk
@pytest.fixture
def small_disk(tmp_path):
    """A 4 MiB tmpfs under ``tmp_path`` (root only; skipped where mounting is not permitted)."""
    where = tmp_path / "disk"
    where.mkdir()
    if os.geteuid() != 0 or subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(where)],
                                           capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (needs root)")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def _fill(disk: Path) -> None:
    """Write until the file system is full (unbuffered: no write is left for close)."""
    with open(disk / "filler", "wb", buffering=0) as fh:
        for chunk in (65536, 512, 1):
            try:
                while True:
                    fh.write(b"\0" * chunk)
            except OSError as exc:
                assert exc.errno == errno.ENOSPC


def test_full_disk_report_exits_3_and_keeps_the_previous_report(small_disk):
    _store_with_rows(small_disk / "s.sqlite", 50)
    assert cli(["report", "--db", small_disk / "s.sqlite", "--out", small_disk / "rep"])[0] == 0
    _fill(small_disk)
    before = snapshot(small_disk)
    code, _, err = cli(["report", "--db", small_disk / "s.sqlite", "--out", small_disk / "rep"])
    assert code == 3 and len(err.strip().splitlines()) == 1, err
    assert "no space left" in err.lower() and str(small_disk / "rep") in err and "internal error" not in err
    assert snapshot(small_disk) == before  # previous report intact, no temporary folder left


def test_full_disk_run_exits_3_before_writing_a_runs_row(small_disk):
    _store_with_rows(small_disk / "s.sqlite", 5)
    (small_disk.parent / "g.toml").write_text(grid())
    _fill(small_disk)
    code, _, err = cli(["run", "--grid", small_disk.parent / "g.toml", "--db", small_disk / "s.sqlite", "--report", "",
                        "--quiet"])
    assert code == 3 and len(err.strip().splitlines()) == 1 and "full" in err and "internal error" not in err, err
    (small_disk / "filler").unlink()
    con = sqlite3.connect(small_disk / "s.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM history").fetchone()[0] == 5


def test_os_errors_map_to_input_or_machine_statuses():
    from psdbench.system.oserrors import EXIT_INPUT, EXIT_MACHINE, describe

    for code, status in ((errno.ENAMETOOLONG, EXIT_INPUT), (errno.EACCES, EXIT_INPUT), (errno.ENOTDIR, EXIT_INPUT),
                         (errno.EROFS, EXIT_INPUT), (errno.ENOSPC, EXIT_MACHINE), (errno.EFBIG, EXIT_MACHINE),
                         (errno.EDQUOT, EXIT_MACHINE), (errno.EIO, EXIT_MACHINE)):
        got, line = describe(OSError(code, os.strerror(code), "/some/path"))
        assert got == status and line.startswith("/some/path: ") and "; " in line
    assert describe(sqlite3.OperationalError("database or disk is full"), "s.sqlite")[0] == EXIT_MACHINE
    assert describe(sqlite3.DatabaseError("database disk image is malformed"), "s.sqlite")[0] == EXIT_INPUT
    assert describe(ValueError("a bug")) is None  # stays an internal error


def test_unsearchable_folder_is_one_line_naming_the_path(tmp_path, monkeypatch):
    """A folder the user cannot search (the tests run as root, whom the kernel lets through: the
    error is raised where ``stat`` would raise it)."""
    import psdbench.harness.grid.inputs as inputs

    locked = tmp_path / "locked" / "s.sqlite"

    def denied(path, write):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path))

    monkeypatch.setattr(inputs, "check_store", denied)
    code, _, err = cli(["results", "--db", locked])
    assert code == 2 and str(locked) in err and "permission" in err.lower() and len(err.strip().splitlines()) == 1


def test_jobs_beyond_memory_are_lowered_and_the_cells_run(tmp_path):
    """``--jobs 10000`` used to cap each worker below what it needs to start: every cell crashed."""
    (tmp_path / "g.toml").write_text(grid())
    code, out, err = cli(["run", "--grid", tmp_path / "g.toml", "--db", tmp_path / "s.sqlite", "--report", "",
                          "--quiet", "--jobs", "10000"])
    assert code == 0 and "--jobs 10000 lowered to" in err, err
    con = sqlite3.connect(tmp_path / "s.sqlite")
    assert [r[0] for r in con.execute("SELECT status FROM history")] == ["ok"]


def test_ctrl_c_while_the_command_line_loads_exits_130_with_one_line(tmp_path, monkeypatch):
    """Ctrl-C in the first second (``main`` importing what it reports errors with) took Python's
    path: a traceback, and death by SIGINT instead of psdbench's status."""
    import builtins

    make_store(tmp_path / "s.sqlite")
    real = builtins.__import__

    def interrupted(name, *a, **k):
        if name == "oserrors" or name.endswith(".oserrors"):
            raise KeyboardInterrupt
        return real(name, *a, **k)

    monkeypatch.delitem(sys.modules, "psdbench.system.oserrors")
    monkeypatch.setattr(builtins, "__import__", interrupted)
    code, out, err = cli(["compare", tmp_path / "s.sqlite", tmp_path / "s.sqlite"])
    assert code == 130 and err.strip() == "psdbench: interrupted" and out == ""


@pytest.mark.parametrize("cmd", ["compare", "results"])
def test_ctrl_c_outside_run_does_not_speak_of_cells(cmd, tmp_path, monkeypatch):
    import psdbench.harness.grid.inputs as inputs

    make_store(tmp_path / "s.sqlite")
    monkeypatch.setattr(inputs.ReadOnlyStore, "results_frame", lambda self, *a, **k: (_ for _ in ()).throw(KeyboardInterrupt))
    args = ["compare", tmp_path / "s.sqlite", tmp_path / "s.sqlite"] if cmd == "compare" else \
        ["results", "--db", tmp_path / "s.sqlite"]
    code, _, err = cli(args)
    assert code == 130 and err.strip() == "psdbench: interrupted"
