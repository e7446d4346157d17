"""Entry-point names that several distributions register, and the qualified names that pick one.

A name that two (or more) installed distributions register in the same entry-point group is
*duplicated*: psdbench never resolves it silently, whichever distribution is psdbench itself.
Looking it up bare is a one-line error naming every distribution (:class:`AmbiguousName`), and
``psdbench list`` warns about it; each registration stays reachable by its *qualified name*
``DIST:NAME``, the distribution's name (any spelling that normalizes to it, PEP 503) before a
colon.  Registered names never start with a distribution name and a colon: the part before the
first ``:`` of a qualified name holds no ``/`` (entry-point names such as ``maxcut/sdp`` and view
suffixes such as ``sklearn/wine:multiclass`` keep their meaning) and is a valid distribution name.
A qualified name also reaches a plugin that only one distribution registers.

This module reads metadata only; it imports nothing of psdbench but its errors.
"""

from __future__ import annotations

import importlib.metadata as md
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from psdbench.system.errors import PsdbenchError

#: A distribution name (PEP 508 / core metadata ``Name``).
_DIST = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?")


def normal(dist: str) -> str:
    """A distribution name as packaging compares them (PEP 503): ``Psdbench_Toy`` -> ``psdbench-toy``."""
    return re.sub(r"[-_.]+", "-", dist).lower()


def split(name: str) -> tuple[str | None, str]:
    """``"my-dist:maxcut/sdp"`` -> ``("my-dist", "maxcut/sdp")`` (distribution normalized); a name
    that is not qualified -> ``(None, name)``."""
    dist, sep, rest = name.partition(":")
    if sep and rest and _DIST.fullmatch(dist):
        return normal(dist), rest
    return None, name


def dist_of(ep: md.EntryPoint, seen: dict[Any, str] | None = None) -> str:
    """The normalized name of the distribution that registers ``ep`` (``"unknown"`` without one);
    ``seen`` keeps the names found, per distribution folder (reading a name parses the metadata)."""
    dist = getattr(ep, "dist", None)
    if dist is None:
        return "unknown"
    where = getattr(dist, "_path", None) or id(dist)
    if seen is not None and where in seen:
        return seen[where]
    name = dist.metadata["Name"]
    found = normal(name) if name else "unknown"
    if seen is not None:
        seen[where] = found
    return found


class AmbiguousName(PsdbenchError, KeyError):
    """A bare name that several distributions register (a :class:`KeyError` too, so that
    ``mapping.get(name)`` finds nothing rather than one of them)."""

    __str__ = Exception.__str__  # the one line, not KeyError's repr of it


def ambiguous(what: str, name: str, dists: Iterable[str]) -> AmbiguousName:
    """The one-line error for a duplicated ``name`` (``what``: ``"problem"``, ``"solver"``, ...)."""
    dists = sorted(dists)
    picks = " or ".join(f"{d}:{name}" for d in dists)
    return AmbiguousName(f"{what} {name!r} is registered by {len(dists)} distributions ({', '.join(dists)}): "
                         f"name one as DIST:NAME, {picks}")


@dataclass
class Indexed:
    """The entry points of one group by *key*: a name one distribution registers is its own key,
    a duplicated one is keyed ``dist:name`` for each distribution.

    Attributes
    ----------
    entry_points : dict of str to EntryPoint
    dists : dict of str to str
        Key to the normalized name of the distribution registering it.
    duplicates : dict of str to tuple of str
        Duplicated bare name to the distributions registering it (sorted).
    names : dict of str to str
        Key to the bare name it registers.
    """

    entry_points: dict[str, Any] = field(default_factory=dict)
    dists: dict[str, str] = field(default_factory=dict)
    duplicates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)


def index(items: Iterable[tuple[str, str, Any]]) -> Indexed:
    """Key ``(dist, name, object)`` triples (an entry point, a suite's file; see :class:`Indexed`);
    one distribution naming a name twice keeps its last (nothing tells its two apart)."""
    by_name: dict[str, dict[str, Any]] = {}
    for dist, name, ep in items:
        by_name.setdefault(name, {})[dist] = ep
    out = Indexed()
    for name, per in by_name.items():
        if len(per) > 1:
            out.duplicates[name] = tuple(sorted(per))
        for dist, ep in per.items():
            key = name if len(per) == 1 else f"{dist}:{name}"
            out.entry_points[key], out.dists[key], out.names[key] = ep, dist, name
    return out


def resolve(name: str, keys: dict[str, str], duplicates: dict[str, tuple[str, ...]]) -> str | None:
    """The key that ``name`` (bare or qualified) stands for, ``None`` if none.

    Parameters
    ----------
    name : str
    keys : dict of str to str
        Key to its distribution (:attr:`Indexed.dists`).
    duplicates : dict of str to tuple of str
        :attr:`Indexed.duplicates`; a bare duplicated name stands for no key (the caller raises
        :func:`ambiguous`).
    """
    if name in keys:
        return name
    dist, bare = split(name)
    if dist is None or bare in duplicates:
        return f"{dist}:{bare}" if dist is not None and f"{dist}:{bare}" in keys else None
    return bare if keys.get(bare) == dist else None
