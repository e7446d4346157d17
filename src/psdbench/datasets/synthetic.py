"""``synthetic/<generator>``: seeded generators that need no files.

``synthetic/two-moons`` and ``synthetic/blobs`` give binary point clouds (300 samples) for the
graph-classification problem; the generator seed is fixed so that the instance seed alone drives
subsampling and permutation.
"""

from __future__ import annotations

import numpy as np
from sklearn import datasets as skd

from ..api import Dataset, DataError
from . import split_view


def _moons() -> tuple[np.ndarray, np.ndarray]:
    X, y = skd.make_moons(n_samples=300, noise=0.15, random_state=0)
    return X, y


def _blobs() -> tuple[np.ndarray, np.ndarray]:
    X, y = skd.make_blobs(n_samples=300, centers=2, n_features=5, cluster_std=2.0, random_state=0)
    return X, y


_GENERATORS = {"two-moons": _moons, "blobs": _blobs}


class SyntheticCollection:
    """Seeded synthetic datasets."""

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
            label_coding="original labels" if multi else "class 0 -> +1, class 1 -> -1",
            meta={"n_nan_replaced": 0},
        )
