"""Signals of the command line: SIGTERM, SIGHUP and SIGQUIT stop a command the way Ctrl-C does.

While a command runs (:func:`stops_gracefully`), each of them raises :class:`Terminated` in the
main thread, so ``psdbench run`` ends as on Ctrl-C (running cells killed and not stored, claims
released, the run stamped finished) and ``psdbench report`` leaves the previous report in place
(:mod:`psdbench.system.outdir`).  The exit status is 128 + the signal number (143, 129, 131), as a shell
reports a process the signal ended; a closed terminal or dropped ssh session (SIGHUP) and
``Ctrl-\\`` (SIGQUIT) print one line, no traceback.  A signal the caller ignored when psdbench
started stays ignored.  SIGXFSZ (a file-size limit, ``ulimit -f``) is ignored, so that a write past
the limit fails with ``EFBIG`` and is reported (:mod:`psdbench.system.oserrors`) instead of killing the
process.

:func:`interrupted_line` is the one line Ctrl-C or a signal prints, worded for the command.

Before a command's own handling starts (the command line loading its modules) and after it ended
(the interpreter's clean-up: flushing, ``atexit`` callbacks, where Python would report a
``KeyboardInterrupt`` as "ignored" and exit 0), :func:`exit_now` ends the process at once with
the same line and status: :func:`early_guard` and :func:`late_guard` install it, for the
``psdbench`` program only (never in a process that merely imports psdbench).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Any, Iterator

#: The signals that stop a command gracefully, with the word its message uses.
STOPS = {signal.SIGTERM: "terminated (SIGTERM)", signal.SIGHUP: "hung up (SIGHUP)", signal.SIGQUIT: "quit (SIGQUIT)"}


class Terminated(KeyboardInterrupt):
    """A stop signal during a command: the Ctrl-C path, exit status ``128 + signum``."""

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = int(signum)


def _raise(signum: int, frame: Any) -> None:
    raise Terminated(signum)


@contextmanager
def stops_gracefully() -> Iterator[None]:
    """While inside, SIGTERM / SIGHUP / SIGQUIT raise :class:`Terminated` (main thread only) and
    SIGXFSZ is ignored; the previous handlers come back on exit."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    old: dict[int, Any] = {}
    for sig in STOPS:
        if signal.getsignal(sig) != signal.SIG_IGN:
            old[sig] = signal.signal(sig, _raise)
    if hasattr(signal, "SIGXFSZ"):
        old[signal.SIGXFSZ] = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


@contextmanager
def deferred() -> Iterator[None]:
    """Hold Ctrl-C and the stop signals back while inside (main thread only): a signal that arrives
    is delivered, through the handler it would have met, when the block ends.  For steps that must
    not stop half-way, such as swapping a report folder in and removing the one it replaced."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    pending: list[int] = []
    old: dict[int, Any] = {}
    for sig in (signal.SIGINT, *STOPS):
        handler = signal.getsignal(sig)
        if handler not in (signal.SIG_IGN, None):
            old[sig] = signal.signal(sig, lambda signum, frame: pending.append(signum))
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        if pending:
            signal.raise_signal(pending[0])  # now handled as it would have been


def exit_status(exc: KeyboardInterrupt) -> int:
    """130 for Ctrl-C, ``128 + signum`` for a stop signal."""
    return 128 + exc.signum if isinstance(exc, Terminated) else 130


def interrupted_line(exc: KeyboardInterrupt, command: str | None) -> str:
    """The line printed when ``command`` is interrupted, without a word that does not fit it."""
    how = STOPS.get(signal.Signals(exc.signum), "terminated") if isinstance(exc, Terminated) else "interrupted"
    rest = {"run": "finished cells are stored, re-run to complete the rest",
            "report": "the previous report, if any, is left as it was"}.get(command or "")
    return f"psdbench: {how}" + (f"; {rest}" if rest else "")


def exit_now(signum: int, frame: Any = None) -> None:
    """Print the one line of ``signum`` and end the process now with 130 / ``128 + signum``."""
    try:
        sys.stdout.flush()
    except Exception:  # noqa: S110 - a closed or broken standard output: the status still counts
        pass
    how = "interrupted" if signum == signal.SIGINT else STOPS.get(signal.Signals(signum), "terminated")
    try:
        os.write(2, f"psdbench: {how}\n".encode())
    except OSError:
        pass
    os._exit(128 + int(signum))


def _install(handler: Any) -> dict[int, Any]:
    old: dict[int, Any] = {}
    if threading.current_thread() is not threading.main_thread():
        return old
    for sig in (signal.SIGINT, *STOPS):
        current = signal.getsignal(sig)
        if current not in (signal.SIG_IGN, None):  # a signal ignored when psdbench started stays ignored
            old[sig] = signal.signal(sig, handler)
    return old


def early_guard() -> dict[int, Any]:
    """:func:`exit_now` for Ctrl-C and the stop signals while the ``psdbench`` program loads; the
    previous handlers, for :func:`release`.  Nothing is installed unless this process is the
    ``psdbench`` program (``python -m psdbench.cli.commands`` or the console script)."""
    program = str(sys.argv[0]) if sys.argv else ""
    if os.path.basename(program) != "psdbench" and not program.endswith(os.path.join("psdbench", "cli/commands.py")):
        return {}
    return _install(exit_now)


def release(old: dict[int, Any]) -> None:
    """Put back the handlers :func:`early_guard` replaced (the command's own handling takes over)."""
    for sig, handler in old.items():
        signal.signal(sig, handler)
    old.clear()


def late_guard() -> None:
    """:func:`exit_now` for Ctrl-C and the stop signals once a command of the ``psdbench`` program
    has ended: the interpreter's clean-up cannot turn a Ctrl-C into exit status 0."""
    _install(exit_now)
