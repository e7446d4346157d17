"""``psdbench verify DATASET``: every row whose point the dataset carries re-checked on this machine.

For each such row, from the stored point alone: the archive's content hash, then the instance rebuilt
from its problem, dataset, parameters and seed, the point's objective recomputed by the instance and
verified by its own ``verify`` (the harness's checks, :func:`psdbench.harness.workers.worker.score`
without repair), and the gap to the row's reference.  With ``references=True``, each certified
reference is also certified again (the family's ``certified_reference`` hook, as the harness runs
it) and must overlap the stored interval.  A row that does not reproduce is listed with what
differs; nothing is written.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
from pathlib import Path
from typing import Any, Iterator, NamedTuple

import numpy as np
import pandas as pd

from psdbench.publish.read import read_dataset

__all__ = ["Mismatch", "RTOL", "verify_dataset"]

#: Relative agreement asked of a recomputed objective or gap (same code, another machine: rounding).
RTOL = 1e-7


class Mismatch(NamedTuple):
    """One row that did not reproduce: its table, its key, and what differs."""

    table: str
    key: str
    what: str


def _close(a: float, b: float, rtol: float = RTOL) -> bool:
    return (math.isnan(a) and math.isnan(b)) or abs(a - b) <= rtol * max(1.0, abs(a), abs(b))


def _num(v: Any) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        return math.nan


def _rows(cells: pd.DataFrame) -> Iterator[dict[str, Any]]:
    with_point = cells[cells["point"].notna()] if "point" in cells.columns else cells.iloc[:0]
    yield from with_point.to_dict("records")


def _check_cell(row: dict[str, Any], folder: Path, registry: Any, cache: dict[str, Any]) -> list[str]:
    from psdbench.api import problem_sense
    from psdbench.harness.workers.worker import score

    data = (folder / row["point"]).read_bytes()
    if hashlib.sha256(data).hexdigest() != row["point_sha256"]:
        return [f"point {row['point']}: its content does not match its SHA-256 (edited or damaged)"]
    with np.load(io.BytesIO(data), allow_pickle=False) as z:
        variables = {k: z[k] for k in z.files}
    spec = (row["problem"], row["dataset"], row["instance_params"], int(row["seed"]))
    if spec not in cache:
        problem = registry.problem(row["problem"])
        ds = registry.load_dataset(row["dataset"])
        cache.clear()  # one instance at a time: rows of one instance are adjacent in a dataset
        cache[spec] = (problem, problem.build(ds, json.loads(row["instance_params"] or "{}"), int(row["seed"])))
    problem, instance = cache[spec]
    got = score(instance, variables, try_repair=False)
    out = []
    if got is None:
        return ["the instance could not score the stored point"]
    stored_feasible = _num(row.get("feasible"))
    if not math.isnan(stored_feasible) and int(stored_feasible) != got["feasible"]:
        out.append(f"verification: stored feasible={int(stored_feasible)}, recomputed {got['feasible']} "
                   f"({got['feas'].reason() or 'passes'})")
    if not _close(_num(row.get("objective")), got["objective"]):
        out.append(f"objective: stored {_num(row.get('objective')):.12g}, recomputed {got['objective']:.12g}")
    ref = _num(row.get("reference_objective"))
    stored_gap = _num(row.get("gap_abs"))
    if got["feasible"] and not math.isnan(ref) and not math.isnan(stored_gap):
        gap = (ref - got["objective"]) if problem_sense(problem) == "max" else (got["objective"] - ref)
        if not _close(stored_gap, gap):
            out.append(f"gap_abs: stored {stored_gap:.6g}, recomputed {gap:.6g}")
    return out + _check_evaluation(instance, variables, row)


def _check_evaluation(instance: Any, variables: dict[str, Any], row: dict[str, Any]) -> list[str]:
    """The family's evaluation of the stored point again (its certified bound, its task metric):
    every number it gives that the row recorded must agree to :data:`RTOL`, times (``*_s``: seconds a
    family measured while evaluating, this machine's, not the row's) excepted."""
    from psdbench.api import Solution

    try:
        stored = json.loads(row.get("metrics") or "{}")
    except ValueError:
        stored = {}
    if not isinstance(stored, dict) or not hasattr(instance, "evaluate"):
        return []
    try:
        again = instance.evaluate(Solution(variables=dict(variables)))
    except Exception as exc:  # the row's metrics came from this evaluation: it must run here too
        return [f"evaluation failed here: {type(exc).__name__}: {exc}".splitlines()[0]]
    out = []
    for k, v in sorted((again or {}).items()):
        if k.endswith("_s"):
            continue
        old = stored.get(k)
        if isinstance(v, bool) or not isinstance(v, (int, float)) or isinstance(old, bool) \
                or not isinstance(old, (int, float)):
            continue
        if not (math.isnan(float(v)) and math.isnan(float(old))) and not _close(float(old), float(v)):
            out.append(f"metric {k}: stored {float(old):.12g}, recomputed {float(v):.12g}")
    return out


def _check_reference(ref: dict[str, Any], registry: Any) -> list[str]:
    from psdbench.harness.reference import reference_record
    from psdbench.harness.workers.worker import run_reference

    task = {"problem": ref["problem"], "dataset": ref["dataset"], "seed": int(ref["seed"]),
            "instance_params": json.loads(ref["instance_params"] or "{}"), "timeout": None}
    res = run_reference(task)
    if res.get("status") == "error":
        return [f"certification failed here: {str(res.get('message', '')).splitlines()[0]}"]
    new = reference_record(ref["instance_key"], {}, res)
    if new["kind"] != "certified":
        return [f"not certified here (kind {new['kind']})"]
    a = sorted((_num(ref["value"]), _num(ref["lower"])))
    b = sorted((_num(new["value"]), _num(new["lower"])))
    tol = RTOL * max(1.0, abs(a[1]), abs(b[1]))
    if max(a[0], b[0]) > min(a[1], b[1]) + tol:
        return [f"certified interval [{b[0]:.12g}, {b[1]:.12g}] here does not meet the stored [{a[0]:.12g}, {a[1]:.12g}]"]
    return []


def verify_dataset(path: str | Path, registry: Any = None, references: bool = False) -> tuple[int, list[Mismatch]]:
    """Re-check the dataset at ``path``.

    Parameters
    ----------
    path : path
        A dataset folder (``psdbench export``).
    registry : Registry, optional
        Problems and datasets to rebuild instances with; default :func:`psdbench.registry.discover`.
    references : bool
        Also certify each certified reference again (a solve per instance: slower).

    Returns
    -------
    (int, list of Mismatch)
        How many rows were checked, and those that did not reproduce.
    """
    if registry is None:
        from psdbench.registry import discover

        registry = discover()
    folder = Path(path)
    tables = read_dataset(folder)
    mismatches: list[Mismatch] = []
    checked = 0
    cache: dict[str, Any] = {}
    cells = tables["cells"].sort_values(["problem", "dataset", "instance_params", "seed"], kind="stable")
    for row in _rows(cells):
        checked += 1
        try:
            whats = _check_cell(row, folder, registry, cache)
        except Exception as exc:  # a row that cannot be rebuilt here is a row that does not reproduce
            whats = [f"could not rebuild: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"]
        mismatches += [Mismatch("cells", str(row["cell_key"]), w) for w in whats]
    if references:
        refs = tables["references"]
        for ref in refs[refs["kind"] == "certified"].to_dict("records"):
            checked += 1
            try:
                whats = _check_reference(ref, registry)
            except Exception as exc:
                whats = [f"could not certify: {type(exc).__name__}: {exc}"]
            mismatches += [Mismatch("references", str(ref["instance_key"]), w) for w in whats]
    return checked, mismatches
