"""One error path for failures of the operating system and of SQLite: one line and an exit status.

:func:`describe` turns an ``OSError`` (or an ``sqlite3`` error on the store) into the line
``psdbench: error: <path>: <what happened>; <what to do>`` and a status:

* :data:`EXIT_INPUT` (2) when the user's input is the cause: a name longer than the file system
  allows, a permission, a missing or misplaced file or folder, a read-only file system, a
  damaged store;
* :data:`EXIT_MACHINE` (3) when the machine's condition is: a full disk or quota, the file-size
  limit (``ulimit -f``), an I/O error, too many open files, no memory, a store locked by another
  process for longer than SQLite waits.

Nothing of these is an "internal error" (status 1, kept for psdbench's own bugs).  A closed pipe
on standard output (``psdbench results | head -1``) is not an error at all: the command ends
quietly with :data:`EXIT_PIPE` (141, 128 + SIGPIPE, what a shell reports for a process ended by
SIGPIPE).
"""

from __future__ import annotations

import errno
import os
import sqlite3
import sys

EXIT_INPUT = 2
EXIT_MACHINE = 3
EXIT_PIPE = 141

_INPUT = {
    errno.ENAMETOOLONG: "a name in the path is longer than the file system allows (255 bytes); choose a shorter one",
    errno.EACCES: "permission denied; check the permissions of the file and of the folders above it",
    errno.EPERM: "operation not permitted; check the permissions of the file and of the folders above it",
    errno.ENOENT: "no such file or folder (was it, or the working folder, deleted?)",
    errno.ENOTDIR: "a part of the path is a file, not a folder",
    errno.EISDIR: "is a folder where a file was expected",
    errno.ELOOP: "too many levels of symbolic links",
    errno.EEXIST: "already exists",
    errno.EROFS: "the file system is read-only; choose a path on a writable one",
    errno.ENOTEMPTY: "the folder is not empty",
}
_MACHINE = {
    errno.ENOSPC: "no space left on the device; free some space or write to another file system",
    errno.EDQUOT: "disk quota exceeded; free some space or write elsewhere",
    errno.EFBIG: "the file-size limit (ulimit -f) is reached; raise it or write a smaller output",
    errno.EIO: "input/output error on the device; check the disk",
    errno.EMFILE: "too many open files (ulimit -n); raise the limit",
    errno.ENFILE: "too many open files on the system; retry later",
    errno.ENOMEM: "out of memory",
}


def _short(path: object, limit: int = 160) -> str:
    text = os.fsdecode(path) if isinstance(path, (str, bytes, os.PathLike)) else str(path)
    return text if len(text) <= limit else f"{text[:limit]}...({len(text)} characters)"


def describe(exc: BaseException, store: str | None = None) -> tuple[int, str] | None:
    """``(exit status, message)`` for an OS or SQLite failure, or None if ``exc`` is neither."""
    if isinstance(exc, OSError):
        where = _short(exc.filename) if exc.filename is not None else ""
        if exc.filename2 is not None:
            where += f" -> {_short(exc.filename2)}"
        what = exc.strerror or str(exc)
        if exc.errno in _MACHINE:
            status, hint = EXIT_MACHINE, _MACHINE[exc.errno]
        elif exc.errno in _INPUT:
            status, hint = EXIT_INPUT, _INPUT[exc.errno]
        else:
            status, hint = EXIT_MACHINE, "an operating-system failure"
        return status, f"{where + ': ' if where else ''}{what}; {hint}"
    if isinstance(exc, MemoryError):
        return EXIT_MACHINE, "out of memory in the psdbench process; narrow the grid or free memory"
    if isinstance(exc, sqlite3.Error):
        text = (str(exc).splitlines() or [""])[0]
        low = text.lower()
        where = f"store {_short(store)}" if store else "the results store"
        if "full" in low:
            return EXIT_MACHINE, f"{where}: {text}; free some space (or raise ulimit -f) and re-run"
        if "disk i/o" in low:
            return EXIT_MACHINE, f"{where}: {text} (a full disk, a file-size limit or a failing device); re-run once fixed"
        if "locked" in low or "busy" in low:
            return EXIT_MACHINE, f"{where}: {text}; another process holds it, retry when it is done"
        if "readonly" in low or "read-only" in low or "unable to open" in low:
            return EXIT_INPUT, f"{where}: {text}; check the path and its permissions"
        if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in low or "not a database" in low
                                                         or "no such" in low):
            return EXIT_INPUT, (f"{where} is damaged: {text}; copy out what SQLite can read with "
                                f"`sqlite3 {store or 'STORE'} .recover | sqlite3 recovered.sqlite`")
        return None
    return None


def quiet_stdout() -> None:
    """After a broken pipe: point standard output at /dev/null so the exit's flush is silent."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout replaced (tests): nothing to silence
        pass
