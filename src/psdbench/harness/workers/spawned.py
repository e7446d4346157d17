"""Worker processes started as fresh interpreters (``subprocess``), for daemonic parents.

A Dask worker started the way Dask deploys it (``dask worker``, dask-jobqueue, dask-kubernetes:
under a nanny) is a *daemonic* :mod:`multiprocessing` process, and ``multiprocessing`` refuses to
start a child from one (``AssertionError: daemonic processes are not allowed to have children``,
raised by ``Process.start`` whatever the start method).  :class:`SpawnContext` offers the part of a
multiprocessing context that :mod:`psdbench.harness.workers.process` uses (``Pipe`` and ``Process``) with a
``Process`` that is a fresh ``python -m psdbench.harness.workers.spawned`` started by :mod:`subprocess`:
no daemon check, no copy of the Dask worker's threads or sockets (``os.fork`` of a Dask worker
copies a process running an event loop, a profiler thread and a thread pool, whose locks the child
could inherit held), a small address space under the memory cap, BLAS on one thread from the
start.  The target and its arguments travel pickled over a pipe; a
:class:`multiprocessing.connection.Connection` among the arguments is passed as its file
descriptor.  The child leads a session of its own from its first instruction (a terminal's Ctrl-C
never reaches it while it imports; the runner kills its process group).
:meth:`SpawnProcess.start` returns once the child has imported the worker and the plugins (the
grid's, or every one: :mod:`psdbench.harness.workers.preload`), so that start-up is harness time, before
any deadline.
Measured on the shared 2-core machine (load 10): a start with its imports 14.5 s, the fork
server's first start 11.4 s; so it is paid once per Dask worker thread (and after each fault,
where the fork server forks in milliseconds), and the cells then run in that long-lived process
as on the local backend.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from multiprocessing.connection import Connection, Pipe, wait
from typing import Any, Callable

#: Seconds a spawned child may take to import the worker and the plugins before it counts as failed.
START_TIMEOUT = 300.0
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")


class _Fd:
    """A connection's file descriptor in the pickled arguments (rebuilt as a Connection in the child)."""

    def __init__(self, fd: int, readable: bool, writable: bool) -> None:
        self.fd, self.readable, self.writable = fd, readable, writable


class SpawnProcess:
    """A child interpreter running ``target(*args)``, with the interface of a multiprocessing
    ``Process`` that :mod:`psdbench.harness.workers.process` uses: ``start``, ``pid``, ``sentinel``,
    ``exitcode`` (negative: the signal), ``is_alive``, ``kill``, ``join``."""

    def __init__(self, target: Callable[..., Any], args: tuple = (), daemon: bool = True,
                 preload: tuple[str, ...] | None = None) -> None:
        self.target, self.args, self.preload = target, args, preload
        self.pid: int | None = None
        self.sentinel: int | None = None
        self._popen: subprocess.Popen | None = None

    def start(self) -> None:
        """Start the child and wait until it has imported what cells need (or died)."""
        fds: list[int] = []
        args = []
        for a in self.args:
            if isinstance(a, Connection):
                fds.append(a.fileno())
                args.append(_Fd(a.fileno(), a.readable, a.writable))
            else:
                args.append(a)
        payload = pickle.dumps((self.target, tuple(args), self.preload), protocol=pickle.HIGHEST_PROTOCOL)
        r, w = os.pipe()
        ready_r, ready_w = os.pipe()
        # the process's end: a pidfd (Linux >= 5.3), else EOF of a pipe the child holds open until it ends
        alive_r, alive_w = (None, None) if hasattr(os, "pidfd_open") else os.pipe()
        from psdbench.harness.workers.child import thread_env

        env = dict(os.environ, **thread_env())
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        keep = (r, ready_w, *fds) + ((alive_w,) if alive_w is not None else ())
        try:
            self._popen = subprocess.Popen([sys.executable, "-m", "psdbench.harness.workers.spawned", str(r), str(ready_w)],
                                           pass_fds=keep, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                           env=env, close_fds=True, start_new_session=True)
        finally:
            os.close(r)
            os.close(ready_w)
            if alive_w is not None:
                os.close(alive_w)
        self.pid = self._popen.pid
        self.sentinel = os.pidfd_open(self.pid) if alive_r is None else alive_r
        with os.fdopen(w, "wb") as fh:
            fh.write(payload)
        try:
            wait([ready_r, self.sentinel], timeout=START_TIMEOUT)  # imports done, or the child died
        finally:
            os.close(ready_r)

    @property
    def exitcode(self) -> int | None:
        return None if self._popen is None else self._popen.poll()

    def is_alive(self) -> bool:
        return self._popen is not None and self._popen.poll() is None

    def kill(self) -> None:
        if self._popen is not None and self._popen.poll() is None:
            try:
                self._popen.kill()
            except ProcessLookupError:
                pass

    def join(self, timeout: float | None = None) -> None:
        if self._popen is None:
            return
        try:
            self._popen.wait(timeout)
        except subprocess.TimeoutExpired:
            return
        if self.sentinel is not None:
            try:
                os.close(self.sentinel)
            except OSError:
                pass
            self.sentinel = -1


class SpawnContext:
    """``Pipe`` and ``Process`` as :mod:`psdbench.harness.workers.process` uses them, processes spawned.

    ``preload``: the modules a child imports before it says it is ready (the plugins a run's grid
    uses); default every registered plugin's (:mod:`psdbench.harness.workers.preload`).
    """

    def __init__(self, preload: tuple[str, ...] | None = None) -> None:
        self.preload = tuple(preload) if preload is not None else None

    def Process(self, target: Callable[..., Any], args: tuple = (), daemon: bool = True) -> SpawnProcess:  # noqa: N802
        return SpawnProcess(target, args, daemon, self.preload)

    @staticmethod
    def Pipe(duplex: bool = True) -> tuple[Connection, Connection]:  # noqa: N802 (multiprocessing's name)
        return Pipe(duplex)


def _main(payload_fd: int, ready_fd: int) -> None:
    """The child: read ``(target, args, preload)``, import what cells need, say so, run the target."""
    import importlib

    with os.fdopen(payload_fd, "rb") as fh:
        target, args, preload = pickle.load(fh)
    args = tuple(Connection(a.fd, readable=a.readable, writable=a.writable) if isinstance(a, _Fd) else a
                 for a in args)
    if preload is None:
        from psdbench.harness.workers import preload as _everything# noqa: F401  (the worker and every plugin)
    else:
        from psdbench.harness.workers import worker# noqa: F401
        for name in preload:
            try:
                importlib.import_module(name)
            except Exception:  # noqa: S112 - a broken plugin fails its own cells, with their traceback
                continue
    os.write(ready_fd, b"1")
    os.close(ready_fd)
    target(*args)


if __name__ == "__main__":  # run as a module: take the importable module's classes, not __main__'s
    from psdbench.harness.workers.spawned import _main as main

    main(int(sys.argv[1]), int(sys.argv[2]))
    os._exit(0)
