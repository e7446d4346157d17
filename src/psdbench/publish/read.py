"""A results dataset read back: its manifest checked, its tables as DataFrames.

Needs pandas and pyarrow only, so that it documents what any reader does (``docs/dataset.md`` shows
the same lines without psdbench)::

    import json, pandas as pd
    manifest = json.load(open("DIR/dataset.json"))
    cells = pd.read_parquet("DIR/cells.parquet")
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd

from psdbench.api import DataError
from psdbench.publish.schema import FORMAT, SCHEMA_VERSION, TABLES

__all__ = ["read_dataset", "read_manifest"]

#: pandas dtypes of the schema's Arrow types (for a table a dataset does not have).
_DTYPES = {"string": "string", "double": "float64", "int64": "Int64", "bool": "boolean"}


def read_manifest(path: str | Path) -> dict[str, Any]:
    """The manifest of the dataset folder ``path``.

    Raises
    ------
    DataError
        No manifest, not a psdbench dataset, or a schema version newer than this psdbench reads.
    """
    p = Path(path) / "dataset.json"
    try:
        manifest = json.loads(p.read_text())
    except (OSError, ValueError) as exc:
        raise DataError(f"{path}: no readable dataset.json ({type(exc).__name__}: {exc}); is it a psdbench dataset?") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise DataError(f"{path}: dataset.json is not a psdbench dataset's manifest (format {manifest.get('format')!r})"
                        if isinstance(manifest, dict) else f"{path}: dataset.json is not a psdbench dataset's manifest")
    version = manifest.get("schema_version")
    if not isinstance(version, int) or not 1 <= version <= SCHEMA_VERSION:
        raise DataError(f"{path}: dataset schema version {version!r}; this psdbench reads versions 1 to {SCHEMA_VERSION} "
                        "(upgrade psdbench to read it)")
    return manifest


def read_dataset(path: str | Path) -> dict[str, pd.DataFrame]:
    """The tables of the dataset folder ``path`` (``cells``, ``runs``, ``references``, ``calibration``),
    each checked against its manifest's row count; one the manifest does not list is empty.

    Returns
    -------
    dict of str to DataFrame
    """
    manifest = read_manifest(path)
    out = {}
    for name, (file, cols) in TABLES.items():
        entry = manifest["tables"].get(name)
        if entry is None:  # a table this version has and the dataset's exporter did not: empty
            out[name] = pd.DataFrame({c.name: pd.Series([], dtype=_DTYPES[c.type]) for c in cols})
            continue
        df = pd.read_parquet(Path(path) / entry["file"])
        if entry.get("rows") is not None and len(df) != entry["rows"]:
            raise DataError(f"{path}: {entry['file']} has {len(df)} rows, its manifest says {entry['rows']}")
        out[name] = df
    return out
