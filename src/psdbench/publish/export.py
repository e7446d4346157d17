"""``psdbench export``: a store, or chosen runs of it, written as a results dataset folder.

Every row of the store's history is exported (one per cell and run: a cell run again is a replicate,
a row of older code a measurement of that code), or the rows of chosen runs.  Their derived columns
are the report's: the same tidy frame, and its gap, floor, ranked gap, outcome and reference accuracy
(:func:`psdbench.report.results_csv_frame`), so a dataset and the report never disagree on a row.  The folder is written beside its target and
swapped in whole (:func:`psdbench.system.outdir.replace_folder`); a folder that is not a psdbench
dataset is never overwritten.
"""

from __future__ import annotations

import json
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from psdbench.api import PsdbenchError
from psdbench.publish.schema import FORMAT, METRIC_PREFIX, POINT_CAP, SCHEMA_VERSION, TABLES, Column

__all__ = ["MANIFEST", "MARKER", "check_target", "dataset_tables", "export_dataset", "manifest_of", "typed_table",
           "write_dataset", "write_dataset_files"]

#: The manifest file of a dataset folder.
MANIFEST = "dataset.json"
#: Written last into a dataset folder: the folder is psdbench's to replace.
MARKER = ".psdbench-dataset"


def check_target(out: str | Path, flag: str = "--out", marker: str = MARKER, what: str = "dataset") -> Path:
    """Check, writing nothing, that ``out`` may be (re)placed by a dataset (or another folder psdbench
    writes whole, marked by ``marker``): new, empty, or one it wrote before.

    Raises
    ------
    PsdbenchError
        ``out`` is a file, holds the working folder, or holds files that are not a psdbench dataset.
    """
    from psdbench.harness.grid.inputs import check_out_dir

    p = Path(out)
    check_out_dir(p, flag)
    real = p.resolve()
    if Path.cwd().resolve().is_relative_to(real):
        raise PsdbenchError(f"{flag} {p} holds the working folder; give a folder of its own for the {what}")
    if real.is_dir():
        entries = sorted(os.listdir(real))
        if entries and marker not in entries:
            raise PsdbenchError(f"{flag} {p} holds files that are not a psdbench {what} ({len(entries)} entries, e.g. "
                                f"{entries[0][:80]}); give a new or empty folder (it is replaced as a whole)")
    return p


def _rows(store: Any, runs: Iterable[str] | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(rows, refs)``: every row of the store's history (one per cell and run: replicates and rows
    of older code are measurements too), or of the chosen ``runs``; and its references."""
    from psdbench.harness.reference import annotate
    from psdbench.harness.store.db import Store

    refs = store.references_frame()
    hist = Store.results_frame(store, view="history", traces=False)  # annotated once, below
    if runs is not None:
        wanted = list(dict.fromkeys(runs))
        known = set(store.runs_frame()["run_id"]) | (set(hist["run_id"]) if len(hist) else set())
        missing = [r for r in wanted if r not in known]
        if missing:
            raise PsdbenchError(f"--run {missing[0]}: no such run in {store.path} (psdbench results --all lists them)")
        hist = hist[hist["run_id"].isin(wanted)]
    return annotate(hist.reset_index(drop=True), refs).reset_index(drop=True), refs


def _json_dict(text: Any) -> dict[str, Any]:
    """A JSON column's dict (empty for a missing or malformed value: runs recorded before it held one)."""
    try:
        v = json.loads(text) if isinstance(text, str) else text
    except ValueError:
        return {}
    return v if isinstance(v, dict) else {}


def _plain(x: Any) -> Any:
    """A numpy scalar as its Python value (for JSON); anything else as text."""
    return x.item() if isinstance(x, np.generic) else str(x)


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and np.isnan(x)) or x is pd.NA


def _text(v: pd.Series) -> pd.Series:
    """A column as text: strings kept, anything else JSON, missing values empty."""
    return v.map(lambda x: None if _missing(x) else (x if isinstance(x, str) else
                                                     json.dumps(x, sort_keys=True, default=str))).astype("string")


def typed_table(df: pd.DataFrame, columns: tuple[Column, ...]) -> pd.DataFrame:
    """``df`` with the schema's columns in order and types (missing ones empty), then the metrics:
    ``metric_<name>`` as numbers where every value is one, else as JSON text."""
    cols: dict[str, pd.Series] = {}
    for c in columns:
        v = df[c.name] if c.name in df.columns else pd.Series([None] * len(df), index=df.index, dtype=object)
        if c.type == "double":
            cols[c.name] = pd.to_numeric(v, errors="coerce").astype("float64")
        elif c.type == "int64":
            cols[c.name] = pd.to_numeric(v, errors="coerce").astype("Int64")
        elif c.type == "bool":
            cols[c.name] = v.map(lambda x: None if _missing(x) else bool(x)).astype("boolean")
        else:
            cols[c.name] = _text(v)
    for name in sorted(c for c in df.columns if c.startswith(METRIC_PREFIX)):
        v = df[name]
        num = pd.to_numeric(v, errors="coerce")
        numeric = bool((num.notna() | v.map(_missing)).all())  # every value a number (or missing)
        cols[name] = num.astype("float64") if numeric else _text(v)
    return pd.DataFrame(cols, index=df.index)


def dataset_tables(store: Any, runs: Iterable[str] | None = None, registry: Any = None) -> dict[str, pd.DataFrame]:
    """The dataset's tables of ``store``: ``cells``, ``runs`` and ``references``, typed by the schema.

    Parameters
    ----------
    store : Store
        The results store (a read-only one serves).
    runs : iterable of str, optional
        Only these runs' rows; default: every run's.
    registry : Registry, optional
        Problems and solvers (defaults, family, sense); default :func:`psdbench.registry.discover`.

    Returns
    -------
    dict of str to DataFrame
    """
    from psdbench.report import results_csv_frame
    from psdbench.report.frame import tidy_frame
    from psdbench.report.rules import DEFAULT_ALLOWANCE

    if registry is None:
        from psdbench.registry import discover

        registry = discover()
    raw, refs = _rows(store, runs)
    frame = tidy_frame(raw, refs, registry.problems, registry.solvers, DEFAULT_ALLOWANCE)
    cells = results_csv_frame(raw, frame)
    if len(frame) == len(cells):
        for c in ("family", "solver_label", "sense"):
            if c in frame.columns:
                cells[c] = frame[c].to_numpy()
        settings = [c for c in frame.columns if c.startswith("s_")]
        cells["solver_settings"] = [json.dumps({c[2:]: v for c, v in zip(settings, row) if not _missing(v)},
                                               sort_keys=True, default=_plain)
                                    for row in frame[settings].itertuples(index=False, name=None)]
        cells["curve"] = [json.dumps(c or [], separators=(",", ":")) for c in frame["curve"]]
    if len(refs) and len(cells):
        by_key = refs.set_index("instance_key")
        cells["reference_lower"] = cells["instance_key"].map(by_key["lower"]) if "lower" in by_key else np.nan
        cells["reference_bound"] = cells["instance_key"].map(by_key["bound"]) if "bound" in by_key else np.nan
    run_rows = store.runs_frame()
    if runs is not None:
        run_rows = run_rows[run_rows["run_id"].isin(list(runs))]
    else:
        run_rows = run_rows[run_rows["run_id"].isin(set(cells["run_id"]))] if len(cells) else run_rows.iloc[:0]
    run_rows = run_rows.reset_index(drop=True)
    machines = run_rows["machine"].map(_json_dict) if len(run_rows) else pd.Series([], dtype=object)
    from psdbench.harness.fingerprint import recorded_class

    run_rows["machine_fingerprint"] = machines.map(recorded_class)  # recovered for runs recorded before it
    run_rows["environment_hash"] = machines.map(lambda m: (m.get("environment") or {}).get("hash"))
    ref_rows = refs[refs["instance_key"].isin(set(cells["instance_key"]))] if len(cells) and len(refs) else refs.iloc[:0]
    calib = pd.DataFrame([{"run_id": r, "machine_fingerprint": recorded_class(m), **k}
                          for r, m in zip(run_rows["run_id"], machines)
                          for k in (m.get("calibration") or []) if isinstance(k, dict)])
    cells["provenance"] = "psdbench"  # the harness ran and checked these rows (outside.py: imported ones)
    return {"cells": typed_table(cells, TABLES["cells"][1]), "runs": typed_table(run_rows, TABLES["runs"][1]),
            "references": typed_table(ref_rows.reset_index(drop=True), TABLES["references"][1]),
            "calibration": typed_table(calib, TABLES["calibration"][1])}


def manifest_of(tables: Mapping[str, pd.DataFrame], source: Mapping[str, Any]) -> dict[str, Any]:
    """The manifest of ``tables``: format, schema version, psdbench's version, when, ``source``, and
    per table its file, row count and columns in order with their types and meanings."""
    from psdbench.system.version import psdbench_version

    described = {name: {c.name: {"type": c.type, "doc": c.doc} for c in cols} for name, (_, cols) in TABLES.items()}
    out: dict[str, Any] = {"format": FORMAT, "schema_version": SCHEMA_VERSION, "psdbench_version": psdbench_version(),
                           "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                           "source": dict(source), "tables": {}}
    for name, df in tables.items():
        cols = [{"name": c, **(described[name].get(c) or {"type": "double" if str(df[c].dtype) == "float64" else "string",
                                                          "doc": "a metric the family records"})} for c in df.columns]
        out["tables"][name] = {"file": TABLES[name][0], "rows": int(len(df)), "columns": cols}
    return out


def write_dataset_files(folder: Path, tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any],
                        points: Mapping[str, Path | bytes]) -> dict[str, Path]:
    """Write a dataset into the existing folder ``folder``: the points (relative path to a file or
    its bytes), the tables as Parquet, the manifest last (a site carries its data this way)."""
    paths = {}
    for rel, data in points.items():
        (folder / rel).parent.mkdir(exist_ok=True)
        (folder / rel).write_bytes(data if isinstance(data, bytes) else Path(data).read_bytes())
    for name, df in tables.items():
        paths[name] = folder / TABLES[name][0]
        df.to_parquet(paths[name], index=False, engine="pyarrow")
    paths["manifest"] = folder / MANIFEST
    paths["manifest"].write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    return paths


def write_dataset(out: str | Path, tables: Mapping[str, pd.DataFrame], manifest: Mapping[str, Any],
                  points: Mapping[str, Path | bytes]) -> dict[str, Path]:
    """Write a dataset folder whole (:func:`write_dataset_files` beside it, swapped in, marked)."""
    from psdbench.system.outdir import replace_folder

    return replace_folder(out, lambda folder: write_dataset_files(folder, tables, manifest, points), marker=MARKER)


def _points(cells: pd.DataFrame, store_path: Path, cap: int) -> tuple[pd.DataFrame, dict[str, bytes]]:
    """The cells with ``point`` / ``point_sha256`` set where the run saved a point of at most ``cap``
    bytes, and the archives by their relative path in the dataset (one file per content)."""
    import hashlib

    files: dict[str, bytes] = {}
    point, digest = [], []
    for rel in cells["solution"] if "solution" in cells.columns else [None] * len(cells):
        data = None
        if isinstance(rel, str) and rel:
            try:
                p = store_path.parent / rel
                data = p.read_bytes() if p.stat().st_size <= cap else None
            except OSError:
                data = None  # the archive is gone: the row travels without its point
        if data is None:
            point.append(None)
            digest.append(None)
            continue
        h = hashlib.sha256(data).hexdigest()
        files[f"points/{h}.npz"] = data
        point.append(f"points/{h}.npz")
        digest.append(h)
    return cells.assign(point=pd.array(point, dtype="string"), point_sha256=pd.array(digest, dtype="string")), files


def export_dataset(store: Any, out: str | Path, runs: Iterable[str] | None = None,
                   registry: Any = None, point_cap: int = POINT_CAP) -> dict[str, Path]:
    """Write ``store`` (or its ``runs``) as a dataset folder ``out``, replaced whole, with each
    saved point of at most ``point_cap`` bytes beside the tables, content-addressed.

    Returns
    -------
    dict of str to Path
        ``manifest`` and one entry per table (its Parquet file), under ``out``.
    """
    check_target(out)
    tables = dataset_tables(store, runs, registry)
    tables["cells"], files = _points(tables["cells"], Path(str(store.path)), point_cap)
    manifest = manifest_of(tables, {"store": Path(str(store.path)).name})
    manifest["points"] = {"count": len(files), "cap_bytes": int(point_cap)}
    return write_dataset(out, tables, manifest, files)
