"""Worker processes: the forkserver context, one-shot isolated calls and long-lived cell workers.

* :func:`run_isolated` runs one function in a fresh process (references, checkpoint verification).
* :class:`CellWorker` is a long-lived process (the first ones forked from the grid's process while
  it has one thread, :func:`fork_context`; replacements from the fork server; on Dask, spawned:
  :mod:`psdbench.harness.workers.spawned`) that runs many tasks in turn, each under its own
  deadline (``deadline = time.monotonic() + timeout`` when the runner sends it) and the process's
  memory cap.  A task that is killed (deadline + grace), crashes the process, raises
  ``MemoryError``, leaves a thread running or grows the process beyond a quarter of its memory
  headroom ends that process; the next task starts a fresh one.  So a fault of one cell is
  recorded for that cell only, exactly as with one process per cell.

Both send ``fn(task, emit)`` a ``task`` with ``deadline``, ``timeout``, ``grace``
(:func:`grace_for`) and ``post`` (:func:`post_for`), and collect the ``("checkpoint" | "solved",
t, variables)`` messages ``emit`` sends, thinned to :data:`MAX_CHECKPOINTS`.

The memory cap is ``RLIMIT_AS``: it bounds the process's *address space*, which counts memory a
library has reserved but not touched (a Rust ``Vec`` doubling its capacity, a thread's malloc
arena) besides what is resident.  A Python allocation past it raises ``MemoryError``; a Rust
library's (Clarabel's) aborts the process with signal 6 after printing ``memory allocation of N
bytes failed`` to the discarded stderr.  So the runner samples a capped worker's address space
every :data:`MEMORY_POLL` s, and a worker that dies by a signal with it past :data:`OOM_SHARE`
of the cap is recorded as ``out_of_memory`` (not ``crashed``), with both figures in its one-line message.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import re
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from psdbench.harness.workers.child import THREAD_VARS, HardDeadline, Outbox, run_task, setup, thread_env
from psdbench.harness.workers.lifetime import kill_group, orphaned, reap_descendants

_CTX = None

#: Imported by the fork server: the worker and every registered plugin's modules (:mod:`.preload`).
BASE_PRELOAD = ["psdbench.harness.workers.preload"]
MAX_CHECKPOINTS = 64
#: A long-lived worker is replaced once its address space has used this share of its headroom.
RECYCLE_SHARE = 0.25
#: Seconds between checks of a run's cancel event while a task runs (an interrupted run).
CANCEL_POLL = 0.2
#: Seconds between samples of a capped worker's address space while a task runs.
MEMORY_POLL = 0.5
#: A worker that dies by a signal with its address space past this share of its cap ran out of memory.
OOM_SHARE = 0.75


def _context() -> mp.context.BaseContext:
    """Forkserver context whose server loads the numerical libraries with one BLAS thread.

    threadpoolctl reaches only libraries already loaded, and SCS ships its own OpenBLAS, so the
    thread variables are set for the server process before it imports anything.
    """
    global _CTX  # a process-wide cache of the multiprocessing context, not algorithm state
    if _CTX is None:
        if "forkserver" in mp.get_all_start_methods():
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(BASE_PRELOAD)
            from multiprocessing import forkserver

            saved = {k: os.environ.get(k) for k in THREAD_VARS}
            os.environ.update(thread_env())
            try:
                forkserver.ensure_running()
            finally:
                for k, v in saved.items():
                    if v is None:
                        os.environ.pop(k, None)
                    else:
                        os.environ[k] = v
            # The server imports its preload in the background: wait for it here, so that no
            # cell's deadline (taken after this returns) pays the server's start-up.
            probe = ctx.Process(target=_noop, daemon=True)
            probe.start()
            probe.join()
            _CTX = ctx
        else:
            _CTX = mp.get_context("spawn")
    return _CTX


def _noop() -> None:
    """Target of the process that waits for the fork server's start-up."""


def fork_context() -> mp.context.BaseContext | None:
    """The ``fork`` context if forking this process is safe now (Linux, one thread), else None.

    A worker forked from the process that runs the grid starts with every plugin already
    imported (milliseconds, where the fork server first spends seconds importing them).  Any
    second thread, Python or native (``/proc/self/task``: an OpenMP or BLAS pool that has run,
    a Dask loop), could be copied holding a lock and hang the child (libgomp's pool does after
    a fork), so then the fork server is used instead.  With BLAS pinned to one thread
    (``OMP_NUM_THREADS=1`` ...) ``psdbench run`` forks.
    """
    if "fork" not in mp.get_all_start_methods() or threading.active_count() != 1:
        return None
    try:
        if len(os.listdir("/proc/self/task")) != 1:
            return None
    except OSError:  # no /proc: cannot tell
        return None
    return mp.get_context("fork")


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
           parent: int, env: dict[str, str]) -> None:
    setup(memory_mb, path, parent, env)
    outbox, alarm = Outbox(conn), HardDeadline()

    def body() -> None:
        result = run_task(fn, task, outbox, alarm)
        outbox.send(("result", result))
        conn.close()

    orphaned(body)


def _vm_mb(pid: int | str = "self") -> float:
    """A process's address space (what ``RLIMIT_AS`` caps), in MiB; 0 where /proc is absent."""
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(r"VmSize:\s+(\d+)", f.read())
        return int(m.group(1)) / 1024.0 if m else 0.0
    except OSError:
        return 0.0


def _serve(conn: Any, memory_mb: int | None, path: list[str], parent: int, env: dict[str, str]) -> None:
    """Body of a :class:`CellWorker`: run ``(fn, task)`` messages in turn until ``None`` or EOF.

    Each result goes back as ``("result", value, health)``; ``health`` says whether the process
    should be replaced (``MemoryError``, a thread left running, address space past
    :data:`RECYCLE_SHARE` of the headroom under the cap).
    """
    setup(memory_mb, path, parent, env)
    orphaned(lambda: _serve_loop(conn, memory_mb))


def _serve_loop(conn: Any, memory_mb: int | None) -> None:
    from psdbench.harness.workers.shared import WorkerCache

    cache = WorkerCache()
    outbox, alarm = Outbox(conn), HardDeadline()
    threads0 = threading.active_count()
    vm0 = _vm_mb()
    headroom = (float(memory_mb) - vm0) if memory_mb else None
    while True:
        try:
            msg = conn.recv()
        except EOFError:
            break
        if msg is None:
            break
        fn, task = msg
        value = run_task(fn, task, outbox, alarm, cache)
        reap_descendants()  # processes the task started do not outlive it
        why = ""
        if "MemoryError" in str(getattr(value, "message", "") or "")[:200]:
            why = "MemoryError"
        elif threading.active_count() > threads0:
            why = "a thread is still running"
        elif headroom is not None and _vm_mb() - vm0 > RECYCLE_SHARE * headroom:
            why = "address space grew past its share of the memory cap"
        outbox.send(("result", value, why))
    conn.close()


@dataclass
class Isolated:
    """What :func:`run_isolated` or :meth:`CellWorker.run` saw.

    Attributes
    ----------
    outcome : str
        ``"result"`` (the function returned ``value``), ``"killed"`` (deadline + grace passed),
        ``"crashed"`` (the process died) or ``"cancelled"`` (killed because the run was interrupted).
    value : Any
        The function's return value (``None`` unless ``outcome == "result"``).
    message : str
    wall_time_s : float
        From sending the task to its end.
    checkpoints : list of (float, dict)
        ``(t, variables)`` the worker sent (``checkpoint`` and ``solved`` messages), thinned to
        :data:`MAX_CHECKPOINTS` like a :class:`~psdbench.api.TraceRecorder`.
    grace_s : float
    recycle : str
        Why a long-lived worker was replaced after this task ("" if it was kept).
    vm_mb : float
        The largest address space (MiB) sampled while the task ran (0 without a memory cap).
    out_of_memory : bool
        The process died by a signal with its address space past :data:`OOM_SHARE` of its cap.
    start_vm_mb : float
        The address space (MiB) the worker process started with, sampled as it started (what it
        inherited from the process that forked it); 0 where it could not be read.  What a worker
        needs is judged from this, never from the runner's own address space, which its threads,
        the test runner or the modules it imported since make larger.
    """

    outcome: str
    value: Any = None
    message: str = ""
    wall_time_s: float = 0.0
    checkpoints: list[tuple[float, dict[str, Any]]] = field(default_factory=list)
    grace_s: float = 0.0
    recycle: str = ""
    vm_mb: float = 0.0
    out_of_memory: bool = False
    start_vm_mb: float = 0.0


def _with_deadline(task: dict[str, Any], timeout: float, start: float) -> dict[str, Any]:
    return {**task, "deadline": start + float(timeout), "timeout": float(timeout), "grace": grace_for(timeout),
            "post": post_for(timeout)}


def _collect(proc: Any, recv: Any, task: dict[str, Any], start: float,
             cancel: threading.Event | None = None, memory_mb: int | None = None) -> Isolated:
    """Wait for the task's result, collecting checkpoints, until the worker returns, dies or is
    killed; or within :data:`CANCEL_POLL` s of ``cancel`` being set (outcome ``"cancelled"``).  With a
    ``memory_mb`` cap, sample the process's address space every :data:`MEMORY_POLL` s.

    The worker ends itself at its kill instant (deadline + grace, or ``post`` s after the solver
    returned: :mod:`psdbench.harness.workers.child`); this process kills it only when it is still there
    ``grace`` s after that instant *as this process saw it pass*: a runner that was stopped or
    starved first reads what the worker sent meanwhile (a result waiting behind checkpoints).
    """
    timeout, grace, post = task["timeout"], task["grace"], task["post"]
    out = Isolated(outcome="crashed", grace_s=grace)
    kill_at = task["deadline"] + grace
    late_since = None  # when this process first saw kill_at past
    solved = False
    from multiprocessing.connection import wait as wait_for

    while True:
        if cancel is not None and cancel.is_set():
            proc.kill()
            proc.join()
            out.outcome, out.message = "cancelled", "killed: the run was interrupted"
            break
        now = time.monotonic()
        if now >= kill_at and late_since is None:
            late_since = now
        wait = (kill_at - now) if late_since is None else (late_since + grace - now)
        if cancel is not None:
            wait = min(wait, CANCEL_POLL)
        if memory_mb:
            wait = min(wait, MEMORY_POLL)
            out.vm_mb = max(out.vm_mb, _vm_mb(proc.pid))
        ready = wait_for([recv, proc.sentinel], timeout=max(wait, 0.0))
        if not ready:
            now = time.monotonic()
            if late_since is None or now < late_since + grace:
                continue
            proc.kill()  # the worker's own kill did not happen
            proc.join()
            out.outcome = "killed"
            break
        if recv not in ready and not recv.poll(0):
            break  # the process died with nothing left to read (a child it forked may hold the pipe open)
        try:
            msg = recv.recv()
        except (EOFError, OSError):
            break
        if msg[0] == "result":
            out.outcome, out.value = "result", msg[1]
            out.recycle = msg[2] if len(msg) > 2 else ""
            break
        out.checkpoints.append((float(msg[1]), msg[2]))
        if len(out.checkpoints) > MAX_CHECKPOINTS:
            cps = out.checkpoints
            out.checkpoints = cps[:1] + cps[1:-1:2] + cps[-1:]
        if msg[0] == "solved":
            solved = True
            kill_at = max(kill_at, float(msg[3]) if len(msg) > 3 else time.monotonic() + post)
            late_since = None if time.monotonic() < kill_at else late_since
    if out.outcome == "crashed":
        proc.join(timeout=10)
        if proc.exitcode == -signal.SIGALRM:  # the worker's own hard deadline (harness/workers/child.py)
            out.outcome = "killed"
    if out.outcome == "killed":
        out.message = (f"killed at the {timeout:g} s deadline + {grace:g} s grace" if not solved else
                       f"killed {post:g} s after the solver returned (verification did not end)")
    # a killed task ran until its kill instant: a runner late past it adds nothing to its time
    end = min(time.monotonic(), kill_at) if out.outcome == "killed" else time.monotonic()
    out.wall_time_s = end - start
    return out


def _died(proc: Any, out: Isolated, memory_mb: int | None = None) -> None:
    """The one-line message of a worker that died: how, and whether it had run out of memory."""
    proc.join(timeout=10)
    kill_group(proc.pid)
    code = proc.exitcode
    how = f"signal {-code}" if code is not None and code < 0 else f"exit code {code}"
    out.message = f"worker process died ({how})"
    if memory_mb and code is not None and code < 0 and out.vm_mb >= OOM_SHARE * memory_mb:
        out.out_of_memory = True
        out.message = (f"out of memory: worker process died ({how}), its address space was at {out.vm_mb:.0f} MiB of "
                       f"its {memory_mb} MiB cap (RLIMIT_AS, which counts reserved memory too); raise [run] memory_mb "
                       "or run fewer --jobs")


def run_isolated(fn: Callable[..., Any], task: dict[str, Any], timeout: float, memory_mb: int | None,
                 cancel: threading.Event | None = None) -> Isolated:
    """Run ``fn(task, emit)`` in a fresh process with one deadline, ``timeout`` s after its start.

    The process is killed at ``deadline + grace``, or ``post`` seconds after a ``("solved", ...)``
    message if that is later, or when ``cancel`` is set.  ``fn`` must be a module-level function
    (it is pickled by reference).
    """
    if cancel is not None and cancel.is_set():
        return Isolated(outcome="cancelled", message="not started: the run was interrupted")
    ctx = _context()  # a started fork server: its start-up is not the task's
    recv, send = ctx.Pipe(duplex=False)
    start = time.monotonic()
    task = _with_deadline(task, timeout, start)
    args = (fn, task, send, memory_mb, list(sys.path), os.getpid(), dict(os.environ))
    proc = ctx.Process(target=_child, args=args, daemon=True)
    proc.start()
    start_vm_mb = _vm_mb(proc.pid)
    send.close()
    try:
        out = _collect(proc, recv, task, start, cancel, memory_mb)
    finally:
        recv.close()
    out.start_vm_mb = start_vm_mb
    proc.join(timeout=10)
    if out.outcome == "crashed":
        _died(proc, out, memory_mb)
    kill_group(proc.pid)  # whatever the task started ends with it
    return out


class CellWorker:
    """A long-lived worker process that runs tasks in turn; replaced after a fault.

    Parameters
    ----------
    memory_mb : int or None
        The process's address-space cap (``RLIMIT_AS``).
    cancel : threading.Event, optional
        Set when the run is interrupted: the running task's process (and its group) is killed at
        once, and no new process is started.
    context : optional
        Where its processes come from (default: the fork server, :func:`_context`); inside a
        daemonic process (a Dask nanny's worker) :class:`~psdbench.harness.workers.spawned.SpawnContext`.

    Attributes
    ----------
    started : int
        How many processes this worker has started (1 + replacements).
    """

    def __init__(self, memory_mb: int | None, cancel: threading.Event | None = None, context: Any = None) -> None:
        self.memory_mb, self.cancel, self.context = memory_mb, cancel, context
        self.proc: Any = None
        self.conn: Any = None
        self.started = 0
        self.start_vm_mb = 0.0

    def start(self, ctx: mp.context.BaseContext | None = None) -> None:
        """Start the process now, from ``ctx`` (default: the fork server)."""
        self._discard()
        self._start(ctx)

    def _start(self, ctx: mp.context.BaseContext | None = None) -> None:
        ctx = ctx or self.context or _context()
        mine, theirs = ctx.Pipe(duplex=True)
        args = (theirs, self.memory_mb, list(sys.path), os.getpid(), dict(os.environ))
        self.proc = ctx.Process(target=_serve, args=args, daemon=True)
        self.proc.start()
        self.start_vm_mb = _vm_mb(self.proc.pid)  # inherited from the process that forked it
        theirs.close()
        self.conn = mine
        self.started += 1

    def run(self, fn: Callable[..., Any], task: dict[str, Any], timeout: float) -> Isolated:
        """Run ``fn(task, emit, cache)`` in the worker with a deadline ``timeout`` s from now."""
        if self.cancel is not None and self.cancel.is_set():
            return Isolated(outcome="cancelled", message="not started: the run was interrupted")
        if self.proc is None or not self.proc.is_alive():
            self._discard()
            self._start()  # harness start-up: before the deadline starts
        start = time.monotonic()
        task = _with_deadline(task, timeout, start)
        try:
            self.conn.send((fn, task))
        except (BrokenPipeError, OSError):  # died between tasks: counts as this task's crash
            out = Isolated(outcome="crashed", grace_s=task["grace"])
        else:
            out = _collect(self.proc, self.conn, task, start, self.cancel, self.memory_mb)
        out.start_vm_mb = self.start_vm_mb
        if out.outcome == "crashed":
            _died(self.proc, out, self.memory_mb)
        if out.outcome != "result" or out.recycle:
            self._discard()
        return out

    def _discard(self) -> None:
        if self.conn is not None:
            self.conn.close()
        if self.proc is not None:
            if self.proc.is_alive():
                self.proc.kill()
            self.proc.join(timeout=10)
            kill_group(self.proc.pid)
        self.proc = self.conn = None

    def close(self) -> None:
        """Ask the process to end; kill it if it has not within 5 s."""
        if self.proc is not None and self.proc.is_alive():
            try:
                self.conn.send(None)
            except OSError:
                pass
            self.proc.join(timeout=5)
        self._discard()
