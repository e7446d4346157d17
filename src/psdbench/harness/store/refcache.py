"""A reference cache shared by stores: certified references kept in the user's cache directory.

A certified reference (``kind == "certified"``, :mod:`psdbench.harness.reference`) depends only on
the instance and on the code and libraries that computed it, not on the store it was computed
for.  So the runner keeps each one it computes in a file of its own, keyed by the instance key
(which hashes the problem's code and the dataset's content, :mod:`psdbench.harness.store.keys`) and
the reference key (:func:`psdbench.harness.reference.reference_key`: the problem's code, the
versions of psdbench's install requirements, the certification tolerance and psdbench's version), and
a new store for the same instances takes them from there instead of solving them again.

Where: ``--ref-cache DIR`` (``run_grid(ref_cache=DIR)``), else the environment variable
:data:`ENV` (``off`` turns the cache off), else ``$XDG_CACHE_HOME/psdbench/references``
(``~/.cache/psdbench/references``).  ``--no-ref-cache`` (``ref_cache=False``) turns it off.

Nothing read from the cache is trusted: an entry is used only if it parses, its checksum (SHA-256
of its record) matches, it names the instance and reference key asked for, its interval is
still certified at :data:`~psdbench.harness.reference.CERTIFIED_RTOL`, and the versions it
records (``solver_version``), where they name installed distributions, are still installed.  Anything else is
counted as rejected and the reference is computed again (and the entry rewritten).  Entries are
written atomically (a temporary file in the same folder, then ``os.replace``), so a reader never
sees half an entry; a cache that cannot be written is skipped, never fatal.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Mapping

#: The environment variable naming the cache folder (``off``: no cache).
ENV = "PSDBENCH_REF_CACHE"
#: The entry format; entries of another format are not read.
FORMAT = 1
_OFF = {"", "off", "0", "no", "none", "false"}


def default_folder() -> Path | None:
    """The cache folder from :data:`ENV`, else the user's cache directory; ``None`` when turned off."""
    value = os.environ.get(ENV)
    if value is not None:
        return None if value.strip().lower() in _OFF else Path(value).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "psdbench" / "references"


def _checksum(record: Mapping[str, Any]) -> str:
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()


class ReferenceCache:
    """Certified references by ``(instance key, reference key)``, one JSON file each.

    Parameters
    ----------
    folder : Path
        Created on the first write.

    Attributes
    ----------
    rejected : int
        Entries found but not trusted (corrupt, stale or not certified) since this object was made.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self.rejected = 0

    @classmethod
    def resolve(cls, option: str | Path | bool | None = True) -> "ReferenceCache | None":
        """The cache a run uses: ``True`` the default folder (:func:`default_folder`), a path that
        folder, ``False`` / ``None`` none."""
        if option is None or option is False:
            return None
        folder = default_folder() if option is True else Path(option)
        return None if folder is None else cls(folder)

    def path(self, instance_key: str, ref_key: str) -> Path:
        """The entry's file."""
        return self.folder / instance_key[:2] / f"{instance_key}-{ref_key}.json"

    def get(self, instance_key: str, ref_key: str) -> dict[str, Any] | None:
        """The cached ``refs`` record of an instance, or ``None`` (absent or not trusted)."""
        path = self.path(instance_key, ref_key)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError):
            self.rejected += 1
            return None
        record = self._valid(text, instance_key, ref_key)
        if record is None:
            self.rejected += 1
        return record

    @staticmethod
    def _valid(text: str, instance_key: str, ref_key: str) -> dict[str, Any] | None:
        from psdbench.harness.floor import CERTIFIED_RTOL

        try:
            entry = json.loads(text)
        except ValueError:
            return None
        if not isinstance(entry, dict) or entry.get("format") != FORMAT or entry.get("instance_key") != instance_key \
                or entry.get("ref_key") != ref_key or not isinstance(entry.get("record"), dict):
            return None
        record = entry["record"]
        if entry.get("checksum") != _checksum(record) or record.get("instance_key") != instance_key:
            return None
        value, lower = record.get("value"), record.get("lower")
        if record.get("kind") != "certified" or not all(isinstance(v, (int, float)) and not isinstance(v, bool)
                                                         and math.isfinite(v) for v in (value, lower)):
            return None
        if abs(value - lower) > CERTIFIED_RTOL * max(1.0, abs(value)):
            return None
        return record if _solver_current(record) else None

    def put(self, instance_key: str, ref_key: str, record: Mapping[str, Any]) -> bool:
        """Keep a certified reference (others are not kept); ``False`` if it could not be written."""
        if record.get("kind") != "certified":
            return False
        record = {k: v for k, v in record.items() if k != "created_at"}
        entry = {"format": FORMAT, "instance_key": instance_key, "ref_key": ref_key,
                 "checksum": _checksum(record), "record": record}
        path = self.path(instance_key, ref_key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            try:
                with os.fdopen(fd, "w", encoding="utf-8") as fh:
                    json.dump(entry, fh, sort_keys=True, default=str)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, path)
            except BaseException:
                Path(tmp).unlink(missing_ok=True)
                raise
        except OSError:
            return False
        return True


def _solver_current(record: Mapping[str, Any]) -> bool:
    """Whether the versions a record states are still installed: ``solver_version`` either a bare
    version of the distribution the first word of ``solver`` names (``name`` / ``1.2.3``) or
    ``name version`` pairs (``name 1.2.3``); names that are not installed distributions are not checked."""
    from importlib.metadata import PackageNotFoundError, version

    stated = str(record.get("solver_version") or "").strip()
    pairs = re.findall(r"([A-Za-z][\w.-]*)\s+v?(\d[\w.+-]*)", stated)
    if not pairs:
        m = re.match(r"[A-Za-z0-9_.-]+", str(record.get("solver") or ""))
        pairs = [(m.group(0), stated)] if m and stated else []
    for name, want in pairs:
        try:
            if version(name) != want:
                return False
        except (PackageNotFoundError, ValueError):
            continue
    return True
