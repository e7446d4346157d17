"""Entry-point discovery for problems, solvers, datasets, report sections and suites.

psdbench registers its own built-ins through the same entry-point groups as third-party plugins
(``psdbench.problems``, ``psdbench.solvers``, ``psdbench.datasets``, ``psdbench.reports``,
``psdbench.suites``).  A plugin that fails to import (raises, or calls ``sys.exit``) is reported
by name in :attr:`Registry.broken` and skipped; it is never fatal.

Discovery reads only the entry points' names from the installed metadata: each plugin is imported
when a cell or a command first needs its object (:class:`psdbench.registry.plugins.PluginMap`), so printing
names costs no import of the plugins or the scientific stack.

Dataset entry points come in two shapes: a name without ``/`` registers a *collection* (an object
with ``names()`` and ``load(name)``), a name ``collection/name`` registers a single dataset (a
callable returning a :class:`~psdbench.api.Dataset`).

A name that two distributions register in one group (a suite: a file stem two distributions'
suite packages hold) is never resolved silently: looked up bare it is a one-line
:class:`~psdbench.registry.qualified.AmbiguousName` naming both, and each is reached as ``DIST:NAME``
(:mod:`psdbench.registry.qualified`; :meth:`Registry.duplicates` lists them for ``psdbench list``).
"""

from __future__ import annotations

import importlib.metadata as md
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from psdbench.api import Dataset, DataError, PsdbenchError, dataset_stamp
from psdbench.registry.plugins import PluginMap, names_of, unregistered_hint
from psdbench.registry.qualified import ambiguous, dist_of, index, normal, resolve, split

GROUPS = {"problems": "psdbench.problems", "solvers": "psdbench.solvers", "datasets": "psdbench.datasets",
          "reports": "psdbench.reports", "suites": "psdbench.suites"}
#: Libraries every cell's numbers depend on, recorded once per run besides each solver's own.
CORE_LIBRARIES = ("numpy", "scipy")


@dataclass
class Registry:
    """Everything discovered through entry points.

    Attributes
    ----------
    problems, solvers : mapping
        Name to instance (a :class:`~psdbench.registry.plugins.PluginMap` from :func:`discover`: a plugin
        is imported at its first lookup).
    collections : mapping
        Dataset collection prefix to collection object.
    single_datasets : mapping
        Full dataset name to loader callable.
    reports : mapping
        Report section name to section object.
    suites : dict
        Suite name to its TOML file (``dist:name`` for a stem several distributions ship).
    suite_duplicates : dict
        Suite stem several distributions ship to those distributions.
    broken : dict
        ``"group:name"`` to the one-line reason the plugin could not be loaded (filled as plugins
        are imported).
    modules : list of str
        The modules of the plugins imported so far.
    """

    problems: dict[str, Any] = field(default_factory=dict)
    solvers: dict[str, Any] = field(default_factory=dict)
    collections: dict[str, Any] = field(default_factory=dict)
    single_datasets: dict[str, Any] = field(default_factory=dict)
    reports: dict[str, Any] = field(default_factory=dict)
    suites: dict[str, Any] = field(default_factory=dict)
    suite_duplicates: dict[str, tuple[str, ...]] = field(default_factory=dict)
    suite_dists: dict[str, str] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)
    modules: list[str] = field(default_factory=list)

    def _plugin(self, kind: str, name: str) -> Any:
        plugins, what = getattr(self, kind), kind.rstrip("s")
        dists = plugins.ambiguity(name) if isinstance(plugins, PluginMap) else ()
        if dists:
            raise ambiguous(what, name, dists)
        if name not in plugins:
            key = (plugins.resolve(name) if isinstance(plugins, PluginMap) else None) or name
            why = self.broken.get(f"{kind}:{key}")
            hint = f"; plugin failed to load: {why}" if why else unregistered_hint(GROUPS[kind], split(name)[1])
            raise PsdbenchError(f"unknown {what} {name!r} (known: {', '.join(names_of(plugins))}){hint}")
        return plugins[name]

    def problem(self, name: str) -> Any:
        """The problem ``name`` (bare, or ``DIST:NAME``); a one-line error if unknown, broken or
        registered by several distributions."""
        return self._plugin("problems", name)

    def solver(self, name: str) -> Any:
        """The solver ``name``, as :meth:`problem`."""
        return self._plugin("solvers", name)

    def duplicates(self) -> dict[str, dict[str, tuple[str, ...]]]:
        """Per group (``"problems"``, ..., ``"datasets"`` for collections and single datasets,
        ``"suites"``), each name several distributions register to those distributions."""
        out: dict[str, dict[str, tuple[str, ...]]] = {}
        for kind, maps in (("problems", [self.problems]), ("solvers", [self.solvers]),
                           ("datasets", [self.collections, self.single_datasets]), ("reports", [self.reports])):
            found = {n: d for m in maps if isinstance(m, PluginMap) for n, d in m.duplicates.items()}
            if found:
                out[kind] = found
        if self.suite_duplicates:
            out["suites"] = dict(self.suite_duplicates)
        return out

    def resolve_dataset(self, name: str) -> tuple[str, str, str]:
        """``("single", key, "")``, ``("collection", key, rest)`` or ``("unknown", prefix, rest)``
        for dataset ``name`` (bare or ``DIST:collection/name``); a duplicated single dataset or
        collection raises :class:`~psdbench.registry.qualified.AmbiguousName`."""
        singles, colls = self.single_datasets, self.collections
        if isinstance(singles, PluginMap) and singles.ambiguity(name):
            raise ambiguous("dataset", name, singles.ambiguity(name))
        key = singles.resolve(name) if isinstance(singles, PluginMap) else name
        if key is not None and key in singles:
            return "single", key, ""
        dist, bare = split(name)
        prefix, _, rest = bare.partition("/")
        qualified = prefix if dist is None else f"{dist}:{prefix}"
        if isinstance(colls, PluginMap) and colls.ambiguity(qualified):
            raise ambiguous("dataset collection", prefix, colls.ambiguity(qualified))
        ckey = colls.resolve(qualified) if isinstance(colls, PluginMap) else qualified
        if not rest or ckey is None or ckey not in colls:
            return "unknown", prefix, rest
        return "collection", ckey, rest

    def dataset_names(self) -> list[str]:
        names = list(self.single_datasets)
        for prefix, coll in self.collections.items():
            try:
                names.extend(f"{prefix}/{n}" for n in coll.names())
            except DataError:
                continue
        return sorted(names)

    def match_datasets(self, pattern: str) -> list[str]:
        """The dataset names a pattern stands for: ``collection/<glob>`` (``*`` and ``?`` after the
        ``/``) is every name of that collection it matches, in order; any other name is itself.

        Raises a one-line :class:`DataError` when a pattern matches nothing (with the names found).
        """
        rest = split(pattern)[1].partition("/")[2]
        if not any(ch in rest for ch in "*?"):
            return [pattern]
        shape, key, rest = self.resolve_dataset(pattern)
        if shape != "collection":
            return [pattern]
        import fnmatch

        head = pattern[: len(pattern) - len(rest)]  # "collection/" as written, with its DIST: if any
        names = self.collections[key].names()
        found = [f"{head}{n}" for n in names if fnmatch.fnmatchcase(n, rest)]
        if not found:
            some = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") if names else "none"
            raise DataError(f"dataset pattern {pattern!r} matches no dataset of {head[:-1]} (found: {some})")
        return found

    def check_dataset(self, name: str) -> None:
        """Raise a one-line :class:`DataError` if ``name`` cannot be resolved (without loading it)."""
        shape, key, rest = self.resolve_dataset(name)
        if shape == "single":
            return
        if shape == "unknown":
            raise DataError(
                f"unknown dataset {name!r}: names are <collection>/<name> with collection one of "
                f"{', '.join(names_of(self.collections))}"
            )
        coll = self.collections[key]
        check = getattr(coll, "check", None)
        if check is not None:
            check(rest)
        elif rest not in coll.names():
            raise DataError(f"unknown dataset {name!r}")

    # ---- suites: every *.toml of every package registered in psdbench.suites
    def suite_names(self) -> list[str]:
        return sorted(self.suites)

    def suite_key(self, name: str) -> str | None:
        """The key of suite ``name`` (bare or ``DIST:NAME``), ``None`` if unknown; a stem several
        distributions ship raises :class:`~psdbench.registry.qualified.AmbiguousName`."""
        if name in self.suite_duplicates:
            raise ambiguous("suite", name, self.suite_duplicates[name])
        dists = {k: self.suite_dists.get(k, "unknown") for k in self.suites}
        return resolve(name, dists, self.suite_duplicates)

    def read_suite(self, name: str) -> dict[str, Any]:
        """The parsed TOML of suite ``name`` (one-line error if unknown, duplicated or malformed)."""
        key = self.suite_key(name)
        if key is None:
            raise PsdbenchError(f"unknown suite {name!r} (known: {', '.join(self.suite_names())})")
        try:
            return tomllib.loads(self.suites[key].read_text())
        except tomllib.TOMLDecodeError as exc:
            raise PsdbenchError(f"suite {name}: malformed TOML: {exc}") from None

    def preload_modules(self) -> list[str]:
        """Modules the fork server imports once: every plugin's module and its ``preload`` (imports
        every problem, solver and dataset plugin)."""
        objs = [*self.problems.values(), *self.solvers.values(), *self.collections.values()]
        mods: list[str] = [m for m in self.modules]
        for obj in objs:
            for m in getattr(obj, "preload", ()):
                if m not in mods:
                    mods.append(m)
        return mods

    def library_names(self) -> list[str]:
        """Distribution names whose versions a run records: the core ones and every solver's."""
        names = list(CORE_LIBRARIES)
        for s in self.solvers.values():
            try:
                names += [n for n in s.library_versions() if n not in names]
            except Exception:  # a solver whose version lookup fails must not stop the run
                continue
        return names

    def dataset_stamp(self, name: str) -> tuple[str, Any] | None:
        """``(stamp, collection)`` of a collection dataset whose collection has a ``stamp`` hook
        (:func:`psdbench.api.dataset_stamp`), else ``None`` (a single dataset, no hook)."""
        shape, key, rest = self.resolve_dataset(name)
        if shape != "collection":
            return None
        coll = self.collections[key]
        stamp = dataset_stamp(coll, rest)
        return None if stamp is None else (stamp, coll)

    def load_dataset(self, name: str) -> Dataset:
        self.check_dataset(name)
        shape, key, rest = self.resolve_dataset(name)
        if shape == "single":
            return self.single_datasets[key]()
        return self.collections[key].load(rest)


def _suite_files(package: Any, prefix: str) -> dict[str, Any]:
    name = getattr(package, "__name__", None)
    if not isinstance(name, str):
        raise TypeError(f"{prefix}: a suites entry point must name a package, not {type(package).__name__}")
    return {p.name[: -len(".toml")]: p for p in resources.files(name).iterdir() if p.name.endswith(".toml")}


def discover(preload: bool = True, only: str | None = None) -> Registry:
    """Find every registered plugin by name; each is imported at its first use (broken ones are
    then recorded in :attr:`Registry.broken`, not raised).  Suites are found at once: their
    packages hold only TOML files.

    Parameters
    ----------
    preload : bool
        Import a plugin's ``preload`` modules when it is imported (for a process that forks
        workers); ``False`` for commands that only describe plugins.
    only : str, optional
        Keep only the entry points of this distribution (``"psdbench"``: the built-ins, whatever
        plugins the environment holds; the family pages are generated from them).
    """
    seen: dict[Any, str] = {}
    eps = {kind: [(dist_of(ep, seen), ep.name, ep) for ep in md.entry_points(group=group)
                  if only is None or dist_of(ep, seen) == normal(only)] for kind, group in GROUPS.items()}
    broken: dict[str, str] = {}
    modules: list[str] = []

    def group(kind: str, items: list[tuple[str, str, md.EntryPoint]], shape: Any = None) -> PluginMap:
        found = index(items)  # a name two distributions register: keyed DIST:NAME for each, never one of them
        keep = [k for k in found.entry_points if shape is None or shape(found.names[k])]
        return PluginMap(kind, {k: found.entry_points[k] for k in keep}, broken, modules, preload=preload,
                         dists=found.dists, duplicates={n: d for n, d in found.duplicates.items()
                                                        if shape is None or shape(n)})

    def collection(name: str) -> bool:
        return "/" not in name

    reg = Registry(problems=group("problems", eps["problems"]), solvers=group("solvers", eps["solvers"]),
                   collections=group("datasets", eps["datasets"], collection),
                   single_datasets=group("datasets", eps["datasets"], lambda n: not collection(n)),
                   reports=group("reports", eps["reports"]), broken=broken, modules=modules)
    files: list[tuple[str, str, Any]] = []
    for dist, name, ep in eps["suites"]:
        try:
            files += [(dist, stem, path) for stem, path in _suite_files(ep.load(), name).items()]
        except Exception as exc:  # a broken plugin must never be fatal
            broken[f"suites:{name}"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    suites = index(files)
    reg.suites.update(suites.entry_points)
    reg.suite_dists.update(suites.dists)
    reg.suite_duplicates.update(suites.duplicates)
    return reg
