"""Entry-point discovery for problems, solvers, datasets, report sections and suites.

psdbench registers its own built-ins through the same entry-point groups as third-party plugins
(``psdbench.problems``, ``psdbench.solvers``, ``psdbench.datasets``, ``psdbench.reports``,
``psdbench.suites``).  A plugin that fails to import (raises, or calls ``sys.exit``) is reported
by name in :attr:`Registry.broken` and skipped; it is never fatal.

Discovery reads only the entry points' names from the installed metadata: each plugin is imported
when a cell or a command first needs its object (:class:`psdbench.plugins.PluginMap`), so printing
names costs no import of the plugins or the scientific stack.

Dataset entry points come in two shapes: a name without ``/`` registers a *collection* (an object
with ``names()`` and ``load(name)``), a name ``collection/name`` registers a single dataset (a
callable returning a :class:`~psdbench.api.Dataset`).
"""

from __future__ import annotations

import importlib.metadata as md
import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from .api import Dataset, DataError, PsdbenchError, dataset_stamp
from .plugins import PluginMap, names_of, unregistered_hint

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
        Name to instance (a :class:`~psdbench.plugins.PluginMap` from :func:`discover`: a plugin
        is imported at its first lookup).
    collections : mapping
        Dataset collection prefix to collection object.
    single_datasets : mapping
        Full dataset name to loader callable.
    reports : mapping
        Report section name to section object.
    suites : dict
        Suite name to its TOML file.
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
    broken: dict[str, str] = field(default_factory=dict)
    modules: list[str] = field(default_factory=list)

    def problem(self, name: str) -> Any:
        if name not in self.problems:
            hint = f"; plugin failed to load: {self.broken['problems:' + name]}" if "problems:" + name in self.broken else ""
            hint = hint or unregistered_hint(GROUPS["problems"], name)
            raise PsdbenchError(f"unknown problem {name!r} (known: {', '.join(names_of(self.problems))}){hint}")
        return self.problems[name]

    def solver(self, name: str) -> Any:
        if name not in self.solvers:
            hint = f"; plugin failed to load: {self.broken['solvers:' + name]}" if "solvers:" + name in self.broken else ""
            hint = hint or unregistered_hint(GROUPS["solvers"], name)
            raise PsdbenchError(f"unknown solver {name!r} (known: {', '.join(names_of(self.solvers))}){hint}")
        return self.solvers[name]

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
        prefix, _, rest = pattern.partition("/")
        if not rest or not any(ch in rest for ch in "*?") or prefix not in self.collections:
            return [pattern]
        import fnmatch

        names = self.collections[prefix].names()
        found = [f"{prefix}/{n}" for n in names if fnmatch.fnmatchcase(n, rest)]
        if not found:
            some = ", ".join(names[:8]) + (", ..." if len(names) > 8 else "") if names else "none"
            raise DataError(f"dataset pattern {pattern!r} matches no dataset of {prefix} (found: {some})")
        return found

    def check_dataset(self, name: str) -> None:
        """Raise a one-line :class:`DataError` if ``name`` cannot be resolved (without loading it)."""
        if name in self.single_datasets:
            return
        prefix, _, rest = name.partition("/")
        if not rest or prefix not in self.collections:
            raise DataError(
                f"unknown dataset {name!r}: names are <collection>/<name> with collection one of "
                f"{', '.join(names_of(self.collections))}"
            )
        coll = self.collections[prefix]
        check = getattr(coll, "check", None)
        if check is not None:
            check(rest)
        elif rest not in coll.names():
            raise DataError(f"unknown dataset {name!r}")

    # ---- suites: every *.toml of every package registered in psdbench.suites
    def suite_names(self) -> list[str]:
        return sorted(self.suites)

    def read_suite(self, name: str) -> dict[str, Any]:
        """The parsed TOML of suite ``name`` (one-line error if unknown or malformed)."""
        if name not in self.suites:
            raise PsdbenchError(f"unknown suite {name!r} (known: {', '.join(self.suite_names())})")
        try:
            return tomllib.loads(self.suites[name].read_text())
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
        if name in self.single_datasets:
            return None
        prefix, _, rest = name.partition("/")
        coll = self.collections[prefix]
        stamp = dataset_stamp(coll, rest)
        return None if stamp is None else (stamp, coll)

    def load_dataset(self, name: str) -> Dataset:
        if name in self.single_datasets:
            return self.single_datasets[name]()
        self.check_dataset(name)
        prefix, _, rest = name.partition("/")
        return self.collections[prefix].load(rest)


def _suite_files(package: Any, prefix: str) -> dict[str, Any]:
    name = getattr(package, "__name__", None)
    if not isinstance(name, str):
        raise TypeError(f"{prefix}: a suites entry point must name a package, not {type(package).__name__}")
    return {p.name[: -len(".toml")]: p for p in resources.files(name).iterdir() if p.name.endswith(".toml")}


def _normal(name: str) -> str:
    """A distribution name as packaging compares them (PEP 503)."""
    import re

    return re.sub(r"[-_.]+", "-", name).lower()


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
    eps: dict[str, dict[str, md.EntryPoint]] = {kind: {} for kind in GROUPS}
    for kind, group in GROUPS.items():
        for ep in md.entry_points(group=group):
            if only is not None and (ep.dist is None or _normal(ep.dist.name) != _normal(only)):
                continue
            eps[kind][ep.name] = ep  # a name registered twice: the last one found wins, as before
    broken: dict[str, str] = {}
    modules: list[str] = []

    def group(kind: str, names: dict[str, md.EntryPoint]) -> PluginMap:
        return PluginMap(kind, names, broken, modules, preload=preload)

    datasets = eps["datasets"]
    reg = Registry(problems=group("problems", eps["problems"]), solvers=group("solvers", eps["solvers"]),
                   collections=group("datasets", {n: e for n, e in datasets.items() if "/" not in n}),
                   single_datasets=group("datasets", {n: e for n, e in datasets.items() if "/" in n}),
                   reports=group("reports", eps["reports"]), broken=broken, modules=modules)
    for name, ep in eps["suites"].items():
        try:
            reg.suites.update(_suite_files(ep.load(), name))
        except Exception as exc:  # a broken plugin must never be fatal
            broken[f"suites:{name}"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return reg
