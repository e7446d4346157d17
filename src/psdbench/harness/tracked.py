"""The suites asv tracks: a family marks one of its suites with an ``[asv]`` table, and the generic
asv module (``benchmarks/bench_suites.py``) turns it into benchmarks.

A suite's ``[asv]`` table (keys :data:`psdbench.api.ASV_SUITE_KEYS`) picks the seeds asv runs
(default: the suite's first seed) and the task metric it tracks.  :func:`tracked_cases` expands
such a suite with those seeds, as ``run --suite`` would (every check included), and groups its
cells into *cases*: one per family, comparable instance set (the report's sets: problem, dataset
and the instance parameters that are not replicates) and solver configuration (the report's
``solver_label``).  :func:`case_summary` gives, from a results store, what asv tracks per case:
the gap the report ranks by (``gap`` of the tidy frame, the worst over the case's cells), the
task metric (mean over its cells) and the share of cells whose final point verified.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..api import ASV_SUITE_KEYS, PsdbenchError
from .limits import echo

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..registry import Registry
    from .grid import Grid


def asv_settings(spec: dict[str, Any], name: str, seeds: Sequence[int]) -> dict[str, Any] | None:
    """The checked ``[asv]`` table of a parsed suite (``None``: asv does not track it).

    ``seeds`` are the suite's own (``[run] seeds``); asv runs the table's ``seeds``, else the first
    of them.  Raises a one-line :class:`PsdbenchError` on anything malformed.
    """
    table = spec.get("asv")
    if table is None:
        return None
    if not isinstance(table, dict) or set(table) - set(ASV_SUITE_KEYS):
        raise PsdbenchError(f"grid {name}: [asv] must be a table of {', '.join(sorted(ASV_SUITE_KEYS))}")
    chosen = table.get("seeds", list(seeds)[:1])
    if not isinstance(chosen, list) or not chosen or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**32 for s in chosen):
        raise PsdbenchError(f"grid {name}: [asv] seeds must be a non-empty list of integers >= 0, not {echo(chosen)}")
    metric = table.get("metric")
    if metric is not None and (not isinstance(metric, str) or not metric):
        raise PsdbenchError(f"grid {name}: [asv] metric must be the name of a metric, not {echo(metric)}")
    return {"seeds": list(dict.fromkeys(chosen)), "metric": metric}


def tracked_suites(reg: Registry) -> list[str]:
    """The names of the registered suites that carry an ``[asv]`` table, sorted."""
    out = []
    for name in reg.suite_names():
        try:
            spec = reg.read_suite(name)
        except PsdbenchError:  # a malformed suite is reported by `run --suite`, not here
            continue
        if "asv" in spec:
            out.append(name)
    return out


@dataclass(frozen=True)
class TrackedCase:
    """The cells of one family, instance set and solver configuration of a tracked suite, each as
    ``(problem, dataset, instance_params, seed, solver, solver_params)`` (no keys: they hash the
    code, and the case is the same whatever code computes it)."""

    suite: str
    family: str
    instance_set: str
    config: str
    cells: tuple[tuple[str, str, dict[str, Any], int, str, dict[str, Any]], ...]


def tracked_grid(name: str, reg: Registry) -> tuple[dict[str, Any], Grid, dict[str, Any]]:
    """``(spec, grid, settings)``: suite ``name`` with its ``[run] seeds`` replaced by asv's, expanded."""
    from .grid import expand

    spec = reg.read_suite(name)
    run = spec.get("run", {}) if isinstance(spec.get("run", {}), dict) else {}
    settings = asv_settings(spec, name, run.get("seeds", [0]))
    if settings is None:
        raise PsdbenchError(f"suite {name} has no [asv] table: asv does not track it")
    spec = {**spec, "run": {**run, "seeds": settings["seeds"]}}
    spec.pop("asv")
    return spec, expand(spec, name, reg), settings


def labels(problem: str, dataset: str, instance_params: dict[str, Any], solver: str,
           solver_params: dict[str, Any]) -> tuple[str, str]:
    """``(instance set, solver configuration)`` of a cell as the report labels them."""
    from ..report.analysis import set_key
    from ..report.frame import solver_label

    k = set_key(instance_params)
    return f"{problem}: {dataset}" + (f" ({k})" if k else ""), solver_label(solver, solver_params)


def tracked_cases(name: str, reg: Registry) -> tuple[Grid, dict[str, Any], list[TrackedCase]]:
    """``(grid, settings, cases)`` of tracked suite ``name``; cases in grid order."""
    _, grid, settings = tracked_grid(name, reg)
    groups: dict[tuple[str, str, str], list[Any]] = {}
    for c in grid.cells:
        iset, config = labels(c.problem, c.dataset, c.instance_params, c.solver, c.solver_params)
        groups.setdefault((grid.families.get(c.problem, c.problem), iset, config), []).append(
            (c.problem, c.dataset, dict(c.instance_params), int(c.seed), c.solver, dict(c.solver_params)))
    return grid, settings, [TrackedCase(name, f, s, c, tuple(cells)) for (f, s, c), cells in groups.items()]


def case_summary(frame: pd.DataFrame, case: TrackedCase, metric: str | None) -> dict[str, float]:
    """What asv tracks of one case, from the tidy frame of a store holding its suite's cells
    (:func:`tracked_frame`); rows are matched on the case's labels, not on keys.

    ``gap``: the largest ``gap`` (the relative gap the report ranks by) over the case's cells, NaN
    when a cell has none (no reference, or its point did not verify); ``metric``: the mean of
    ``metric_<metric>`` (NaN when not declared or absent); ``verified``: the share of the cells
    whose final point verified; ``cells``: how many of the case's cells the frame holds.
    """
    nan = math.nan
    if frame.empty:
        return {"gap": nan, "metric": nan, "verified": nan, "cells": 0.0}
    mine = [labels(p, d, ip, s, sp) == (case.instance_set, case.config) and (p, d, int(seed)) in
            {(c[0], c[1], c[3]) for c in case.cells}
            for p, d, ip, seed, s, sp in zip(frame["problem"], frame["dataset"], frame["instance_params"],
                                              frame["seed"], frame["solver"], frame["solver_params"])]
    rows = frame[mine]
    if rows.empty:
        return {"gap": nan, "metric": nan, "verified": nan, "cells": 0.0}
    verified = rows["verified"].astype(bool)
    gaps = rows["gap"].astype(float).where(verified)  # an unverified point has no gap to rank by
    gap = float(gaps.max()) if gaps.notna().all() else nan
    col = f"metric_{metric}" if metric else None
    value = nan
    if col and col in rows.columns:
        import pandas as pd

        vals = pd.to_numeric(rows[col], errors="coerce")
        value = float(vals.mean()) if vals.notna().any() else nan
    return {"gap": gap, "metric": value, "verified": float(verified.mean()),
            "cells": float(len(rows))}


def tracked_frame(db: Any, reg: Registry) -> pd.DataFrame:
    """The tidy frame of a store's cells, as the report builds it (references, gaps, metrics)."""
    from ..report.frame import tidy_frame
    from .inputs import ReadOnlyStore
    from .reference import annotate

    store = ReadOnlyStore(db)
    refs = store.references_frame()
    return tidy_frame(annotate(store.results_frame(), refs), refs, reg.problems, reg.solvers)
