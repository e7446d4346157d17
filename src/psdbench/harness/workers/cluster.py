"""The Dask backend: cells and references as tasks of a ``distributed`` cluster, however it was started.

* **Where cells run.**  Workers as Dask deploys them (``dask worker``, dask-jobqueue,
  dask-kubernetes, a ``LocalCluster``) run under a nanny and are daemonic processes, which
  :mod:`multiprocessing` forbids to start children.  Each Dask worker thread therefore keeps one
  long-lived :class:`~psdbench.harness.workers.process.CellWorker` whose process is a fresh interpreter
  started by :mod:`subprocess` (:class:`~psdbench.harness.workers.spawned.SpawnContext`), held by a
  :class:`CellPool` worker plugin that the client registers for the run.  Cells run in it as on
  the local backend: one deadline, the worker's own hard kill, the memory cap (``RLIMIT_AS``), a
  fresh process after any fault.  The memory cap is the grid's ``memory_mb``, else
  :data:`~psdbench.harness.limits.MEMORY_SHARE` of the Dask worker's own memory limit split
  between its threads, computed on the worker.
* **Before any work** (:func:`preflight`) every worker starts its cell process once and answers
  with what it cannot do; a worker that cannot run cells ends the run with one line naming it and
  why (:class:`~psdbench.harness.limits.MachineError`, exit 3).
* **Data.**  The client loads each dataset of the grid and scatters it once; a cell's task
  receives it and the worker builds the instance from it, so workers need no ``PSDBENCH_DATA``
  and build from the very content the instance key hashed.  A reference is one task per
  instance, whatever the number of workers.
* **Worker loss.**  A task whose worker dies (``kill -9``, the nanny restarting it) is run again
  by the scheduler on another worker; one the scheduler gives up on (``KilledWorker``, after
  ``distributed.scheduler.allowed-failures`` losses) is stored ``crashed`` with ``harness: worker
  lost`` (computed again by the next run).  Each cell is one future, hence one row.
* **Scheduler loss** raises :class:`~psdbench.harness.limits.MachineError` (exit 3): rows already
  committed stay, claims are released by the runner.
* **Ctrl-C**: every worker's running cell process is killed (:func:`cancel_running`), the tasks
  left return at once without running, and the client closes; a ``LocalCluster`` psdbench starts
  has its worker processes ignore SIGINT (a terminal's Ctrl-C reaches the whole process group).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from typing import Any, Callable, Iterator, Mapping

from distributed import WorkerPlugin, get_worker

from psdbench.harness.limits import MEMORY_SHARE, MachineError
from psdbench.harness.workers.process import CellWorker

PLUGIN = "psdbench-cells"
#: Dask's logging level of ``distributed`` for the worker processes of a LocalCluster psdbench starts.
QUIET_ENV = "DASK_LOGGING__DISTRIBUTED"


class CellPool(WorkerPlugin):
    """One long-lived cell worker per Dask worker thread and memory cap, for one run."""

    def __init__(self, memory_mb: int | None, preload: tuple[str, ...] | None = None) -> None:
        self.memory_mb, self.preload = memory_mb, preload

    def setup(self, worker: Any) -> None:
        self.workers: dict[int, CellWorker] = {}
        self.cancel = threading.Event()
        self.lock = threading.Lock()
        limit = getattr(getattr(worker, "memory_manager", None), "memory_limit", None)
        if not limit:
            import psutil

            limit = psutil.virtual_memory().total
        threads = max(1, int(getattr(worker.state, "nthreads", 1) or 1))
        self.cap = int(self.memory_mb or MEMORY_SHARE * limit / threads / 2**20)

    def teardown(self, worker: Any) -> None:
        self.cancel.set()
        for w in list(self.workers.values()):
            w.close()

    def worker(self) -> CellWorker:
        """This thread's cell worker (started on first use, from a fresh interpreter)."""
        from psdbench.harness.workers.spawned import SpawnContext

        me = threading.get_ident()
        with self.lock:
            if me not in self.workers:
                self.workers[me] = CellWorker(self.cap, cancel=self.cancel, context=SpawnContext(self.preload))
            return self.workers[me]


def plugin_modules(problems: list[str], solvers: list[str]) -> tuple[str, ...]:
    """The modules the cells of these problems and solvers import (their plugins' modules and
    ``preload`` lists): what a worker's cell process imports before its first cell.  Datasets are
    shipped, so no dataset plugin is needed there."""
    from psdbench.registry import discover

    reg = discover(preload=False)
    mods: list[str] = []
    for obj in [reg.problem(p) for p in problems] + [reg.solver(s) for s in solvers]:
        for m in [obj.__module__ if isinstance(obj, type) else type(obj).__module__, *getattr(obj, "preload", ())]:
            if m not in mods:
                mods.append(m)
    return tuple(mods)


def _pool() -> CellPool:
    return get_worker().plugins[PLUGIN]


def _plugin_gone() -> dict[str, Any]:
    """The row of a task that started after its run removed the worker plugin (the run is ending)."""
    from psdbench.api import Status
    from psdbench.harness.limits import harness_failure

    return {"status": Status.CRASHED.value, "message": harness_failure("worker lost: the run ended before the task started")}


def _need(task: Any, emit: Any, cache: Any = None) -> int:
    """In a cell process: the memory cap it needs (its address space + the headroom to work)."""
    from psdbench.harness.limits import worker_need_mb

    return worker_need_mb()


def probe() -> str:
    """On a worker, before any work: start this thread's cell process and ask it what memory cap
    it needs; "" if it runs and fits, else why not."""
    pool = _pool()
    out = pool.worker().run(_need, {}, 120.0)
    need = out.value if out.outcome == "result" else _uncapped_need(pool)
    if need is not None and need > pool.cap:
        return (f"a cell's memory cap of {pool.cap} MiB (80 % of the worker's memory limit per thread, or [run] "
                f"memory_mb) is below the {need} MiB a cell process needs there; raise the worker's "
                "--memory-limit or memory_mb")
    if out.outcome != "result":
        return f"its cell process does not run ({out.message}) under a memory cap of {pool.cap} MiB"
    return ""


def _uncapped_need(pool: CellPool) -> int | None:
    """What a cell process needs, asked of one started without a cap: a process that cannot even
    start under the cap is named with the cap it needs.  ``None`` if it does not run either."""
    from psdbench.harness.workers.spawned import SpawnContext

    w = CellWorker(None, cancel=pool.cancel, context=SpawnContext(pool.preload))
    try:
        out = w.run(_need, {}, 120.0)
        return int(out.value) if out.outcome == "result" else None
    finally:
        w.close()


def cancel_running() -> None:
    """On a worker: kill every running cell process of this run (Ctrl-C of the client)."""
    try:
        _pool().cancel.set()
    except (KeyError, ValueError):
        pass


def run_cell(task: dict[str, Any], timeout: float, dataset: Any = None) -> Any:
    """A Dask task: one cell in this thread's cell worker."""
    from dataclasses import replace

    from psdbench.harness.workers.tasks import run_cell_isolated

    try:
        pool = _pool()
    except KeyError:  # the run ended (Ctrl-C) and took its plugin away while this task waited: no traceback in the log
        return replace(task["result"], **_plugin_gone())
    w = pool.worker()
    return run_cell_isolated({**task, "dataset_data": dataset}, timeout, pool.cap, w)


def run_reference(task: dict[str, Any], timeout: float, dataset: Any = None) -> Any:
    """A Dask task: one instance's reference in this thread's cell worker."""
    from psdbench.harness.workers.tasks import run_reference_isolated

    try:
        pool = _pool()
    except KeyError:  # as in run_cell
        return _plugin_gone()
    return run_reference_isolated({**task, "dataset_data": dataset}, timeout, pool.cap, in_worker=pool.worker())


class Cluster:
    """The client side of a run: connect (or start a ``LocalCluster``), register the pool, check
    the workers, ship the datasets, submit, and close."""

    def __init__(self, scheduler: Any, jobs: int, memory_mb: int | None,
                 preload: tuple[str, ...] | None = None) -> None:
        from distributed import Client, LocalCluster

        quiet_logs()
        self.address = str(scheduler or "local cluster")  # as the run's messages name it
        self.own: Any = None
        self.own_client = True
        if scheduler is None:
            # its worker processes start with SIGINT ignored: a terminal's Ctrl-C reaches the whole
            # process group, and only this process should answer it (closing the cluster)
            # and log errors only (the run reports in its own lines)
            main = threading.current_thread() is threading.main_thread()
            old = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
            level = os.environ.get(QUIET_ENV)
            os.environ[QUIET_ENV] = "error"
            try:
                self.own = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=":0")
            finally:
                if main:
                    signal.signal(signal.SIGINT, old)
                if level is None:
                    os.environ.pop(QUIET_ENV, None)
                else:
                    os.environ[QUIET_ENV] = level
            self.client = Client(self.own)
        elif hasattr(scheduler, "scheduler_address"):  # a cluster object (LocalCluster, SLURMCluster, ...)
            self.client = Client(scheduler)
        elif hasattr(scheduler, "submit") and hasattr(scheduler, "register_plugin"):  # a Client
            self.client, self.own_client = scheduler, False
        else:
            self.client = Client(str(scheduler), timeout="10s")
        self.client.register_plugin(CellPool(memory_mb, preload), name=PLUGIN)
        self.datasets: dict[str, Any] = {}
        self.submitted: list[Any] = []

    def preflight(self) -> None:
        """Every worker starts its cell process; one line naming those that cannot, and why."""
        workers = list(self.client.scheduler_info().get("workers", {}))
        if not workers:
            self.client.wait_for_workers(1, timeout=60)
            workers = list(self.client.scheduler_info().get("workers", {}))
        futs = {w: self.client.submit(probe, workers=[w], allow_other_workers=False, pure=False) for w in workers}
        bad = []
        for w, f in futs.items():
            try:
                why = f.result()
            except Exception as exc:  # e.g. psdbench not importable there
                why = f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"
            if why:
                bad.append(f"{w}: {why}")
        if bad:
            raise MachineError(f"Dask workers cannot run cells: {'; '.join(bad)}")

    def fingerprints(self) -> dict[str, Any]:
        """Each worker's machine record (:func:`psdbench.harness.fingerprint.machine_record`, the
        environment by its hash), by worker address; a worker that cannot say is recorded with why."""
        from psdbench.harness.fingerprint import machine_record

        try:
            return {str(k): v for k, v in self.client.run(machine_record, False).items()}
        except Exception as exc:  # a record is a courtesy to the reader, never the run's failure
            return {"error": f"{type(exc).__name__}: {(str(exc).splitlines() or [''])[0]}"}

    def ship(self, names: list[str], load: Callable[[str], Any]) -> None:
        """Scatter each dataset once (the workers then need no data folder of their own)."""
        for name in names:
            if name not in self.datasets:
                self.datasets[name] = self.client.scatter(load(name), hash=False)

    def submit(self, what: str, task: dict[str, Any], timeout: float, dataset: str) -> Any:
        fn = run_reference if what == "ref" else run_cell
        fut = self.client.submit(fn, task, timeout, self.datasets.get(dataset), pure=False)
        self.submitted.append(fut)
        return fut

    def wave(self, items: list[tuple[str, Any]], specs: Mapping[str, Mapping[str, Any]], reference_timeout: float,
             timeout: float, claim: Callable[[list[tuple[str, Any]]], list[str]],
             extra: Mapping[str, Any]) -> Iterator[list[tuple[str, Any, Any]]]:
        """Claim ``items`` (``("cell", base CellResult)`` or ``("ref", instance key)``, ``specs`` the
        instances by key) at once, submit them, and yield what finishes together as one batch of
        ``(what, obj, result)``; a task that did not return is ``crashed`` (``harness: worker lost``)."""
        from dataclasses import replace

        from distributed import as_completed

        from psdbench.api import Status
        from psdbench.harness.limits import harness_failure

        if not items:
            return
        futures: dict[Any, tuple[str, Any]] = {}
        whys = claim(items)  # all at once: they are all dispatched now
        skipped = [("skipped", obj, why) for (_, obj), why in zip(items, whys) if why]
        if skipped:
            yield skipped
        for (what, obj), why in zip(items, whys):
            if why:
                continue
            if what == "ref":
                spec = dict(specs[obj])
                futures[self.submit("ref", spec, reference_timeout, spec["dataset"])] = ("ref", obj)
            else:
                futures[self.submit("cell", {"result": obj, **extra}, timeout, obj.dataset)] = ("cell", obj)
        for finished in as_completed(list(futures)).batches():  # what finished together: one commit
            batch = []
            for fut in finished:
                what, obj = futures[fut]
                try:
                    res = fut.result()
                except Exception as exc:  # the task did not return: its worker was lost, or the scheduler
                    if self.lost(exc):
                        raise MachineError(f"the Dask scheduler went away ({self.address}): finished cells are "
                                           "stored, re-run to complete the rest") from None
                    why = ("worker lost: " if is_worker_lost(exc) else "executor: ") + f"{type(exc).__name__}: {exc}"
                    res = {"status": Status.CRASHED.value, "message": harness_failure(why)}
                    if what == "cell":
                        res = replace(obj, **res)
                batch.append((what, obj, res))
            yield batch

    def lost(self, exc: BaseException | None = None) -> bool:
        """Whether the client has lost its scheduler (``exc``: what a future raised)."""
        return ("scheduler-connection-lost" in str(exc or "")
                or self.client.status not in ("running", "newly-created"))

    def close(self, interrupted: bool = False) -> None:
        """Kill the running cells (``interrupted``), end the workers' cell processes, close what we opened."""
        if not self.lost():
            try:
                if interrupted:  # running cells killed; the tasks left return at once ("cancelled"), unstored
                    self.client.run(cancel_running)
                self.client.unregister_worker_plugin(PLUGIN)  # its teardown ends the cell processes
            except Exception:  # workers or scheduler gone: nothing left to end
                pass
        if self.own_client:
            try:
                self.client.close(timeout=10)
            except Exception:
                pass
        if self.own is not None:
            try:
                self.own.close(timeout=10)
            except Exception:
                pass


def quiet_logs() -> None:
    """Dask's client logs a lost connection or a closing cluster with tracebacks on stderr; the run
    reports those in its own one line, so only critical records go through."""
    for name in ["distributed", "tornado", "asyncio"] + [n for n in logging.root.manager.loggerDict
                                                        if n.startswith("distributed.")]:
        logging.getLogger(name).setLevel(logging.CRITICAL)


def is_worker_lost(exc: BaseException) -> bool:
    """A task the scheduler gave up on because its workers died."""
    return type(exc).__name__ == "KilledWorker"
