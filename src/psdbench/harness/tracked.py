"""The suites asv tracks: a family marks one of its suites with an ``[asv]`` table, and the generic
asv module (``benchmarks/bench_suites.py``) turns it into benchmarks.

A suite's ``[asv]`` table (keys :data:`psdbench.api.ASV_SUITE_KEYS`) picks the seeds asv runs
(default: the suite's first seed), the task metric it tracks and that metric's best value.
:func:`tracked_cases` expands such a suite with those seeds, as ``run --suite`` would (every check
included), and groups its cells into *cases*: one per family, comparable instance set (the
report's sets: problem, dataset and the instance parameters that are not replicates) and solver
configuration (the report's ``solver_label``).  :func:`case_summary` gives, from a results store,
what asv tracks per case, and :func:`tracked_value` reads one value or names why it was lost.

Direction (the one rule; ``benchmarks/bench_suites.py`` and the docs refer to it): asv reads
every value as a cost, a rise by more than its factor is a regression (``asv compare``:
``a < b / factor``), so every tracked value is a non-negative cost, 0 at best:

* ``gap``: the worst ``ranked_gap`` over the case's cells (the report's: the relative gap, 0 for a
  tie with the reference); lost (:func:`tracked_value` raises) when a cell did not verify, has no
  reference, or lies below the reference beyond its floor;
* ``unverified``: the share of the cells that ran whose final point did not verify;
* ``metric_from_best``: the mean over the cells of ``|metric - metric_best|``, the declared task
  metric's distance from its best value (``metric_best``: 0 for an error, 1 for an F-measure or a
  0/1 property; a bound the metric never passes).  Lost when a cell lacks the metric.

Skipped cells (status ``skipped``: the solver's library absent) are left out, and a case of
skipped cells only is skipped (``n/a``), not lost; a case none of whose cells was measured loses
every value.  0 needs no offset: asv flags a rise from 0 as worse (what ``asv compare`` shows in
each case: ``benchmarks/bench_suites.py``).  ``psdbench compare`` reads a metric's direction from
its name instead (:func:`metric_direction`); a suite whose metric's name says higher is better
must declare ``metric_best``, so the two never disagree.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..api import PsdbenchError
# re-exported: a suite's [asv] table is checked with the grid (harness/asv_table.py), so imports run one way
from .asv_table import HIGHER_BETTER, LOWER_BETTER, asv_settings, metric_direction  # noqa: F401


if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from ..registry import Registry
    from .grid import Grid


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


def case_summary(frame: pd.DataFrame, case: TrackedCase, metric: str | None,
                 metric_best: float = 0.0) -> dict[str, float]:
    """What asv tracks of one case, from the tidy frame of a store holding its suite's cells
    (:func:`tracked_frame`); rows are matched on the case's labels, not on keys.

    Parameters
    ----------
    frame : DataFrame
        Tidy frame with ``verified``, ``gap``, ``ranked_gap`` and the ``metric_*`` columns.
    case : TrackedCase
        The case.
    metric : str or None
        The declared task metric (``[asv] metric``).
    metric_best : float
        Its best value (``[asv] metric_best``).

    Returns
    -------
    dict
        ``gap`` (worst ``ranked_gap``, NaN when lost), ``unverified`` (share of cells not verified),
        ``metric`` (mean), ``metric_from_best`` (mean ``|metric - metric_best|``), and the counts
        :func:`tracked_value` explains a loss with: ``cells`` (the frame's), ``no_reference``
        (verified, no gap), ``beyond_bound`` (verified, below the reference beyond its floor),
        ``metric_missing``; ``skipped``: the cells left out, status ``skipped`` (its library
        absent).  The values are NaN where the frame holds none of the case's cells, or only
        skipped ones (:func:`case_skip_reason`).
    """
    nan = math.nan
    empty = {"gap": nan, "unverified": nan, "metric": nan, "metric_from_best": nan, "cells": 0.0,
             "no_reference": 0.0, "beyond_bound": 0.0, "metric_missing": 0.0, "skipped": 0.0}
    if frame.empty:
        return empty
    mine = [labels(p, d, ip, s, sp) == (case.instance_set, case.config) and (p, d, int(seed)) in
            {(c[0], c[1], c[3]) for c in case.cells}
            for p, d, ip, seed, s, sp in zip(frame["problem"], frame["dataset"], frame["instance_params"],
                                              frame["seed"], frame["solver"], frame["solver_params"])]
    rows = frame[mine]
    if rows.empty:
        return empty
    import pandas as pd

    skipped = rows["status"].astype(str).eq("skipped") if "status" in rows.columns else pd.Series(False, rows.index)
    if skipped.all():  # no cell ran (the solver's library absent, or it skips the instance): nothing to track
        return {**empty, "cells": float(len(rows)), "skipped": float(len(rows))}
    rows = rows[~skipped]
    verified = rows["verified"].astype(bool)
    gap = pd.to_numeric(rows["gap"], errors="coerce")
    ranked = pd.to_numeric(rows["ranked_gap"], errors="coerce").where(verified)  # unverified: no gap to rank
    col = f"metric_{metric}" if metric else None
    vals = pd.to_numeric(rows[col], errors="coerce") if col and col in rows.columns else pd.Series(nan, rows.index)
    return {"gap": float(ranked.max()) if ranked.notna().all() else nan,
            "unverified": float((~verified).mean()),
            "metric": float(vals.mean()) if metric and vals.notna().all() else nan,
            "metric_from_best": float((vals - metric_best).abs().mean()) if metric and vals.notna().all() else nan,
            "cells": float(len(skipped)), "skipped": float(skipped.sum()),
            "no_reference": float((verified & gap.isna()).sum()),
            "beyond_bound": float((verified & gap.notna() & ranked.isna()).sum()),
            "metric_missing": float(vals.isna().sum()) if metric else 0.0}


def case_skip_reason(summary: dict[str, float]) -> str | None:
    """Why asv skips a case (every cell skipped: its solver's library absent, or it skips the
    instances), else ``None``."""
    if summary["cells"] and summary["skipped"] == summary["cells"]:
        return f"every cell of this case was skipped ({int(summary['skipped'])}): its solver did not run"
    return None


class LostValue(RuntimeError):
    """A tracked value that cannot be read: asv records the benchmark as failed (``asv compare``
    flags a value followed by a failure as "introduced a failure")."""


def tracked_value(summary: dict[str, float], what: str, metric: str | None = None) -> float:
    """Value ``what`` of a :func:`case_summary`, or :class:`LostValue` with a one-line reason.

    Parameters
    ----------
    summary : dict
        :func:`case_summary` of the case.
    what : {"gap", "unverified", "metric_from_best"}
        The value.
    metric : str, optional
        The metric's name, for the message.

    Returns
    -------
    float
        The value, non-negative, 0 at best.

    Raises
    ------
    LostValue
        When none of the case's cells was measured, or (``gap``) a cell did not verify, has no
        reference or lies below it beyond its floor, or (``metric_from_best``) a cell lacks the metric.
    """
    n = int(summary["cells"] - summary["skipped"])
    skipped = case_skip_reason(summary)
    if skipped is not None:  # bench_suites skips such a case in setup, before any value is read
        raise LostValue(skipped)
    if n == 0:
        raise LostValue("no cell of this case was measured (its suite's run failed: see setup_cache's output)")
    why = []
    if what == "gap":
        for key, text in (("unverified", "did not verify"), ("no_reference", "have no reference"),
                          ("beyond_bound", "lie below the reference beyond its floor")):
            k = round(summary[key] * n) if key == "unverified" else int(summary[key])
            if k:
                why.append(f"{k} of {n} cells {text}")
    elif what == "metric_from_best" and summary["metric_missing"]:
        why.append(f"{int(summary['metric_missing'])} of {n} cells lack the metric {metric or ''}".rstrip())
    if why:
        raise LostValue(f"{what} lost: " + "; ".join(why))
    value = float(summary[what])
    if math.isnan(value):
        raise LostValue(f"{what} lost: no value")
    return value


def tracked_frame(db: Any, reg: Registry) -> pd.DataFrame:
    """The tidy frame of a store's cells, as the report builds it (references, gaps, metrics)."""
    from ..report.frame import tidy_frame
    from .inputs import ReadOnlyStore
    from .reference import annotate

    store = ReadOnlyStore(db)
    refs = store.references_frame()
    return tidy_frame(annotate(store.results_frame(), refs), refs, reg.problems, reg.solvers)
