"""A report folder replaced as a whole: written into a temporary folder beside it, then swapped in.

``psdbench report`` and ``psdbench run --report`` call :func:`replace_folder` around
:func:`psdbench.report.write_report`: the report is written into ``.<name>.tmp-XXXX`` beside the
target and only a complete report replaces the previous one, in one ``renameat2(RENAME_EXCHANGE)``
(Linux; elsewhere two renames).  A report that fails, is interrupted (Ctrl-C, SIGTERM, SIGHUP) or
meets a full disk leaves the previous report exactly as it was and no temporary folder.

Because the whole folder is replaced, :func:`check_report_folder` accepts as ``--out`` only a new
or empty folder or a previous psdbench report (it holds :data:`MARKER`, or ``results.csv`` for a
report of an earlier version): a folder of other files is refused before anything runs.
"""

from __future__ import annotations

import ctypes
import errno
import os
import shutil
import tempfile
from pathlib import Path
from typing import Callable

from .api import PsdbenchError

#: The file that marks a folder as a psdbench report (safe to replace as a whole).
MARKER = ".psdbench-report"
#: Files every report holds: a folder of that name is not one psdbench wrote.
REPORT_FILES = (MARKER, "report.html", "report.md", "results.csv", "failures.csv")
#: The longest file stem written (bytes), leaving room for a suffix and ``_N`` under 255.
_MAX_STEM = 200
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def check_report_folder(path: str | Path, flag: str = "--out") -> Path:
    """Check that ``path`` can be replaced by a report, without writing anything.

    Refused: a dangling symbolic link, a folder holding files that are not a psdbench report, a
    folder that holds the working folder, and a folder whose parent cannot take the temporary
    folder.  (:func:`psdbench.harness.inputs.check_out_dir` checks the rest.)
    """
    p = Path(path)
    if p.is_symlink() and not p.exists():
        raise PsdbenchError(f"{flag} {p} is a symbolic link to {os.readlink(p)}, which does not exist; "
                            "remove the link or give another folder")
    real = p.resolve()
    if real == Path(real.anchor) or Path.cwd().resolve().is_relative_to(real):
        raise PsdbenchError(f"{flag} {p} holds the working folder; give a folder of its own for the report")
    if real.is_dir():
        entries = {e.name: e for e in os.scandir(real)}
        taken = sorted(n for n in REPORT_FILES if n in entries and not entries[n].is_file(follow_symlinks=False))
        if taken:  # a report's own names taken by folders (or links, sockets): not a report psdbench wrote
            raise PsdbenchError(f"{flag} {p}: {taken[0]} is {'a folder' if entries[taken[0]].is_dir() else 'not a file'}, "
                                "not part of a psdbench report; give a new or empty folder (it is replaced as a whole)")
        if entries and MARKER not in entries and "results.csv" not in entries:
            raise PsdbenchError(f"{flag} {p} holds files that are not a psdbench report ({len(entries)} entries, e.g. "
                                f"{sorted(entries)[0][:80]}); give a new or empty folder (it is replaced as a whole)")
        parent = real.parent
        if not os.access(parent, os.W_OK | os.X_OK):
            raise PsdbenchError(f"{flag} {p}: its folder {parent} is not writable (the report is written beside "
                                "it and swapped in)")
    return p


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2``); False where the system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = libc.renameat2
    except (OSError, AttributeError):
        return False
    rc = fn(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


def replace_folder(target: str | Path, write: Callable[[Path], dict[str, Path]]) -> dict[str, Path]:
    """Run ``write(tmp)`` into a fresh folder beside ``target``, then put it in ``target``'s place.

    Parameters
    ----------
    target : path
        The folder to (re)place; a symbolic link to a folder is followed (the link stays).
    write : callable
        ``write(folder) -> {name: path}``, e.g. ``lambda d: write_report(store, d)``.

    Returns
    -------
    dict
        ``write``'s paths, moved under ``target``.
    """
    from .signals import deferred

    real = Path(target).resolve()
    real.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{real.name}.tmp-", dir=real.parent))
    try:
        try:
            paths = write(tmp)
        except OSError as exc:  # name the report folder (or its file), not the temporary folder
            name = str(exc.filename) if exc.filename is not None else ""
            shown = name.replace(str(tmp), str(target), 1) if name.startswith(str(tmp)) else (name or str(target))
            raise OSError(exc.errno, exc.strerror or str(exc), shown) from None
        (tmp / MARKER).write_text("written by psdbench report; the folder is replaced as a whole\n")
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)  # mkdtemp's 0700 -> the mode a plain mkdir would give
    except BaseException:
        with deferred():  # the partial report removed whole, even if a second signal comes
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        with deferred():  # a signal now waits until the new report is in place and the previous one removed
            try:
                _swap(tmp, real)
            finally:
                shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:  # a signal that came before the deferral took hold: no swap, the new folder removed
        with deferred():
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    return {k: real / Path(v).relative_to(tmp) for k, v in paths.items()}


def _swap(tmp: Path, real: Path) -> None:
    """Put ``tmp`` in ``real``'s place: one exchange (``tmp`` then holds the previous folder), or two
    renames where the system has none."""
    if not real.exists():
        os.rename(tmp, real)
    elif not _exchange(tmp, real):
        old = Path(tempfile.mkdtemp(prefix=f".{real.name}.old-", dir=real.parent))
        os.rename(real, old / real.name)
        try:
            os.rename(tmp, real)
        except BaseException:
            os.rename(old / real.name, real)
            raise
        shutil.rmtree(old, ignore_errors=True)


def safe_stem(name: str) -> str:
    """``name`` as one file name in a report folder: no path separator, NUL or leading dot, at most
    :data:`_MAX_STEM` bytes (a cut name keeps a short hash of the whole, so two stay apart).  Any
    parameter value may reach a table's or figure's name (``p=a/b`` gives ``p=a-b``)."""
    import hashlib
    import re

    stem = re.sub(r"[/\\\x00]+", "-", str(name)).lstrip(".") or "file"
    raw = stem.encode("utf-8", "surrogateescape")
    if len(raw) <= _MAX_STEM:
        return stem
    tag = hashlib.sha256(raw).hexdigest()[:10]
    return raw[: _MAX_STEM - 11].decode("utf-8", "ignore") + "-" + tag
