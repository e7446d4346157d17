"""The results dataset's tables and columns, stated once: the exporter writes them, the reader checks
them, and ``docs/dataset.md`` lists them (``tests/test_publish.py`` keeps the page current).

A dataset is a folder: ``dataset.json`` (the manifest: format, schema version, psdbench's version,
the source store, each table's file, row count and columns) and one Parquet file per table,
``cells.parquet``, ``runs.parquet``, ``references.parquet`` and ``calibration.parquet``.  :data:`SCHEMA_VERSION` counts
incompatible changes; a reader of version ``v`` reads every dataset of version ``<= v``.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = ["CALIBRATION", "CELLS", "FORMAT", "METRIC_PREFIX", "POINT_CAP", "REFERENCES", "RUNS", "SCHEMA_VERSION", "TABLES", "Column"]

#: The manifest's ``format`` value: what marks a folder as a psdbench dataset.
FORMAT = "psdbench-dataset"
#: Incompatible changes of the tables below; a reader reads every version up to its own.
SCHEMA_VERSION = 1
#: Points larger than this (bytes, default of ``psdbench export --point-cap-mb``) stay out of a dataset.
POINT_CAP = 1 << 20
#: Columns ``metric_<name>``: one per metric a family records (numbers; else JSON text).
METRIC_PREFIX = "metric_"


class Column(NamedTuple):
    """One column of a dataset table: its name, its Arrow type and what it means."""

    name: str
    type: str
    doc: str


_S, _F, _I, _B = "string", "double", "int64", "bool"

#: One row per cell: everything a verdict uses.  Followed by one ``metric_<name>`` column per metric.
CELLS: tuple[Column, ...] = (
    Column("run_id", _S, "the run that computed the row (a row of `runs`)"),
    Column("cell_key", _S, "hash of everything that determines the result, the solver's code and library versions included"),
    Column("cell_id", _S, "hash of the cell's description alone (problem, dataset, parameters, seed, solver): equal across code versions"),
    Column("instance_key", _S, "hash of the instance (problem, dataset content, parameters, seed, the problem's code): a row of `references`"),
    Column("problem", _S, "the problem's registered name"),
    Column("family", _S, "the problem's family (one section of the report)"),
    Column("dataset", _S, "the dataset's registered name"),
    Column("instance_params", _S, "the instance parameters, JSON"),
    Column("seed", _I, "the instance's seed"),
    Column("solver", _S, "the solver's registered name"),
    Column("solver_label", _S, "the solver with its non-default parameters, as the report labels it"),
    Column("solver_params", _S, "the solver parameters, JSON"),
    Column("solver_code", _S, "hash of the solver's code"),
    Column("problem_code", _S, "hash of the problem's code"),
    Column("status", _S, "the harness's status: ok, max_iter, timeout, infeasible, diverged, error, crashed, out_of_memory, skipped"),
    Column("outcome", _S, "the report's word for what happened (reached, tie at 0, beyond the bound, rejected, ...)"),
    Column("message", _S, "the first line the harness or the solver gave"),
    Column("feasible", _F, "1 when the harness verified the returned point, 0 when it rejected it, empty when there was none"),
    Column("objective", _F, "the returned point's objective, recomputed by the harness"),
    Column("iterations", _F, "the solver's reported iterations"),
    Column("wall_time_s", _F, "seconds of the solve, measured by the harness"),
    Column("cpu_time_s", _F, "CPU seconds of the solve, child processes included"),
    Column("peak_rss_mb", _F, "resident memory the whole cell added (solve, verification, evaluation and its certificates), MiB; the solve's own and the process's peak are metrics (solve_peak_rss_mb, process_peak_rss_mb)"),
    Column("time_limit_s", _F, "the cell's time limit, seconds"),
    Column("min_eig", _F, "the smallest eigenvalue of the point's PSD variable (where the family records one)"),
    Column("max_residual", _F, "the point's largest constraint residual (where the family records one)"),
    Column("reference_objective", _F, "the instance's reference value the gap is measured against"),
    Column("reference_kind", _S, "the store's reference kind: certified, interval, bound, best_verified, none"),
    Column("reference", _S, "the reference's one kind name in the report"),
    Column("known_to", _F, "how accurately the reference is known (relative): the floor no gap below is told apart"),
    Column("reference_lower", _F, "the certified interval's other end, where the reference is an interval"),
    Column("reference_bound", _F, "a certified one-sided bound, where the reference is one"),
    Column("below_certified", _B, "a verified point better than a certified reference by more than its width"),
    Column("gap_abs", _F, "objective minus reference, signed so that worse is positive (the harness's)"),
    Column("gap_rel", _F, "gap_abs / max(|reference|, 1e-12), the harness's stored relative gap"),
    Column("gap", _F, "the report's gap: gap_abs / max(|reference|, 1)"),
    Column("floor", _F, "max(reference accuracy, verification tolerance, repair allowance): the report's floor"),
    Column("ranked_gap", _F, "the gap the report ranks by: 0 within the floor below the reference, empty beyond it"),
    Column("metrics", _S, "every metric the cell recorded, JSON (the `metric_<name>` columns hold the numbers)"),
    Column("sense", _S, "min or max: whether the problem minimizes or maximizes its objective"),
    Column("solver_settings", _S, "the solver parameters with its defaults filled in, JSON (its stopping tolerance among them)"),
    Column("curve", _S, "the harness's convergence curve, JSON: [{t, objective, feasible}], the sampled iterates re-scored "
                        "by the harness (the report's time to each target reads it)"),
    Column("created_at", _S, "when the row was stored (UTC, ISO 8601)"),
    Column("solution", _S, "the saved point's archive, relative to the store, where the run kept it"),
    Column("point", _S, "the returned point carried in the dataset (`points/<sha256>.npz`, under the export's cap), for `psdbench verify`"),
    Column("point_sha256", _S, "SHA-256 of that archive: the point is content-addressed, an edited one is found"),
    Column("provenance", _S, "psdbench: a row the harness ran and checked itself (empty in a dataset exported before this "
                             "column: psdbench's too); else the outside format it was read from (benchopt, asv): its "
                             "quality is what that tool reported, nobody verified or certified it"),
)

#: One row per run: where and with what it ran.
RUNS: tuple[Column, ...] = (
    Column("run_id", _S, "the run's id"),
    Column("started_at", _S, "when the run started (UTC)"),
    Column("finished_at", _S, "when the run finished (UTC)"),
    Column("command", _S, "the command line"),
    Column("machine_fingerprint", _S, "hash of the machine's class (CPU model, cores, memory, OS, architecture): runs with the same one ran on machines of one class (a run recorded before fingerprints: recovered from its record)"),
    Column("environment_hash", _S, "hash of every installed distribution and its version (the list is in `machine`)"),
    Column("machine", _S, "the machine: OS, CPU model and count, memory, GPUs, the installed distributions, JSON (a Dask run: each worker's under `workers`)"),
    Column("versions", _S, "psdbench's and the libraries' versions, psdbench's commit where known, JSON"),
    Column("threads", _S, "the thread pools (BLAS, LAPACK, OpenMP: library, version, build, threads), JSON"),
)

#: One row per instance: its reference.
REFERENCES: tuple[Column, ...] = (
    Column("instance_key", _S, "the instance (a value of `cells.instance_key`)"),
    Column("problem", _S, "the problem's registered name"),
    Column("dataset", _S, "the dataset's registered name"),
    Column("instance_params", _S, "the instance parameters, JSON"),
    Column("seed", _I, "the instance's seed"),
    Column("value", _F, "the reference value: an exactly feasible point's objective"),
    Column("lower", _F, "the other end of a certified interval"),
    Column("bound", _F, "a certified one-sided bound"),
    Column("gap", _F, "the interval's relative width"),
    Column("spread", _F, "the spread of the reference's agreeing solves"),
    Column("kind", _S, "certified, interval, bound, best_verified or none"),
    Column("solver", _S, "what computed the reference"),
    Column("solver_version", _S, "its version"),
    Column("status", _S, "its status"),
    Column("wall_time_s", _F, "seconds it took"),
    Column("message", _S, "its message"),
    Column("created_at", _S, "when it was stored (UTC)"),
)

#: One row per calibration kernel of each run: the machine's speed and noise on pinned kernels.
CALIBRATION: tuple[Column, ...] = (
    Column("run_id", _S, "the run that timed it"),
    Column("machine_fingerprint", _S, "the run's machine class"),
    Column("kernel", _S, "matmul (dense BLAS-3), eigh (dense LAPACK), sparse_solve (sparse direct), interpreter (Python)"),
    Column("size", _I, "the kernel's size (matrix order, grid side, loop length)"),
    Column("repeats", _I, "timed repetitions, after one untimed call, on one BLAS thread"),
    Column("median_s", _F, "median seconds: two machines compare by the ratio of their medians"),
    Column("min_s", _F, "fastest repetition, seconds"),
    Column("max_s", _F, "slowest repetition, seconds: (max - min) / median is the machine's noise"),
)

#: Table name to (file, columns).
TABLES: dict[str, tuple[str, tuple[Column, ...]]] = {
    "cells": ("cells.parquet", CELLS), "runs": ("runs.parquet", RUNS), "references": ("references.parquet", REFERENCES),
    "calibration": ("calibration.parquet", CALIBRATION),
}
