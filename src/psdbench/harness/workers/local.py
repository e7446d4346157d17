"""The local backend: ``jobs`` threads, each with one long-lived worker process, fed whole instances.

:func:`run_local` yields finished work in batches (whatever finished since the caller last
asked, at most :data:`MAX_BATCH`), so the runner can commit them in one transaction before it
counts them done.  A work item is ``("ref", key, task)`` (a reference, in a fresh process) or
``("cells", bases)`` (the cells of one instance, in the thread's
:class:`~psdbench.harness.workers.process.CellWorker`, one after another, so the instance is built once
per worker).  Before a reference or cell is sent to a worker, ``claim`` may refuse it (another run
on the same store holds or has stored it): it is then yielded as ``("skipped", obj, reason)``.

Closing the generator (Ctrl-C in the runner) sets the stop event: every running task's process is
killed within :data:`~psdbench.harness.workers.process.CANCEL_POLL` s (its process group too), no task is
started, and the threads are joined before the generator returns; what they were running is
never yielded, hence never stored.
"""

from __future__ import annotations

import importlib
import queue
import threading
from dataclasses import replace
from typing import Any, Callable, Iterator, Sequence

from psdbench.api import Status
from psdbench.harness.limits import harness_failure
from psdbench.harness.workers.process import CellWorker, fork_context

MAX_BATCH = 64

Result = tuple[str, Any, Any]  # (what, key or base CellResult, result)


def _guarded(what: str, obj: Any, call: Callable[[], Any]) -> Result:
    """``call()``, a failure of the harness's own machinery recorded as ``crashed``, never raised."""
    try:
        return what, obj, call()
    except Exception as exc:
        res = {"status": Status.CRASHED.value, "message": harness_failure(f"executor: {type(exc).__name__}: {exc}")}
        return what, obj, (replace(obj, **res) if what == "cell" else res)


def run_local(items: list[tuple], jobs: int, run_cell: Callable[[Any, CellWorker], Any],
              run_ref: Callable[[Any, threading.Event], Any], memory_mb: int | None,
              claim: Callable[[str, Any], str] | None = None, preload: Sequence[str] = ()) -> Iterator[list[Result]]:
    """Run ``items`` on ``jobs`` threads; yield lists of ``(what, obj, result)`` as they finish.

    Parameters
    ----------
    items : list of tuple
        ``("ref", key, task)`` or ``("cells", [base CellResult, ...])``.
    run_cell : callable
        ``run_cell(base, worker) -> CellResult``.
    run_ref : callable
        ``run_ref(task, stop) -> dict`` (the task's process is killed when ``stop`` is set).
    memory_mb : int or None
        Each worker process's memory cap.
    claim : callable, optional
        ``claim(what, obj) -> reason``: "" if the run may compute it now, else why not.
    preload : sequence of str
        Modules the plugins list in ``preload``: imported here, before the workers are forked, so
        that each starts with them (only when there is work: a resumed run imports none).

    Closing the generator early (an interrupted run) kills the running tasks and joins the threads.
    """
    if not items:  # a fully resumed run starts no worker
        return
    work: queue.Queue = queue.Queue()
    for it in items:
        work.put(it)
    done: queue.Queue = queue.Queue()
    stop = threading.Event()

    workers = [CellWorker(memory_mb, cancel=stop) for _ in range(max(1, min(jobs, len(items))))]  # no idle worker
    if preload and fork_context() is not None:
        for module in preload:
            try:
                importlib.import_module(module)
            except Exception:  # the plugin's cells report it, in their own rows
                continue
    ctx = fork_context()
    if ctx is not None:  # before any thread starts: forked workers start with the plugins imported
        for w in workers:
            w.start(ctx)

    def loop(w: CellWorker) -> None:
        try:
            while not stop.is_set():
                try:
                    item = work.get_nowait()
                except queue.Empty:
                    return
                if item[0] == "ref":
                    why = claim("ref", item[1]) if claim else ""
                    done.put(("skipped", item[1], why) if why else
                             _guarded("ref", item[1], lambda: run_ref(item[2], stop)))
                    continue
                for base in item[1]:
                    if stop.is_set():
                        return
                    why = claim("cell", base) if claim else ""
                    done.put(("skipped", base, why) if why else _guarded("cell", base, lambda: run_cell(base, w)))
        finally:
            w.close()
            done.put(("end", None, None))

    threads = [threading.Thread(target=loop, args=(w,), daemon=True, name=f"psdbench-job-{i}")
               for i, w in enumerate(workers)]
    for t in threads:
        t.start()
    ended = 0
    try:
        while ended < len(threads):
            batch = [done.get()]
            while len(batch) < MAX_BATCH:
                try:
                    batch.append(done.get_nowait())
                except queue.Empty:
                    break
            ended += sum(1 for b in batch if b[0] == "end")
            batch = [b for b in batch if b[0] != "end"]
            if batch:
                yield batch
    finally:
        stop.set()  # the threads' running tasks are killed within CANCEL_POLL s
        for t in threads:
            t.join(timeout=30)
