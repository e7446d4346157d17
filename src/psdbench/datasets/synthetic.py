"""``synthetic/<generator>``: seeded generators that need no files.

``synthetic/two-moons`` and ``synthetic/blobs`` give binary point clouds (300 samples) for the
graph-classification problem; the generator seed is fixed so that the instance seed alone drives
subsampling and permutation.

``synthetic/gaussian-classes`` is a multi-class set for metric learning at a chosen dimension (the
SDPMetric paper's Fig. 2 on random data): scikit-learn's ``make_classification`` with a fixed
seed, 600 samples, 100 features (20 informative, 10 redundant, 70 noise, in shuffled columns so
that any leading block of columns mixes the three), 4 classes of one Gaussian cluster each.  Its
binary view codes class 0 as +1 and every other class as -1; ``:multiclass`` keeps the labels 0-3.
"""

from __future__ import annotations

import numpy as np

from psdbench.api import Dataset, DataError
from . import split_view


def _moons() -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets as skd  # here: listing the names imports no scikit-learn

    X, y = skd.make_moons(n_samples=300, noise=0.15, random_state=0)
    return X, y


def _blobs() -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets as skd  # here: listing the names imports no scikit-learn

    X, y = skd.make_blobs(n_samples=300, centers=2, n_features=5, cluster_std=2.0, random_state=0)
    return X, y


def _gaussian_classes() -> tuple[np.ndarray, np.ndarray]:
    from sklearn import datasets as skd  # here: listing the names imports no scikit-learn

    X, y = skd.make_classification(n_samples=600, n_features=100, n_informative=20, n_redundant=10,
                                   n_classes=4, n_clusters_per_class=1, class_sep=1.0, shuffle=True,
                                   random_state=0)
    return X, y


_GENERATORS = {"two-moons": _moons, "blobs": _blobs, "gaussian-classes": _gaussian_classes}
#: the binary coding of each generator (class 0 -> +1 in all of them)
_CODING = {"two-moons": "class 0 -> +1, class 1 -> -1", "blobs": "class 0 -> +1, class 1 -> -1",
           "gaussian-classes": "class 0 -> +1, classes 1-3 -> -1"}


class SyntheticCollection:
    """Seeded synthetic datasets."""

    preload = ("sklearn.datasets",)  # the fork server imports it once for every worker

    def names(self) -> list[str]:
        return sorted(_GENERATORS)

    def check(self, name: str) -> None:
        name, _ = split_view(name, "synthetic")
        if name not in _GENERATORS:
            raise DataError(f"unknown dataset 'synthetic/{name}' (known: {', '.join(sorted(_GENERATORS))})")

    def load(self, name: str) -> Dataset:
        self.check(name)
        base, view = split_view(name, "synthetic")
        X, y0 = _GENERATORS[base]()
        multi = view == "multiclass"
        return Dataset(
            name=f"synthetic/{name}",
            X=np.asarray(X, float),
            y=np.asarray(y0, float) if multi else np.where(y0 == 0, 1.0, -1.0),
            source=f"psdbench.datasets.synthetic:{base}",
            label_coding="original labels" if multi else _CODING[base],
            meta={"n_nan_replaced": 0},
        )
