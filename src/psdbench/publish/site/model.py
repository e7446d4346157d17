"""The site's data: a combined dataset as the frames its pages show.

Every row keeps its identity (:func:`row_id`, from its ``cell_key`` and ``run_id``: the merge's key),
so every number a page shows links to the row it came from.  Rows are grouped by **setup**: one
machine class (``machine_fingerprint``), one BLAS thread count per worker and one executor (local
processes or Dask workers).  Times are ranked within one setup only; between setups a page shows
their calibration ratio (:func:`calibration_ratios`) and ranks nothing.

The columns the report's rules read are set here from the dataset's own (``known_to`` is the
reference's accuracy, ``reference`` its kind name, ``feasible == 1`` a verified point); the rules
themselves are the report's (:mod:`psdbench.report.measures.analysis`), called, never restated.
A row carries the harness's convergence curve and the solver's settings (defaults filled in), so the
site's times to a target and its labels are the report's; a row without a curve (an older dataset)
reaches a target at its wall time when its final point does.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd

from psdbench.report.measures.analysis import instance_sets, param_text, unit_keys

__all__ = ["SiteData", "calibration_ratios", "current_rows", "row_id", "run_setups", "site_data", "site_frame"]

#: The ``provenance`` of rows the harness verified (other values name an outside format).
VERIFIED_PROVENANCE = "psdbench"


def _json(v: Any) -> Any:
    if isinstance(v, (dict, list)):
        return v
    try:
        return json.loads(v) if isinstance(v, str) and v else {}
    except ValueError:
        return {}


def _dict(v: Any) -> dict[str, Any]:
    d = _json(v)
    return d if isinstance(d, dict) else {}


def row_id(cell_key: Any, run_id: Any) -> str:
    """The anchor of one row: a hash of the merge's key (``cell_key``, ``run_id``)."""
    return "r-" + hashlib.sha256(f"{cell_key}\0{run_id}".encode()).hexdigest()[:12]


def _blas_threads(threads: Mapping[str, Any]) -> str:
    n = threads.get("worker_blas_threads")
    return str(n) if n is not None else "?"


def run_setups(runs: pd.DataFrame) -> pd.DataFrame:
    """One row per run: its setup and what a page says of it.

    Returns
    -------
    DataFrame
        ``run_id``, ``setup`` (a short hash of machine class, BLAS threads and executor), ``setup_label``,
        ``machine_fingerprint``, ``blas_threads``, ``executor`` (``local`` or ``dask (k workers)``),
        ``processor``, ``cpus``, ``memory_gb``, ``system``, ``gpus``, ``psdbench_version``, ``commit``,
        ``environment_hash``, ``started_at``, ``finished_at``, ``command``.
    """
    rows = []
    for r in runs.to_dict("records"):
        m, v, t = _dict(r.get("machine")), _dict(r.get("versions")), _dict(r.get("threads"))
        workers = m.get("workers") or []
        executor = f"dask ({len(workers)} workers)" if workers else "local"
        fp = r.get("machine_fingerprint") or m.get("fingerprint") or "unknown"
        threads = _blas_threads(t)
        setup = hashlib.sha256(f"{fp}\0{threads}\0{'dask' if workers else 'local'}".encode()).hexdigest()[:10]
        cpu = str(m.get("processor") or "unknown CPU")
        label = (f"{cpu}, {m.get('cpus', '?')} CPUs, {m.get('memory_gb', '?')} GB; BLAS {threads} thread"
                 f"{'' if threads == '1' else 's'} per worker; {executor}")
        rows.append({"run_id": r.get("run_id"), "setup": setup, "setup_label": label, "machine_fingerprint": fp,
                     "blas_threads": threads, "executor": executor, "processor": cpu, "cpus": m.get("cpus"),
                     "memory_gb": m.get("memory_gb"), "system": m.get("platform") or m.get("system"),
                     "gpus": ", ".join(m.get("gpus") or []) or "none", "psdbench_version": str(v.get("psdbench") or "?"),
                     "commit": str(v.get("commit") or v.get("git") or ""), "environment_hash": r.get("environment_hash"),
                     "started_at": r.get("started_at"), "finished_at": r.get("finished_at"), "command": r.get("command")})
    cols = ["run_id", "setup", "setup_label", "machine_fingerprint", "blas_threads", "executor", "processor", "cpus",
            "memory_gb", "system", "gpus", "psdbench_version", "commit", "environment_hash", "started_at",
            "finished_at", "command"]
    return pd.DataFrame(rows, columns=cols)


#: The columns the pages and the report's rules read (plus ``s_*`` and the declared metrics').
COLUMNS = ("row_id", "run_id", "cell_key", "cell_id", "instance_key", "problem", "family", "dataset", "instance_params",
           "seed", "solver", "solver_label", "solver_params", "solver_code", "status", "outcome", "message", "feasible",
           "objective", "iterations", "wall_time_s", "cpu_time_s", "peak_rss_mb", "time_limit_s", "reference_objective",
           "reference_kind", "reference", "known_to", "reference_bound", "gap", "floor", "ranked_gap", "metrics",
           "created_at", "point", "provenance", "sense", "curve", "verified", "reference_label", "reference_accuracy",
           "reference_bounded", "setup", "setup_label", "psdbench_version", "commit", "build", "instance_text", "set",
           "unit")


def site_frame(cells: pd.DataFrame, setups: pd.DataFrame, metrics: Iterable[str] = ()) -> pd.DataFrame:
    """The dataset's rows with what the site and the report's rules read.

    Adds ``row_id``, the run's ``setup`` / ``setup_label`` / ``psdbench_version`` / ``commit``, ``build``
    (psdbench's version and commit, and the solver's code: what the history compares), the parsed
    ``instance_params`` / ``solver_params`` / ``metrics``, ``verified`` (a point the harness verified:
    ``feasible == 1`` on a psdbench row), ``reference_label`` / ``reference_accuracy`` (the dataset's
    ``reference`` and ``known_to``), an empty ``curve``, ``set`` (the report's comparable instance set)
    and ``unit`` (the report's independent unit).  Only the columns the site reads are kept
    (:data:`COLUMNS`, ``s_*``, and ``metric_<name>`` of ``metrics``, the declared ranking metrics).
    """
    # text columns as Python objects: pages group and select thousands of times, and Arrow-backed
    # strings (as Parquet reads them) pay a conversion at each
    want = set(COLUMNS) | {f"metric_{m}" for m in metrics}
    cells = cells[[c for c in cells.columns if c in want or c == "solver_settings"]]
    f = cells.astype({c: object for c in cells.columns if pd.api.types.is_string_dtype(cells[c].dtype)})
    if f.empty:
        for c in ("row_id", "setup", "setup_label", "build", "set", "unit", "verified"):
            f[c] = pd.Series(dtype=object)
        return f
    f["row_id"] = [row_id(k, r) for k, r in zip(f["cell_key"], f["run_id"])]
    by_run = setups.set_index("run_id")
    for c in ("setup", "setup_label", "psdbench_version", "commit"):
        f[c] = f["run_id"].map(by_run[c]) if len(by_run) else None
    f["setup"] = f["setup"].fillna("unknown")
    f["setup_label"] = f["setup_label"].fillna("a run the dataset does not describe")
    for c in ("instance_params", "solver_params", "metrics"):
        f[c] = f[c].map(_dict)
    prov = f["provenance"].fillna(VERIFIED_PROVENANCE) if "provenance" in f.columns else VERIFIED_PROVENANCE
    f["provenance"] = prov
    for c in ("solver", "solver_label"):  # asv times a commit, not a solver: its rows are the format's
        f[c] = f[c].astype(object).where(f[c].notna() & (f[c].astype(str) != ""), f["provenance"])
    for c in ("problem", "dataset", "family"):
        f[c] = f[c].astype(object).where(f[c].notna(), "")
    f["family"] = f["family"].where(f["family"] != "", f["problem"])
    obj = pd.to_numeric(f["objective"], errors="coerce")
    f["verified"] = (pd.to_numeric(f["feasible"], errors="coerce") == 1) & np.isfinite(obj) \
        & (f["provenance"] == VERIFIED_PROVENANCE)
    f["reference_label"] = f["reference"].fillna("none").astype(object)
    f["reference_accuracy"] = pd.to_numeric(f["known_to"], errors="coerce")
    f["reference_bounded"] = pd.to_numeric(f.get("reference_bound"), errors="coerce").notna() \
        if "reference_bound" in f.columns else False
    for c in ("gap", "floor", "ranked_gap", "objective", "wall_time_s", "time_limit_s", "reference_objective"):
        f[c] = pd.to_numeric(f[c], errors="coerce").astype(float)
    f.loc[~f["verified"], ["gap", "ranked_gap"]] = np.nan  # a gap only for a point the harness verified
    # the curve the report's time to a target reads (a dataset without one: the final point alone)
    curves = f["curve"] if "curve" in f.columns else pd.Series(None, index=f.index, dtype=object)
    f["curve"] = [c if isinstance(c, list) else [] for c in curves.map(_json)]
    f["sense"] = f["sense"].fillna("min") if "sense" in f.columns else "min"
    settings = (f["solver_settings"] if "solver_settings" in f.columns else f["solver_params"]).map(_dict)
    settings = [{**p, **s} for p, s in zip(f["solver_params"], settings)]
    names = sorted({k for d in settings for k in d})
    f = pd.concat([f, pd.DataFrame({f"s_{k}": pd.Series([d.get(k) for d in settings], index=f.index, dtype=object)
                                    for k in names}, index=f.index)], axis=1)
    f["set"] = instance_sets(f)
    f["unit"] = unit_keys(f, ("objective", "reference_objective"))
    code = f["solver_code"].fillna("").astype(str).str[:8]
    f["build"] = ("psdbench " + f["psdbench_version"].fillna("?").astype(str)
                  + f["commit"].fillna("").astype(str).map(lambda c: f" ({c[:8]})" if c else "")
                  + ", solver code " + code.where(code != "", "?"))
    f["instance_text"] = [param_text(p) + (f"; seed {int(s)}" if pd.notna(s) else "")
                          for p, s in zip(f["instance_params"], pd.to_numeric(f["seed"], errors="coerce"))]
    return f


def current_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows a ranking shows: per setup and cell description (``cell_id``), the rows of the newest
    build (the ``cell_key`` of the row stored last) with their replicates; rows of older builds are
    the history's.  The report does the same to one store (:func:`psdbench.report.frame.drop_superseded`)."""
    if frame.empty:
        return frame
    order = frame.sort_values("created_at", kind="stable")
    newest = order.groupby(["setup", "cell_id"], sort=False)["cell_key"].last()
    keep = pd.MultiIndex.from_frame(frame[["setup", "cell_id"]]).map(newest.to_dict().get) == frame["cell_key"].to_numpy()
    return frame[np.asarray(keep, bool)]


def calibration_ratios(calibration: pd.DataFrame, setups: pd.DataFrame) -> pd.DataFrame:
    """Per setup and calibration kernel: the median seconds (the median over its runs) and the ratio
    to the first setup's (setups in order of ``setups``), with the spread ``(max - min) / median``.

    Returns
    -------
    DataFrame
        ``setup``, ``kernel``, ``size``, ``median_s``, ``noise``, ``runs``, ``ratio`` (to the first setup
        that timed the kernel; NaN where none did).
    """
    cols = ["setup", "kernel", "size", "median_s", "noise", "runs", "ratio"]
    if calibration.empty or setups.empty:
        return pd.DataFrame(columns=cols)
    c = calibration.merge(setups[["run_id", "setup"]], on="run_id", how="inner")
    if c.empty:
        return pd.DataFrame(columns=cols)
    med = pd.to_numeric(c["median_s"], errors="coerce")
    c = c.assign(median_s=med, noise=(pd.to_numeric(c["max_s"], errors="coerce")
                                      - pd.to_numeric(c["min_s"], errors="coerce")) / med)
    g = c.groupby(["setup", "kernel"], sort=False).agg(size=("size", "first"), median_s=("median_s", "median"),
                                                       noise=("noise", "max"), runs=("run_id", "nunique")).reset_index()
    order = list(dict.fromkeys(setups["setup"]))
    g["_o"] = g["setup"].map({s: i for i, s in enumerate(order)})
    g = g.sort_values(["kernel", "_o"], kind="stable")
    base = g.groupby("kernel")["median_s"].transform("first")
    g["ratio"] = g["median_s"] / base
    return g.sort_values(["_o", "kernel"], kind="stable").drop(columns="_o")[cols].reset_index(drop=True)


def geometric_ratio(ratios: pd.Series) -> float:
    """The geometric mean of positive finite ratios (one machine over another, over the kernels)."""
    r = pd.to_numeric(ratios, errors="coerce").to_numpy(float)
    r = r[np.isfinite(r) & (r > 0)]
    return float(math.exp(np.log(r).mean())) if len(r) else math.nan


@dataclass(frozen=True)
class SiteData:
    """A combined dataset as the site shows it."""

    frame: pd.DataFrame
    setups: pd.DataFrame
    references: pd.DataFrame
    calibration: pd.DataFrame
    merge: dict[str, Any]


def site_data(tables: Mapping[str, pd.DataFrame], merge: Mapping[str, Any], metrics: Iterable[str] = ()) -> SiteData:
    """The site's frames of a dataset's ``tables`` (:func:`psdbench.publish.merge.combine_datasets`);
    ``metrics``: the families' declared ranking metrics (their columns are kept)."""
    setups = run_setups(tables["runs"])
    frame = site_frame(tables["cells"], setups, metrics)
    return SiteData(frame, setups, tables["references"], tables["calibration"], dict(merge))
