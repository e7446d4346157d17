"""A grid's datasets: resolved, loaded once, checked and fingerprinted while the grid is expanded.

A dataset's fingerprint (a hash of its content) is part of its instances' keys, so changed data
re-runs their cells.  A collection with a ``stamp`` hook (:func:`psdbench.api.dataset_stamp`) lets
a run skip the load: the store keeps each stamped dataset's ``[stamp, fingerprint]`` and the
problems' ``expand_params`` results on it (:meth:`~psdbench.harness.store.db.Store.remember`), and
a later expansion with the same stamp and collection code reuses them.
"""

from __future__ import annotations

import json
import warnings
from typing import Any, Mapping

from psdbench.api import DataError, PsdbenchError, expand_params
from psdbench.registry import Registry
from psdbench.harness.grid.inputs import check_dataset_content
from psdbench.harness.store.keys import code_hash, dataset_fingerprint, stable_hash

__all__ = ["GridDatasets"]


def _json_exact(value: Any) -> bool:
    """Whether ``value`` comes back from JSON with the same :func:`stable_hash` (no tuple, NumPy scalar, ...)."""
    try:
        return stable_hash(json.loads(json.dumps(value))) == stable_hash(value)
    except (TypeError, ValueError):
        return False


class GridDatasets:
    """Resolve, load once and check every dataset of the grid (any failure is a one-line DataError).

    ``known``: ``name -> [stamp, fingerprint]`` from the store (:attr:`Grid.dataset_fingerprints`
    of an earlier run).  A dataset whose stamp (its collection's ``stamp`` hook and the
    collection's code) equals the known one is not loaded: its content was checked and hashed by
    that run.  Any other dataset is loaded, checked and hashed here.
    """

    def __init__(self, reg: Registry, known: Mapping[str, Any] | None = None,
                 expansions: Mapping[str, Any] | None = None) -> None:
        self.reg = reg
        self.cache: dict[str, Any] = {}
        self.known, self.known_expansions = dict(known or {}), dict(expansions or {})
        self.stamped: dict[str, list[str]] = {}  # what this grid's datasets give the store
        self.expansions: dict[str, list[dict[str, Any]]] = {}

    def expand(self, problem: Any, pname: str, pcode: str, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """``expand_params`` of ``problem`` on dataset ``name``; on a stamped dataset, the stored
        result for the same problem code, dataset stamp and fingerprint and parameters (the hook is a
        function of these), else computed and kept for the store."""
        stamp = self._stamp(name)
        if stamp is None:
            return expand_params(problem, lambda: self.load(name), params)
        key = stable_hash(["expansion", pname, pcode, stamp, self.fingerprint(name), params])
        out = self.known_expansions.get(key)
        if not isinstance(out, list) or not all(isinstance(e, dict) for e in out):
            out = expand_params(problem, lambda: self.load(name), params)
        if _json_exact(out):  # kept only if the store gives back what keys hash the same
            self.expansions[key] = out
        return out

    def _stamp(self, name: str) -> str | None:
        key = "\0stamp:" + name
        if key not in self.cache:
            try:
                found = self.reg.dataset_stamp(name)
            except Exception:  # a failing hook only costs the shortcut: the dataset is loaded
                found = None
            self.cache[key] = None if found is None else stable_hash([found[0], code_hash(found[1])])
        return self.cache[key]

    def _known(self, name: str) -> str | None:
        """The stored fingerprint of ``name`` if its stamp is unchanged, else ``None``."""
        stamp, entry = self._stamp(name), self.known.get(name)
        if stamp is None or not isinstance(entry, list) or len(entry) != 2 or entry[0] != stamp:
            return None
        return str(entry[1])

    def check(self, name: Any, where: str) -> None:
        if not isinstance(name, str):
            raise PsdbenchError(f"{where}: dataset names are strings, not {name!r}")
        try:
            self.reg.check_dataset(name)
        except PsdbenchError:
            raise
        except (Exception, SystemExit) as exc:
            raise PsdbenchError(f"{where}: dataset {name}: plugin check failed: {type(exc).__name__}: "
                                f"{str(exc).splitlines()[0] if str(exc) else ''}") from None
        if self._known(name) is None:
            self.load(name)

    def match(self, names: list[Any], where: str) -> list[Any]:
        """``names`` with each ``collection/<glob>`` replaced by the names it matches (in order, once)."""
        out: list[Any] = []
        for name in names:
            if not isinstance(name, str):
                out.append(name)  # check() gives the one-line error
                continue
            try:
                matched = self.reg.match_datasets(name)
            except PsdbenchError as exc:
                raise DataError(f"{where}: {str(exc).splitlines()[0]}") from None
            except (Exception, SystemExit) as exc:  # a collection whose names() fails
                raise DataError(f"{where}: dataset pattern {name}: cannot list the collection "
                                f"({type(exc).__name__}: {(str(exc).splitlines() or [''])[0]})") from None
            out.extend(m for m in matched if m not in out)
        return out

    def load(self, name: str) -> Any:
        if name not in self.cache:
            # a loader's warnings (e.g. numpy's "input contained no data") are shown only if it succeeds
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                try:
                    ds = self.reg.load_dataset(name)
                except PsdbenchError as exc:
                    msg = (str(exc).splitlines() or [""])[0]
                    raise DataError(msg if msg.startswith(f"dataset {name}") else f"dataset {name}: {msg}") from None
                except (Exception, SystemExit) as exc:
                    msg = (str(exc).splitlines() or [""])[0]
                    raise DataError(f"dataset {name}: cannot be loaded ({type(exc).__name__}: {msg})") from None
            for w in caught:
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
            check_dataset_content(ds, name)
            self.cache[name] = ds
        return self.cache[name]

    def fingerprint(self, name: str) -> str:
        """:func:`dataset_fingerprint` of ``name``, computed once per grid."""
        key = "\0fingerprint:" + name
        if key not in self.cache:
            known = self._known(name)
            self.cache[key] = known if known is not None else dataset_fingerprint(self.load(name))
            stamp = self._stamp(name)
            if stamp is not None:
                self.stamped[name] = [stamp, self.cache[key]]
        return self.cache[key]
