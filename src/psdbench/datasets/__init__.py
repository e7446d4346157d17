"""Dataset loaders: scikit-learn's bundled sets, the CSV collection under ``PSDBENCH_DATA``, synthetic generators.

Label views
-----------
Every collection here (``sklearn/``, ``uci/``, ``synthetic/``) returns by default the binary
coding its ``label_coding`` states (``y`` in {+1, -1}), which the existing problems use; those
names and their numbers are unchanged.  Appending ``:multiclass`` to a name (``sklearn/wine:multiclass``,
``uci/diabetes:multiclass``, ``sklearn/digits:multiclass``) returns the same samples with the
original labels as ``y`` (the source's class codes, as floats) and ``label_coding = "original
labels"``; :func:`split_view` parses the suffix.
"""

import os
from pathlib import Path

import numpy as np

from psdbench.api import DataError, Dataset, PsdbenchError

DATA_ENV = "PSDBENCH_DATA"


def data_dir() -> Path:
    """The data directory given by ``PSDBENCH_DATA``; a one-line :class:`DataError` if unset or missing."""
    value = os.environ.get(DATA_ENV)
    if not value:
        raise DataError(f"{DATA_ENV} is not set: point it at the datasets directory (e.g. ../shared/datasets)")
    path = Path(value).expanduser()
    if not path.is_dir():
        raise DataError(f"{DATA_ENV}={value} is not a directory: point it at the datasets directory")
    return path


#: the label views a collection name may carry after ``:`` (none: the binary coding)
VIEWS = ("multiclass",)


def split_view(name: str, collection: str) -> tuple[str, str | None]:
    """``("wine", "multiclass")`` from ``"wine:multiclass"``; ``(name, None)`` without a suffix.

    A one-line :class:`DataError` names an unknown view (``collection`` is used in the message).
    """
    base, sep, view = name.partition(":")
    if not sep:
        return name, None
    if view not in VIEWS:
        raise DataError(f"unknown label view ':{view}' in '{collection}/{name}' (known: {', '.join(VIEWS)})")
    return base, view


def binary_samples(dataset: Dataset, who: str) -> tuple[np.ndarray, np.ndarray]:
    """``(X, y)`` of a two-class sample dataset with ``y`` in {-1, +1} (the larger label is +1).

    A one-line :class:`PsdbenchError` names ``who`` (the problem) if the dataset has no samples,
    non-finite features or not exactly two classes.
    """
    if dataset.X is None or dataset.y is None:
        raise PsdbenchError(f"{dataset.name}: {who} needs samples (X, y)")
    if not np.all(np.isfinite(dataset.X)):
        raise PsdbenchError(f"{dataset.name}: features contain NaN or inf")
    classes = np.unique(dataset.y)
    if len(classes) != 2:
        raise PsdbenchError(f"{dataset.name}: {who} needs two classes, found {len(classes)}")
    return np.asarray(dataset.X, dtype=float), np.where(dataset.y == classes.max(), 1.0, -1.0)
