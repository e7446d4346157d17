"""What a long-lived worker keeps between cells: the registry, datasets and built instances.

An instance is built once per worker and shared by the solver cells of that instance that the
worker runs in turn (the runner sends an instance's cells to one worker, one after another).
Shared objects are made read-only first (:func:`freeze`): every numpy array reachable from the
instance (its attributes, containers in them, the index arrays of scipy sparse matrices) and the
dataset's arrays get ``writeable = False``, so a solver that writes into them gets
``ValueError: assignment destination is read-only`` (its cell is ``error``), never another cell's
corrupted data.  The same is done to instances that are not shared, so a cell's result does not
depend on whether its instance was cached.
"""

from __future__ import annotations

import dataclasses
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

#: Instances and datasets kept per worker (an instance's cells arrive one after another).
MAX_INSTANCES = 2
MAX_DATASETS = 8


def freeze(obj: Any, depth: int = 0, seen: set[int] | None = None) -> Any:
    """Make the numpy arrays reachable from ``obj`` read-only; return ``obj``.

    Follows the object's own attributes, dataclass fields, dicts, lists and tuples (three levels
    deep) and the ``data`` / ``indices`` / ``indptr`` / ``row`` / ``col`` arrays of scipy sparse
    matrices.  Objects of other libraries (cvxpy problems, estimators) are not entered.
    """
    seen = set() if seen is None else seen
    if id(obj) in seen or depth > 3:
        return obj
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        obj.flags.writeable = False
        return obj
    mod = type(obj).__module__ or ""
    if mod.startswith("scipy.sparse"):
        for name in ("data", "indices", "indptr", "row", "col", "offsets"):
            arr = getattr(obj, name, None)
            if isinstance(arr, np.ndarray):
                arr.flags.writeable = False
        return obj
    if isinstance(obj, dict):
        for v in obj.values():
            freeze(v, depth + 1, seen)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            freeze(v, depth + 1, seen)
    elif dataclasses.is_dataclass(obj) or (depth == 0 and hasattr(obj, "__dict__")):
        for v in vars(obj).values() if hasattr(obj, "__dict__") else ():
            freeze(v, depth + 1, seen)
    return obj


class WorkerCache:
    """Registry, datasets and instances of one worker process (least recently used dropped first), and
    the solvers it has warmed up."""

    def __init__(self) -> None:
        self._registry: Any = None
        self._datasets: OrderedDict[str, Any] = OrderedDict()
        self._instances: OrderedDict[str, Any] = OrderedDict()
        self._warmed: set[str] = set()

    def warmed(self, solver: str) -> bool:
        """Whether ``solver`` has warmed up in this worker (:func:`psdbench.api.warm_up`)."""
        return solver in self._warmed

    def mark_warmed(self, solver: str) -> None:
        """Record that ``solver`` warmed up here (after its warm-up succeeded)."""
        self._warmed.add(solver)

    def registry(self) -> Any:
        """The plugin registry, discovered once per worker."""
        if self._registry is None:
            from psdbench.registry import discover

            self._registry = discover()
        return self._registry

    @staticmethod
    def _get(store: OrderedDict[str, Any], key: str, make: Callable[[], Any], size: int) -> Any:
        if key in store:
            store.move_to_end(key)
            return store[key]
        value = make()
        store[key] = value
        while len(store) > size:
            store.popitem(last=False)
        return value

    def dataset(self, name: str, given: Any = None) -> Any:
        """The dataset ``name``, loaded once (or ``given``: shipped by the client) and made read-only."""
        load = (lambda: given) if given is not None else (lambda: self.registry().load_dataset(name))
        return self._get(self._datasets, name, lambda: freeze(load()), MAX_DATASETS)

    def instance(self, key: str, build: Callable[[], Any]) -> Any:
        """The instance with key ``key`` (``build()`` on a miss), made read-only."""
        return self._get(self._instances, key, lambda: freeze(build()), MAX_INSTANCES)
