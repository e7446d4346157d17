"""The worker side of a task: the process's setup, its messages to the runner and its own hard deadline.

Everything that decides a cell's time runs here, where the cell runs, so that the process that
dispatched it (``psdbench run``, or a Dask worker's task) being slow, busy or stopped (``SIGSTOP``,
``Ctrl-Z`` of a job, a paused VM) changes no cell's row:

* **The hard deadline** is an interval timer of the worker process itself (:class:`HardDeadline`,
  ``ITIMER_REAL`` with ``SIGALRM`` at its default action, which the kernel carries out without the
  GIL): armed at ``deadline + grace`` when the task arrives, moved to ``solved + post`` when the
  solver returns, cleared before the result is sent.  The runner's own kill at the same instant
  stays as a second line.  A worker ended by it died of ``SIGALRM``, which the runner records as
  ``timeout``.
* **Messages never block the task** (:class:`Outbox`): checkpoints and the ``solved`` point go to
  a thread of their own that writes them to the pipe, keeping the latest
  :data:`MAX_QUEUED` while the runner does not read; so ``solve`` is never held up on a full pipe
  and its measured wall time is its own.
"""

from __future__ import annotations

import collections
import os
import resource
import signal
import sys
import threading
import time
from typing import Any, Callable, Mapping

from psdbench.harness.workers.lifetime import orphaned, own_group, quiet_signals, watch_parent

THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
#: The environment variable that sets each worker's BLAS threads (default 1; ``psdbench run --blas-threads``).
BLAS_THREADS_VAR = "PSDBENCH_BLAS_THREADS"


def worker_blas_threads(env: Mapping[str, str] | None = None) -> int:
    """The BLAS threads of each cell worker: :data:`BLAS_THREADS_VAR` of ``env`` (default: this
    process's environment), else 1.  A value that is not a positive integer counts as 1 here; the
    command line refuses it before a run starts (:func:`psdbench.cli.preflight.check_blas_threads`)."""
    raw = (os.environ if env is None else env).get(BLAS_THREADS_VAR, "1")
    try:
        n = int(raw)
    except ValueError:
        return 1
    return n if n >= 1 else 1


def thread_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The thread variables (:data:`THREAD_VARS`) a worker runs with: :func:`worker_blas_threads` each."""
    n = str(worker_blas_threads(env))
    return {k: n for k in THREAD_VARS}
#: Messages the outbox keeps while the runner does not read (older checkpoints are dropped first).
MAX_QUEUED = 64


def setup(memory_mb: int | None, path: list[str], parent: int, env: Mapping[str, str] | None = None) -> Any:
    """Child-side setup: import path, environment, parent watch, BLAS threads (one unless
    :data:`BLAS_THREADS_VAR` says), memory cap, quiet output.

    ``env`` is the dispatching process's environment when it started this worker: a process from
    the fork server otherwise has the server's, from whenever the server started (a
    ``PSDBENCH_SDPA_DIR`` or ``PSDBENCH_DATA`` set since then would be missing).

    A solver's own printing (a library's banner, an iteration log) is discarded: on the run's
    terminal it would break the progress line and the summary on stdout.  What a solver reports
    goes into its row (status, message, trace); to watch it print, call it in-process
    (:func:`psdbench.testing.check_solver`).  Python warnings are ignored for the same reason.
    """
    sys.path[:] = path  # plugins made importable after the forkserver started are found too
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    quiet_signals()
    own_group()
    watch_parent(parent)
    os.environ.update(thread_env())
    sys.stdout.flush()
    quiet = os.open(os.devnull, os.O_WRONLY)
    os.dup2(quiet, 1)  # file descriptor 1 itself: C libraries (HiGHS, SCS) print there
    os.close(quiet)
    import warnings

    warnings.simplefilter("ignore")  # solver chatter would break the progress line; statuses carry it
    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    from threadpoolctl import threadpool_limits

    return threadpool_limits(limits=worker_blas_threads())


class HardDeadline:
    """The worker's own kill: ``SIGALRM`` (default action: the process ends) at an instant."""

    def __init__(self) -> None:
        signal.signal(signal.SIGALRM, signal.SIG_DFL)

    def arm(self, at: float) -> None:
        """End this process at ``time.monotonic() == at`` (now, if that has passed)."""
        # clamped: a timer past ~1e9 s overflows time_t (a run's limits are at most 1e7 s anyway)
        signal.setitimer(signal.ITIMER_REAL, min(max(at - time.monotonic(), 1e-3), 1e9))

    def clear(self) -> None:
        signal.setitimer(signal.ITIMER_REAL, 0.0)


class Outbox:
    """Messages to the runner, written by a thread of their own; :meth:`emit` never blocks."""

    def __init__(self, conn: Any) -> None:
        self.conn = conn
        self._queue: collections.deque = collections.deque(maxlen=MAX_QUEUED)
        self._cond = threading.Condition()
        self._busy = False
        threading.Thread(target=orphaned, args=(self._pump,), daemon=True, name="psdbench-outbox").start()

    def emit(self, msg: tuple) -> None:
        """Queue ``msg`` (a checkpoint or the solved point); the oldest is dropped when full."""
        with self._cond:
            self._queue.append(msg)
            self._cond.notify_all()

    def _pump(self) -> None:
        while True:
            with self._cond:
                while not self._queue:
                    self._cond.wait()
                msg = self._queue.popleft()
                self._busy = True
            try:
                self.conn.send(msg)
            except (BrokenPipeError, ConnectionResetError, EOFError):
                raise  # the runner is gone: orphaned() ends the process
            except Exception:  # noqa: S110 - a checkpoint that cannot be sent (unpicklable, no memory) is dropped
                pass
            finally:
                with self._cond:
                    self._busy = False
                    self._cond.notify_all()

    def send(self, msg: tuple) -> None:
        """Send ``msg`` after everything queued (blocking: the task's work is over)."""
        with self._cond:
            while self._queue or self._busy:
                self._cond.wait()
            self.conn.send(msg)


def run_task(fn: Callable[..., Any], task: dict[str, Any], outbox: Outbox, alarm: HardDeadline,
             *extra: Any) -> Any:
    """``fn(task, emit, *extra)`` under the worker's own hard deadline (cleared on return)."""
    alarm.arm(task["deadline"] + task["grace"])

    def emit(msg: tuple) -> None:
        if msg[0] == "solved":  # verification and re-scoring get `post` seconds from now
            kill_at = max(task["deadline"] + task["grace"], time.monotonic() + task["post"])
            alarm.arm(kill_at)
            msg = (*msg, kill_at)  # the runner takes the same instant
        outbox.emit(msg)

    try:
        return fn(task, emit, *extra)
    finally:
        alarm.clear()
