"""Run a grid: every cell in its own worker process with a hard timeout and a memory cap.

* Local backend: ``jobs`` threads, each of which starts one worker process per cell (forkserver
  context, heavy modules preloaded, so a worker starts in milliseconds) and kills it at the
  timeout.  A worker that dies is ``crashed``; one that overruns is ``timeout``.
* Dask backend: the same isolated cell function submitted to a ``distributed`` cluster.
* Each finished cell is written to the store at once, in its own transaction; cells already in
  the store are skipped unless ``force``.  References are computed first (cached per instance),
  and gaps are filled in :func:`finalize` once an instance's cells are in.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import platform
import resource
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import Any, Callable

import psutil

from .. import __version__
from ..api import PsdbenchError, Status
from .grid import Grid
from .store import Store, now
from .worker import CERTIFIED_RTOL

_CTX = None


THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
#: Imported by the fork server besides every registered plugin's modules (``Registry.preload_modules``).
BASE_PRELOAD = ["psdbench.harness.worker"]


def _context() -> mp.context.BaseContext:
    """Forkserver context whose server loads the numerical libraries with one BLAS thread.

    threadpoolctl reaches only libraries already loaded, and SCS ships its own OpenBLAS, so the
    thread variables are set for the server process before it imports anything.
    """
    global _CTX  # a process-wide cache of the multiprocessing context, not algorithm state
    if _CTX is None:
        if "forkserver" in mp.get_all_start_methods():
            ctx = mp.get_context("forkserver")
            from ..registry import discover

            ctx.set_forkserver_preload(BASE_PRELOAD + discover().preload_modules())
            from multiprocessing import forkserver

            saved = {k: os.environ.get(k) for k in THREAD_VARS}
            os.environ.update({k: "1" for k in THREAD_VARS})
            try:
                forkserver.ensure_running()
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            _CTX = ctx
        else:
            _CTX = mp.get_context("spawn")
    return _CTX


def _watch_parent(pid: int) -> None:
    """End this worker if the process that runs the grid dies (no orphans after a hard kill)."""
    import threading

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                os._exit(70)
            except PermissionError:
                pass

    threading.Thread(target=watch, daemon=True).start()


def _child(fn_name: str, task: dict[str, Any], conn: Any, memory_mb: int | None, path: list[str], parent: int) -> None:
    sys.path[:] = path  # plugins made importable after the forkserver started are found too
    _watch_parent(parent)
    os.environ.update({k: "1" for k in THREAD_VARS})
    import warnings

    warnings.simplefilter("ignore")  # solver chatter would break the progress line; statuses carry it
    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from threadpoolctl import threadpool_limits

    from . import worker

    with threadpool_limits(limits=int(task.get("threads", 1))):
        result = getattr(worker, fn_name)(task)
    conn.send(result)
    conn.close()


def run_isolated(fn_name: str, task: dict[str, Any], timeout: float, memory_mb: int | None) -> dict[str, Any]:
    """Run ``worker.<fn_name>(task)`` in a fresh process; kill it after ``timeout`` seconds."""
    ctx = _context()
    recv, send = ctx.Pipe(duplex=False)
    proc = ctx.Process(target=_child, args=(fn_name, task, send, memory_mb, list(sys.path), os.getpid()), daemon=True)
    t0 = time.perf_counter()
    proc.start()
    send.close()
    result = None
    try:
        if recv.poll(timeout):
            try:
                result = recv.recv()
            except EOFError:
                result = None
        else:
            proc.kill()
            proc.join()
            return {"status": Status.TIMEOUT.value, "message": f"killed after the {timeout:g} s timeout",
                    "wall_time_s": time.perf_counter() - t0}
    finally:
        recv.close()
    proc.join(timeout=10)
    if result is None:
        code = proc.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        return {"status": Status.CRASHED.value, "message": f"worker process died ({how})",
                "wall_time_s": time.perf_counter() - t0}
    return result


def machine_info(libraries: list[str]) -> tuple[dict, dict, dict]:
    """Machine, versions of ``libraries`` (distribution names) and BLAS thread pools."""
    from threadpoolctl import threadpool_info

    machine = {"platform": platform.platform(), "processor": platform.processor(), "cpus": os.cpu_count(),
               "memory_gb": round(psutil.virtual_memory().total / 2**30, 1), "python": sys.version.split()[0]}
    versions = {"psdbench": __version__}
    for pkg in libraries:
        try:
            from importlib.metadata import version

            versions[pkg] = version(pkg)
        except Exception:
            versions[pkg] = "absent"
    threads = {"worker_blas_threads": 1, "pools": [{k: p.get(k) for k in ("internal_api", "num_threads", "version")}
                                                   for p in threadpool_info()]}
    return machine, versions, threads


class Progress:
    """One-line progress: cells done, failures and time left (to stderr)."""

    def __init__(self, total: int, enabled: bool = True) -> None:
        self.total, self.done, self.failed, self.t0 = total, 0, 0, time.perf_counter()
        self.enabled = enabled and total > 0

    def update(self, status: str) -> None:
        self.done += 1
        self.failed += status in ("max_iter", "timeout", "infeasible", "diverged", "error", "crashed")
        if not self.enabled:
            return
        el = time.perf_counter() - self.t0
        left = el / self.done * (self.total - self.done)
        width = 24
        bar = "#" * int(width * self.done / self.total)
        end = "\n" if self.done == self.total else ""
        sys.stderr.write(f"\r[{bar:<{width}}] {self.done}/{self.total} cells, {self.failed} failed, "
                         f"{el:5.0f}s elapsed, ~{left:4.0f}s left {end}")
        sys.stderr.flush()


def _executor(backend: str, jobs: int, scheduler: str | None) -> tuple[Callable, Callable, Callable]:
    """Return ``submit(fn_name, task, timeout, mem) -> future``, ``as_completed`` and ``shutdown``."""
    if backend == "local":
        pool = ThreadPoolExecutor(max_workers=jobs)
        return ((lambda *a: pool.submit(run_isolated, *a)), as_completed,
                (lambda: pool.shutdown(wait=False, cancel_futures=True)))
    if backend == "dask":
        try:
            import dask
            from distributed import Client, LocalCluster
            from distributed import as_completed as dask_as_completed
        except ImportError:
            raise PsdbenchError("the dask backend needs 'distributed': pip install 'psdbench[dask]'") from None
        # Each task starts its own worker process (timeouts, crashes): dask workers must not be daemons.
        dask.config.set({"distributed.worker.daemon": False})
        if scheduler:
            client = Client(scheduler)
        else:
            client = Client(LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True))

        def shutdown() -> None:
            cluster = client.cluster
            client.close()
            if cluster is not None:
                cluster.close()

        return (lambda *a: client.submit(run_isolated, *a, pure=False)), dask_as_completed, shutdown
    raise PsdbenchError(f"unknown backend {backend!r} (local | dask)")


def run_grid(
    grid: Grid,
    store: Store,
    jobs: int | None = None,
    backend: str = "local",
    timeout: float | None = None,
    force: bool = False,
    progress: bool = True,
    command: str = "",
    scheduler: str | None = None,
) -> str:
    """Run every missing cell of ``grid`` (all of them with ``force``) and fill in gaps.

    Returns the run id.  Failures are results: they are stored with status and traceback.
    """
    jobs = jobs or os.cpu_count() or 1
    timeout = float(timeout or grid.timeout)
    memory_mb = grid.memory_mb or int(psutil.virtual_memory().total / 2**20 * 0.8 / jobs)
    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
    store.start_run(run_id, command, *machine_info(grid.libraries))

    done = set() if force else store.done_keys()
    todo = [c for c in grid.cells if c.cell_key not in done]
    refs = []
    if grid.reference:
        refs = [k for k in grid.instances if force or store.reference(k) is None]
    prog = Progress(len(todo) + len(refs), enabled=progress)
    submit, completed, shutdown = _executor(backend, jobs, scheduler)
    futures: dict[Any, tuple[str, Any]] = {}
    try:
        for key in refs:
            spec = grid.instances[key]
            task = {**spec, "timeout": grid.reference_timeout}
            futures[submit("run_reference", task, grid.reference_timeout + 30, memory_mb)] = ("ref", key)
        for cell in todo:
            task = {"problem": cell.problem, "dataset": cell.dataset, "instance_params": cell.instance_params,
                    "seed": cell.seed, "solver": cell.solver, "solver_params": cell.solver_params, "timeout": timeout}
            futures[submit("run_cell", task, timeout, memory_mb)] = ("cell", cell)
        for fut in completed(list(futures)):
            what, obj = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # the executor itself failed: record, go on
                res = {"status": Status.CRASHED.value, "message": f"executor: {type(exc).__name__}: {exc}"}
            if what == "ref":
                _store_reference(store, grid, obj, res)
            else:
                _store_cell(store, run_id, obj, res)
            prog.update(str(res.get("status")))
    finally:
        shutdown()
        finalize(store, grid)
        store.finish_run(run_id)
    return run_id


def _store_reference(store: Store, grid: Grid, key: str, res: dict[str, Any]) -> None:
    spec = grid.instances[key]
    value, lower = res.get("value"), res.get("lower")
    kind = "none"
    # ``lower`` is the certified bound on the other side of the optimum (an upper bound when maximizing)
    if value is not None and lower is not None and abs(value - lower) <= CERTIFIED_RTOL * max(1.0, abs(value)):
        kind = "certified"
    elif value is not None:
        kind = "best_verified"  # an exactly feasible point, but the interval is not tight
    store.write_reference({"instance_key": key, **spec, "value": value, "lower": lower,
                           "gap": None if value is None or lower is None else value - lower, "kind": kind,
                           "solver": res.get("solver"), "solver_version": res.get("solver_version"),
                           "status": res.get("status"), "wall_time_s": res.get("wall_time_s"),
                           "message": str(res.get("message", ""))[:4000]})


def _store_cell(store: Store, run_id: str, cell: Any, res: dict[str, Any]) -> None:
    store.write_result({
        "run_id": run_id, "cell_key": cell.cell_key, "instance_key": cell.instance_key, "problem": cell.problem,
        "dataset": cell.dataset, "instance_params": cell.instance_params, "seed": cell.seed, "solver": cell.solver,
        "solver_params": cell.solver_params, "status": res.get("status"), "message": res.get("message", ""),
        "wall_time_s": res.get("wall_time_s"), "cpu_time_s": res.get("cpu_time_s"),
        "peak_rss_mb": res.get("peak_rss_mb"), "iterations": res.get("iterations"),
        "objective": res.get("objective"), "reference_objective": None, "reference_kind": None,
        "gap_abs": None, "gap_rel": None, "feasible": res.get("feasible"), "min_eig": res.get("min_eig"),
        "max_residual": res.get("max_residual"), "metrics": res.get("metrics", {}), "trace": res.get("trace", []),
        "created_at": now(),
    })


def finalize(store: Store, grid: Grid) -> None:
    """Fill reference and gap columns for every instance of ``grid``.

    A certified reference is used as is.  Otherwise the best verified objective among the
    instance's verified cells (and the reference's own feasible point, if any) is used and marked
    ``best_verified``.  Gaps are written only for rows whose point verified.  The gap is how much
    worse than the reference a row is: ``objective - p*`` when minimizing, ``p* - objective`` when
    maximizing (the problem's ``sense``).
    """
    for key in grid.instances:
        maximize = grid.senses.get(grid.instances[key]["problem"], "min") == "max"
        rows = store.rows_for_instance(key)
        if not rows:
            continue
        ref = store.reference(key)
        if ref and ref.get("kind") == "certified":
            value, kind = ref["value"], "certified"
        else:
            cands = [r["objective"] for r in rows if r["feasible"] == 1 and r["objective"] is not None
                     and r["status"] in ("ok", "max_iter")]
            if ref and ref.get("value") is not None:
                cands.append(ref["value"])
            value, kind = ((max if maximize else min)(cands), "best_verified") if cands else (None, "none")
        for r in rows:
            if value is not None and r["feasible"] == 1 and r["objective"] is not None:
                gap = value - r["objective"] if maximize else r["objective"] - value
                store.update_reference_columns(r["cell_key"], value, kind, gap, gap / max(abs(value), 1e-12))
            else:
                store.update_reference_columns(r["cell_key"], value, kind, None, None)
