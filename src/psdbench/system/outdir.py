"""Folders written as a unit (a report): written beside the target, then swapped in whole.

:func:`replace_folder` is the one primitive for every folder psdbench writes as a whole
(``psdbench report`` and ``psdbench run --report`` call it around
:func:`psdbench.report.write_report`).  The new folder is written into ``.<name>.tmp-<token>``
beside the target, marked (:data:`MARKER`), flushed to disk (every file and folder ``fsync``-ed),
and put in the target's place with one ``renameat2(RENAME_EXCHANGE)`` (Linux; ``renamex_np``
with ``RENAME_SWAP`` on macOS): at every instant the target holds the whole previous folder or
the whole new one.  The replaced folder, now under the temporary name, is then removed.  A write
that fails, is interrupted (Ctrl-C, SIGTERM, SIGHUP) or meets a full disk leaves the previous
folder exactly as it was and no temporary folder.

Where the file system has no exchange (NFS, for one), the target is moved aside to
``.<name>.old-<token>`` and the new folder renamed in its place: two renames, between which the
target is absent for an instant.  A ``kill -9`` there is repaired by the next
:func:`replace_folder` of the same target (:func:`recover`): the new folder, complete since it is
moved in only once written, is renamed into place.  ``recover`` also removes the leftovers of
writers that were killed (``<token>`` is the writer's pid, a tag of its host and a random part;
a live writer's folders, or another host's, are left alone).  Leftovers start with a dot and
never take the target's name, so none is mistaken for the report.

Because the whole folder is replaced, :func:`check_report_folder` accepts as ``--out`` only a new
or empty folder or a previous psdbench report (it holds :data:`MARKER`, or ``results.csv`` for a
report of an earlier version): a folder of other files is refused before anything runs.

Every step of a replacement raises the audit event ``psdbench.system.outdir.replace_folder`` with the
step's name and path (:func:`sys.audit`; a test's audit hook stops the process at each step).
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import re
import secrets
import shutil
import socket
import sys
from pathlib import Path
from typing import Callable, NamedTuple

from psdbench.system.errors import PsdbenchError

#: The file that marks a folder as a psdbench report (safe to replace as a whole).
MARKER = ".psdbench-report"
#: Files every report holds: a folder of that name is not one psdbench wrote.
REPORT_FILES = (MARKER, "report.html", "report.md", "results.csv", "failures.csv")
#: The audit event raised at each step of :func:`replace_folder` (arguments: step, path).
AUDIT_EVENT = "psdbench.system.outdir.replace_folder"
#: The longest file stem written (bytes), leaving room for a suffix and ``_N`` under 255.
_MAX_STEM = 200
_RENAME_EXCHANGE = 2  # Linux renameat2
_RENAME_SWAP = 2  # macOS renamex_np
_AT_FDCWD = -100


def check_report_folder(path: str | Path, flag: str = "--out") -> Path:
    """Check that ``path`` can be replaced by a report, without writing anything.

    Refused: a dangling symbolic link, a folder holding files that are not a psdbench report, a
    folder that holds the working folder, and a folder whose parent cannot take the temporary
    folder.  (:func:`psdbench.harness.grid.inputs.check_out_dir` checks the rest.)
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


def replace_folder(target: str | Path, write: Callable[[Path], dict[str, Path]],
                   marker: str = MARKER) -> dict[str, Path]:
    """Run ``write(tmp)`` into a fresh folder beside ``target``, then put it in ``target``'s place whole.

    Parameters
    ----------
    target : path
        The folder to (re)place; a symbolic link to a folder is followed (the link stays).
    write : callable
        ``write(folder) -> {name: path}``, e.g. ``lambda d: write_report(store, d)``.
    marker : str
        The file written last into the new folder, marking it as psdbench's (default :data:`MARKER`).

    Returns
    -------
    dict
        ``write``'s paths, moved under ``target``.
    """
    from psdbench.system.signals import deferred

    real = Path(target).resolve()
    real.parent.mkdir(parents=True, exist_ok=True)
    recover(real)
    token = f"{os.getpid()}-{_host_tag()}-{secrets.token_hex(4)}"
    tmp, old = _leftover_path(real, "tmp", token), _leftover_path(real, "old", token)
    try:
        os.mkdir(tmp, 0o700)
        try:
            paths = write(tmp)
        except OSError as exc:  # name the report folder (or its file), not the temporary folder
            name = str(exc.filename) if exc.filename is not None else ""
            shown = name.replace(str(tmp), str(target), 1) if name.startswith(str(tmp)) else (name or str(target))
            raise OSError(exc.errno, exc.strerror or str(exc), shown) from None
        _step("written", tmp)
        (tmp / marker).write_text("written by psdbench; this folder is replaced as a whole\n")
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(tmp, 0o777 & ~mask)  # 0700 while written -> the mode a plain mkdir would give
        _sync_tree(tmp)  # a crash after the swap finds the new files' contents on disk
        _step("synced", tmp)
    except BaseException:
        with deferred():  # the partial folder removed whole, even if a second signal comes
            shutil.rmtree(tmp, ignore_errors=True)
        raise
    try:
        with deferred():  # a signal now waits until the new folder is in place and the previous one removed
            try:
                _swap(tmp, old, real)
                _sync_dir(real.parent)
            finally:  # the previous folder (tmp's name after an exchange, old's after two renames), or the new one
                _discard(tmp, old, real)
            _step("cleaned", real)
    except BaseException:  # a signal that came before the deferral took hold: no swap, the new folder removed
        with deferred():
            _discard(tmp, old, real)
        raise
    return {k: real / Path(v).relative_to(tmp) for k, v in paths.items()}


def _discard(tmp: Path, old: Path, real: Path) -> None:
    """Remove ``tmp`` and ``old``, except where ``real`` is absent and ``old`` holds the previous
    folder (a failed swap whose undo failed too): both are then left for :func:`recover`."""
    if os.path.lexists(real):
        shutil.rmtree(old, ignore_errors=True)
    elif os.path.lexists(old):
        return
    shutil.rmtree(tmp, ignore_errors=True)


def _swap(tmp: Path, old: Path, real: Path) -> None:
    """Put ``tmp`` in ``real``'s place: one exchange (``tmp`` then holds the previous folder), or two
    renames (the previous folder moved to ``old`` first) where the system has no exchange."""
    _step("swap", real)
    if not real.exists():
        os.rename(tmp, real)
    elif not _exchange(tmp, real):
        os.rename(real, old)
        _step("moved aside", old)
        try:
            os.rename(tmp, real)
        except BaseException:
            os.rename(old, real)
            raise
    _step("swapped", real)


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux ``renameat2``, macOS ``renamex_np``); False where the
    system or the file system cannot."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return False
    if hasattr(libc, "renameat2"):
        rc = libc.renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    elif hasattr(libc, "renamex_np"):
        rc = libc.renamex_np(os.fsencode(a), os.fsencode(b), _RENAME_SWAP)
    else:
        return False
    if rc == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP):
        return False
    raise OSError(err, os.strerror(err), str(b))


class Leftover(NamedTuple):
    """A folder an interrupted :func:`replace_folder` left beside its target."""

    kind: str  # "tmp": a new folder (complete if its "old" twin exists) or, after an exchange, the previous one
    token: str  # "<pid>-<host tag>-<random>"
    path: Path


def leftovers(target: str | Path) -> list[Leftover]:
    """The folders beside ``target`` that a :func:`replace_folder` of it made (live or not), by name."""
    real = Path(target)
    pattern = re.compile(rf"\.{re.escape(real.name)}\.(tmp|old)-(\d+-[0-9a-f]{{8}}-[0-9a-f]{{8}})")
    try:
        names = sorted(os.listdir(real.parent))
    except FileNotFoundError:
        return []
    return [Leftover(m[1], m[2], real.parent / n) for n in names if (m := pattern.fullmatch(n))]


def recover(target: str | Path) -> None:
    """Repair what a killed :func:`replace_folder` of ``target`` left: a target moved aside and not
    replaced gets the new folder (complete: it is moved in only once written; else the previous
    one back), and the dead writers' leftovers are removed.  A live writer's are left alone."""
    real = Path(target).resolve()
    dead = [x for x in leftovers(real) if not _writer_alive(x)]
    if not os.path.lexists(real):
        for x in dead:
            if x.kind == "old":
                try:  # roll forward with the new folder, else back with the previous one
                    twin = _leftover_path(real, "tmp", x.token)
                    os.rename(twin if twin.is_dir() else x.path, real)
                except OSError:  # another process repaired it first
                    pass
                break
    for x in dead:
        shutil.rmtree(x.path, ignore_errors=True)


def _leftover_path(real: Path, kind: str, token: str) -> Path:
    return real.parent / f".{real.name}.{kind}-{token}"


def _host_tag() -> str:
    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]


def _writer_alive(x: Leftover) -> bool:
    """Whether the process that made ``x`` may still be writing: another host's counts as alive; on
    this host the pid must run, not as a zombie, and have started before ``x`` was last changed."""
    import psutil

    pid, tag, _ = x.token.split("-")
    if tag != _host_tag():
        return True
    try:
        proc = psutil.Process(int(pid))
        if proc.status() == psutil.STATUS_ZOMBIE:
            return False
        return proc.create_time() <= x.path.stat().st_mtime + 1.0
    except (psutil.Error, OSError):
        return False


def _sync_tree(folder: Path) -> None:
    """``fsync`` every file and folder under ``folder`` (a full disk or an I/O error raises here)."""
    for root, _, files in os.walk(folder):
        for name in files:
            fd = os.open(os.path.join(root, name), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        _sync_dir(Path(root))


def _sync_dir(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:  # a system that cannot open folders (flushing them is a courtesy there)
        return
    try:
        os.fsync(fd)
    except OSError as exc:
        if exc.errno not in (errno.EINVAL, errno.EBADF, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def _step(name: str, path: Path) -> None:
    sys.audit(AUDIT_EVENT, name, str(path))


def safe_stem(name: str) -> str:
    """``name`` as one file name in a report folder: no path separator, NUL or leading dot, at most
    :data:`_MAX_STEM` bytes (a cut name keeps a short hash of the whole, so two stay apart).  Any
    parameter value may reach a table's or figure's name (``p=a/b`` gives ``p=a-b``)."""
    stem = re.sub(r"[/\\\x00]+", "-", str(name)).lstrip(".") or "file"
    raw = stem.encode("utf-8", "surrogateescape")
    if len(raw) <= _MAX_STEM:
        return stem
    tag = hashlib.sha256(raw).hexdigest()[:10]
    return raw[: _MAX_STEM - 11].decode("utf-8", "ignore") + "-" + tag
