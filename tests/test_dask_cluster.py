"""The Dask backend on clusters started as people start them: ``dask scheduler`` + ``dask worker
--nworkers 2`` subprocesses (nanny workers, Dask's default configuration, no PSDBENCH_DATA on the
workers) and a ``LocalCluster`` the test makes itself; rows equal the local backend's; a worker
killed mid-cell, and a scheduler that goes away.  Ports are free ones on 127.0.0.1; no network.
"""

import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
import tomllib
from pathlib import Path

import pytest

from psdbench.harness.store.db import Store

distributed = pytest.importorskip("distributed")

GRID = """
[run]
seeds = [0]
timeout = 120
reference_timeout = 120

[[problems]]
name = "graph-classification"
datasets = ["uci/sonar"]
params = { n = [30], graph = ["knn"], k = [5] }

[[problems]]
name = "signed-graph"
datasets = ["synthetic/balanced-gmrf"]
params = { n_nodes = [10], n_samples = [100] }

[[problems]]
name = "sdp/standard"
datasets = ["sdp-gen/maxcut"]
params = { n = [10] }

[[solvers]]
name = "gdpa-lp"

[[solvers]]
name = "gdpa-lp-elim"

[[solvers]]
name = "balanced-clime"

[[solvers]]
name = "sdp-clarabel"
"""

BLOCKING = '''
import os
import time
from pathlib import Path

from psdbench.api import Solution


class Block:
    """Blocks on its first call (after writing the Dask worker's pid to a file), then returns at once."""

    name = "dask-block"
    kinds = ("graph-classification",)
    default_params = {}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {}

    def solve(self, instance, budget, **params):
        mark = Path(os.environ["PSDBENCH_TEST_MARKS"]) / "blocked"
        if not mark.exists():
            tmp = mark.with_suffix(".tmp")
            tmp.write_text(str(os.getppid()))  # the cell process's parent: the Dask worker
            tmp.rename(mark)
            while not budget.expired():
                time.sleep(0.05)
        return Solution(variables={"x": instance.x_true.copy()})
'''

BLOCK_GRID = """
[run]
seeds = [0, 1, 2]
timeout = 300
reference = false

[[problems]]
name = "graph-classification"
datasets = ["sklearn/breast-cancer"]
params = { n = [30], graph = ["knn"], k = [5] }

[[solvers]]
name = "dask-block"

[[solvers]]
name = "gdpa-lp"
"""


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def env(tmp_path_factory):
    """Dask's default configuration (no DASK_* variable), one BLAS thread, the blocking plugin on the path."""
    d = tmp_path_factory.mktemp("dask-plugin")
    (d / "dask_test_solvers.py").write_text(BLOCKING)
    info = d / "dask_test_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: dask-test-solvers\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\ndask-block = dask_test_solvers:Block\n")
    marks = tmp_path_factory.mktemp("marks")
    e = {k: v for k, v in os.environ.items() if not k.startswith("DASK_")}
    e.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1", PSDBENCH_TEST_MARKS=str(marks),
             PYTHONPATH=os.pathsep.join([str(d)] + [p for p in e.get("PYTHONPATH", "").split(os.pathsep) if p]))
    return e


class Cluster:
    """``dask scheduler`` and ``dask worker --nworkers 2 --nthreads 1`` subprocesses on 127.0.0.1."""

    def __init__(self, env, cwd, scheduler_env=None, worker_args=("--nworkers", "2")):
        self.port = _free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        worker_env = {k: v for k, v in env.items() if k != "PSDBENCH_DATA"}  # the data is shipped
        bin_dir = Path(sys.executable).parent
        self.scheduler = subprocess.Popen([str(bin_dir / "dask"), "scheduler", "--host", "127.0.0.1", "--port",
                                           str(self.port), "--no-dashboard"], env={**worker_env, **(scheduler_env or {})},
                                          cwd=cwd,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
        self.workers = subprocess.Popen([str(bin_dir / "dask"), "worker", self.address, *worker_args,
                                         "--nthreads", "1", "--host", "127.0.0.1", "--no-dashboard"], env=worker_env,
                                        cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                        start_new_session=True)
        self.wait_for_workers(2 if "2" in worker_args else 1)

    def wait_for_workers(self, n):
        with distributed.Client(self.address, timeout="120s") as c:
            c.wait_for_workers(n, timeout=300)

    def stop(self):
        for p in (self.workers, self.scheduler):  # each leads its own session: nanny, workers, cell processes
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()


@pytest.fixture(scope="module")
def cluster(env, tmp_path_factory):
    c = Cluster(env, tmp_path_factory.mktemp("cluster"))
    yield c
    c.stop()


def psdbench(env, *args, check=True):
    out = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--report", "", "--quiet", "--no-ref-cache",
                          *map(str, args)], env=env, capture_output=True, text=True, timeout=900)
    if check:
        assert out.returncode == 0, out.stderr
    return out


def wait_for(path, proc):
    """Until ``path`` exists (the event), failing if ``proc`` ends first."""
    while not path.exists():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)


def rows(db):
    df = Store(db).results_frame()
    return {k: (s, o) for k, s, o in zip(df.cell_key, df.status, df.objective)}


@pytest.fixture(scope="module")
def local_rows(env, tmp_path_factory):
    d = tmp_path_factory.mktemp("local")
    (d / "g.toml").write_text(GRID)
    psdbench(env, "--grid", d / "g.toml", "--db", d / "r.sqlite", "--jobs", "2")
    got = rows(d / "r.sqlite")
    assert len(got) == 4 and all(s == "ok" for s, _ in got.values()), got
    return got


def test_nanny_workers_of_dask_worker_give_the_local_rows(cluster, env, local_rows, tmp_path):
    (tmp_path / "g.toml").write_text(GRID)
    db = tmp_path / "r.sqlite"
    psdbench(env, "--grid", tmp_path / "g.toml", "--db", db, "--backend", "dask", "--scheduler", cluster.address)
    assert rows(db) == local_rows  # status and objective of every cell
    with sqlite3.connect(db) as con:  # one reference per instance, computed on the cluster, none failed
        refs = con.execute("SELECT status, message FROM refs").fetchall()
    assert len(refs) == 3 and not any(str(m or "").startswith("harness: ") for _, m in refs), refs
    with sqlite3.connect(db) as con:  # each worker's machine, recorded beside the client's
        machine = json.loads(con.execute("SELECT machine FROM runs").fetchone()[0])
    workers = machine["workers"]
    assert len(workers) == 2 and all(w["fingerprint"] == machine["fingerprint"] for w in workers.values())
    assert all(w["environment"]["hash"] == machine["environment"]["hash"] for w in workers.values())


def test_local_cluster_made_by_the_caller_gives_the_local_rows(env, local_rows, tmp_path, monkeypatch):
    """A cluster object passed in (as a dask-jobqueue SLURMCluster is), Dask's default (daemonic) workers."""
    import psdbench

    monkeypatch.setenv("OMP_NUM_THREADS", "1")
    assert distributed.LocalCluster is not None and not os.environ.get("DASK_DISTRIBUTED__WORKER__DAEMON")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  host="127.0.0.1") as lc:
        df = psdbench.run(tomllib.loads(GRID), db=tmp_path / "r.sqlite", backend="dask", scheduler=lc,
                          ref_cache=False)
        assert lc.status.name == "running"  # a cluster passed in is left running
    assert {k: (s, o) for k, s, o in zip(df.cell_key, df.status, df.objective)} == local_rows


def test_worker_killed_mid_cell_leaves_every_cell_one_row(cluster, env, tmp_path):
    (tmp_path / "g.toml").write_text(BLOCK_GRID)
    db = tmp_path / "r.sqlite"
    mark = Path(env["PSDBENCH_TEST_MARKS"]) / "blocked"
    run = subprocess.Popen([sys.executable, "-m", "psdbench.cli", "run", "--report", "", "--quiet", "--grid",
                            tmp_path / "g.toml", "--db", db, "--backend", "dask", "--scheduler", cluster.address],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        wait_for(mark, run)  # the blocking cell is running on a worker
        os.kill(int(mark.read_text()), signal.SIGKILL)  # kill -9 of that Dask worker process
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            run.kill()
    assert run.returncode == 0, err
    df = Store(db).results_frame()
    assert len(df) == 6 and df.cell_key.is_unique  # every cell a row, none twice
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*) FROM history").fetchone()[0] == 6
    # the killed cell was run again elsewhere (the nanny restarts the worker meanwhile)
    assert set(df.status) == {"ok"} or all(s == "ok" or "worker lost" in m for s, m in zip(df.status, df.message))
    mark.unlink()
    cluster.wait_for_workers(2)


@pytest.mark.slow  # a cluster or two runs of its own: ~40-90 s on 2 shared cores
def test_ctrl_c_stores_finished_cells_without_tracebacks_and_the_resume_completes(cluster, env, tmp_path):
    (tmp_path / "g.toml").write_text(BLOCK_GRID)
    db = tmp_path / "r.sqlite"
    mark = Path(env["PSDBENCH_TEST_MARKS"]) / "blocked"
    args = [sys.executable, "-m", "psdbench.cli", "run", "--report", "", "--quiet", "--grid", tmp_path / "g.toml",
            "--db", db, "--backend", "dask", "--scheduler", cluster.address]
    run = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wait_for(mark, run)  # a cell is running
    run.send_signal(signal.SIGINT)
    out, err = run.communicate(timeout=600)
    assert run.returncode == 130, err
    assert err.strip().splitlines() == ["psdbench: interrupted; finished cells are stored, re-run to complete the rest"]
    with sqlite3.connect(db) as con:
        assert con.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
        stored = con.execute("SELECT count(*) FROM history").fetchone()[0]
    assert stored < 6  # the blocked cell was not stored
    again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, again.stderr
    assert f"({6 - stored} run now" in again.stdout
    df = Store(db).results_frame()
    assert len(df) == 6 and set(df.status) == {"ok"}
    mark.unlink()


@pytest.mark.slow  # a cluster or two runs of its own: ~40-90 s on 2 shared cores
def test_scheduler_gone_exits_3_with_one_line_and_the_store_intact(env, tmp_path):
    c = Cluster(env, tmp_path)
    try:
        (tmp_path / "g.toml").write_text(BLOCK_GRID)
        db = tmp_path / "r.sqlite"
        mark = Path(env["PSDBENCH_TEST_MARKS"]) / "blocked"
        run = subprocess.Popen([sys.executable, "-m", "psdbench.cli", "run", "--report", "", "--quiet", "--grid",
                                tmp_path / "g.toml", "--db", db, "--backend", "dask", "--scheduler", c.address],
                               env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(mark, run)
        os.killpg(c.scheduler.pid, signal.SIGKILL)
        out, err = run.communicate(timeout=600)
        assert run.returncode == 3, (out, err)
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("psdbench: error:") and "scheduler" in lines[0], err
        with sqlite3.connect(db) as con:
            assert con.execute("PRAGMA quick_check").fetchone()[0] == "ok"
            assert con.execute("SELECT count(*) FROM claims").fetchone()[0] == 0  # released
            assert con.execute("SELECT finished_at IS NOT NULL FROM runs").fetchone()[0] == 1
        mark.unlink()
    finally:
        c.stop()


@pytest.mark.slow  # a cluster or two runs of its own: ~40-90 s on 2 shared cores
def test_worker_lost_for_good_is_crashed_worker_lost_and_the_resume_completes(env, tmp_path):
    """A scheduler that gives up on a task at its first lost worker (allowed-failures = 0): the cells
    that were on it are stored crashed, "harness: worker lost", and the next run computes them."""
    c = Cluster(env, tmp_path, {"DASK_DISTRIBUTED__SCHEDULER__ALLOWED_FAILURES": "0"})
    try:
        (tmp_path / "g.toml").write_text(BLOCK_GRID)
        db = tmp_path / "r.sqlite"
        mark = Path(env["PSDBENCH_TEST_MARKS"]) / "blocked"
        args = [sys.executable, "-m", "psdbench.cli", "run", "--report", "", "--quiet", "--grid", tmp_path / "g.toml",
                "--db", db, "--backend", "dask", "--scheduler", c.address]
        run = subprocess.Popen(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        wait_for(mark, run)
        os.kill(int(mark.read_text()), signal.SIGKILL)
        out, err = run.communicate(timeout=600)
        assert run.returncode == 0, err
        df = Store(db).results_frame()
        assert len(df) == 6 and df.cell_key.is_unique
        lost = df[df.status == "crashed"]
        # the killed cell, and the cells the scheduler had queued on that worker
        assert len(lost) >= 1 and all(m.startswith("harness: worker lost") for m in lost.message), df.message
        c.wait_for_workers(2)  # the nanny restarted the worker
        again = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
        assert again.returncode == 0, again.stderr
        assert f"({len(lost)} run now" in again.stdout  # only the lost cells
        df = Store(db).results_frame()
        assert len(df) == 6 and set(df.status) == {"ok"}
        mark.unlink()
    finally:
        c.stop()


@pytest.mark.slow  # a cluster of its own
def test_workers_that_cannot_run_cells_are_named_before_any_work(env, tmp_path):
    """A worker whose memory limit leaves a cell process less than it needs: one line, exit 3, no cell."""
    c = Cluster(env, tmp_path, worker_args=("--nworkers", "1", "--memory-limit", "700MB"))
    try:
        (tmp_path / "g.toml").write_text(GRID)
        db = tmp_path / "r.sqlite"
        out = psdbench(env, "--grid", tmp_path / "g.toml", "--db", db, "--backend", "dask", "--scheduler",
                       c.address, check=False)
        assert out.returncode == 3, out.stderr
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("psdbench: error: Dask workers cannot run cells: tcp://127.0.0.1:")
        assert "MiB a cell process needs there" in lines[0]
        with sqlite3.connect(db) as con:
            assert con.execute("SELECT count(*) FROM history").fetchone()[0] == 0
            assert con.execute("SELECT count(*) FROM claims").fetchone()[0] == 0
    finally:
        c.stop()


@pytest.mark.slow  # starts a LocalCluster of its own
def test_terminal_ctrl_c_of_a_run_with_its_own_local_cluster_prints_one_line(env, tmp_path):
    """Ctrl-C at a terminal reaches the whole process group: psdbench and its LocalCluster's processes."""
    (tmp_path / "g.toml").write_text(BLOCK_GRID)
    db = tmp_path / "r.sqlite"
    mark = Path(env["PSDBENCH_TEST_MARKS"]) / "blocked"
    run = subprocess.Popen([sys.executable, "-m", "psdbench.cli", "run", "--report", "", "--quiet", "--grid",
                            tmp_path / "g.toml", "--db", db, "--backend", "dask", "--jobs", "2"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        wait_for(mark, run)
        os.killpg(run.pid, signal.SIGINT)
        out, err = run.communicate(timeout=600)
    finally:
        if run.poll() is None:
            os.killpg(run.pid, signal.SIGKILL)
    assert run.returncode == 130, err
    assert err.strip().splitlines() == ["psdbench: interrupted; finished cells are stored, re-run to complete the rest"]
    mark.unlink()
