"""One cell's result, typed: the single definition of the results columns.

:class:`CellResult` is what the worker returns, what the runner completes for killed or crashed
workers, and what the store writes.  The store's schema (column names, SQL types, which columns
hold JSON) is derived from its fields, and :data:`RESULT_COLUMNS` lists them in order.

``curve`` (JSON) is the harness's own convergence curve: the solver's sampled iterates re-scored
with the instance's ``objective`` and ``verify`` (see :func:`psdbench.harness.workers.worker.rescore`),
a list of ``{"t", "objective", "feasible", "repaired"}`` sorted by ``t`` (seconds since the
solver started, the time axis of ``wall_time_s``), the returned point last.  ``trace`` stays the solver's own record.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, fields
from typing import Any, Mapping


def _col(sql: str, json_: bool = False, default: Any = None, factory: Any = None) -> Any:
    """A dataclass field that records its SQL type and whether it is stored as JSON text."""
    meta = {"sql": sql, "json": json_}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass
class CellResult:
    """One row of the results store (one run of one cell).

    The identity fields (``run_id`` to ``solver_params``) come from the grid; the worker fills the
    outcome; the reference fields are filled by :func:`psdbench.harness.reference.finalize` once the
    instance's cells are in; ``created_at`` when the row is stored; ``solution`` (schema 3) only
    when the run saves solutions; ``cell_id``, ``solver_code`` and ``problem_code`` (schema 4) say
    which cell it is whatever computed it, and which code did; ``time_limit_s`` (schema 5) is the
    cell's time limit, the time the report charges a failure at (NULL in older rows).
    """

    run_id: str = _col("TEXT", default="")
    cell_key: str = _col("TEXT", default="")
    instance_key: str = _col("TEXT", default="")
    problem: str = _col("TEXT", default="")
    dataset: str = _col("TEXT", default="")
    instance_params: dict[str, Any] = _col("TEXT", json_=True, factory=dict)
    seed: int = _col("INTEGER", default=0)
    solver: str = _col("TEXT", default="")
    solver_params: dict[str, Any] = _col("TEXT", json_=True, factory=dict)
    status: str = _col("TEXT", default="error")
    message: str = _col("TEXT", default="")
    wall_time_s: float | None = _col("REAL")
    cpu_time_s: float | None = _col("REAL")
    peak_rss_mb: float | None = _col("REAL")
    iterations: int | None = _col("INTEGER")
    objective: float | None = _col("REAL")
    reference_objective: float | None = _col("REAL")
    reference_kind: str | None = _col("TEXT")
    gap_abs: float | None = _col("REAL")
    gap_rel: float | None = _col("REAL")
    feasible: int | None = _col("INTEGER")
    min_eig: float | None = _col("REAL")
    max_residual: float | None = _col("REAL")
    metrics: dict[str, Any] = _col("TEXT", json_=True, factory=dict)
    trace: list[dict[str, float]] = _col("TEXT", json_=True, factory=list)
    curve: list[dict[str, float]] = _col("TEXT", json_=True, factory=list)
    created_at: str | None = _col("TEXT")
    solution: str | None = _col("TEXT")  # the saved point's archive, relative to the store (harness/store/solutions.py)
    # schema 4: the cell's code-independent identity (harness/store/keys.py cell_id) and the code hashes in its key
    cell_id: str | None = _col("TEXT")
    solver_code: str | None = _col("TEXT")
    problem_code: str | None = _col("TEXT")
    # schema 5: the cell's time limit (seconds; the run's timeout), what a failure is charged at
    time_limit_s: float | None = _col("REAL")

    @classmethod
    def for_cell(cls, cell: Any, run_id: str, time_limit_s: float | None = None) -> "CellResult":
        """The identity of a grid cell (a :class:`~psdbench.harness.grid.expand.Cell`) in run ``run_id``, with
        its time limit in seconds."""
        return cls(run_id=run_id, time_limit_s=None if time_limit_s is None else float(time_limit_s), cell_key=cell.cell_key, instance_key=cell.instance_key, problem=cell.problem,
                   dataset=cell.dataset, instance_params=dict(cell.instance_params), seed=int(cell.seed),
                   solver=cell.solver, solver_params=dict(cell.solver_params), cell_id=cell.cell_id or None,
                   solver_code=cell.solver_code or None, problem_code=cell.problem_code or None)

    @classmethod
    def from_row(cls, row: Mapping[str, Any]) -> "CellResult":
        """From a mapping of column values (JSON columns as text or decoded; missing ones default)."""
        kw: dict[str, Any] = {}
        for f in fields(cls):
            if f.name not in row:
                continue
            v = row[f.name]
            if f.metadata["json"] and isinstance(v, str):
                v = json.loads(v)
            if v is None and f.metadata["json"]:
                continue  # the default: empty dict / list
            kw[f.name] = v
        return cls(**kw)

    def to_values(self) -> list[Any]:
        """Column values in :data:`RESULT_COLUMNS` order, JSON columns encoded."""
        return [json.dumps(getattr(self, f.name), default=_json_default) if f.metadata["json"] else getattr(self, f.name)
                for f in fields(self)]

    def as_dict(self) -> dict[str, Any]:
        """The fields as a plain dict (JSON columns decoded)."""
        return asdict(self)


def _json_default(v: Any) -> Any:
    """What ``json`` cannot encode by itself: numpy scalars and arrays as numbers and lists, sets as
    sorted lists, anything else as its ``repr`` (a solver's trace never aborts a run)."""
    import numpy as np

    if isinstance(v, np.generic):
        return v.item()
    if isinstance(v, np.ndarray):
        return v.tolist()
    if isinstance(v, (set, frozenset)):
        try:
            return sorted(v)
        except TypeError:
            return [repr(x) for x in v]
    return repr(v)


def jsonable(v: Any) -> Any:
    """``v`` as plain JSON values (:func:`_json_default` for the rest; NaN / inf kept as floats)."""
    return json.loads(json.dumps(v, default=_json_default))


#: Column names of the results store, in order (one per :class:`CellResult` field).
RESULT_COLUMNS: list[str] = [f.name for f in fields(CellResult)]
#: Columns stored as JSON text.
JSON_COLUMNS: tuple[str, ...] = tuple(f.name for f in fields(CellResult) if f.metadata["json"])
#: SQL type of each column.
SQL_TYPES: dict[str, str] = {f.name: f.metadata["sql"] for f in fields(CellResult)}


#: The message of an ``out_of_memory`` row starts with this.
OUT_OF_MEMORY_NOTE = "out of memory"

# ------------------------------------------------------------------------------------ outcomes
#: What each :func:`outcome` word means (for a legend or a glossary), in display order.
OUTCOMES: dict[str, str] = {
    "ok": "solved; the returned point verified",
    "max_iter": "stopped at the solver's iteration limit; the returned point verified",
    "inaccurate": "the solver returned a point it calls inaccurate (e.g. cvxpy's optimal_inaccurate); it verified",
    "timeout": "stopped at the cell's deadline; its best verified point (if any) is kept",
    "rejected": "the returned point failed the harness's verification (the message names the check)",
    "solver infeasible": "the solver reported the problem infeasible and returned no point",
    "diverged": "NaN or inf in the returned point, or the solver reported unboundedness",
    "error": "the solver raised (the message holds the traceback)",
    "crashed": "the worker process died",
    "out_of_memory": "the cell reached its memory cap (a MemoryError, or its worker died with its address space "
                     "near the cap)",
    "skipped": "the solver does not run on this instance (the message says why)",
}


def outcome(status: str, message: str | None = "") -> str:
    """What happened to a cell, in one word of :data:`OUTCOMES`, from its ``status`` and ``message``.

    The store's ``status`` values are a contract (:class:`psdbench.api.Status`); the message tells
    apart outcomes that share one: ``infeasible`` is ``rejected`` (message starts with
    :data:`psdbench.api.REJECTED`; stores written before that wording say ``verification
    failed``) or ``solver infeasible``; ``max_iter`` is ``inaccurate`` when the message starts with
    :data:`psdbench.api.INACCURATE` (or, in older stores, names cvxpy's ``optimal_inaccurate``).

    Parameters
    ----------
    status : str
        The cell's status.
    message : str, optional
        The cell's message.

    Returns
    -------
    str
        A key of :data:`OUTCOMES` (an unknown status is returned as it is).
    """
    from psdbench.api import INACCURATE, REJECTED, SOLVER_INFEASIBLE

    msg = str(message or "")
    if status == "infeasible":
        if msg.startswith(REJECTED) or "verification failed" in msg:
            return "rejected"
        if msg.startswith(SOLVER_INFEASIBLE) or "cvxpy status infeasible" in msg:
            return "solver infeasible"
        return "rejected"  # a point that failed verification, from a store that recorded no reason
    if status == "max_iter" and (msg.startswith(INACCURATE) or "optimal_inaccurate" in msg):
        return "inaccurate"
    return str(status)


def solver_word(message: str | None, metrics: Mapping[str, Any] | None = None) -> str:
    """The solver's own status word for a cell, where it gave one: ``metrics["solver_status"]`` (a
    solver's ``info["status"]``), else the ``cvxpy status X`` or ``(solver: X)`` its message quotes; ``""``."""
    import re

    m = metrics if isinstance(metrics, Mapping) else {}
    for k in ("solver_status", "solver_phase", "solver_termination"):
        if isinstance(m.get(k), str) and m[k].strip():
            return m[k].strip()
    msg = str(message or "")
    hit = re.search(r"cvxpy status (\w+)", msg) or re.search(r"\(solver: ([^);]{1,60})\)", msg)
    return hit.group(1).strip() if hit else ""


def outcome_column(frame: Any) -> Any:
    """:func:`outcome` of every row of a results frame (columns ``status`` and ``message``), a Series."""
    msg = frame["message"] if "message" in frame else [""] * len(frame)
    import pandas as pd

    return pd.Series([outcome(s, m) for s, m in zip(frame["status"], msg)], index=frame.index, name="outcome")


#: How a skip reason names the extra that installs a missing package (:func:`psdbench.api.missing_extra`).
_EXTRA = r"pip install '?psdbench\[([A-Za-z0-9_.-]+)\]'?"


def missing_extras(frame: Any) -> dict[str, int]:
    """Configurations not run for a missing optional extra: ``{extra: configurations}``.

    A ``skipped`` cell whose message holds the extra's install command
    (:func:`psdbench.api.missing_extra`) counts for its solver configuration (solver and solver
    parameters); each configuration is counted once per extra, however many cells it has.

    Parameters
    ----------
    frame : DataFrame
        Results rows (columns ``status``, ``message``, ``solver``, ``solver_params``).

    Returns
    -------
    dict
        Extra name to the number of configurations it would let run, sorted by name.
    """
    import re

    if not len(frame) or "message" not in frame:
        return {}
    seen: dict[str, set[str]] = {}
    params = frame["solver_params"] if "solver_params" in frame else [None] * len(frame)
    for status, msg, solver, sp in zip(frame["status"], frame["message"], frame["solver"], params):
        hit = re.search(_EXTRA, str(msg or "")) if status == "skipped" else None
        if hit:
            seen.setdefault(hit.group(1), set()).add(f"{solver} {json.dumps(sp, sort_keys=True, default=str)}")
    return {extra: len(configs) for extra, configs in sorted(seen.items())}
