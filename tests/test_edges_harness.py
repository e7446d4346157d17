"""Edges of the harness (issue 40): a cell's CPU and memory include its child processes, measured from
the cell's start; out of memory is its own outcome; any --timeout is handled or refused in one line;
never more workers than cells; error lines cut what they echo; Ctrl-C exits 130 whenever it comes.
Real processes and real signals; every wait is on an event (a line, an open file), never a clock."""

from __future__ import annotations

import os
import resource
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from psdbench.harness.workers.meter import CellMeter

from .test_harness import cli

SRC = str(Path(__file__).resolve().parents[1] / "src")
#: A child process that touches 300 MiB, then computes (so it outlives several samples).
HOG = "b = b'x' * (300 * 2**20); s = sum(i * i for i in range(4_000_000))"


def _children_cpu(argv: list[str]) -> float:
    """CPU seconds of a command run to its end (``RUSAGE_CHILDREN`` delta)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime)


def test_a_cells_meter_counts_its_child_processes_cpu_and_peak_memory():
    alone = _children_cpu([sys.executable, "-c", HOG])
    with CellMeter() as meter:
        subprocess.run([sys.executable, "-c", HOG], check=True)
    assert meter.children_peak_mb >= 300  # the child's own peak, not the worker's
    assert meter.peak_rss_mb >= meter.children_peak_mb
    assert meter.children_cpu_s >= 0.5 * alone  # the same work, measured by the kernel both times
    assert meter.cpu_time_s >= meter.children_cpu_s
    with CellMeter() as idle:  # nothing allocated: the worker's resident set is not the cell's
        pass
    assert idle.peak_rss_mb < 50 and idle.base_mb > 0


@pytest.mark.skipif(shutil.which("csdp") is None, reason="Debian's csdp is not installed")
def test_a_csdp_cells_cpu_and_memory_include_the_csdp_program(tmp_path):
    data = os.environ.get("PSDBENCH_DATA", "")
    arch0 = Path(data) / "sdplib" / "arch0.dat-s"
    if not arch0.is_file():
        pytest.skip("SDPLIB's arch0 not under PSDBENCH_DATA")
    g = tmp_path / "g.toml"
    g.write_text(textwrap.dedent("""
        [run]
        seeds = [0]
        timeout = 300
        reference = false

        [[problems]]
        name = "sdp/standard"
        datasets = ["sdplib/arch0"]

        [[solvers]]
        name = "sdp-csdp"
        """))
    out = cli(["run", "--grid", g, "--db", tmp_path / "r.sqlite", "--report", "", "--quiet", "--jobs", "1"])
    assert out.returncode == 0, out.stderr
    from psdbench.harness.store.db import Store

    row = Store(tmp_path / "r.sqlite").results_frame().iloc[0]
    assert row.status == "ok", row.message
    alone = _children_cpu(["csdp", str(arch0), str(tmp_path / "arch0.sol")])
    # before: 0.05 s of CPU for csdp's ~1 s (the worker's own), and the worker's ~177 MB as the cell's memory
    assert row.cpu_time_s >= 0.5 * alone, (row.cpu_time_s, alone)
    assert 1 < row.peak_rss_mb < 100, row.peak_rss_mb


HOGS = '''
import numpy as np
from psdbench.api import Solution


class Hog:
    """Asks for more memory than the cell's cap: numpy raises MemoryError."""
    name = "memory-hog"
    kinds = ("graph-classification",)
    default_params = {}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {}

    def solve(self, instance, budget, **params):
        x = np.ones((2**31,))
        return Solution(variables={"x": x})
'''


def test_a_memory_error_at_the_cells_cap_is_out_of_memory_not_error(tmp_path):
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "hog_solvers.py").write_text(HOGS)
    info = plugin / "hog_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hog-solvers\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\nmemory-hog = hog_solvers:Hog\n")
    g = tmp_path / "g.toml"
    g.write_text(textwrap.dedent("""
        [run]
        seeds = [0]
        timeout = 600
        # above what a forked worker needs to start (about 3 GB of address space with every plugin,
        # and pyarrow through pandas, imported; checked at grid load): the unbounded hog meets the cap
        memory_mb = 5000
        reference = false

        [[problems]]
        name = "graph-classification"
        datasets = ["sklearn/breast-cancer"]
        params = { n = [20], graph = ["knn"], k = [5] }

        [[solvers]]
        name = "memory-hog"
        """))
    out = cli(["run", "--grid", g, "--db", tmp_path / "r.sqlite", "--report", "", "--quiet", "--jobs", "1"], plugin)
    assert out.returncode == 0, out.stderr
    assert "1 out_of_memory" in out.stdout, out.stdout  # the closing line's word
    from psdbench.harness.store.results import outcome
    from psdbench.harness.store.db import Store

    row = Store(tmp_path / "r.sqlite").results_frame().iloc[0]
    assert row.status == "out_of_memory" and row.message.startswith("out of memory: MemoryError"), row.message
    assert outcome(row.status, row.message) == "out_of_memory"


def _smoke_one_cell(tmp_path, *extra):
    return cli(["run", "--suite", "smoke", "-s", "gdpa-lp", "--db", tmp_path / "r.sqlite", "--report", "",
                "--quiet", "--no-ref-cache", *extra])


@pytest.mark.parametrize("value", ["1e300", "1e8", "inf", "nan", "0", "-1"])
def test_any_timeout_is_handled_or_refused_in_one_line(tmp_path, value):
    out = _smoke_one_cell(tmp_path, "--timeout", value)
    assert out.returncode == 2, out.stderr
    assert out.stderr.count("\n") == 1 and "--timeout" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "r.sqlite").exists()  # before any work
    g = tmp_path / "g.toml"
    g.write_text("[run]\ntimeout = 1e300\n[[problems]]\nname = \"graph-classification\"\n"
                 "datasets = [\"sklearn/breast-cancer\"]\nparams = { n = [20] }\n[[solvers]]\nname = \"gdpa-lp\"\n")
    out = cli(["run", "--grid", g, "--db", tmp_path / "r.sqlite", "--report", "", "--quiet"])
    assert out.returncode == 2 and "timeout" in out.stderr and out.stderr.count("\n") == 1, out.stderr


def test_the_largest_timeout_accepted_runs_the_cell(tmp_path):
    out = _smoke_one_cell(tmp_path, "--timeout", "1e7")  # the interval timer holds it
    assert out.returncode == 0, out.stderr
    assert "1 ok" in out.stdout and "Traceback" not in out.stderr


def test_never_more_workers_than_cells(tmp_path):
    from psdbench.harness.limits import plan_workers

    assert plan_workers(64, None, cores=2, machine_mb=24000, need_mb=700, work=1)[:2] == (1, int(24000 * 0.8))
    assert plan_workers(None, None, cores=2, machine_mb=24000, need_mb=700, work=1)[2] == []  # the default: silent
    out = _smoke_one_cell(tmp_path, "--jobs", "64")
    assert out.returncode == 0, out.stderr
    assert "--jobs 64 lowered to 1: the run has 1 cell to compute" in out.stderr
    assert "1 ok" in out.stdout  # the one cell with the whole memory share, not a 38th of it


def test_error_lines_cut_what_they_echo(tmp_path):
    big = "x" * 1_000_000
    g = tmp_path / "g.toml"
    for params in (f'{{ n = [20], graph = "{big}" }}', f'{{ n = ["{big}"] }}'):
        g.write_text(f"[[problems]]\nname = \"graph-classification\"\ndatasets = [\"sklearn/breast-cancer\"]\n"
                     f"params = {params}\n[[solvers]]\nname = \"gdpa-lp\"\n")
        out = cli(["run", "--grid", g, "--db", tmp_path / "r.sqlite", "--report", "", "--quiet"])
        assert out.returncode == 2
        line = out.stderr
        assert line.count("\n") == 1 and len(line) < 600, len(line)
        assert "(1000002 characters)" in line  # the value's start and its length
    g.write_text(f"[[problems]]\nname = \"graph-classification\"\ndatasets = [\"sklearn/breast-cancer\"]\n"
                 f"[[solvers]]\nname = \"{big}\"\n")
    out = cli(["run", "--grid", g, "--db", tmp_path / "r.sqlite", "--report", "", "--quiet"])
    assert out.returncode == 2 and len(out.stderr) < 2300 and out.stderr.count("\n") == 1


def _program(args: list[str], **kw) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "psdbench.cli", *args], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, **kw)


def _opened(pid: int, path: Path) -> bool:
    try:
        return any(os.readlink(f"/proc/{pid}/fd/{fd}") == str(path) for fd in os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return False


def test_ctrl_c_during_compare_exits_130(tmp_path):
    from .test_edges import _store_with_rows

    _store_with_rows(tmp_path / "a.sqlite", 300)
    _store_with_rows(tmp_path / "b.sqlite", 300)
    proc = _program(["compare", str(tmp_path / "a.sqlite"), str(tmp_path / "b.sqlite")])
    while proc.poll() is None and not _opened(proc.pid, tmp_path / "a.sqlite"):  # the event: it reads the store
        time.sleep(0.005)  # a pause between looks, not a wait for a time
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=300)
    if proc.returncode == 0:  # it ended before the signal arrived (a fast machine): nothing to check
        pytest.skip("compare ended before the signal")
    assert proc.returncode == 130, err
    assert err.strip().splitlines() == ["psdbench: interrupted"]


def test_ctrl_c_after_a_command_ended_still_exits_130(tmp_path):
    """The interpreter's clean-up (atexit) would report a KeyboardInterrupt as ignored and exit 0."""
    code = textwrap.dedent("""
        import atexit, sys, time
        sys.argv = ["psdbench", "list", "suites"]
        import psdbench.cli.commands as cli

        def linger():
            print("CLEANUP", file=sys.stderr, flush=True)
            time.sleep(120)

        atexit.register(linger)
        sys.exit(cli.main())
        """)
    env = dict(os.environ, PYTHONPATH=SRC + os.pathsep + os.environ.get("PYTHONPATH", ""))
    # as a shell starts it: Ctrl-C at its default (a child inherits the test worker's dispositions, and
    # psdbench leaves a signal ignored at its start ignored)
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    for line in proc.stderr:  # the event: the command ended, the clean-up runs
        if line.strip() == "CLEANUP":
            break
    proc.send_signal(signal.SIGINT)
    proc.wait(timeout=60)
    rest = proc.stderr.read()
    assert proc.returncode == 130, rest
    assert rest.strip().splitlines() == ["psdbench: interrupted"]
    assert "default" in proc.stdout.read()  # the command's output was written first
