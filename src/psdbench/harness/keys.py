"""What identifies an instance and a cell: the hashes behind ``instance_key``, ``cell_key`` and ``cell_id``.

An instance key hashes the problem, dataset name, instance parameters, seed, psdbench's version,
the dataset's content (:func:`dataset_fingerprint`) and the problem's code (:func:`code_hash`),
so a corrected data file or an edited problem gives its instances new keys and resume runs their
cells again; a cell key adds the solver, its parameters, the versions of the libraries it reports
and the solver's code.  A cell id (:func:`cell_id`) hashes only the description (problem,
dataset, parameters, seed, solver): rows of one cell computed by different code share it, which
is how a run tells "re-run because the code changed" and how ``results`` picks the current row.

Code hashes (:func:`code_hash`) are content hashes of module files, cached per process:

* an object of psdbench's own distribution hashes the subpackage it lives in (a family's folder
  ``psdbench/families/<family>``, or ``psdbench/solvers``, ``psdbench/datasets``, ...) and, in
  turn, the psdbench subpackages those modules import (``psdbench.linalg``, ``psdbench.solvers``),
  never the contract, harness or report code (psdbench's version covers those);
* any other object hashes the top-level package of its module (the source folder for an
  editable install, ``site-packages/<package>`` otherwise), or the module's file alone when it
  is a top-level module.

Only module files count (``*.py``, ``*.pyx``, extension modules): editing a suite or a data
file of a family changes no key.
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import sys
from pathlib import Path
from typing import Any

from .. import __version__

#: Files that hold code: what :func:`code_hash` reads.
CODE_SUFFIXES = (".py", ".pyx", ".pxd", ".so", ".pyd")
#: psdbench subpackages whose code is part of the harness and covered by psdbench's version.
_CORE = {"api", "budget", "params", "tracing", "harness", "report", "registry", "cli", "session", "describe",
         "compare", "testing", "_watchdog", "__init__"}
_IMPORT = re.compile(r"(?:from|import)\s+psdbench\.(families\.\w+|\w+)")


def stable_hash(obj: Any) -> str:
    """SHA-256 (20 hex digits) of ``obj`` as canonical JSON (sorted keys, ``str`` for the rest)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:20]


def instance_key(problem: str, dataset: str, params: dict[str, Any], seed: int, content: str = "",
                 code: str = "") -> str:
    """Key of one instance; ``content`` is the dataset's :func:`dataset_fingerprint` and ``code`` the
    problem's :func:`code_hash`, so that a changed data file or problem gives its instances (and
    their cells) new keys and resume runs them again."""
    return stable_hash(["instance", problem, dataset, params, seed, __version__] + ([content] if content else [])
                       + ([{"code": code}] if code else []))


def cell_key(instance: str, solver: str, solver_params: dict[str, Any], versions: Any, code: str = "") -> str:
    """Key of one cell: its instance key, the solver, its parameters, ``versions`` (the solver's
    library versions and effective defaults), psdbench's version and the solver's ``code`` hash."""
    return stable_hash(["cell", instance, solver, solver_params, versions, __version__]
                       + ([{"code": code}] if code else []))


def cell_id(problem: str, dataset: str, instance_params: Any, seed: Any, solver: str, solver_params: Any) -> str:
    """The code- and version-independent identity of a cell: what it describes, not what computed it.

    JSON text parameters (as a store row holds them) are decoded first, so a row and a grid cell
    of the same description get the same id.
    """
    def plain(v: Any) -> Any:
        return json.loads(v) if isinstance(v, str) else (v or {})

    return stable_hash(["cell-id", problem, dataset, plain(instance_params), int(seed), solver, plain(solver_params)])


def _root(module: str) -> Path | None:
    """The file or folder whose code :func:`code_hash` reads for ``module`` (see the module docstring)."""
    parts = module.split(".")
    if parts[0] == "psdbench" and len(parts) > 1:
        base = Path(sys.modules["psdbench"].__file__).resolve().parent
        rel = parts[1:3] if parts[1] == "families" and len(parts) > 2 else parts[1:2]
        folder = base.joinpath(*rel)
        return folder if folder.is_dir() else folder.with_suffix(".py")
    top = sys.modules.get(parts[0])
    if top is None:
        import importlib

        try:
            top = importlib.import_module(parts[0])
        except Exception:  # an object of no importable module: nothing to hash
            return None
    file = getattr(top, "__file__", None)
    if not file:  # a namespace package: its first folder
        paths = list(getattr(top, "__path__", []))
        return Path(paths[0]).resolve() if paths else None
    path = Path(file).resolve()
    return path.parent if path.name.startswith("__init__.") else path


@functools.lru_cache(maxsize=None)
def _hash_root(root: Path) -> tuple[str, tuple[Path, ...]]:
    """``(sha256 of the code files under root, psdbench roots they import)``, once per process."""
    files = [root] if root.is_file() else sorted(
        f for f in root.rglob("*") if f.is_file() and f.suffix in CODE_SUFFIXES and "__pycache__" not in f.parts)
    h = hashlib.sha256()
    imports: set[str] = set()
    for f in files:
        data = f.read_bytes()
        h.update(f"{f.relative_to(root.parent).as_posix()}\0{len(data)}\0".encode())
        h.update(data)
        if f.suffix == ".py":
            imports.update(_IMPORT.findall(data.decode("utf-8", "replace")))
    linked = tuple(r for r in (_root("psdbench." + m) for m in sorted(imports)
                               if m.split(".")[0] not in _CORE) if r is not None and r.exists() and r != root)
    return h.hexdigest()[:20], linked


@functools.lru_cache(maxsize=None)
def _module_code(module: str) -> str:
    root = _root(module)
    if root is None or not root.exists():
        return ""
    seen: dict[Path, str] = {}
    todo = [root]
    while todo:  # the module's root and, for psdbench's own code, the subpackages it imports
        r = todo.pop()
        if r in seen:
            continue
        seen[r], linked = _hash_root(r)
        todo += [x for x in linked if x not in seen]
    return stable_hash(sorted((str(r.name), h) for r, h in seen.items()))


def code_hash(obj: Any) -> str:
    """Content hash (20 hex digits) of the code behind a plugin object (a problem, solver, ...).

    ``obj`` is an instance, a class or a function; its module decides what is read (module
    docstring).  Computed once per module and process.  ``""`` when there is no file to read.
    """
    module = getattr(obj, "__module__", None) or type(obj).__module__  # an instance: its class's module
    return _module_code(str(module))


def _feed(h: Any, v: Any) -> None:
    """Feed ``v`` (arrays, sparse matrices, mappings, sequences, scalars) into the hash ``h``."""
    import numpy as np
    import scipy.sparse as sp

    if sp.issparse(v):
        v = v.tocsr()
        for part in (v.data, v.indices, v.indptr):
            _feed(h, part)
        h.update(repr(v.shape).encode())
    elif isinstance(v, np.ndarray):
        a = np.ascontiguousarray(v)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes() if a.dtype != object else repr(a.tolist()).encode())
    elif isinstance(v, dict):
        for k in sorted(v, key=str):
            h.update(repr(k).encode())
            _feed(h, v[k])
    elif isinstance(v, (list, tuple)):
        h.update(f"[{len(v)}".encode())
        for x in v:
            _feed(h, x)
    else:
        h.update(repr(v).encode())


def dataset_fingerprint(ds: Any) -> str:
    """SHA-256 (20 hex digits) of a loaded dataset's content: ``X``, ``y`` and ``payload``."""
    h = hashlib.sha256()
    for part in (getattr(ds, "X", None), getattr(ds, "y", None), dict(getattr(ds, "payload", None) or {})):
        _feed(h, part)
    return h.hexdigest()[:20]
