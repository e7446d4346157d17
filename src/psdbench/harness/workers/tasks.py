"""One cell or one reference run in a worker process, and what its end means: the result it returned,
or the status of a task that returned none (``timeout``, ``out_of_memory``, ``crashed``).

Both backends call these: the local one (:mod:`psdbench.harness.workers.local` through
:mod:`psdbench.harness.runner`) and the Dask one (:mod:`psdbench.harness.workers.cluster`, in the cell
worker each Dask worker thread keeps).  They live apart from the runner so that imports run one
way: ``runner -> cluster -> tasks -> process``.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from typing import Any

from psdbench.api import Status
from psdbench.harness.workers import worker
from psdbench.harness.limits import harness_failure, worker_need_mb
from psdbench.harness.workers.process import CellWorker, Isolated, run_isolated
from psdbench.harness.store.results import CellResult


def _failed_status(iso: Isolated) -> Status:
    """The status of a task that returned nothing: killed at its deadline ``timeout``, dead near its
    memory cap ``out_of_memory`` (Mittelmann's ``m``), else ``crashed``."""
    if iso.outcome == "killed":
        return Status.TIMEOUT
    return Status.OUT_OF_MEMORY if iso.out_of_memory else Status.CRASHED



def _failure(iso: Isolated, memory_mb: int | None) -> tuple[Status, str]:
    """The status and message of a task that returned no result; a cap below what its worker
    needs (the address space that worker started with, plus headroom) is the harness's own failure
    (``crashed``), not the solver's."""
    status = _failed_status(iso)
    message = iso.message
    if status is not Status.TIMEOUT and memory_mb and memory_mb < worker_need_mb(iso.start_vm_mb):
        status = Status.CRASHED
        message = harness_failure(f"{message} under a memory cap of {memory_mb} MiB, below what a worker needs")
    return status, message

def run_cell_isolated(task: dict[str, Any], timeout: float, memory_mb: int | None,
                      in_worker: CellWorker | None = None) -> CellResult:
    """One cell in its own process (or in ``in_worker``); a killed cell's checkpoints are verified
    in a second, fresh process.

    The verification task (:func:`~psdbench.harness.workers.worker.verify_checkpoints`) gets
    ``max(10 s, min(timeout, 120 s))``: it rebuilds the instance and scores at most
    :data:`MAX_CHECKPOINTS` points.
    """
    base: CellResult = task["result"]
    if in_worker is None:
        iso = run_isolated(worker.run_cell, task, timeout, memory_mb)
    else:
        iso = in_worker.run(worker.run_cell, task, timeout)
    if iso.outcome == "result":
        return iso.value
    status, message = _failure(iso, memory_mb)
    out = replace(base, status=status.value, message=message, wall_time_s=iso.wall_time_s)
    if status is Status.TIMEOUT and iso.checkpoints:
        vtask, vtimeout = {**task, "result": out, "checkpoints": iso.checkpoints}, max(10.0, min(float(timeout), 120.0))
        check = (run_isolated(worker.verify_checkpoints, vtask, vtimeout, memory_mb) if in_worker is None
                 else in_worker.run(worker.verify_checkpoints, vtask, vtimeout))  # its next process
        if check.outcome == "result":
            out = check.value
        else:
            out = replace(out, message=out.message + f"; checkpoint verification {check.outcome}: {check.message}")
    return out


def run_reference_isolated(task: dict[str, Any], timeout: float, memory_mb: int | None,
                           cancel: threading.Event | None = None,
                           in_worker: CellWorker | None = None) -> dict[str, Any]:
    """The reference of one instance in its own process (or in ``in_worker``), with the same
    deadline mechanism."""
    iso = (run_isolated(worker.run_reference, task, timeout, memory_mb, cancel) if in_worker is None
           else in_worker.run(worker.run_reference, task, timeout))
    if iso.outcome == "result":
        return iso.value
    status, message = _failure(iso, memory_mb)
    return {"status": status.value, "message": message, "wall_time_s": iso.wall_time_s}
