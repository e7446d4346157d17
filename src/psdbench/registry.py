"""Entry-point discovery for problems, solvers, datasets, report sections and suites.

psdbench registers its own built-ins through the same entry-point groups as third-party plugins
(``psdbench.problems``, ``psdbench.solvers``, ``psdbench.datasets``, ``psdbench.reports``,
``psdbench.suites``).  A plugin that fails to import (raises, or calls ``sys.exit``) is reported
by name in :attr:`Registry.broken` and skipped; it is never fatal.

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

from .api import Dataset, DataError, PsdbenchError

GROUPS = {"problems": "psdbench.problems", "solvers": "psdbench.solvers", "datasets": "psdbench.datasets",
          "reports": "psdbench.reports", "suites": "psdbench.suites"}
#: Libraries every cell's numbers depend on, recorded once per run besides each solver's own.
CORE_LIBRARIES = ("numpy", "scipy")


def _instantiate(obj: Any) -> Any:
    """Entry points may name a class (instantiated without arguments) or an instance."""
    return obj() if isinstance(obj, type) else obj


@dataclass
class Registry:
    """Everything discovered through entry points.

    Attributes
    ----------
    problems, solvers : dict
        Name to instance.
    collections : dict
        Dataset collection prefix to collection object.
    single_datasets : dict
        Full dataset name to loader callable.
    broken : dict
        ``"group:name"`` to the one-line reason the plugin could not be loaded.
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
            raise PsdbenchError(f"unknown problem {name!r} (known: {', '.join(sorted(self.problems))})")
        return self.problems[name]

    def solver(self, name: str) -> Any:
        if name not in self.solvers:
            hint = f"; plugin failed to load: {self.broken['solvers:' + name]}" if "solvers:" + name in self.broken else ""
            raise PsdbenchError(f"unknown solver {name!r} (known: {', '.join(sorted(self.solvers))}){hint}")
        return self.solvers[name]

    def dataset_names(self) -> list[str]:
        names = list(self.single_datasets)
        for prefix, coll in self.collections.items():
            try:
                names.extend(f"{prefix}/{n}" for n in coll.names())
            except DataError:
                continue
        return sorted(names)

    def check_dataset(self, name: str) -> None:
        """Raise a one-line :class:`DataError` if ``name`` cannot be resolved (without loading it)."""
        if name in self.single_datasets:
            return
        prefix, _, rest = name.partition("/")
        if not rest or prefix not in self.collections:
            raise DataError(
                f"unknown dataset {name!r}: names are <collection>/<name> with collection one of "
                f"{', '.join(sorted(self.collections))}"
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
        """Modules the fork server imports once: every loaded plugin's module and its ``preload``."""
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

    def load_dataset(self, name: str) -> Dataset:
        if name in self.single_datasets:
            return self.single_datasets[name]()
        self.check_dataset(name)
        prefix, _, rest = name.partition("/")
        return self.collections[prefix].load(rest)


def _load(ep: md.EntryPoint) -> Any:
    """Load and instantiate one entry point; ``sys.exit`` inside a plugin is a failure, not an exit."""
    try:
        return _instantiate(ep.load())
    except SystemExit as exc:
        raise RuntimeError(f"plugin called sys.exit({exc.code!r}) at import") from None


def _suite_files(package: Any, prefix: str) -> dict[str, Any]:
    name = getattr(package, "__name__", None)
    if not isinstance(name, str):
        raise TypeError(f"{prefix}: a suites entry point must name a package, not {type(package).__name__}")
    return {p.name[: -len(".toml")]: p for p in resources.files(name).iterdir() if p.name.endswith(".toml")}


def discover() -> Registry:
    """Load every registered plugin; broken ones are recorded, not raised."""
    reg = Registry()
    for kind, group in GROUPS.items():
        for ep in md.entry_points(group=group):
            try:
                obj = _load(ep) if kind != "suites" else ep.load()
                if kind == "suites":
                    reg.suites.update(_suite_files(obj, ep.name))
            except Exception as exc:  # a broken plugin must never be fatal
                reg.broken[f"{kind}:{ep.name}"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
                continue
            if ep.module not in reg.modules:
                reg.modules.append(ep.module)
            if kind == "problems":
                reg.problems[ep.name] = obj
            elif kind == "solvers":
                reg.solvers[ep.name] = obj
            elif kind == "reports":
                reg.reports[ep.name] = obj
            elif kind == "suites":
                continue
            elif "/" in ep.name:
                reg.single_datasets[ep.name] = obj
            else:
                reg.collections[ep.name] = obj
    return reg
