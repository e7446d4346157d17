"""``psdbench merge DATASET... --out DIR``: datasets from many machines and versions as one, nothing lost.

A row is one measurement: the same cell (``cell_key``, which hashes the solver's code and library
versions) in the same run (``run_id``, one machine) is the same row wherever it was exported, and is
kept once; anything else is kept, so two machines' rows of one configuration stay two rows (their
runs' ``machine_fingerprint`` tells them apart) and a cell run again on one machine is a replicate.
The manifest counts the rows in and out, table by table.

References of one instance from several datasets are reconciled: certified intervals must meet
(the optimum lies in each), and the narrowest is kept; one that does not meet another is a
disagreement, listed in the manifest and returned, never hidden.  Each cell keeps the reference it
was judged against (its ``reference_objective`` and gap columns are its source's).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, NamedTuple

import numpy as np
import pandas as pd

from psdbench.api import PsdbenchError
from psdbench.publish.export import check_target, manifest_of, typed_table, write_dataset
from psdbench.publish.read import read_dataset, read_manifest
from psdbench.publish.schema import TABLES

__all__ = ["KEYS", "Combined", "combine_datasets", "merge_datasets", "merged_manifest", "reconcile_references"]

#: What makes two rows of a table the same row.
KEYS: dict[str, tuple[str, ...]] = {"cells": ("cell_key", "run_id"), "runs": ("run_id",),
                                    "references": ("instance_key",), "calibration": ("run_id", "kernel")}
#: Relative slack when two certified intervals are asked to meet.
MEET_RTOL = 1e-9


def _interval(ref: pd.Series) -> tuple[float, float] | None:
    v, lo = float(ref.get("value", np.nan)), float(ref.get("lower", np.nan))
    if ref.get("kind") not in ("certified", "interval") or not (np.isfinite(v) and np.isfinite(lo)):
        return None
    return (min(v, lo), max(v, lo))


def reconcile_references(refs: pd.DataFrame) -> tuple[pd.DataFrame, list[dict[str, Any]]]:
    """One reference per instance from the rows of several datasets.

    Returns
    -------
    (DataFrame, list of dict)
        The kept references (per instance the narrowest certified or interval row, else the first),
        and the disagreements: pairs of intervals of one instance that do not meet.
    """
    kept, conflicts = [], []
    if refs.empty or "instance_key" not in refs.columns:
        return refs, conflicts
    for key, group in refs.groupby("instance_key", sort=False):
        rows = [r for _, r in group.iterrows()]
        boxes = [(r, _interval(r)) for r in rows]
        boxed = [(r, b) for r, b in boxes if b is not None]
        for i in range(len(boxed)):
            for j in range(i + 1, len(boxed)):
                (a, ia), (b, ib) = boxed[i], boxed[j]
                slack = MEET_RTOL * max(1.0, abs(ia[1]), abs(ib[1]))
                if max(ia[0], ib[0]) > min(ia[1], ib[1]) + slack:
                    conflicts.append({"instance_key": key, "problem": a.get("problem"), "dataset": a.get("dataset"),
                                      "a": list(ia), "b": list(ib), "sources": [a.get("_source"), b.get("_source")]})
        if boxed:
            kept.append(min(boxed, key=lambda rb: rb[1][1] - rb[1][0])[0])
        else:
            kept.append(rows[0])
    out = pd.DataFrame(kept).reset_index(drop=True) if kept else refs.iloc[:0]
    return out, conflicts


def _differing(df: pd.DataFrame, keys: list[str]) -> list[str]:
    """The keys (joined by ``/``) that several sources give with different content: one row was
    edited, or two exports disagree.  They are kept once (the first source's) and listed."""
    content = pd.util.hash_pandas_object(df.drop(columns=["_source"]).astype(object), index=False)
    key = df[keys].astype(object).map(str).agg("/".join, axis=1)
    seen = pd.DataFrame({"key": key.to_numpy(), "content": content.to_numpy()})
    per_key = seen.groupby("key")["content"].nunique()
    return sorted(per_key[per_key > 1].index)


class Combined(NamedTuple):
    """Datasets combined in memory: the merged tables, the points by their relative path, the
    manifest's ``merge`` entry (rows in and out, duplicates, disagreements) and the sources' manifests."""

    tables: dict[str, pd.DataFrame]
    points: dict[str, Path]
    info: dict[str, Any]
    manifests: list[dict[str, Any]]


def combine_datasets(sources: Iterable[str | Path]) -> Combined:
    """The dataset folders ``sources`` as one, in memory (what :func:`merge_datasets` writes and
    ``psdbench site`` shows).

    Raises
    ------
    PsdbenchError
        No source; a source that is not a dataset, or of a newer schema (before anything is read).
    """
    paths = [Path(s) for s in sources]
    if len(paths) < 1:
        raise PsdbenchError("merge needs at least one dataset")
    manifests = [read_manifest(p) for p in paths]  # not a dataset, or too new: one line, before any work
    tables = {name: [] for name in TABLES}
    for p in paths:
        for name, df in read_dataset(p).items():
            tables[name].append(df.assign(_source=str(p)))
    rows_in = {name: int(sum(len(d) for d in dfs)) for name, dfs in tables.items()}
    merged: dict[str, pd.DataFrame] = {}
    dropped: dict[str, int] = {}
    conflicts: list[dict[str, Any]] = []
    differing: dict[str, list[str]] = {}
    for name, dfs in tables.items():
        df = pd.concat(dfs, ignore_index=True) if dfs else pd.DataFrame()
        if name == "references":
            df, conflicts = reconcile_references(df)
            dropped[name] = rows_in[name] - len(df)
        else:
            keys = [k for k in KEYS[name] if k in df.columns]
            before = len(df)
            if keys and len(df):
                differing[name] = _differing(df, keys)
                df = df.drop_duplicates(keys, keep="first")
            dropped[name] = before - len(df)
        merged[name] = typed_table(df.drop(columns=["_source"], errors="ignore").reset_index(drop=True), TABLES[name][1])
    points = {f"points/{q.name}": q for p in reversed(paths) for q in sorted((p / "points").glob("*.npz"))}
    info = {"rows_in": rows_in, "rows_out": {n: int(len(d)) for n, d in merged.items()},
            "identical_rows_kept_once": {n: v for n, v in dropped.items() if n != "references"},
            "references_reconciled": dropped["references"], "reference_disagreements": conflicts,
            "same_key_different_content": {n: v for n, v in differing.items() if v}}
    return Combined(merged, points, info, manifests)


def merged_manifest(combined: Combined, paths: Iterable[str | Path]) -> dict[str, Any]:
    """The manifest of ``combined``: its sources (path, psdbench version, when, schema), points and merge counts."""
    manifest = manifest_of(combined.tables, {"merged": [
        {"path": str(p), "psdbench_version": m.get("psdbench_version"), "created_at": m.get("created_at"),
         "schema_version": m.get("schema_version")} for p, m in zip(paths, combined.manifests)]})
    manifest["points"] = {"count": len(combined.points)}
    manifest["merge"] = combined.info
    return manifest


def merge_datasets(sources: Iterable[str | Path], out: str | Path) -> dict[str, Any]:
    """Merge the dataset folders ``sources`` into ``out`` (replaced whole).

    Returns
    -------
    dict
        The merged manifest's ``merge`` entry: rows in and out per table, identical rows kept once,
        and the references' disagreements.
    """
    paths = [Path(s) for s in sources]
    for p in paths:
        read_manifest(p)  # not a dataset, or too new: one line, before the target is looked at
    check_target(out)
    combined = combine_datasets(paths)
    write_dataset(out, combined.tables, merged_manifest(combined, paths), combined.points)
    return combined.info
