"""Run a grid: every cell in its own worker process with one deadline and a memory cap.

* One deadline: when the runner starts a cell's worker it sets ``deadline = time.monotonic() +
  timeout`` (monotonic time is system-wide on Linux, so worker and runner agree); the worker's
  :class:`~psdbench.api.Budget` ends there (instance building counts against it) and the runner
  kills the worker at ``deadline + grace`` (:func:`grace_for`).  A solver that stops at the
  deadline returns its point (status ``timeout``, verified as usual); a killed worker's last
  checkpoints (iterates its ``TraceRecorder`` kept, streamed over the pipe) are verified in a
  short second process and the best verified one is recorded with status ``timeout``.
* Local backend: ``jobs`` threads, each of which starts one worker process per cell (forkserver
  context, heavy modules preloaded, so a worker starts in milliseconds).  A worker that dies is
  ``crashed``.
* Dask backend: the same isolated cell function submitted to a ``distributed`` cluster.
* Each finished cell is written to the store at once, in its own transaction, as a new history
  row; cells already in the store are skipped unless ``force``.  References are computed first
  (cached per instance) under the same deadline mechanism, and reference and gap columns are
  filled by :func:`psdbench.harness.reference.finalize` once the cells are in.
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
from dataclasses import dataclass, field, replace
from typing import Any, Callable

import psutil

from .. import __version__
from ..api import PsdbenchError, Status
from . import worker
from .grid import Grid
from .reference import finalize, reference_record
from .results import CellResult
from .store import Store, now

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


def grace_for(timeout: float) -> float:
    """Seconds between a cell's deadline and the hard kill: ``max(2 s, 5 % of the timeout)``.

    A solver that checks ``budget.expired()`` between iterations returns within that time.
    """
    return max(2.0, 0.05 * float(timeout))


def post_for(timeout: float) -> float:
    """Seconds the worker gets, once its solver has returned, to verify the point and re-score
    the iterates (harness work, outside the timed interval): ``max(2 s, timeout)``.

    The runner then kills at ``max(deadline + grace, solved + post)``, so a hang in verification
    is still bounded, and a solver that returned in time is never recorded as ``timeout``
    because re-scoring its curve took long.
    """
    return max(2.0, float(timeout))


def _child(fn: Callable[..., Any], task: dict[str, Any], conn: Any, memory_mb: int | None, path: list[str],
           parent: int) -> None:
    sys.path[:] = path  # plugins made importable after the forkserver started are found too
    _watch_parent(parent)
    os.environ.update({k: "1" for k in THREAD_VARS})
    import warnings

    warnings.simplefilter("ignore")  # solver chatter would break the progress line; statuses carry it
    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=int(task.get("threads", 1))):
        result = fn(task, conn.send)
    conn.send(("result", result))
    conn.close()


@dataclass
class Isolated:
    """What :func:`run_isolated` saw.

    Attributes
    ----------
    outcome : str
        ``"result"`` (the function returned ``value``), ``"killed"`` (deadline + grace passed) or
        ``"crashed"`` (the process died).
    value : Any
        The function's return value (``None`` unless ``outcome == "result"``).
    message : str
    wall_time_s : float
        From the worker's start to its end.
    checkpoints : list of (float, dict)
        ``(t, variables)`` the worker sent (``checkpoint`` and ``solved`` messages), thinned to
        :data:`MAX_CHECKPOINTS` like a :class:`~psdbench.api.TraceRecorder`.
    grace_s : float
    """

    outcome: str
    value: Any = None
    message: str = ""
    wall_time_s: float = 0.0
    checkpoints: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    grace_s: float = 0.0


MAX_CHECKPOINTS = 64


def run_isolated(fn: Callable[..., Any], task: dict[str, Any], timeout: float, memory_mb: int | None) -> Isolated:
    """Run ``fn(task, emit)`` in a fresh process with one deadline, ``timeout`` s after its start.

    The task gets ``deadline`` (``time.monotonic()`` at the start plus ``timeout``), ``timeout``,
    ``grace`` (:func:`grace_for`) and ``post`` (:func:`post_for`); the process is killed at
    ``deadline + grace``, or ``post`` seconds after a ``("solved", ...)`` message if that is
    later.  ``fn`` must be a module-level function (it is pickled by reference).
    """
    ctx = _context()
    recv, send = ctx.Pipe(duplex=False)
    grace = grace_for(timeout)
    start = time.monotonic()
    deadline = start + float(timeout)
    post = post_for(timeout)
    task = {**task, "deadline": deadline, "timeout": float(timeout), "grace": grace, "post": post}
    proc = ctx.Process(target=_child, args=(fn, task, send, memory_mb, list(sys.path), os.getpid()), daemon=True)
    proc.start()
    send.close()
    out = Isolated(outcome="crashed", grace_s=grace)
    kill_at = deadline + grace
    solved = False
    try:
        while True:
            wait = kill_at - time.monotonic()
            if wait <= 0 or not recv.poll(wait):
                proc.kill()
                proc.join()
                out.outcome = "killed"
                out.message = (f"killed at the {timeout:g} s deadline + {grace:g} s grace" if not solved else
                               f"killed {post:g} s after the solver returned (verification did not end)")
                break
            try:
                msg = recv.recv()
            except EOFError:
                break
            if msg[0] == "result":
                out.outcome, out.value = "result", msg[1]
                break
            out.checkpoints.append((float(msg[1]), msg[2]))
            if len(out.checkpoints) > MAX_CHECKPOINTS:
                cps = out.checkpoints
                out.checkpoints = cps[:1] + cps[1:-1:2] + cps[-1:]
            if msg[0] == "solved":
                kill_at, solved = max(kill_at, time.monotonic() + post), True
    finally:
        recv.close()
    proc.join(timeout=10)
    out.wall_time_s = time.monotonic() - start
    if out.outcome == "crashed":
        code = proc.exitcode
        how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
        out.message = f"worker process died ({how})"
    return out


def run_cell_isolated(task: dict[str, Any], timeout: float, memory_mb: int | None) -> CellResult:
    """One cell in its own process; a killed cell's checkpoints are verified in a second one.

    The verification task (:func:`~psdbench.harness.worker.verify_checkpoints`) gets
    ``max(10 s, min(timeout, 120 s))``: it rebuilds the instance and scores at most
    :data:`MAX_CHECKPOINTS` points.
    """
    base: CellResult = task["result"]
    iso = run_isolated(worker.run_cell, task, timeout, memory_mb)
    if iso.outcome == "result":
        return iso.value
    status = Status.TIMEOUT if iso.outcome == "killed" else Status.CRASHED
    out = replace(base, status=status.value, message=iso.message, wall_time_s=iso.wall_time_s)
    if status is Status.TIMEOUT and iso.checkpoints:
        check = run_isolated(worker.verify_checkpoints, {**task, "result": out, "checkpoints": iso.checkpoints},
                             max(10.0, min(float(timeout), 120.0)), memory_mb)
        if check.outcome == "result":
            out = check.value
        else:
            out = replace(out, message=out.message + f"; checkpoint verification {check.outcome}: {check.message}")
    return out


def run_reference_isolated(task: dict[str, Any], timeout: float, memory_mb: int | None) -> dict[str, Any]:
    """The reference of one instance in its own process, with the same deadline mechanism."""
    iso = run_isolated(worker.run_reference, task, timeout, memory_mb)
    if iso.outcome == "result":
        return iso.value
    status = Status.TIMEOUT if iso.outcome == "killed" else Status.CRASHED
    return {"status": status.value, "message": iso.message, "wall_time_s": iso.wall_time_s}


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
    """Return ``submit(fn, *args) -> future``, ``as_completed`` and ``shutdown``."""
    if backend == "local":
        pool = ThreadPoolExecutor(max_workers=jobs)
        return ((lambda fn, *a: pool.submit(fn, *a)), as_completed,
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

        return (lambda fn, *a: client.submit(fn, *a, pure=False)), dask_as_completed, shutdown
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
        have = {} if force else store.references(grid.instances)
        refs = [k for k in grid.instances if k not in have]
    prog = Progress(len(todo) + len(refs), enabled=progress)
    submit, completed, shutdown = _executor(backend, jobs, scheduler)
    futures: dict[Any, tuple[str, Any]] = {}
    try:
        for key in refs:
            futures[submit(run_reference_isolated, dict(grid.instances[key]), grid.reference_timeout,
                           memory_mb)] = ("ref", key)
        for cell in todo:
            base = CellResult.for_cell(cell, run_id)
            futures[submit(run_cell_isolated, {"result": base}, timeout, memory_mb)] = ("cell", base)
        for fut in completed(list(futures)):
            what, obj = futures[fut]
            try:
                res = fut.result()
            except Exception as exc:  # the executor itself failed: record, go on
                res = {"status": Status.CRASHED.value, "message": f"executor: {type(exc).__name__}: {exc}"}
                if what == "cell":
                    res = replace(obj, **res)
            if what == "ref":
                store.write_reference(reference_record(obj, grid.instances[obj], res))
                prog.update(str(res.get("status")))
            else:
                store.write_result(replace(res, created_at=now()))
                prog.update(res.status)
    finally:
        shutdown()
        finalize(store, {k: grid.senses.get(spec["problem"], "min") for k, spec in grid.instances.items()})
        store.finish_run(run_id)
    return run_id
