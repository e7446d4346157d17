"""Datasets of the SDP family.

* ``sdplib/<name>``: SDPLIB 1.2 files ``<name>.dat-s`` (or ``.dat-s.gz``) under
  ``$PSDBENCH_DATA/sdplib``, with the published optimal value from ``sdplib_optimal_values.csv``
  (shown beside the reference, never used as one).
* ``sdpa-dir/<name>``: any directory of SDPA sparse files a user names in ``$PSDBENCH_SDPA_DIR``
  (their own problems, no code); ``<name>`` is a file name without ``.dat-s`` / ``.dat-s.gz``,
  may include sub-folders (``sdpa-dir/robust/p1``), and must resolve inside the directory.
* ``sdp-gen/maxcut``, ``sdp-gen/theta``, ``sdp-gen/infeasible``: the seeded generators of
  :mod:`.generators` (drawn per instance with its ``n``, ``density`` and seed).

A file is parsed when it is loaded (so a malformed file is a one-line ``DataError`` when the grid
is checked, before any work) and the parsed :class:`.data.SdpData` is the payload's ``sdp``.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from psdbench.api import DataError, Dataset
from psdbench.datasets import DATA_ENV, data_dir

from .generators import GENERATORS
from .sdpa_io import read_sdpa

SDPA_DIR_ENV = "PSDBENCH_SDPA_DIR"
SUFFIXES = (".dat-s", ".dat-s.gz")
TABLE = "sdplib_optimal_values.csv"


def _stem(name: str) -> str | None:
    for s in SUFFIXES:
        if name.endswith(s):
            return name[: -len(s)]
    return None


def significant_digits(text: str) -> int:
    """Significant digits printed in a number such as ``-4.360e+02`` (4) or ``2e-1`` (1)."""
    mant = text.strip().lstrip("+-").lower().split("e")[0].replace(".", "").lstrip("0")
    return max(1, len(mant))


class _SdpaFolder:
    """A folder of SDPA files as a dataset collection."""

    collection = ""

    def _dir(self) -> Path:
        raise NotImplementedError

    def names(self) -> list[str]:
        base = self._dir()
        out = []
        for p in base.rglob("*"):
            stem = _stem(p.name)
            if stem is not None and p.is_file():
                out.append(str(p.relative_to(base).parent / stem).removeprefix("./"))
        return sorted(out)

    def path(self, name: str) -> Path:
        base = self._dir().resolve()
        for s in SUFFIXES:
            p = (base / f"{name}{s}").resolve()
            if not p.is_relative_to(base):
                raise DataError(f"dataset {self.collection}/{name}: the path leaves {base}")
            if p.is_file():
                return p
        raise DataError(f"missing SDPA file {base / name}.dat-s[.gz] for dataset {self.collection}/{name}")

    def check(self, name: str) -> None:
        self.path(name)

    def _extra(self, name: str) -> dict[str, Any]:
        return {}

    def load(self, name: str) -> Dataset:
        path = self.path(name)
        data = read_sdpa(path, name=f"{self.collection}/{name}")
        extra = self._extra(name)
        return Dataset(name=f"{self.collection}/{name}", source=str(path), label_coding="",
                       meta={"m": data.m, "n": data.n, "blocks": len(data.block_sizes)},
                       payload={"sdp": data, **extra})


class SdplibCollection(_SdpaFolder):
    """``sdplib/<name>``: SDPLIB 1.2 under ``$PSDBENCH_DATA/sdplib``."""

    collection = "sdplib"

    def _dir(self) -> Path:
        path = data_dir() / "sdplib"
        if not path.is_dir():
            raise DataError(f"missing data directory {path}: set {DATA_ENV} to a folder holding sdplib/")
        return path

    def table(self) -> dict[str, dict[str, str]]:
        """The published table (problem -> row), empty when the file is absent."""
        p = self._dir() / TABLE
        if not p.is_file():
            return {}
        with p.open() as fh:
            return {r["problem"]: r for r in csv.DictReader(ln for ln in fh if not ln.startswith("#"))}

    def _extra(self, name: str) -> dict[str, Any]:
        row = self.table().get(name)
        if not row:
            return {}
        out: dict[str, Any] = {"expected": row.get("status") or "optimal"}
        if row.get("optimal_value"):
            out["published"] = float(row["optimal_value"])
            out["published_digits"] = significant_digits(row["optimal_value"])
        return out


class SdpaDirCollection(_SdpaFolder):
    """``sdpa-dir/<name>``: a user's folder of SDPA files named by ``$PSDBENCH_SDPA_DIR``."""

    collection = "sdpa-dir"

    def _dir(self) -> Path:
        value = os.environ.get(SDPA_DIR_ENV)
        if not value:
            raise DataError(f"{SDPA_DIR_ENV} is not set: point it at a folder of SDPA .dat-s files")
        path = Path(value).expanduser()
        if not path.is_dir():
            raise DataError(f"{SDPA_DIR_ENV}={value} is not a directory")
        return path


class GeneratorCollection:
    """``sdp-gen/<generator>``: settings only; the instance draws its data with its n, density and seed."""

    def names(self) -> list[str]:
        return list(GENERATORS)

    def check(self, name: str) -> None:
        if name not in GENERATORS:
            raise DataError(f"unknown dataset sdp-gen/{name}; known: {', '.join(GENERATORS)}")

    def load(self, name: str) -> Dataset:
        self.check(name)
        expected = "primal_infeasible" if name == "infeasible" else "optimal"
        return Dataset(name=f"sdp-gen/{name}", source="psdbench.families.sdp.generators",
                       payload={"generator": name, "expected": expected})
