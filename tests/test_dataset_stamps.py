"""A stamped dataset (its collection's ``stamp`` hook) is loaded by the first run only: the store
keeps its fingerprint and the problems' parameter expansions under the stamp, and a later
expansion with the same stamp gives the same cells without loading it; a changed stamp loads it."""

from __future__ import annotations

import pytest

from psdbench.api import DataError
from psdbench.datasets.sklearn_sets import SklearnCollection
from psdbench.harness.grid.expand import expand
from psdbench.harness.store.db import DATASETS_META, EXPANSIONS_META, Store, read_meta
from psdbench.registry import discover

SPEC = {
    "run": {"seeds": [0, 1], "reference": False},
    "problems": [
        {"name": "graph-classification", "datasets": ["sklearn/breast-cancer"],
         "params": {"n": [30], "graph": ["knn"], "k": [5]}},
        # fold = "all" is expanded per dataset by the problem (it reads the labels)
        {"name": "metric/mcml", "datasets": ["sklearn/breast-cancer"],
         "params": {"protocol": ["objective"], "fold": ["all"], "max_folds": [3]}},
    ],
    "solvers": [{"name": "gdpa-lp"}, {"name": "sgml"}],
}


def _keys(grid):
    return sorted(c.cell_key for c in grid.cells)


def _refuse(self, name):
    raise AssertionError(f"sklearn/{name} was loaded")


def test_same_stamp_gives_the_same_cells_without_loading(monkeypatch, tmp_path):
    first = expand(SPEC, "g", discover(preload=False))
    assert set(first.dataset_fingerprints) == {"sklearn/breast-cancer"}
    assert len(first.param_expansions) == 2  # one per (problem, dataset, parameters)
    assert len({c.instance_key for c in first.cells if c.problem == "metric/mcml"}) == 3 * 2  # 3 folds x 2 seeds

    db = tmp_path / "s.sqlite"  # the store keeps them, and gives them back read-only
    store = Store(db)
    store.remember(DATASETS_META, first.dataset_fingerprints)
    store.remember(EXPANSIONS_META, first.param_expansions)
    store.close()
    known = (read_meta(db, DATASETS_META), read_meta(db, EXPANSIONS_META))
    assert known == (first.dataset_fingerprints, first.param_expansions)

    monkeypatch.setattr(SklearnCollection, "load", _refuse)
    again = expand(SPEC, "g", discover(preload=False), known=known)
    assert _keys(again) == _keys(first)
    with pytest.raises(DataError, match="was loaded"):  # without what the store kept, it loads
        expand(SPEC, "g", discover(preload=False))


def test_a_changed_stamp_or_an_unknown_store_loads_the_dataset(monkeypatch, tmp_path):
    first = expand(SPEC, "g", discover(preload=False))
    known = (first.dataset_fingerprints, first.param_expansions)
    monkeypatch.setattr(SklearnCollection, "stamp", lambda self, name: "scikit-learn 0.0 (another install)")
    loads = []
    real = SklearnCollection.load
    monkeypatch.setattr(SklearnCollection, "load", lambda self, name: loads.append(name) or real(self, name))
    again = expand(SPEC, "g", discover(preload=False), known=known)
    assert loads == ["breast-cancer"]  # loaded once, for the check, the fingerprint and the expansion
    assert _keys(again) == _keys(first)  # same data: same cells
    assert again.dataset_fingerprints["sklearn/breast-cancer"][0] != first.dataset_fingerprints["sklearn/breast-cancer"][0]
    assert read_meta(tmp_path / "absent.sqlite", DATASETS_META) == {}
    (tmp_path / "junk.sqlite").write_bytes(b"not a store")
    assert read_meta(tmp_path / "junk.sqlite", DATASETS_META) == {}


def test_a_bad_name_is_still_a_one_line_error_with_a_store_that_knows_others():
    known = expand(SPEC, "g", discover(preload=False))
    spec = {**SPEC, "problems": [{**SPEC["problems"][0], "datasets": ["sklearn/no-such-set"]}]}
    with pytest.raises(DataError, match="unknown dataset 'sklearn/no-such-set'"):
        expand(spec, "g", discover(preload=False), known=(known.dataset_fingerprints, known.param_expansions))


def test_a_resumed_run_finds_its_datasets_in_the_store(monkeypatch, tmp_path):
    """Through ``psdbench.run``: the first run keeps the stamps, the second loads nothing and runs nothing."""
    import psdbench

    spec = {**SPEC, "problems": SPEC["problems"][:1], "solvers": [{"name": "gdpa-lp"}]}
    db = tmp_path / "s.sqlite"
    first = psdbench.run(spec, db=db, ref_cache=False)
    assert set(first["status"]) == {"ok"}
    assert read_meta(db, DATASETS_META).keys() == {"sklearn/breast-cancer"}
    monkeypatch.setattr(SklearnCollection, "load", _refuse)
    again = psdbench.run(spec, db=db, ref_cache=False)
    assert sorted(again["run_id"]) == sorted(first["run_id"])  # nothing re-run
