"""The ``:multiclass`` label view of the generic dataset collections."""

import numpy as np
import pytest

from psdbench.api import DataError
from psdbench.datasets.csv_collection import UciCollection
from psdbench.datasets.sklearn_sets import SklearnCollection
from psdbench.datasets.synthetic import SyntheticCollection


@pytest.mark.parametrize("name, shape, n_classes", [("wine", (178, 13), 3), ("digits", (1797, 64), 10)])
def test_sklearn_multiclass(name, shape, n_classes):
    ds = SklearnCollection().load(f"{name}:multiclass")
    assert ds.X.shape == shape and ds.y.shape == (shape[0],)
    assert len(np.unique(ds.y)) == n_classes
    assert ds.name == f"sklearn/{name}:multiclass" and ds.label_coding == "original labels"
    binary = SklearnCollection().load(name)  # the default view stays binary
    assert set(np.unique(binary.y)) == {-1.0, 1.0}
    np.testing.assert_array_equal(binary.X, ds.X)


def test_uci_multiclass_keeps_id_column(data_dir, monkeypatch):
    monkeypatch.setenv("PSDBENCH_DATA", str(data_dir))
    coll = UciCollection()
    ds = coll.load("breast-cancer:multiclass")
    assert ds.X.shape == (683, 10)  # the ID column stays a feature
    assert ds.X[0, 0] == 1000025.0
    assert sorted(np.unique(ds.y)) == [1.0, 2.0]
    d = coll.load("diabetes:multiclass")
    assert d.X.shape == (768, 8) and np.bincount(d.y.astype(int)).tolist() == [0, 500, 268]
    assert set(np.unique(coll.load("diabetes").y)) == {-1.0, 1.0}


def test_unknown_view():
    with pytest.raises(DataError, match="unknown label view"):
        SklearnCollection().check("wine:nope")
    assert len(np.unique(SyntheticCollection().load("blobs:multiclass").y)) == 2
