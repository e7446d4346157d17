"""Plugins imported when first used: :class:`PluginMap` and :class:`StaticReader`.

:func:`psdbench.registry.discover` reads only the entry points' *names* from the installed
metadata; a plugin module (and the scientific stack it imports) is imported when a cell or a
command needs the plugin's object.  Commands that print only a plugin's docstring and class
attributes (``psdbench list``) read them from the module's source with :func:`static_attrs`
(:class:`StaticReader`) instead, and import the plugin where its source does not state them.
"""

from __future__ import annotations

import ast
import importlib
import importlib.metadata as md
import importlib.util
from collections.abc import Iterator, MutableMapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

#: How deep :func:`static_attrs` follows base classes and imported names before giving up.
_MAX_DEPTH = 6


def instantiate(obj: Any) -> Any:
    """Entry points may name a class (instantiated without arguments) or an instance."""
    return obj() if isinstance(obj, type) else obj


def load_entry_point(ep: md.EntryPoint) -> Any:
    """Load and instantiate one entry point; ``sys.exit`` inside a plugin is a failure, not an exit."""
    try:
        return instantiate(ep.load())
    except SystemExit as exc:
        raise RuntimeError(f"plugin called sys.exit({exc.code!r}) at import") from None


class PluginMap(MutableMapping[str, Any]):
    """The plugins of one entry-point group by name, each imported at its first access.

    Looking a name up (``m[name]``, ``name in m``, ``m.get(name)``) imports that plugin only;
    iterating (``items()``, ``values()``, ``len``) imports them all, as an eager registry did.
    A plugin that fails to import is recorded in ``broken`` (``"<kind>:<name>"`` to a one-line
    reason) and is then absent from the map, never fatal.  :meth:`names` lists every registered
    name without importing anything.

    A name that several distributions register is keyed ``dist:name`` for each of them
    (:mod:`psdbench.registry.qualified`): looked up bare it raises :class:`~psdbench.registry.qualified.AmbiguousName`
    (a ``KeyError``: ``get`` and ``in`` find nothing), never one of them; any key is also reached
    by its qualified name ``DIST:NAME``.

    Parameters
    ----------
    kind : str
        The group's short name (``"solvers"``, ...), the prefix of the ``broken`` keys.
    entry_points : dict of str to EntryPoint
    broken : dict
        Shared with the :class:`~psdbench.registry.Registry`.
    modules : list of str
        Shared list of the modules of loaded plugins (the fork server's preload).
    loader : callable, optional
        Turns an entry point into the plugin object (default :func:`load_entry_point`).
    preload : bool
        Import a plugin's ``preload`` modules with it (what its cells need besides its module), so
        that workers forked from this process start with them; commands that only print leave
        them out.
    dists : dict of str to str, optional
        Key to the (normalized) distribution registering it (:attr:`psdbench.registry.qualified.Indexed.dists`).
    duplicates : dict of str to tuple of str, optional
        Bare names several distributions register, to those distributions.
    """

    def __init__(self, kind: str, entry_points: dict[str, md.EntryPoint], broken: dict[str, str],
                 modules: list[str], loader: Callable[[md.EntryPoint], Any] = load_entry_point,
                 preload: bool = True, dists: dict[str, str] | None = None,
                 duplicates: dict[str, tuple[str, ...]] | None = None) -> None:
        self.kind = kind
        self.entry_points = dict(entry_points)
        self.dists = {k: (dists or {}).get(k, "unknown") for k in self.entry_points}
        self.duplicates = dict(duplicates or {})
        self.broken = broken
        self.modules = modules
        self._loader = loader
        self._preload = preload
        self._loaded: dict[str, Any] = {}

    def names(self) -> list[str]:
        """Every registered name (loaded, not yet loaded or broken), sorted, nothing imported."""
        return sorted({*self.entry_points, *self._loaded})

    def is_loaded(self, name: str) -> bool:
        """Whether plugin ``name`` is imported already."""
        return self.resolve(name) in self._loaded

    def resolve(self, name: str) -> str | None:
        """The key ``name`` (bare or ``DIST:NAME``) stands for, ``None`` if unknown or duplicated."""
        from psdbench.registry.qualified import resolve

        if not isinstance(name, str):
            return None
        return name if name in self._loaded else resolve(name, self.dists, self.duplicates)

    def ambiguity(self, name: str) -> tuple[str, ...]:
        """The distributions registering bare ``name`` when there are several, else ``()``."""
        return self.duplicates.get(name, ()) if isinstance(name, str) and name not in self._loaded else ()

    def _load(self, name: str) -> bool:
        key = self.resolve(name)
        if key is None:
            return False
        if key in self._loaded:
            return True
        name, ep = key, self.entry_points.get(key)
        if ep is None or f"{self.kind}:{name}" in self.broken:
            return False
        try:
            obj = self._loader(ep)
        except Exception as exc:  # a broken plugin must never be fatal
            self.broken[f"{self.kind}:{name}"] = (f"{type(exc).__name__}: {exc}".splitlines() or [""])[0]
            return False
        self._loaded[name] = obj
        if ep.module not in self.modules:
            self.modules.append(ep.module)
        for module in getattr(obj, "preload", ()) if self._preload else ():
            try:
                importlib.import_module(module)
            except Exception:  # the plugin's cells report it; listing the plugin must not fail
                continue
        return True

    def __getitem__(self, name: str) -> Any:
        dists = self.ambiguity(name)
        if dists:
            from psdbench.registry.qualified import ambiguous

            raise ambiguous(self.kind.rstrip("s"), name, dists)
        if not isinstance(name, str) or not self._load(name):
            raise KeyError(name)
        return self._loaded[str(self.resolve(name))]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self._load(name)

    def __setitem__(self, name: str, obj: Any) -> None:
        self._loaded[name] = obj

    def __delitem__(self, name: str) -> None:
        key = self.resolve(name)
        if key is None:
            raise KeyError(name)
        self._loaded.pop(key, None)
        self.entry_points.pop(key, None)

    def __iter__(self) -> Iterator[str]:
        return iter([n for n in self.names() if self._load(n)])

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"PluginMap({self.kind!r}, loaded={sorted(self._loaded)}, registered={self.names()})"


def names_of(mapping: Any) -> list[str]:
    """Registered names of a :class:`PluginMap` without importing, or a plain mapping's keys."""
    return mapping.names() if isinstance(mapping, PluginMap) else sorted(mapping)


# ------------------------------------------------------------------ static reading of plugin source
class _Unknown(Exception):
    """The source does not state the value as a literal: import the plugin instead."""


@dataclass(frozen=True)
class ClassRef:
    """A class named by module and name, found in the source without importing the module."""

    module: str
    name: str

    @classmethod
    def of(cls, obj: type) -> "ClassRef":
        return cls(obj.__module__, obj.__qualname__)


#: Constructors of parameter specs that the static reader evaluates (with literal arguments only).
_PARAM_CONSTRUCTORS = ("number", "choice", "either", "Param")
_BUILTIN_TYPES = {"int": int, "float": float, "str": str, "bool": bool}


class StaticReader:
    """Reads module-level names and class attributes from Python source, importing nothing but
    the parent packages of the modules it reads (to find their files).  Values are literals,
    tuples / lists / dicts of them, ``+`` of strings, parameter specs built by
    :mod:`psdbench.api.params` from literals, names bound to those, and classes (as :class:`ClassRef`).
    Anything else raises ``_Unknown`` (the caller imports the plugin instead)."""

    def __init__(self) -> None:
        self._trees: dict[str, tuple[ast.Module, bool]] = {}
        self._classdefs: dict[ClassRef, ast.ClassDef] = {}

    def tree(self, module: str) -> tuple[ast.Module, bool]:
        """The parsed source of ``module`` and whether it is a package."""
        if module not in self._trees:
            spec = importlib.util.find_spec(module)  # imports the parent packages only
            if spec is None or not spec.origin or not spec.origin.endswith(".py"):
                raise _Unknown(module)
            self._trees[module] = (ast.parse(Path(spec.origin).read_text(encoding="utf-8")),
                                   bool(spec.submodule_search_locations))
        return self._trees[module]

    def classdef(self, ref: ClassRef) -> ast.ClassDef:
        what, value = self.lookup(ref.module, ref.name, 0)
        if what != "class":
            raise _Unknown(ref.name)
        return self._classdefs[value]

    def lookup(self, module: str, name: str, depth: int) -> tuple[str, Any]:
        """``("class", ClassRef)`` or ``("value", value)`` of a module-level name."""
        if depth > _MAX_DEPTH:
            raise _Unknown(name)
        tree, is_package = self.tree(module)
        found: tuple[str, Any] | None = None
        for node in tree.body:  # the last binding at module level wins, as at run time
            if isinstance(node, ast.ClassDef) and node.name == name:
                found = ("class", node)
            elif isinstance(node, (ast.Assign, ast.AnnAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if any(isinstance(t, ast.Name) and t.id == name for t in targets) and node.value is not None:
                    found = ("expr", node.value)
            elif isinstance(node, ast.ImportFrom):
                for alias in node.names:
                    if (alias.asname or alias.name) == name:
                        found = ("import", (_absolute(module, node, is_package), alias.name))
        if found is None:
            if name in _BUILTIN_TYPES:
                return "value", _BUILTIN_TYPES[name]
            raise _Unknown(name)
        what, payload = found
        if what == "import":
            return self.lookup(payload[0], payload[1], depth + 1)
        if what == "expr":
            return "value", self.literal(module, payload, depth + 1)
        ref = ClassRef(module, name)
        self._classdefs[ref] = payload
        return "class", ref

    def literal(self, module: str, expr: ast.expr, depth: int) -> Any:
        """The value of ``expr`` in ``module`` (see the class docstring for what is understood)."""
        if depth > _MAX_DEPTH * 4:
            raise _Unknown("too deep")
        if isinstance(expr, ast.Name):
            return self.lookup(module, expr.id, depth)[1]
        if isinstance(expr, (ast.Tuple, ast.List)):
            items = [self.literal(module, e, depth + 1) for e in expr.elts]
            return tuple(items) if isinstance(expr, ast.Tuple) else items
        if isinstance(expr, ast.Dict) and all(k is not None for k in expr.keys):
            return {self.literal(module, k, depth + 1): self.literal(module, v, depth + 1)
                    for k, v in zip(expr.keys, expr.values)}
        if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
            left, right = self.literal(module, expr.left, depth + 1), self.literal(module, expr.right, depth + 1)
            if isinstance(left, str) and isinstance(right, str):
                return left + right
            raise _Unknown("+")
        if isinstance(expr, ast.Call):
            func = expr.func.attr if isinstance(expr.func, ast.Attribute) else getattr(expr.func, "id", "")
            if func in _PARAM_CONSTRUCTORS and all(k.arg for k in expr.keywords):
                from psdbench.api import params

                args = [self.literal(module, a, depth + 1) for a in expr.args]
                kwargs = {k.arg: self.literal(module, k.value, depth + 1) for k in expr.keywords}
                return getattr(params, func)(*args, **kwargs)
            raise _Unknown(func)
        try:
            return ast.literal_eval(expr)
        except ValueError:
            raise _Unknown(ast.dump(expr)) from None

    def class_attr(self, ref: ClassRef, attr: str, depth: int = 0) -> Any:
        """``attr`` as the class body states it or, through single bases, a base class does."""
        if depth > _MAX_DEPTH:
            raise _Unknown(attr)
        cls = self.classdef(ref)
        if attr == "__doc__":
            return ast.get_docstring(cls)  # not inherited, as at run time
        for node in cls.body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == attr for t in node.targets):
                return self.literal(ref.module, node.value, depth + 1)
            if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id == attr:
                if node.value is None:
                    raise _Unknown(attr)
                return self.literal(ref.module, node.value, depth + 1)
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == attr:
                raise _Unknown(attr)  # a property or method: only the object knows
        bases = [b for b in cls.bases if not (isinstance(b, ast.Name) and b.id in ("object", "Protocol"))]
        if len(bases) > 1 or cls.keywords or cls.decorator_list:
            raise _Unknown(attr)  # multiple inheritance, metaclasses, decorators: import instead
        if not bases:
            raise AttributeError(attr)
        if not isinstance(bases[0], ast.Name):
            raise _Unknown(attr)
        what, base = self.lookup(ref.module, bases[0].id, depth + 1)
        if what != "class":
            raise _Unknown(bases[0].id)
        return self.class_attr(base, attr, depth + 1)

    def entry_point_attrs(self, ep: md.EntryPoint, attrs: tuple[str, ...]) -> dict[str, Any] | None:
        """The class attributes ``attrs`` (``"__doc__"``: the docstring) of the class an entry point
        names, from its module's source; ``None`` where the source does not state them all (the
        entry point names an instance or a function, an attribute comes from a property, a
        decorator, several bases, ...).  An attribute that no class of the chain defines is absent."""
        module, _, attr = ep.value.partition(":")
        if not attr or "." in attr.strip():
            return None
        try:
            what, ref = self.lookup(module.strip(), attr.strip(), 0)
            if what != "class":
                return None
            out: dict[str, Any] = {}
            for a in attrs:
                try:
                    out[a] = self.class_attr(ref, a)
                except AttributeError:
                    continue
            return out
        except Exception:  # _Unknown, or a parent package / source that cannot be read: import instead
            return None


def _absolute(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute module name of a (possibly relative) ``from ... import``."""
    if not node.level:
        return node.module or ""
    parts = module.split(".")
    base = parts if is_package else parts[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join(base + ([node.module] if node.module else []))


def _editable_root(dist: md.Distribution) -> Path | None:
    """The project folder of an editable install (``direct_url.json``), else ``None``."""
    import json
    from urllib.parse import unquote, urlparse

    try:
        info = json.loads(dist.read_text("direct_url.json") or "null")
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or not (info.get("dir_info") or {}).get("editable"):
        return None
    url = urlparse(str(info.get("url", "")))
    return Path(unquote(url.path)) if url.scheme == "file" else None


def _pyproject_entry_points(root: Path, group: str) -> set[str]:
    import tomllib

    try:
        spec = tomllib.loads((root / "pyproject.toml").read_text())
    except (OSError, ValueError):
        return set()
    table = ((spec.get("project") or {}).get("entry-points") or {}).get(group) or {}
    return {str(k) for k in table} if isinstance(table, dict) else set()


def unregistered_hint(group: str, name: str) -> str:
    """Why an unknown plugin name may be unknown: ``"; ..."`` when an installed distribution declares
    ``name`` in ``group`` but this environment has not registered it, else ``""``.

    Two cases, read only when a name is unknown: an editable install whose project's
    ``pyproject.toml`` declares the name (an entry point added without reinstalling), and a
    distribution's metadata on disk (``entry_points.txt`` of another copy, such as the
    ``*.egg-info`` folder of a source tree on ``sys.path``) that :mod:`importlib.metadata`
    shadows with the copy it registers.
    """
    registered = {ep.name for ep in md.entry_points(group=group)}
    if name in registered:
        return ""
    for dist in md.distributions():
        dname = dist.metadata["Name"] or "?"
        root = _editable_root(dist)
        if root is not None and name in _pyproject_entry_points(root, group):
            return (f"; {root / 'pyproject.toml'} declares it (distribution {dname!r}) but this environment has not "
                    f"registered it: reinstall with `pip install -e {root}`")
        if any(ep.group == group and ep.name == name for ep in dist.entry_points):
            where = getattr(dist, "_path", None)
            return (f"; {dname!r} declares it in {where or 'its metadata'}/entry_points.txt, but this environment "
                    f"registers another copy of {dname!r} without it: reinstall it (`pip install -e PROJECT` for a "
                    "source checkout)")
    return ""
