"""A solver's program run as a child process, killed at the budget's deadline.

The pattern of ``sdp-sdpa-gmp`` (:mod:`.sdpa_gmp`), shared by the adapters that call a binary
(:mod:`.binaries`): the child gets ``PR_SET_PDEATHSIG`` (it dies with the worker that started it,
so a worker the harness kills leaves nothing running), its output goes to files in the caller's
folder (no pipe to fill), and :func:`run_child` kills it (``SIGKILL``) when the deadline passes.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping, Sequence


def die_with_parent() -> None:  # pragma: no cover - runs in the child between fork and exec
    """Ask Linux to SIGKILL this process when its parent dies (``prctl(PR_SET_PDEATHSIG)``)."""
    try:
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass


@dataclass
class ChildRun:
    """What a child left: exit code (``None`` when killed), its output, whether it was killed, seconds."""

    returncode: int | None
    stdout: str
    stderr: str
    killed: bool
    seconds: float


def run_child(argv: Sequence[str], cwd: str | Path, timeout: float | None,
              env: Mapping[str, str] | None = None) -> ChildRun:
    """Run ``argv`` in ``cwd``; kill it when ``timeout`` seconds pass (``None``: no limit).

    Parameters
    ----------
    argv : sequence of str
        The program and its arguments.
    cwd : str or Path
        Its working folder; its standard output and error are written to ``stdout.txt`` and
        ``stderr.txt`` there and read back.
    timeout : float or None
        Seconds before ``SIGKILL``.
    env : mapping, optional
        Its environment (default: this process's).

    Returns
    -------
    ChildRun
    """
    cwd = Path(cwd)
    out, err = cwd / "stdout.txt", cwd / "stderr.txt"
    t0 = time.perf_counter()
    with open(out, "wb") as fo, open(err, "wb") as fe:
        proc = subprocess.Popen(list(argv), cwd=cwd, stdout=fo, stderr=fe, stdin=subprocess.DEVNULL,
                                env=dict(env) if env is not None else None,
                                preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
        killed = False
        try:
            proc.wait(timeout=None if timeout is None else max(timeout, 0.0))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            killed = True
    secs = time.perf_counter() - t0
    text = {p: p.read_bytes().decode("utf-8", errors="replace") for p in (out, err)}
    return ChildRun(None if killed else proc.returncode, text[out], text[err], killed, secs)


class CapturedOutput:
    """What :func:`captured_stdout` caught (``text``, filled when the block ends)."""

    text: str = ""


@contextlib.contextmanager
def captured_stdout() -> Iterator[CapturedOutput]:
    """Catch what a solver prints to standard output during the block: at the file descriptor (C
    code's ``printf``) and at ``sys.stdout`` (SCS's Python module prints through it).

    The descriptor is pointed at a temporary file and ``sys.stdout`` at a buffer for the block, both
    restored after it; ``text`` holds both.
    """
    import ctypes
    import io
    import os

    got = CapturedOutput()
    sys.stdout.flush()
    libc = ctypes.CDLL(None)
    saved = os.dup(1)
    py = io.StringIO()
    with tempfile.TemporaryFile() as tmp:
        os.dup2(tmp.fileno(), 1)
        try:
            with contextlib.redirect_stdout(py):
                yield got
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
            tmp.seek(0)
            got.text = py.getvalue() + tmp.read().decode("utf-8", errors="replace")
