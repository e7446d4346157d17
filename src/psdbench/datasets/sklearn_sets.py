"""scikit-learn's bundled datasets (installed with the dependencies; no network)."""

from __future__ import annotations

from typing import Callable

import numpy as np
from sklearn import datasets as skd

from ..api import Dataset, DataError
from . import split_view

_LOADERS: dict[str, tuple[Callable, str]] = {
    # WDBC: sklearn codes malignant 0, benign 1; the papers' wdbc.csv codes malignant 1 -> +1.
    "breast-cancer": (skd.load_breast_cancer, "malignant -> +1, benign -> -1 (as the papers' wdbc.csv)"),
    "wine": (skd.load_wine, "class 0 -> +1, classes 1, 2 -> -1"),
    "iris": (skd.load_iris, "setosa (0) -> +1, others -> -1"),
    "digits": (skd.load_digits, "digit 0 -> +1, others -> -1"),
}


class SklearnCollection:
    """``sklearn/<name>``: breast-cancer (WDBC), wine, iris, digits.

    ``y`` is returned already in the binary view ``+1 / -1`` that ``label_coding`` states; the
    original multi-class labels are kept in ``meta["y_original"]``.  ``<name>:multiclass``
    (e.g. ``sklearn/wine:multiclass``, 3 classes; ``sklearn/digits:multiclass``, 10) returns the
    original labels as ``y``.
    """

    def names(self) -> list[str]:
        return sorted(_LOADERS)

    def check(self, name: str) -> None:
        name, _ = split_view(name, "sklearn")
        if name not in _LOADERS:
            raise DataError(f"unknown dataset 'sklearn/{name}' (known: {', '.join(sorted(_LOADERS))})")

    def load(self, name: str) -> Dataset:
        self.check(name)
        base, view = split_view(name, "sklearn")
        loader, coding = _LOADERS[base]
        X, y0 = loader(return_X_y=True)
        if view == "multiclass":
            y, coding = np.asarray(y0, dtype=float), "original labels"
        else:
            y = np.where(y0 == 0, 1.0, -1.0)
        return Dataset(
            name=f"sklearn/{name}",
            X=np.asarray(X, dtype=float),
            y=y,
            source=f"sklearn.datasets.{loader.__name__}",
            label_coding=coding,
            meta={"y_original": np.asarray(y0), "n_nan_replaced": 0},
        )
