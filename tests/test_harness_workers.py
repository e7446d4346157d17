"""Long-lived workers: reuse, replacement after faults, read-only shared instances,
per-cell peak memory, the memory cap, a kill -9 of the run losing and duplicating nothing."""

import os
import signal
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.harness.workers.shared import WorkerCache, freeze
from psdbench.harness.store.db import Store

from .test_harness import ENTRY_POINTS as FAULTY_ENTRY_POINTS
from .test_harness import FAULTY, cli, grid

PLUGIN = FAULTY + '''

class _Pid(_Base):
    def solve(self, instance, budget, **params):
        x = np.asarray(instance.x_true, dtype=float).copy()
        return Solution(variables={"x": x}, info={"pid": os.getpid()})


class PidA(_Pid):
    name = "pid-a"


class PidB(_Pid):
    name = "pid-b"


class Writer(_Base):
    name = "writes-instance"

    def solve(self, instance, budget, **params):
        instance.L[0, 0] = 123.0  # must fail: instance arrays are read-only
        return Solution(variables={"x": np.asarray(instance.x_true, dtype=float).copy()})


class Alloc(_Base):
    name = "alloc-300mb"

    def solve(self, instance, budget, **params):
        a = np.ones(300 * 2**20 // 8)  # touched: resident
        s = float(a[::4096].sum())
        del a
        return Solution(variables={"x": np.asarray(instance.x_true, dtype=float).copy()}, info={"s": s,
                        "pid": os.getpid()})


def _touch_300mb(instance, x):
    a = np.ones(300 * 2**20 // 8)  # touched: resident, after the solve (when the iterate is scored)
    return np.asarray(x, dtype=float) + 0.0 * float(a[::4096].sum())


class AllocAfter(_Base):
    name = "alloc-after-300mb"

    def solve(self, instance, budget, **params):
        from psdbench.api import Deferred

        x = np.asarray(instance.x_true, dtype=float).copy()
        return Solution(variables={"x": x}, iterates=[(0.0, {"x": Deferred(_touch_300mb, (x * 0.5,))})])


class Huge(_Base):
    name = "alloc-huge"

    def solve(self, instance, budget, **params):
        a = np.ones(2**40 // 8)  # 1 TiB: beyond any cap
        return Solution(variables={"x": a[: instance.n]})
'''

ENTRY_POINTS = FAULTY_ENTRY_POINTS + """pid-a = workers_plugin:PidA
pid-b = workers_plugin:PidB
writes-instance = workers_plugin:Writer
alloc-300mb = workers_plugin:Alloc
alloc-huge = workers_plugin:Huge
alloc-after-300mb = workers_plugin:AllocAfter
"""


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("workers")
    (d / "workers_plugin.py").write_text(PLUGIN.replace("import os, signal, time", "import os, signal, time\nimport numpy as np"))
    info = d / "workers_plugin-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: workers-plugin\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS.replace("faulty_solvers:", "workers_plugin:"))
    return d


def _run(tmp_path, plugin_path, solvers, seeds=(0,), jobs=1, extra_run=""):
    db = tmp_path / "r.sqlite"
    g = grid(tmp_path, solvers, seeds=seeds)
    if extra_run:
        g.write_text(g.read_text().replace("[run]", "[run]\n" + extra_run))
    out = cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--jobs", str(jobs)], plugin_path)
    assert out.returncode == 0, out.stderr
    return Store(db).results_frame()


def test_a_worker_runs_many_cells_and_is_replaced_after_a_crash(tmp_path, plugin_path):
    df = _run(tmp_path, plugin_path, ["pid-a", "faulty-crash", "pid-b"], seeds=(0, 1))
    assert len(df) == 6
    st = {(r.seed, r.solver): r.status for r in df.itertuples()}
    assert st == {(s, v): ("crashed" if v == "faulty-crash" else "ok") for s in (0, 1)
                  for v in ("pid-a", "faulty-crash", "pid-b")}
    pid = {(r.seed, r.solver): r.metric_solver_pid for r in df.itertuples() if r.solver != "faulty-crash"}
    # one worker per crash-free stretch: (0, a) | crash | (0, b), (1, a) | crash | (1, b)
    assert pid[0, "pid-a"] != pid[0, "pid-b"]
    assert pid[0, "pid-b"] == pid[1, "pid-a"]
    assert pid[1, "pid-a"] != pid[1, "pid-b"]


def test_shared_instances_are_read_only(tmp_path, plugin_path):
    df = _run(tmp_path, plugin_path, ["writes-instance", "pid-a"])
    row = df.set_index("solver").loc["writes-instance"]
    assert row.status == "error" and "read-only" in row.message
    # the next cell on the same instance sees the data unchanged: same objective as a fresh run
    (tmp_path / "alone").mkdir()
    alone = _run(tmp_path / "alone", plugin_path, ["pid-a"])
    shared = df.set_index("solver").loc["pid-a"]
    assert shared.status == "ok"
    assert shared.objective == alone.iloc[0].objective


def test_freeze_reaches_nested_and_sparse_arrays():
    class Inst:
        pass

    inst = Inst()
    inst.a = np.zeros(3)
    inst.d = {"b": np.zeros(2), "l": [np.zeros(2)]}
    inst.s = sp.csr_matrix(np.eye(3))
    inst.n = 3
    freeze(inst)
    for arr in (inst.a, inst.d["b"], inst.d["l"][0], inst.s.data, inst.s.indices, inst.s.indptr):
        with pytest.raises(ValueError, match="read-only"):
            arr[0] = 1


def test_worker_cache_builds_an_instance_once():
    cache = WorkerCache()
    calls = []

    def build():
        calls.append(1)
        return {"X": np.ones(2)}

    a, b = cache.instance("k", build), cache.instance("k", build)
    assert a is b and len(calls) == 1 and not a["X"].flags.writeable
    for i in range(3):
        cache.instance(f"other{i}", build)
    cache.instance("k", build)
    assert len(calls) == 5  # evicted (least recently used), then built again


@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK), reason="needs Linux clear_refs to reset the peak")
def test_peak_memory_is_per_cell_in_a_reused_worker(tmp_path, plugin_path):
    df = _run(tmp_path, plugin_path, ["alloc-300mb", "pid-a"])
    r = df.set_index("solver")
    assert r.loc["alloc-300mb", "metric_solver_pid"] == r.loc["pid-a", "metric_solver_pid"]  # same process
    assert r.loc["alloc-300mb", "peak_rss_mb"] - r.loc["pid-a", "peak_rss_mb"] > 250


def test_memory_cap_still_applies_and_the_worker_is_replaced(tmp_path, plugin_path):
    df = _run(tmp_path, plugin_path, ["pid-a", "alloc-huge", "pid-b"], extra_run="memory_mb = 8000")
    r = df.set_index("solver")
    # out of memory is its own outcome (Mittelmann's m), not an error
    assert r.loc["alloc-huge", "status"] == "out_of_memory" and "MemoryError" in r.loc["alloc-huge", "message"]
    assert r.loc["pid-a", "status"] == "ok" and r.loc["pid-b", "status"] == "ok"
    assert r.loc["pid-a", "metric_solver_pid"] != r.loc["pid-b", "metric_solver_pid"]


def test_store_is_wal_and_batches_commit(tmp_path):
    from psdbench.harness.store.results import CellResult

    store = Store(tmp_path / "s.sqlite")
    assert sqlite3.connect(tmp_path / "s.sqlite").execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    rows = [CellResult(run_id="r", cell_key=f"c{i}", instance_key="i", status="ok") for i in range(3)]
    store.write_many(rows, [{"instance_key": "i", "value": 1.0, "kind": "certified"}])
    other = sqlite3.connect(tmp_path / "s.sqlite")  # another connection sees the committed batch
    assert other.execute("SELECT count(*) FROM history").fetchone()[0] == 3
    assert other.execute("SELECT value FROM refs").fetchone()[0] == 1.0


def test_kill_9_of_the_run_loses_and_duplicates_nothing(tmp_path, plugin_path):
    db = tmp_path / "r.sqlite"
    g = grid(tmp_path, ["pid-a", "pid-b"], seeds=tuple(range(40)))
    env = dict(os.environ, PYTHONPATH=str(plugin_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    proc = subprocess.Popen([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(g), "--db", str(db),
                             "--report", "", "--quiet", "--jobs", "2"], env=env, start_new_session=True)
    deadline = time.time() + 120
    stored = 0
    while time.time() < deadline and proc.poll() is None:
        if db.exists():
            try:
                stored = sqlite3.connect(db).execute("SELECT count(*) FROM history").fetchone()[0]
            except sqlite3.OperationalError:  # schema not created yet
                stored = 0
        if stored >= 10:
            break
        time.sleep(0.05)
    proc.kill()  # kill -9 of the run's process; its workers notice and end on their own
    proc.wait()
    deadline = time.time() + 120  # ends at the event; generous for a loaded machine
    while time.time() < deadline:
        try:
            os.killpg(proc.pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("worker processes outlived the killed run")
    first = dict(sqlite3.connect(db).execute("SELECT cell_key, run_id FROM history").fetchall())
    assert first, "nothing was stored before the kill"
    out = cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--jobs", "2"], plugin_path)
    assert out.returncode == 0, out.stderr
    con = sqlite3.connect(db)
    counts = dict(con.execute("SELECT cell_key, count(*) FROM history GROUP BY cell_key").fetchall())
    assert len(counts) == 80 and set(counts.values()) == {1}  # every cell once: none lost, none twice
    after = dict(con.execute("SELECT cell_key, run_id FROM history").fetchall())
    assert all(after[k] == v for k, v in first.items())  # rows stored before the kill were kept, not re-run


def _environment_probe(task, emit, *cache):
    """A task that reports one variable of its worker's environment."""
    return os.environ.get(task["var"])


def test_workers_from_the_fork_server_see_the_environment_of_their_start_not_the_servers(monkeypatch):
    """The fork server keeps the environment of its own start: a worker it forks must still see a
    variable set later (``PSDBENCH_SDPA_DIR`` set after an earlier run started the server; a
    notebook's ``%env``).  Found as an ``error`` cell for a user's SDPA folder in CI."""
    from psdbench.harness.workers.process import CellWorker, _context, run_isolated

    _context()  # the server runs, started before the variable exists
    monkeypatch.setenv("PSDBENCH_LATE_VARIABLE", "set after the fork server started")
    out = run_isolated(_environment_probe, {"var": "PSDBENCH_LATE_VARIABLE"}, timeout=60, memory_mb=None)
    assert (out.outcome, out.value) == ("result", "set after the fork server started"), out.message
    worker = CellWorker(memory_mb=None)
    try:
        out = worker.run(_environment_probe, {"var": "PSDBENCH_LATE_VARIABLE"}, timeout=60)
    finally:
        worker.close()
    assert (out.outcome, out.value) == ("result", "set after the fork server started"), out.message


def _abort(task, emit, *cache):
    """A task whose worker dies by signal 6 (as a library aborting), far from its memory cap."""
    os.abort()


def test_what_a_worker_needs_is_read_from_that_worker_not_from_the_runner():
    """A worker that dies under a cap above its own address space + headroom is the solver's crash,
    however large the runner's address space has grown since it forked the worker (its threads,
    the test runner's imports): not a ``harness:`` failure "below what a worker needs", which made
    the out-of-memory test's ``out_of_memory`` a ``crashed`` row in the full suite."""
    import mmap

    from psdbench.api import Status
    from psdbench.harness import limits
    from psdbench.harness.workers.process import CellWorker
    from psdbench.harness.workers.tasks import _failure

    probe = CellWorker(memory_mb=None)
    probe.start()
    cap = int(probe.start_vm_mb) + 1024  # room for this worker
    probe.close()
    worker = CellWorker(memory_mb=cap)
    worker.start()
    held = mmap.mmap(-1, (cap + 1024) * 2**20)  # the runner grows past the cap after the fork, untouched
    try:
        assert limits.vm_mb() + limits.WORKER_HEADROOM_MB > cap  # the runner's own need would refuse the cap
        out = worker.run(_abort, {}, timeout=600)
    finally:
        worker.close()
        held.close()
    assert out.outcome == "crashed" and 0 < out.start_vm_mb <= cap - limits.WORKER_HEADROOM_MB
    assert _failure(out, cap) == (Status.CRASHED, "worker process died (signal 6)")


def _blas_probe(task, emit, *cache):
    """The BLAS thread count a worker's numpy sees (threadpoolctl), and its thread variables."""
    from threadpoolctl import threadpool_info

    pools = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
    return {"pools": pools, "env": os.environ.get("OPENBLAS_NUM_THREADS")}


@pytest.mark.parametrize("threads", [None, "2"])
def test_a_worker_runs_with_the_blas_threads_it_is_asked_for(monkeypatch, threads):
    """One BLAS thread per worker unless ``PSDBENCH_BLAS_THREADS`` (``psdbench run --blas-threads``)
    says more: read by the worker itself, a fork-server worker and a spawned one alike, and recorded
    in the run's row (``threads.worker_blas_threads``)."""
    from psdbench.harness.runner import machine_info
    from psdbench.harness.workers.process import CellWorker, run_isolated
    from psdbench.harness.workers.spawned import SpawnContext

    if threads is None:
        monkeypatch.delenv("PSDBENCH_BLAS_THREADS", raising=False)
    else:
        monkeypatch.setenv("PSDBENCH_BLAS_THREADS", threads)
    want = int(threads or 1)
    out = run_isolated(_blas_probe, {}, timeout=60, memory_mb=None)
    assert out.outcome == "result", out.message
    assert out.value["env"] == str(want) and out.value["pools"] and set(out.value["pools"]) == {want}
    worker = CellWorker(memory_mb=None, context=SpawnContext(()))
    try:
        out = worker.run(_blas_probe, {}, timeout=120)
    finally:
        worker.close()
    assert out.outcome == "result", out.message
    assert out.value["env"] == str(want) and set(out.value["pools"]) == {want}
    assert machine_info([])[2]["worker_blas_threads"] == want



@pytest.mark.skipif(not os.access("/proc/self/clear_refs", os.W_OK), reason="needs Linux clear_refs to reset the peak")
def test_peak_memory_and_time_cover_the_whole_cell_evaluation_included(tmp_path, plugin_path):
    """Memory used after the solve (a deferred iterate computed when the curve is re-scored; in a
    family: its certificate) counts in the row's ``peak_rss_mb``; the solve's own peak, the
    process's, and the seconds after the solve are metrics of their own."""
    df = _run(tmp_path, plugin_path, ["alloc-after-300mb", "pid-a"])
    r = df.set_index("solver").loc["alloc-after-300mb"]
    assert r.status == "ok" and r.peak_rss_mb > 250
    assert r.metric_solve_peak_rss_mb < 100 and r.metric_process_peak_rss_mb >= r.peak_rss_mb
    assert r.metric_harness_evaluate_s > 0 and r.metric_harness_cpu_s > 0
