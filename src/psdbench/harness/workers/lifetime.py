"""How long a worker's processes live: each worker leads a process group of its own, everything a
task starts is reaped after it, and a worker ends (with its group) when the run's process dies.

These are what keep a solver's children, grandchildren and the workers themselves from outliving
their cell or their run (``kill -9`` of the run included).  A worker also resets the signal
handlers it inherits (:func:`quiet_signals`) and ends without a traceback once its run is gone
(:func:`orphaned`).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from typing import Any, Callable


def own_group() -> None:
    """Make this worker the leader of a process group of its own, so that every process a solver
    starts (children, grandchildren, a child left behind when the worker dies) can be killed with it."""
    try:
        os.setpgid(0, 0)
    except OSError:  # pragma: no cover - not permitted here: descendants are still reaped per task
        pass


def kill_group(pid: int | None) -> None:
    """SIGKILL the process group a worker ``pid`` leads (no-op if it is gone or leads none)."""
    if not pid:
        return
    try:
        if os.getpgid(pid) != pid:
            return
    except ProcessLookupError:
        pass  # the leader is gone; its group may still hold orphans
    except OSError:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _children(pid: int) -> list[int] | None:
    """Direct children of ``pid`` from ``/proc/<pid>/task/*/children`` (``None`` where Linux offers no such file)."""
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(x) for x in f.read().split()]
    except FileNotFoundError:
        return None if pid == os.getpid() else out
    except OSError:
        return out
    return out


def reap_descendants() -> int:
    """Kill every process this one started and still has (directly or below); return how many.

    Runs after every task of a worker, so the common case (no child) costs one read of
    ``/proc/self/task/*/children`` (~20 us); psutil's scan of every process (~1 ms) is the fallback.
    """
    mine = _children(os.getpid())
    if mine is None:
        import psutil

        try:
            kids = psutil.Process().children(recursive=True)
        except psutil.Error:
            return 0
        for k in kids:
            try:
                k.kill()
            except psutil.Error:
                pass
        psutil.wait_procs(kids, timeout=2)
        return len(kids)
    if not mine:
        return 0
    found, todo = [], list(mine)
    while todo:  # the whole tree first: once a parent dies its children are reparented away
        pid = todo.pop()
        found.append(pid)
        todo += _children(pid) or []
    for pid in found:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    for pid in mine:  # reap our own children (grandchildren are reaped by whoever adopts them)
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
    return len(found)


def watch_parent(pid: int) -> None:
    """End this worker and its group if the process that runs the grid dies (no orphans after a
    hard kill); a zombie counts as dead (its parent may wait for our pipes to close to reap it)."""
    import psutil

    def watch() -> None:
        while True:
            time.sleep(1.0)
            try:
                gone = psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                gone = True
            except psutil.Error:
                gone = False
            if gone:
                if os.getpgid(0) == os.getpid():
                    os.killpg(0, signal.SIGKILL)
                os._exit(70)

    threading.Thread(target=watch, daemon=True, name="psdbench-watch-parent").start()


def quiet_signals() -> None:
    """A worker ends at once and silently on SIGINT, SIGTERM, SIGHUP and SIGQUIT (the runner records
    the cell), whatever handlers the process it was forked from had (``psdbench run`` turns them
    into an exception there, :mod:`psdbench.system.signals`), and ignores SIGXFSZ (a write past ``ulimit
    -f`` then fails with an error the row records)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGQUIT, _quit)  # its default would also dump a core file
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _quit(signum: int, frame: Any) -> None:
    os._exit(128 + signum)


def orphaned(body: Callable[[], None]) -> None:
    """``body()``; if the run's process is gone (its pipe closed), end without a traceback."""
    try:
        body()
    except (BrokenPipeError, ConnectionResetError, EOFError):
        os._exit(0)
