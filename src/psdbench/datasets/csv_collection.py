"""``uci/<stem>``: the CSV collection under ``PSDBENCH_DATA/binary_classification``.

Files have no header, features first and the label last.  As both papers' code does, label 1 maps
to +1 and anything else to -1, and NaN features are replaced by 0 (the count is recorded in
``meta["n_nan_replaced"]``).  ``.csv`` and gzipped ``.csv.gz`` are both read.

``uci/<stem>:multiclass`` returns the raw label codes of the last column as ``y`` (e.g.
``uci/diabetes:multiclass``: 1 / 2).  Every column but the last is a feature, in both views: in
``breast-cancer.csv`` the first column is the sample ID number and it stays a feature (10 features,
as the authors' code and the SDPMetric paper's Table I have it).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from psdbench.api import Dataset, DataError
from . import DATA_ENV, data_dir, split_view

SUBDIR = "binary_classification"


class UciCollection:
    """The papers' binary UCI / LIBSVM sets, read from ``PSDBENCH_DATA`` (never downloaded implicitly)."""

    def _dir(self) -> Path:
        path = data_dir() / SUBDIR
        if not path.is_dir():
            raise DataError(f"missing data directory {path}: set {DATA_ENV} to a folder holding {SUBDIR}/")
        return path

    def names(self) -> list[str]:
        """The stems of the data files (regular files only; ``x.csv`` beside ``x.csv.gz`` is one name)."""
        out = set()
        for p in self._dir().iterdir():
            if not p.is_file():
                continue
            if p.name.endswith(".csv.gz"):
                out.add(p.name[: -len(".csv.gz")])
            elif p.suffix == ".csv":
                out.add(p.stem)
        return sorted(out)

    def path(self, name: str) -> Path:
        """The file of ``uci/<name>``, which must lie inside the collection's folder.

        A name is one file stem: no ``/``, ``\\``, ``..`` or absolute part, and the resolved file
        (symbolic links followed) must stay under the folder, so no name reaches outside
        ``PSDBENCH_DATA``.
        """
        base = self._dir()
        if not name or "/" in name or "\\" in name or name in (".", "..") or "\0" in name:
            raise DataError(f"dataset 'uci/{name[:200]}': a name is one file stem of {base} "
                            "(no '/', '..' or absolute path)")
        root = base.resolve()
        for suffix in (".csv", ".csv.gz"):
            p = base / f"{name}{suffix}"
            if p.is_file():
                if not p.resolve().is_relative_to(root):
                    raise DataError(f"dataset 'uci/{name}': {p} leads outside {base}")
                return p
        raise DataError(f"missing data file {base / (name + '.csv')}[.gz]: check {DATA_ENV} or the dataset name 'uci/{name}'")

    def check(self, name: str) -> None:
        self.path(split_view(name, "uci")[0])

    def load(self, name: str) -> Dataset:
        base, view = split_view(name, "uci")
        path = self.path(base)
        try:
            raw = np.loadtxt(path, delimiter=",", dtype=float)
        except ValueError as exc:
            raise DataError(f"cannot parse {path}: {str(exc).splitlines()[0]}") from None
        if raw.ndim != 2 or raw.shape[1] < 2:
            raise DataError(f"{path}: expected rows of features followed by a label")
        X, label = raw[:, :-1], raw[:, -1]
        if np.isnan(label).any():
            raise DataError(f"{path}: {int(np.isnan(label).sum())} labels are NaN")
        nan = np.isnan(X)
        X = np.where(nan, 0.0, X)
        return Dataset(
            name=f"uci/{name}",
            X=X,
            y=label.copy() if view == "multiclass" else np.where(label == 1, 1.0, -1.0),
            source=str(path),
            label_coding="original labels" if view == "multiclass" else "label 1 -> +1, anything else -> -1",
            meta={"n_nan_replaced": int(nan.sum())},
        )
