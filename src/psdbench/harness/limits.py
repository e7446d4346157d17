"""Limits checked against the machine before a run starts: seeds, memory per worker, jobs, grid size,
nesting depth, and the marker of failures the harness itself caused.

* A worker is forked from the process that runs the grid (or from the fork server, which imports
  the same modules), so at start it already has that process's address space.  A per-worker
  memory cap (``RLIMIT_AS``) below that plus :data:`WORKER_HEADROOM_MB` leaves it no room to build
  an instance: every cell would be stored ``crashed``.  :func:`plan_workers` therefore lowers
  ``jobs`` until the default cap (:data:`MEMORY_SHARE` of the memory split between the jobs) is
  above :func:`worker_need_mb`, and :func:`check_memory_mb` rejects a grid's ``memory_mb`` below it
  or above the machine's memory.
* A cell stored ``crashed`` with a message starting with :data:`HARNESS_PREFIX` failed because of
  the harness (its executor, or a memory cap below what a worker needs), not because of the
  solver: such a row is never served from the cache (:meth:`Store.done_keys
  <psdbench.harness.store.db.Store.done_keys>` leaves it out), so the next run computes the cell again
  without ``--force``.
"""

from __future__ import annotations

import os
import re
from typing import Any

from psdbench.api import PsdbenchError

#: Share of physical memory split between the jobs when the grid sets no ``memory_mb``.
MEMORY_SHARE = 0.8
#: Address space a worker needs beyond what it inherits, to build an instance and solve (MiB).
WORKER_HEADROOM_MB = 256
#: Seeds are NumPy ``SeedSequence`` / ``RandomState`` seeds: 0 <= seed < 2**32.
SEED_LIMIT = 2**32
#: A grid with more cells than this runs only with ``--yes`` (``yes=True``).
MAX_CELLS = 20_000
#: Lists and tables nested deeper than this in a grid or selector are rejected.
MAX_DEPTH = 32
#: Echoed values in an error line are cut to this many characters.
MAX_ECHO = 200
#: The longest time limit accepted (seconds, about 116 days): a cell's deadline is an interval timer
#: of the worker (``setitimer``), which a larger number overflows (``--timeout 1e300``).
MAX_SECONDS = 1e7
#: Message prefix of a ``crashed`` row the harness caused (never served from the cache).
HARNESS_PREFIX = "harness: "


class MachineError(Exception):
    """The run cannot go on because of the machine or the cluster it runs on (exit status 3): Dask
    workers that cannot run cells, a scheduler that went away, every cell failed by the harness."""


def vm_mb() -> float:
    """This process's address space (``VmSize``, what ``RLIMIT_AS`` caps) in MiB; 0 without /proc."""
    try:
        with open("/proc/self/status") as f:
            m = re.search(r"VmSize:\s+(\d+)", f.read())
        return int(m.group(1)) / 1024.0 if m else 0.0
    except OSError:
        return 0.0


def worker_need_mb(start_vm_mb: float = 0.0) -> int:
    """The smallest per-worker memory cap a worker can start and work under, in MiB.

    Parameters
    ----------
    start_vm_mb : float
        The address space a worker started with (``Isolated.start_vm_mb``); 0: that of this
        process, which a worker forked now would inherit.

    Returns
    -------
    int
        That address space plus :data:`WORKER_HEADROOM_MB`.
    """
    return int(start_vm_mb or vm_mb()) + WORKER_HEADROOM_MB


def total_mb() -> int:
    """Physical memory of the machine in MiB."""
    import psutil

    return int(psutil.virtual_memory().total / 2**20)


def check_memory_mb(memory_mb: int | None, where: str, need_mb: int | None = None,
                    machine_mb: int | None = None) -> None:
    """A grid's ``memory_mb`` must leave a worker room to start and fit in the machine's memory."""
    if memory_mb is None:
        return
    machine_mb = total_mb() if machine_mb is None else machine_mb
    need_mb = worker_need_mb() if need_mb is None else need_mb
    if memory_mb > machine_mb:
        raise PsdbenchError(f"{where}: memory_mb = {memory_mb} is more than this machine's memory ({machine_mb} MiB)")
    if memory_mb < need_mb:
        raise PsdbenchError(f"{where}: memory_mb = {memory_mb} is below what a worker needs to start on this "
                            f"machine ({need_mb} MiB: the harness's {need_mb - WORKER_HEADROOM_MB} MiB plus "
                            f"{WORKER_HEADROOM_MB} to work); raise it or leave it out")


def plan_workers(jobs: int | None, memory_mb: int | None, cores: int | None = None, machine_mb: int | None = None,
                 need_mb: int | None = None, work: int | None = None) -> tuple[int, int, list[str]]:
    """The number of workers and the per-worker memory cap a run uses, with notes for the user.

    Parameters
    ----------
    jobs : int or None
        Requested workers (None: the cores).
    memory_mb : int or None
        The grid's per-worker cap (None: :data:`MEMORY_SHARE` of the memory split between the jobs).
    work : int or None
        How many cells (or work items) there are to run: never more workers than that (a worker
        started for nothing would also shrink every other worker's share of the memory).

    Returns
    -------
    (jobs, memory_mb, notes)
        ``jobs`` lowered (never below 1) to ``work`` and until the default cap is at least
        :func:`worker_need_mb`; ``notes`` says what was changed and warns of more workers than
        cores or than memory.
    """
    cores = cores or os.cpu_count() or 1
    machine_mb = total_mb() if machine_mb is None else machine_mb
    need_mb = worker_need_mb() if need_mb is None else need_mb
    asked = jobs or cores
    notes: list[str] = []
    if work is not None and asked > max(1, work):
        if jobs:  # the default (the cores) is lowered silently
            notes.append(f"--jobs {asked} lowered to {max(1, work)}: the run has {work} "
                         f"cell{'s' if work != 1 else ''} to compute")
        asked = max(1, work)
    if memory_mb is None:
        fit = max(1, int(machine_mb * MEMORY_SHARE // need_mb))
        jobs_used = min(asked, fit)
        if jobs_used < asked:
            notes.append(f"--jobs {asked} lowered to {jobs_used}: each worker needs {need_mb} MiB to start and "
                         f"{MEMORY_SHARE:.0%} of this machine's {machine_mb} MiB holds {fit} of them")
        cap = int(machine_mb * MEMORY_SHARE / jobs_used)
    else:
        jobs_used, cap = asked, int(memory_mb)
        if cap * asked > machine_mb:
            notes.append(f"{asked} workers of memory_mb = {cap} may use more than this machine's {machine_mb} MiB")
    if jobs_used > cores:
        notes.append(f"{jobs_used} workers on {cores} cores: cells share cores and their times are slower")
    return jobs_used, cap, notes


def check_seeds(seeds: list[Any], where: str) -> None:
    """Every seed an integer with ``0 <= seed < 2**32`` (NumPy's seed range)."""
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int) or not 0 <= s < SEED_LIMIT:
            raise PsdbenchError(f"{where}: seeds must be integers with 0 <= seed < 2**32, not {echo(s)}")


def check_depth(value: Any, where: str, limit: int = MAX_DEPTH) -> None:
    """Reject lists / tables nested deeper than ``limit`` (iteratively: no RecursionError)."""
    stack = [(value, 0)]
    while stack:
        v, depth = stack.pop()
        if depth > limit:
            raise PsdbenchError(f"{where}: values nested more than {limit} levels deep")
        if isinstance(v, dict):
            stack += [(x, depth + 1) for x in v.values()]
        elif isinstance(v, (list, tuple)):
            stack += [(x, depth + 1) for x in v]


def echo(value: Any, limit: int = MAX_ECHO) -> str:
    """``repr(value)`` cut to ``limit`` characters (an error line never echoes a huge value)."""
    try:
        text = repr(value)
    except (RecursionError, ValueError):  # nested too deep to print, or an int too long to convert
        return f"<{type(value).__name__}>"
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def cut_line(text: str, limit: int = 2000, echo_limit: int = MAX_ECHO) -> str:
    """The first line of ``text``, every echoed value in it cut to ``echo_limit`` characters and the
    whole to ``limit``.

    An echoed value is a quoted string (``'...'`` or ``"..."``) or a run without spaces longer than
    ``echo_limit``: whatever message raised it (a parameter spec's, a registry's, an OS error's),
    the line names a huge value by its start and its length.
    """
    line = (str(text).splitlines() or [""])[0]
    if len(line) > echo_limit:
        def cut(m: re.Match) -> str:
            word = m.group(0)
            return f"{word[:echo_limit]}... ({len(word)} characters)"

        line = re.sub(r"'[^']{%d,}'|\"[^\"]{%d,}\"|\S{%d,}" % (echo_limit, echo_limit, echo_limit + 1), cut, line)
    return line if len(line) <= limit else f"{line[:limit]}... ({len(line) - limit} more characters)"


def harness_failure(message: str) -> str:
    """``message`` marked as a failure of the harness (:data:`HARNESS_PREFIX`)."""
    return message if message.startswith(HARNESS_PREFIX) else HARNESS_PREFIX + message


def is_harness_failure(status: Any, message: Any) -> bool:
    """Whether a stored row failed because of the harness (to be computed again, not served)."""
    return status == "crashed" and isinstance(message, str) and message.startswith(HARNESS_PREFIX)


def check_scheduler(address: str | None, timeout: float = 5.0) -> None:
    """An unreachable Dask scheduler is an error before the store is touched (no ``runs`` row)."""
    if not address:
        return
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address if "://" in address else f"tcp://{address}")
    try:
        host, port = parts.hostname, parts.port
    except ValueError:
        host, port = None, None
    if not host or not port:
        raise PsdbenchError(f"--scheduler {echo(address)}: expected tcp://HOST:PORT")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise PsdbenchError(f"--scheduler {echo(address)}: no Dask scheduler answers ({exc.strerror or exc}); "
                            "start one or leave --scheduler out for a local cluster") from None
