"""scikit-learn's bundled datasets (installed with the dependencies; no network)."""

from __future__ import annotations

import numpy as np

from psdbench.api import Dataset, DataError
from . import split_view

# name -> (sklearn.datasets loader, label coding); the loader is looked up when a dataset is loaded,
# so listing the names (``psdbench list``) imports no scikit-learn
_LOADERS: dict[str, tuple[str, str]] = {
    # WDBC: sklearn codes malignant 0, benign 1; the papers' wdbc.csv codes malignant 1 -> +1.
    "breast-cancer": ("load_breast_cancer", "malignant -> +1, benign -> -1 (as the papers' wdbc.csv)"),
    "wine": ("load_wine", "class 0 -> +1, classes 1, 2 -> -1"),
    "iris": ("load_iris", "setosa (0) -> +1, others -> -1"),
    "digits": ("load_digits", "digit 0 -> +1, others -> -1"),
}


class SklearnCollection:
    """``sklearn/<name>``: breast-cancer (WDBC), wine, iris, digits.

    ``y`` is returned already in the binary view ``+1 / -1`` that ``label_coding`` states; the
    original multi-class labels are kept in ``meta["y_original"]``.  ``<name>:multiclass``
    (e.g. ``sklearn/wine:multiclass``, 3 classes; ``sklearn/digits:multiclass``, 10) returns the
    original labels as ``y``.
    """

    preload = ("sklearn.datasets",)  # the fork server imports it once for every worker

    def names(self) -> list[str]:
        return sorted(_LOADERS)

    def check(self, name: str) -> None:
        name, _ = split_view(name, "sklearn")
        if name not in _LOADERS:
            raise DataError(f"unknown dataset 'sklearn/{name}' (known: {', '.join(sorted(_LOADERS))})")

    def stamp(self, name: str) -> str:
        """The installed scikit-learn's version: the files its loaders read ship with it."""
        from importlib.metadata import version

        self.check(name)
        return f"scikit-learn {version('scikit-learn')}"

    def load(self, name: str) -> Dataset:
        self.check(name)
        base, view = split_view(name, "sklearn")
        from sklearn import datasets as skd

        loader, coding = _LOADERS[base]
        X, y0 = getattr(skd, loader)(return_X_y=True)
        if view == "multiclass":
            y, coding = np.asarray(y0, dtype=float), "original labels"
        else:
            y = np.where(y0 == 0, 1.0, -1.0)
        return Dataset(
            name=f"sklearn/{name}",
            X=np.asarray(X, dtype=float),
            y=y,
            source=f"sklearn.datasets.{loader}",
            label_coding=coding,
            meta={"y_original": np.asarray(y0), "n_nan_replaced": 0},
        )
