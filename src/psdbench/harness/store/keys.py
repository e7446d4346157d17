"""What identifies an instance and a cell: the hashes behind ``instance_key``, ``cell_key`` and ``cell_id``.

An instance key hashes the problem, dataset name, instance parameters, seed, psdbench's version,
the dataset's content (:func:`dataset_fingerprint`) and the problem's code (:func:`code_hash`),
so a corrected data file or an edited problem gives its instances new keys and resume runs their
cells again; a cell key adds the solver, its parameters, the versions of the libraries it reports
and the solver's code.  A cell id (:func:`cell_id`) hashes only the description (problem,
dataset, parameters, seed, solver): rows of one cell computed by different code share it, which
is how a run tells "re-run because the code changed" and how ``results`` picks the current row.

Code hashes (:func:`code_hash`) are content hashes of module files, cached per process: the
module that defines the object, the packages it sits in (their ``__init__``) and, transitively,
every module of the same top-level package that these import (:func:`module_closure`; imports
found in the source, inside functions too, relative ones resolved), so editing one solver changes
the keys of that solver's cells only, not those of a sibling module it never imports (another
solver, a report section, another family of the same package).  For psdbench's own plugins the
contract, harness and report code are left out (psdbench's version covers them); psdbench's plugin
code (``psdbench.linalg``, ``psdbench.solvers``, ``psdbench.families``) counts wherever it is imported
from.  Only module files count (``*.py``, ``*.pyx``, extension modules): editing a suite or a data
file of a family changes no key.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

from psdbench.system.version import psdbench_version

#: Files that hold code: what :func:`code_hash` reads.
CODE_SUFFIXES = (".py", ".pyx", ".pxd", ".so", ".pyd")
#: psdbench's own plugin code: the only psdbench subpackages a code hash reads (the rest, the contract,
#: harness and report, is covered by psdbench's version).
_PLUGIN_CODE = {"families", "solvers", "linalg", "datasets"}


def stable_hash(obj: Any) -> str:
    """SHA-256 (20 hex digits) of ``obj`` as canonical JSON (sorted keys, ``str`` for the rest)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:20]


def instance_key(problem: str, dataset: str, params: dict[str, Any], seed: int, content: str = "",
                 code: str = "") -> str:
    """Key of one instance; ``content`` is the dataset's :func:`dataset_fingerprint` and ``code`` the
    problem's :func:`code_hash`, so that a changed data file or problem gives its instances (and
    their cells) new keys and resume runs them again."""
    return stable_hash(["instance", problem, dataset, params, seed, psdbench_version()] + ([content] if content else [])
                       + ([{"code": code}] if code else []))


def cell_key(instance: str, solver: str, solver_params: dict[str, Any], versions: Any, code: str = "") -> str:
    """Key of one cell: its instance key, the solver, its parameters, ``versions`` (the solver's
    library versions and effective defaults), psdbench's version and the solver's ``code`` hash."""
    return stable_hash(["cell", instance, solver, solver_params, versions, psdbench_version()]
                       + ([{"code": code}] if code else []))


def cell_id(problem: str, dataset: str, instance_params: Any, seed: Any, solver: str, solver_params: Any) -> str:
    """The code- and version-independent identity of a cell: what it describes, not what computed it.

    JSON text parameters (as a store row holds them) are decoded first, so a row and a grid cell
    of the same description get the same id.
    """
    def plain(v: Any) -> Any:
        return json.loads(v) if isinstance(v, str) else (v or {})

    return stable_hash(["cell-id", problem, dataset, plain(instance_params), int(seed), solver, plain(solver_params)])


def _top_folder(top: str) -> Path | None:
    """The folder holding top-level package ``top`` (``site-packages``, an editable install's ``src``)."""
    mod = sys.modules.get(top)
    if mod is None:
        try:
            mod = importlib.import_module(top)
        except Exception:  # an object of no importable module: nothing to hash
            return None
    file = getattr(mod, "__file__", None)
    if file:
        path = Path(file).resolve()
        return path.parent.parent if path.name.startswith("__init__.") else path.parent
    paths = list(getattr(mod, "__path__", []))  # a namespace package: its first folder
    return Path(paths[0]).resolve().parent if paths else None


@functools.lru_cache(maxsize=None)
def _listing(folder: Path) -> frozenset[str]:
    """The names in ``folder`` (empty if it is none), once per process."""
    try:
        return frozenset(os.listdir(folder))
    except OSError:
        return frozenset()


@functools.lru_cache(maxsize=None)
def module_file(module: str) -> Path | None:
    """The file of ``module`` (``a/b.py``, ``a/b/__init__.py`` or an extension ``a/b.*.so``), found
    without importing it; ``None`` if it is none of these (a name imported from a module, a built-in)."""
    parts = module.split(".")
    base = _top_folder(parts[0])
    if base is None:
        return None
    folder, name = base.joinpath(*parts[:-1]), parts[-1]
    names = _listing(folder)
    if f"{name}.py" in names:
        return folder / f"{name}.py"
    if name in names and "__init__.py" in _listing(folder / name):
        return folder / name / "__init__.py"
    ext = sorted(n for n in names if n.startswith(name + ".") and Path(n).suffix in CODE_SUFFIXES)
    return folder / ext[0] if ext else None


def _followed(module: str, own: str) -> bool:
    """Whether an imported module counts in the code hash of an object of top-level package ``own``:
    a module of the same top-level package, but of psdbench only its plugin code (:data:`_PLUGIN_CODE`:
    psdbench's version covers the rest), which counts for other packages' objects too."""
    parts = module.split(".")
    if parts[0] == "psdbench":
        return len(parts) > 1 and parts[1] in _PLUGIN_CODE
    return parts[0] == own


#: ``import a.b, c`` / ``from .a import b, (c, d)`` / ``import_module("a.b")``: a regular-expression scan
#: (a tenth of ``ast``'s cost); a match inside a string only adds a module that then counts too.
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+(\.*[\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^#\n]*)|import[ \t]+([\w., \t]+))"
                     r"|import_module\(\s*[\"']([\w.]+)[\"']", re.M)


@functools.lru_cache(maxsize=None)
def _imports(path: Path, module: str) -> tuple[str, ...]:
    """The modules the file ``path`` of ``module`` imports (anywhere in it, relative imports resolved;
    for ``from a import b`` both ``a`` and ``a.b``, which is a module or a name of ``a``)."""
    if path.suffix != ".py":
        return ()
    text = _read(path).decode("utf-8", "replace")
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: list[str] = []
    for base, names, plain, dynamic in _IMPORT.findall(text):
        if plain or dynamic:
            out += [w.split()[0] for w in (plain or dynamic).split(",") if w.strip()]  # `import a.b as c`
            continue
        dots = len(base) - len(base.lstrip("."))
        if dots:
            up = package.split(".")
            rest = base[dots:]
            base = ".".join(up[:len(up) - dots + 1] + ([rest] if rest else []))
        out.append(base)
        out += [f"{base}.{w.split()[0]}" for w in names.strip("()").replace("\\", " ").split(",")
                if w.strip() and w.split()[0] != "*"]
    return tuple(dict.fromkeys(m for m in out if m and not m.endswith(".")))


def module_closure(module: str) -> dict[str, Path]:
    """The modules whose code an object of ``module`` runs: the module, the packages it sits in and,
    transitively, the modules of its own top-level package (and psdbench's plugin code) they import.

    Returns ``{module name: file}``, sorted by name.  A sibling module nothing here imports (another
    solver, a report section, another family) is not in it.
    """
    own = module.split(".")[0]
    seen: dict[str, Path] = {}
    todo = [module]
    while todo:
        name = todo.pop()
        if name in seen or not (name == module or _followed(name, own)):
            continue
        path = module_file(name)
        if path is None:
            continue
        seen[name] = path
        parts = name.split(".")  # importing a.b.c runs a/__init__ and a/b/__init__ first
        todo += [".".join(parts[:i]) for i in range(1, len(parts))]
        todo += list(_imports(path, name))
    return dict(sorted(seen.items()))


@functools.lru_cache(maxsize=64)
def _read(path: Path) -> bytes:
    return path.read_bytes()


@functools.lru_cache(maxsize=None)
def _file_hash(path: Path) -> str:
    return hashlib.sha256(_read(path)).hexdigest()


@functools.lru_cache(maxsize=None)
def _module_code(module: str) -> str:
    closure = module_closure(module)
    return stable_hash(sorted((name, _file_hash(path)) for name, path in closure.items())) if closure else ""


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
