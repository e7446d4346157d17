"""Memory and CPU of one cell, measured from the cell's start: the worker's own and its child processes'.

A solver may do its work in a child process (a CSDP, DSDP or SDPA-GMP program run by
``subprocess``), which the worker's own ``RUSAGE_SELF`` and peak resident set do not see.  A
:class:`CellMeter` around ``solve`` measures:

* **CPU** (``cpu_time_s``): the worker's user + system time over the interval (``RUSAGE_SELF``
  delta), plus its children's: those reaped during the interval (``RUSAGE_CHILDREN`` delta, which
  includes what they reaped in turn), plus the CPU time last sampled of a child still running at
  the end (it is killed after the task, :func:`psdbench.harness.workers.lifetime.reap_descendants`).
* **Memory** (``peak_rss_mb``): what the cell added to the worker's resident set (its peak since
  the start of the interval, Linux ``clear_refs`` + ``VmHWM``, minus its resident set then: the
  interpreter, the imported libraries and the instance, built before, are not the cell's) plus the
  largest sum over time of its children's peak resident sets (each child's ``VmHWM``, sampled:
  it started within the cell, so its lifetime peak is the cell's; the latest read counts, since a
  child read between its fork and its ``exec`` shows the worker's memory, not its program's).
  ``RUSAGE_CHILDREN``'s ``ru_maxrss`` is not used: Linux folds into it the memory a child had
  before its ``exec``, which after ``vfork`` is the worker's whole resident set.  A child that lives
  less than :data:`POLL_S` s may be missed.
  The worker's resident set at the start is :attr:`CellMeter.base_mb` (not stored).

Every :data:`POLL_S` s the sampler asks the kernel whether the worker has a child at all (one
``waitid`` that reaps nothing); only then does it look for them (a scan of ``/proc``, about 2 ms of
CPU for 100 processes, at most every :data:`SCAN_S` s) and read each known child's
``/proc/PID/status``.  The sampler is a thread of the worker, joined when the interval ends, so
its own CPU (well under 1 % of a cell's) is counted with the worker's; a cell without children
pays a thread's start and join (``benchmarks/scripts/harness/harness_overhead.py``).  Where ``/proc`` is absent, the process's lifetime figures
(``ru_maxrss``) are used and children's memory is not counted.
"""

from __future__ import annotations

import os
import re
import resource
import threading
import time
from typing import Any

import psutil  # imported with the worker, never by the sampling thread (a solver may fork meanwhile)

#: Seconds between scans for new child processes.
SCAN_S = 0.25
#: Seconds between reads of a known child's peak resident set and CPU time.
POLL_S = 0.02
_CLK = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def _status_kib(pid: int | str, field: str) -> int | None:
    try:
        with open(f"/proc/{pid}/status") as f:
            m = re.search(field + r":\s+(\d+)", f.read())
        return int(m.group(1)) if m else None
    except OSError:
        return None


def _cpu_s(pid: int) -> float | None:
    """User + system time of a live process and of the children it has reaped (``/proc/PID/stat``)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rsplit(")", 1)[1].split()
        return sum(int(x) for x in fields[11:15]) / _CLK  # utime stime cutime cstime
    except (OSError, IndexError, ValueError):
        return None


def _has_children() -> bool:
    """Whether this process has a child process (one ``waitid`` that reaps nothing: microseconds)."""
    try:
        os.waitid(os.P_ALL, 0, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False
    except (OSError, AttributeError):  # no waitid: look anyway
        return True
    return True


def _cmdline(pid: int | str) -> bytes | None:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read()
    except OSError:
        return None


def _children(pid: int) -> list[int]:
    """Every descendant of ``pid`` (a scan of ``/proc``; [] without it)."""
    try:
        return [c.pid for c in psutil.Process(pid).children(recursive=True)]
    except Exception:  # psutil absent, the process gone, /proc unreadable
        return []


def reset_peak() -> bool:
    """Reset this process's peak resident set to its current one (Linux ``clear_refs``); False
    where unavailable."""
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


class CellMeter:
    """Measure one interval (a context manager); read :attr:`cpu_time_s`, :attr:`peak_rss_mb`,
    :attr:`base_mb`, :attr:`children_cpu_s` and :attr:`children_peak_mb` after it."""

    def __init__(self) -> None:
        self.cpu_time_s = 0.0
        self.peak_rss_mb = 0.0
        self.base_mb = 0.0
        self.children_cpu_s = 0.0
        self.children_peak_mb = 0.0
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._hwm: dict[int, int] = {}  # child pid -> its peak resident set (KiB) last read
        self._cpu: dict[int, float] = {}  # child pid -> its CPU time (s) last read
        self._sum_peak_kib = 0
        self._before: set[int] = set()  # children alive at the start (a fork server, a pool): not the cell's
        self._own_cmdline: bytes | None = None  # a child with this command line is forked, not yet exec'd

    def __enter__(self) -> "CellMeter":
        self._reset = reset_peak()
        self._base_kib = _status_kib("self", "VmRSS") if self._reset else None
        self._self0 = resource.getrusage(resource.RUSAGE_SELF)
        self._kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        # children that outlive cells (a fork server, a pool) are not this cell's: left out
        self._before = set(_children(os.getpid())) if _has_children() else set()
        self._own_cmdline = _cmdline("self")
        self._thread = threading.Thread(target=self._sample, daemon=True, name="psdbench-meter")
        self._thread.start()
        return self

    def _sample(self) -> None:
        me = os.getpid()
        next_scan = 0.0
        while True:
            now = time.monotonic()
            if now >= next_scan and _has_children():  # a scan of /proc only when there is a child to find
                for pid in _children(me):
                    if pid not in self._before:
                        self._hwm.setdefault(pid, 0)
                next_scan = now + SCAN_S
            self._read()
            if self._stop.wait(POLL_S):
                break
        self._read()

    def _read(self) -> None:
        live = 0
        for pid in list(self._hwm):
            if _cmdline(pid) == self._own_cmdline:
                # forked and not yet exec'd: its memory is still the worker's (shared pages), not its own
                continue
            hwm = _status_kib(pid, "VmHWM")  # None once it has exited (a zombie has no memory lines)
            if hwm is None:
                continue
            self._hwm[pid] = hwm  # the latest: a forked child's peak before its exec is the worker's, not its own
            cpu = _cpu_s(pid)
            if cpu is not None:
                self._cpu[pid] = cpu
            live += self._hwm[pid]
        # the children running now, each at its peak so far: an upper bound of their sum at this instant
        self._sum_peak_kib = max(self._sum_peak_kib, live)

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = (self1.ru_utime + self1.ru_stime) - (self._self0.ru_utime + self._self0.ru_stime)
        reaped = (kids1.ru_utime + kids1.ru_stime) - (self._kids0.ru_utime + self._kids0.ru_stime)
        running = sum(cpu for pid, cpu in self._cpu.items() if _status_kib(pid, "VmHWM") is not None)
        self.children_cpu_s = reaped + running
        self.cpu_time_s = own + self.children_cpu_s
        self.children_peak_mb = self._sum_peak_kib / 1024.0
        peak = _status_kib("self", "VmHWM") if self._reset else None
        if peak is not None and self._base_kib is not None:
            self.base_mb = self._base_kib / 1024.0
            own_mb = max(peak - self._base_kib, 0) / 1024.0
        else:  # no /proc: the process's lifetime peak, as it is
            own_mb = self1.ru_maxrss / 1024.0
        self.peak_rss_mb = own_mb + self.children_peak_mb
