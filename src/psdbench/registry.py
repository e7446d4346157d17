"""Entry-point discovery for problems, solvers and datasets.

psdbench registers its own built-ins through the same entry-point groups as third-party plugins
(``psdbench.problems``, ``psdbench.solvers``, ``psdbench.datasets``).  A plugin that fails to
import is reported by name in :attr:`Registry.broken` and skipped; it is never fatal.

Dataset entry points come in two shapes: a name without ``/`` registers a *collection* (an object
with ``names()`` and ``load(name)``), a name ``collection/name`` registers a single dataset (a
callable returning a :class:`~psdbench.api.Dataset`).
"""

from __future__ import annotations

import importlib.metadata as md
from dataclasses import dataclass, field
from typing import Any

from .api import Dataset, DataError, PsdbenchError

GROUPS = {"problems": "psdbench.problems", "solvers": "psdbench.solvers", "datasets": "psdbench.datasets"}


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
    broken: dict[str, str] = field(default_factory=dict)

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

    def load_dataset(self, name: str) -> Dataset:
        if name in self.single_datasets:
            return self.single_datasets[name]()
        self.check_dataset(name)
        prefix, _, rest = name.partition("/")
        return self.collections[prefix].load(rest)


def discover() -> Registry:
    """Load every registered plugin; broken ones are recorded, not raised."""
    reg = Registry()
    for kind, group in GROUPS.items():
        for ep in md.entry_points(group=group):
            try:
                obj = _instantiate(ep.load())
            except Exception as exc:  # a broken plugin must never be fatal
                reg.broken[f"{kind}:{ep.name}"] = f"{type(exc).__name__}: {exc}".splitlines()[0]
                continue
            if kind == "problems":
                reg.problems[ep.name] = obj
            elif kind == "solvers":
                reg.solvers[ep.name] = obj
            elif "/" in ep.name:
                reg.single_datasets[ep.name] = obj
            else:
                reg.collections[ep.name] = obj
    return reg
