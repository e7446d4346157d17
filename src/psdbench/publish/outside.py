"""Outside result files as dataset rows: quality the solver reported, nobody certified, labelled so.

:func:`import_results` reads benchopt's or asv's result files and writes a dataset folder of the
schema (:mod:`psdbench.publish.schema`), which ``psdbench merge`` combines with psdbench's own.  Every
imported row has ``provenance`` = its format, ``status`` ``ok`` (or asv's failure / skip),
``feasible`` empty (no point was verified), ``reference_kind`` ``none`` and no gap, ranked gap or
floor, ``outcome`` :data:`OUTCOME`.  Keys are SHA-256 of the describing fields (no code hash, no
psdbench version), so the same file imported twice gives the same rows and a merge keeps them once.
``run_id`` is the format and the file's content hash: one ``runs`` row per file.

benchopt (``outputs/*.parquet`` or ``*.csv``; columns read in benchopt's ``_generate_runs.py``
``meta``, ``runner.py:run_one_resolution``, ``callback.py``, ``base.py:_format_objective_dict``,
``utils/sys_info.py:get_sys_info`` and ``results/__init__.py:save_results``): one file row per
evaluation on a convergence curve.  Only each curve's final point is a row: per
``(objective_name, dataset_name, solver_name, idx_rep, run_date)`` the rows of its last stop value
(the largest ``stop_val``, the smallest for the ``Tolerance`` sampling strategy, whose stop values
decrease; file order is not trusted, ``benchopt merge`` re-sorts), as a psdbench cell is a solver's
final point; the earlier points are the curve, counted and left out.  Several rows at the final stop
value (an objective returning a list of dicts) stay several cells, told apart by their order
(``entry``, hashed into the keys).  Mapping: ``problem`` = ``benchopt/<objective_name>``,
``dataset`` = ``dataset_name`` (``data_name`` before benchopt 1.8), ``solver`` = ``solver_label`` =
``solver_name``, ``seed`` = ``idx_rep``, ``solver_params`` = the ``p_solver_*`` columns,
``instance_params`` = ``p_obj_*`` / ``p_dataset_*`` (as ``obj_<k>`` / ``dataset_<k>``) and
``base_seed``, ``objective`` = ``objective_value``, ``wall_time_s`` = ``time``, ``iterations`` =
``stop_val`` where the strategy is ``Iteration``, ``created_at`` = ``run_date``; the other
``objective_*`` values and ``stop_val`` go to ``metrics`` (numbers also as ``metric_<name>``).  The
run's ``machine`` is the ``env-*``, ``platform*`` and ``system-*`` columns, its ``versions`` the
``version-*`` columns and ``benchmark-git-tag`` (a list under ``machines`` / ``versions`` where rows
differ), ``machine_fingerprint`` the hash of the class fields (processor, cpus, RAM, OS,
architecture).  Left out: descriptions, ``file_*`` names, ``final_results``, values benchopt
packed as bytes; failed runs, which benchopt does not write.

asv (``.asv/results/<machine>/<commit>-<env>.json``, results format version 2, read in asv's
``results.py:Results.save`` / ``load`` and ``docs/source/dev.rst``; ``machine.json`` beside it and
``benchmarks.json`` one folder up are read when present and skipped when given): timing benchmarks
only (``type`` ``time`` in ``benchmarks.json``, else a ``time_`` / ``timeraw_`` name), one row per
parameter combination (asv's cartesian order), ``problem`` = ``asv/<benchmark>``, ``instance_params``
= its parameters (asv's ``repr`` strings read back by :func:`ast.literal_eval` where they are
literals, names ``param1``... without ``benchmarks.json``), ``wall_time_s`` = asv's result (the
median seconds per call), ``objective`` empty, ``solver`` empty (asv times a commit, not a solver:
the commit is ``solver_code``), status ``error`` for asv's null, ``skipped`` for its NaN.  ``mem_``,
``peakmem_`` (bytes of the whole process, not what a solve added) and ``track_`` (any unit) values
fit no column: counted and left out.
"""

from __future__ import annotations

import ast
import hashlib
import io
import itertools
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from psdbench.api import DataError
from psdbench.harness.store.keys import stable_hash
from psdbench.publish.export import check_target, manifest_of, typed_table, write_dataset
from psdbench.publish.schema import TABLES

__all__ = ["FORMATS", "OUTCOME", "import_results"]

#: The outside formats :func:`import_results` reads (a row's ``provenance``).
FORMATS = ("benchopt", "asv")
#: The ``outcome`` of every imported row.
OUTCOME = "reported, not verified"
_BENCHOPT_NEEDS = ("objective_name", "dataset_name", "solver_name", "idx_rep", "stop_val", "time", "objective_value")
_BENCHOPT_CLASS = ("system-processor", "system-cpus", "system-ram (GB)", "platform", "platform-architecture")
_ASV_CLASS = ("cpu", "num_cpu", "ram", "os", "arch")
_ASV_MACHINE = _ASV_CLASS + ("machine",)
_ASV_TIME = re.compile(r"^(time_|timeraw_|Time[A-Z_]|Timeraw[A-Z_])")


def _plain(v: Any) -> Any:
    """A value as plain JSON-able Python: numpy scalars unwrapped, NaN / None / bytes missing (None)."""
    if isinstance(v, np.generic):
        v = v.item()
    if v is None or v is pd.NA or isinstance(v, bytes) or (isinstance(v, float) and math.isnan(v)):
        return None
    return v if isinstance(v, (str, int, float, bool, list, dict)) else str(v)


def _kept(d: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in ((k, _plain(v)) for k, v in d.items()) if v is not None}


def _one_or_list(records: list[dict[str, Any]], key: str) -> dict[str, Any]:
    """The record all rows share, else ``{key: [each distinct one]}``."""
    seen = list({json.dumps(r, sort_keys=True): r for r in records}.values())
    return seen[0] if len(seen) == 1 else {key: seen}


def _fingerprint(machine: dict[str, Any], fields: tuple[str, ...], key: str) -> str | None:
    ms = machine.get(key) if key in machine else [machine]
    cls = [{k: m.get(k) for k in fields} for m in ms]
    return stable_hash(cls)[:16] if any(v is not None for c in cls for v in c.values()) else None


def _iso_ms(ms: Any) -> str | None:
    """A JavaScript timestamp (milliseconds) as UTC ISO 8601."""
    if not isinstance(ms, (int, float)):
        return None
    return datetime.fromtimestamp(ms / 1000, timezone.utc).isoformat(timespec="seconds")


def _benchopt(path: Path, data: bytes, run_id: str) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """``(cells, runs row, curve points left out)`` of one benchopt results file."""
    try:
        df = pd.read_parquet(io.BytesIO(data)) if path.suffix == ".parquet" else pd.read_csv(io.BytesIO(data))
    except Exception as exc:  # noqa: BLE001 (pyarrow / pandas raise many kinds)
        raise DataError(f"{path}: not a readable benchopt results file ({type(exc).__name__})") from None
    df = df.rename(columns={"data_name": "dataset_name"})  # benchopt before 1.8
    missing = [c for c in _BENCHOPT_NEEDS if c not in df.columns]
    if missing:
        raise DataError(f"{path}: not a benchopt results file (no column {missing[0]!r}; benchopt writes "
                        f"{', '.join(_BENCHOPT_NEEDS)})")
    stop = pd.to_numeric(df["stop_val"], errors="coerce")
    for col, v in (("stop_val", stop), ("idx_rep", pd.to_numeric(df["idx_rep"], errors="coerce"))):
        if v.isna().any():
            raise DataError(f"{path}: benchopt column {col!r} holds a value that is not a number "
                            f"(row {int(v.isna().argmax())})")
    cols = list(df.columns)
    strategy = df["sampling_strategy"].astype(str) if "sampling_strategy" in cols else pd.Series("", index=df.index)
    df = df.assign(_order=np.where(strategy.str.lower() == "tolerance", -stop, stop))
    group = ["objective_name", "dataset_name", "solver_name", "idx_rep"] + (["run_date"] if "run_date" in cols else [])
    final = df[df["_order"] == df.groupby(group, dropna=False)["_order"].transform("max")]
    final = final.assign(_entry=final.groupby(group, dropna=False).cumcount())
    machine_cols = [c for c in cols if c.startswith(("env-", "platform", "system-"))]
    version_cols = [c for c in cols if c.startswith("version-")] + [c for c in ("benchmark-git-tag",) if c in cols]
    metric_cols = [c for c in cols if c.startswith("objective_") and c not in ("objective_name", "objective_value")]
    cells = []
    for r in final.to_dict("records"):
        problem, dataset, solver = f"benchopt/{r['objective_name']}", str(r["dataset_name"]), str(r["solver_name"])
        seed = int(r["idx_rep"])
        inst = _kept({c[2:]: r[c] for c in cols if c.startswith(("p_obj_", "p_dataset_"))}
                     | {"base_seed": r.get("base_seed")})
        sp = _kept({c[len("p_solver_"):]: r[c] for c in cols if c.startswith("p_solver_")})
        versions = _kept({c.removeprefix("version-"): r[c] for c in version_cols})
        metrics = _kept({c[len("objective_"):]: r[c] for c in metric_cols} | {"stop_val": r["stop_val"]})
        when, entry = _plain(r.get("run_date")), int(r["_entry"])
        described = [problem, dataset, inst, seed, solver, sp, entry]
        key = stable_hash(["benchopt", "instance", problem, dataset, inst, seed])
        strat = str(r.get("sampling_strategy") or "")
        cells.append({
            "run_id": run_id, "instance_key": key, "cell_id": stable_hash(["benchopt", "cell"] + described),
            "cell_key": stable_hash(["benchopt", "cell", key] + described + [versions, when]),
            "problem": problem, "dataset": dataset, "instance_params": inst, "seed": seed, "solver": solver,
            "solver_label": solver, "solver_params": sp, "status": "ok", "outcome": OUTCOME,
            "message": f"imported from benchopt: {path.name}: the curve's last stop_val {_plain(r['stop_val'])}"
                       f"{f' ({strat})' if strat else ''}; objective as benchopt reported it, not verified",
            "objective": r["objective_value"], "wall_time_s": r["time"], "reference_kind": "none",
            "reference": "none", "iterations": r["stop_val"] if strat.lower() == "iteration" else None,
            "metrics": metrics, "created_at": when,
            **{f"metric_{k}": v for k, v in metrics.items() if type(v) in (int, float)}})
    machine = _one_or_list([_kept(m) for m in df[machine_cols].drop_duplicates().to_dict("records")], "machines")
    versions = _one_or_list([_kept({c.removeprefix("version-"): v for c, v in m.items()})
                             for m in df[version_cols].drop_duplicates().to_dict("records")], "versions")
    run = {"run_id": run_id, "command": f"imported from benchopt: {path.name}", "machine": machine,
           "machine_fingerprint": _fingerprint(machine, _BENCHOPT_CLASS, "machines"), "versions": versions,
           "finished_at": df["run_date"].dropna().astype(str).max() if "run_date" in cols else None}
    return cells, run, len(df) - len(final)


def _literal(text: Any) -> Any:
    try:
        return ast.literal_eval(text) if isinstance(text, str) else text
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def _json_file(p: Path) -> dict[str, Any]:
    try:
        d = json.loads(p.read_text()) if p.is_file() else {}
    except (OSError, ValueError):
        return {}
    return {k: v for k, v in d.items() if k != "version"} if isinstance(d, dict) else {}


def _asv(path: Path, data: bytes, run_id: str) -> tuple[list[dict[str, Any]], dict[str, Any], int]:
    """``(cells, runs row, values left out)`` of one asv results file."""
    try:
        doc = json.loads(data)
    except ValueError:
        raise DataError(f"{path}: not an asv results file (not JSON)") from None
    need = ("results", "result_columns", "commit_hash", "env_name", "params")
    if not isinstance(doc, dict) or any(k not in doc for k in need) or not isinstance(doc["results"], dict) \
            or not isinstance(doc["result_columns"], list) or not isinstance(doc["params"], dict):
        raise DataError(f"{path}: not an asv results file (asv's hold {', '.join(need)})")
    if doc.get("version") != 2:
        raise DataError(f"{path}: asv results format version {doc.get('version')!r}; this reads version 2 "
                        "(asv 0.5 and later)")
    machine = _json_file(path.parent / "machine.json") or {k: v for k, v in doc["params"].items() if k in _ASV_MACHINE}
    benchmarks = _json_file(path.parent.parent / "benchmarks.json")
    commit, env = str(doc["commit_hash"]), str(doc["env_name"])
    cells, left, starts, ends = [], 0, [], []
    for name, values in doc["results"].items():
        row = dict(zip(doc["result_columns"], values if isinstance(values, list) else [values]))
        meta = benchmarks.get(name) if isinstance(benchmarks.get(name), dict) else {}
        params = row.get("params") or []
        if not isinstance(params, list) or not all(isinstance(p, list) for p in params):
            raise DataError(f"{path}: asv benchmark {name}: its params are not a list of lists")
        n = math.prod(len(p) for p in params) if params else 1
        timed = meta.get("type") == "time" if meta.get("type") else bool(_ASV_TIME.match(name.rsplit(".", 1)[-1]))
        if not timed:
            left += n
            continue
        result = row.get("result")
        result = result if isinstance(result, list) else [result] * n
        if len(result) != n:
            raise DataError(f"{path}: asv benchmark {name}: {len(result)} results for {n} parameter combinations")
        names = meta.get("param_names") or [f"param{i + 1}" for i in range(len(params))]
        started = row.get("started_at")
        if isinstance(started, (int, float)):
            starts.append(started)
            ends.append(started + 1000 * float(row.get("duration") or 0))
        for j, combo in enumerate(itertools.product(*params) if params else [()]):
            inst = {str(k): _literal(v) for k, v in zip(names, combo)}
            value = result[j]
            stats = _kept({k[6:]: (row[k][j] if isinstance(row.get(k), list) and j < len(row[k]) else None)
                           for k in row if k.startswith("stats_")})
            status = "error" if value is None else "skipped" if isinstance(value, float) and math.isnan(value) else "ok"
            say = {"ok": f"asv's median seconds per call ({stats.get('repeat', '?')} samples of "
                         f"{stats.get('number', '?')} calls)",
                   "error": "asv recorded a failure (null)", "skipped": "asv recorded a skip (NaN)"}[status]
            key = stable_hash(["asv", "instance", name, inst])
            cells.append({
                "run_id": run_id, "instance_key": key, "cell_id": stable_hash(["asv", "cell", name, inst]),
                "cell_key": stable_hash(["asv", "cell", key, name, inst, commit, env, row.get("version")]),
                "problem": f"asv/{name}", "instance_params": inst, "solver_code": commit, "status": status,
                "outcome": OUTCOME,
                "message": f"imported from asv: {path.parent.name}/{path.name}: {say}; commit {commit[:12]} in {env}",
                "wall_time_s": value if status == "ok" else None, "reference_kind": "none", "reference": "none",
                "metrics": stats, "created_at": _iso_ms(started), **{f"metric_{k}": v for k, v in stats.items()}})
    run = {"run_id": run_id, "command": f"imported from asv: {path.parent.name}/{path.name}", "machine": machine,
           "machine_fingerprint": _fingerprint(machine, _ASV_CLASS, "machines"),
           "versions": {"commit_hash": commit, "env_name": env, "python": doc.get("python"),
                        "requirements": doc.get("requirements"), "env_vars": doc.get("env_vars")},
           "started_at": _iso_ms(min(starts)) if starts else None, "finished_at": _iso_ms(max(ends)) if ends else None}
    return cells, run, left


_READERS = {"benchopt": _benchopt, "asv": _asv}


def import_results(paths: Sequence[str | Path], fmt: str, out: str | Path) -> dict[str, Any]:
    """Read outside result files of format ``fmt`` and write them as the dataset folder ``out``.

    Every check comes before anything is written: the format, each file (present, readable, of
    that format), and ``out`` (:func:`~psdbench.publish.export.check_target`).

    Parameters
    ----------
    paths : sequence of str or Path
        The result files: benchopt's ``.parquet`` / ``.csv``; asv's ``<commit>-<env>.json`` (its
        ``machine.json`` and ``benchmarks.json``, read beside them, are skipped when given).
    fmt : str
        ``"benchopt"`` or ``"asv"`` (:data:`FORMATS`).
    out : str or Path
        The dataset folder: new, empty or a psdbench dataset (replaced whole).

    Returns
    -------
    dict
        ``files`` read, ``duplicate_files`` (same content, read once), ``cells`` and ``runs`` written,
        ``left_out`` (benchopt: earlier curve points; asv: values of benchmarks that are not timings),
        ``out``.

    Raises
    ------
    DataError
        Unknown format, no file, a missing or unreadable file, a file not of the format (one line).
    PsdbenchError
        ``out`` may not be replaced by a dataset.
    """
    if fmt not in _READERS:
        raise DataError(f"--format {fmt!r}: psdbench imports {' or '.join(FORMATS)}")
    files = [Path(p) for p in paths]
    if fmt == "asv":
        files = [p for p in files if p.name not in ("machine.json", "benchmarks.json")]
    if not files:
        raise DataError(f"no {fmt} results file given")
    blobs: dict[str, tuple[Path, bytes]] = {}
    for p in files:
        want = (".parquet", ".csv") if fmt == "benchopt" else (".json",)
        if p.suffix.lower() not in want:
            raise DataError(f"{p}: not {'an' if fmt == 'asv' else 'a'} {fmt} results file ({fmt} writes "
                            f"{' or '.join(want)} files)")
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise DataError(f"{p}: cannot read it ({exc.strerror or type(exc).__name__})") from None
        blobs.setdefault(hashlib.sha256(data).hexdigest(), (p, data))
    check_target(out)
    cells, runs, left = [], [], 0
    for sha, (p, data) in blobs.items():
        c, run, n = _READERS[fmt](p, data, f"{fmt}-{sha[:20]}")
        cells += c
        runs.append(run)
        left += n
    cells_df = pd.DataFrame(cells).assign(provenance=fmt) if cells else pd.DataFrame({"provenance": []})
    tables = {"cells": typed_table(cells_df, TABLES["cells"][1]), "runs": typed_table(pd.DataFrame(runs), TABLES["runs"][1])}
    tables |= {n: typed_table(pd.DataFrame(), TABLES[n][1]) for n in ("references", "calibration")}
    imported = [{"path": str(p), "format": fmt, "sha256": sha} for sha, (p, _) in blobs.items()]
    manifest = manifest_of(tables, {"imported": imported})
    manifest["points"] = {"count": 0}
    write_dataset(out, tables, manifest, {})
    return {"files": len(blobs), "duplicate_files": len(files) - len(blobs), "cells": len(cells), "runs": len(runs),
            "left_out": left, "out": str(out)}
