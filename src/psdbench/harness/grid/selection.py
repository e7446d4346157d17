"""A grid narrowed from the command line: ``run -s / -d / -p`` (benchopt's ``-s`` / ``-d``).

:func:`restrict` cuts a parsed grid or suite down to the named solvers, datasets and problems;
:func:`parse_selector` reads a name with parameters, ``NAME[param=value,...]``.  The narrowed spec is
then checked and expanded like any grid (:func:`psdbench.harness.grid.expand` with ``narrowed=True``).
:mod:`psdbench.harness.grid.expand` re-exports both functions.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

from psdbench.api import PsdbenchError
from psdbench.registry.qualified import split
from psdbench.harness.limits import echo

__all__ = ["parse_selector", "restrict"]


def parse_selector(text: str) -> tuple[str, dict[str, Any] | None]:
    """``"my-solver[tol=1e-3,max_iters=[100,200]]"`` -> ``("my-solver", {"tol": 1e-3, "max_iters": [100, 200]})``.

    benchopt's ``-s solver[param=value]`` syntax: values are TOML literals (numbers, booleans,
    quoted strings, lists), a bare word is a string; a list expands as in a grid file.  A name
    without brackets gives ``(name, None)``.
    """
    m = re.fullmatch(r"\s*([^\[\]\s]+)\s*(?:\[(.*)\])?\s*", text)
    if m is None:
        raise PsdbenchError(f"selector {echo(text)}: expected NAME or NAME[param=value,...]")
    name, inner = m.group(1), m.group(2)
    if inner is None:
        return name, None
    params: dict[str, Any] = {}
    depth, part, parts = 0, "", []
    for ch in inner:  # split on the commas outside list brackets
        depth += (ch == "[") - (ch == "]")
        if ch == "," and depth == 0:
            parts.append(part)
            part = ""
        else:
            part += ch
    parts.append(part)
    for item in (p.strip() for p in parts if p.strip()):
        key, eq, raw = item.partition("=")
        if not eq or not key.strip():
            raise PsdbenchError(f"selector {text!r}: {item!r} is not param=value")
        try:
            value = tomllib.loads(f"v = {raw.strip()}")["v"]
        except tomllib.TOMLDecodeError:
            value = raw.strip()  # a bare word: a string
        except RecursionError:
            raise PsdbenchError(f"selector {echo(text)}: values nested too deep to read") from None
        params[key.strip()] = value
    return name, params


def _select(entries: list[Any], names: list[str], extra: dict[str, Any]) -> list[dict[str, Any]]:
    """Keep the grid entries named in ``names`` (selectors); a selector's parameters override those
    of the entry (the others stay as the grid has them); a name the grid does not list is added
    with ``extra`` keys.  A qualified selector ``DIST:NAME`` (:mod:`psdbench.registry.qualified`) also
    keeps the entries the grid names ``NAME``, renamed ``DIST:NAME``: it picks that distribution's
    plugin for a name several distributions register."""
    out = []
    for text in names:
        name, params = parse_selector(text)
        bare = split(name)[1]
        have = [e for e in entries if isinstance(e, dict) and e.get("name") in (name, bare)]
        for e in have or [{"name": name, **extra}]:
            merged = {**(e.get("params") or {}), **params} if params is not None else None
            out.append({**e, "name": name, **({"params": merged} if merged is not None else {})})
    return out


def restrict(spec: dict[str, Any], solvers: list[str] | None = None, datasets: list[str] | None = None,
             problems: list[str] | None = None) -> dict[str, Any]:
    """A grid narrowed from the command line (``run -s / -d / -p``, as benchopt's ``-s`` / ``-d``).

    Parameters
    ----------
    spec : dict
        A parsed grid or suite.
    solvers : list of str, optional
        Keep only these solvers; a name the grid does not list is added with its defaults.  A
        selector ``name[param=value,...]`` sets those parameters (:func:`parse_selector`).
    datasets : list of str, optional
        Run every (kept) problem on these datasets instead of the grid's.
    problems : list of str, optional
        Keep only these problems (selectors as for ``solvers``); a name the grid does not list is
        added with its defaults.

    Returns
    -------
    dict
        A new spec; :func:`expand` then checks it like any grid (a solver that pairs with no kept
        problem is an error, not an empty grid).
    """
    out = {k: v for k, v in spec.items()}
    if problems:
        out["problems"] = _select(list(spec.get("problems", [])), problems, {"datasets": list(datasets or [])})
    if datasets:
        out["problems"] = [{**p, "datasets": list(datasets)} for p in out.get("problems", []) if isinstance(p, dict)]
    if solvers:
        out["solvers"] = _select(list(spec.get("solvers", [])), solvers, {})
    return out
