"""The suites asv tracks: a family marks one of its suites with an ``[asv]`` table, and the generic
asv module (``psdbench.asvbench.suites``) turns it into benchmarks.

A suite's ``[asv]`` table (keys :data:`psdbench.api.ASV_SUITE_KEYS`) picks the seeds asv runs
(default: the suite's first seed), the task metric it tracks and that metric's best value.
:func:`tracked_cases` expands such a suite with those seeds, as ``run --suite`` would (every check
included), and groups its cells into *cases*: one per family, comparable instance set (the
report's sets: problem, dataset and the instance parameters that are not replicates) and solver
configuration (the report's ``solver_label``).  :func:`case_summary` gives, from a results store,
what asv tracks per case, and :func:`tracked_value` reads one value or names why it was lost.

Direction: asv reads every value as a cost, a rise by more than its factor is a regression
(``asv compare``: ``a < b / factor``), so every tracked value is a non-negative cost, 0 at best (the
declaration each is read from, shared with ``psdbench compare``: :mod:`psdbench.harness.asvspec`):

* ``gap``: the worst ``ranked_gap`` over the case's cells (the report's: the relative gap, 0 for a
  tie with the reference); lost when a cell did not verify, or lies below the reference beyond its
  floor;
* ``unverified``: the share of the cells that ran whose final point did not verify;
* ``metric_from_best``: the mean over the cells of ``|metric - metric_best|``, the declared task
  metric's distance from its best value.  Lost when a cell lacks the metric;
* ``iterations``: the work the solver reports (``Solution.iterations``, summed over the cells):
  deterministic, it does not move with machine noise.  Absent (``n/a``) when a cell reports none.

What is tracked (the rule for standing losses, stated once): a value is tracked where the case can
have it.  An instance with no reference (an infeasible one: no optimum, so no gap and no task
metric of a point) tracks no ``gap`` and no ``metric_from_best`` (``n/a``); a point that does not
verify is a lost value wherever it happens, standing or new.  A lost value is a value
(:data:`LOST`, above any real cost: ``asv compare`` flags the change to it as a regression and
prints the table), and :func:`lost_line` says in one line which configuration, instance and check
lost it.  Skipped cells (status ``skipped``: the solver's library absent) are left out, and a case
of skipped cells only is skipped (``n/a``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from psdbench.api import PsdbenchError
from psdbench.harness.asvspec import asv_settings
from psdbench.harness.grid.expand import Grid, expand

__all__ = ["LOST", "LostValue", "TrackedCase", "asv_settings", "case_skip_reason", "case_summary", "labels",
           "lost_line", "tracked_cases", "tracked_frame", "tracked_grid", "tracked_suites", "tracked_value"]

#: The value of a lost tracked value: finite (asv stores and prints it), above any real cost, so a
#: value that is lost in B and not in A is a rise asv flags (``+``) and a standing loss is unchanged.
LOST = 1e12

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from psdbench.registry import Registry


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
    from psdbench.report.measures.analysis import set_key
    from psdbench.report.frame import solver_label

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
                 metric_best: float = 0.0) -> dict[str, Any]:
    """What asv tracks of one case, from the tidy frame of a store holding its suite's cells
    (:func:`tracked_frame`); rows are matched on the case's labels, not on keys.

    Parameters
    ----------
    frame : DataFrame
        Tidy frame with ``verified``, ``gap``, ``ranked_gap``, ``iterations`` and the ``metric_*`` columns.
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
        ``metric`` (mean), ``metric_from_best`` (mean ``|metric - metric_best|``), ``iterations``
        (sum, NaN unless every cell reports them), and the counts :func:`tracked_value` explains a
        loss with: ``cells`` (the frame's), ``no_reference`` (verified, no gap), ``beyond_bound``
        (verified, below the reference beyond its floor), ``metric_missing``; ``skipped``: the
        cells left out, status ``skipped`` (its library absent); ``no_point``: those left out of
        the gap and the metric, the solver having reported the instance infeasible where it has no
        reference (module docstring); ``why``: the first failed check of the first cell that did
        not verify, ``"seed <s>: <check> = <value>, needs <= <tolerance>"`` ("" if none).  The
        values are NaN where the frame holds none of the case's cells, or only skipped ones
        (:func:`case_skip_reason`).
    """
    from psdbench.api import REJECTED, SOLVER_INFEASIBLE

    nan = math.nan
    empty = {"gap": nan, "unverified": nan, "metric": nan, "metric_from_best": nan, "iterations": nan,
             "cells": 0.0, "no_reference": 0.0, "beyond_bound": 0.0, "metric_missing": 0.0, "skipped": 0.0,
             "no_point": 0.0, "why": ""}
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

    status = rows["status"].astype(str) if "status" in rows.columns else pd.Series("", rows.index)
    skipped = status.eq("skipped")
    if skipped.all():  # no cell ran (the solver's library absent, or it skips the instance): nothing to track
        return {**empty, "cells": float(len(rows)), "skipped": float(len(rows))}
    message = rows["message"].astype(str) if "message" in rows.columns else pd.Series("", rows.index)
    gap = pd.to_numeric(rows["gap"], errors="coerce")
    no_point = (~skipped & status.eq("infeasible") & message.str.startswith(SOLVER_INFEASIBLE) & gap.isna())
    if (skipped | no_point).all():  # nothing a gap or a metric is defined for
        return {**empty, "cells": float(len(rows)), "skipped": float(len(rows))}
    ran = rows[~skipped]
    rows, gap = rows[~skipped & ~no_point], gap[~skipped & ~no_point]
    verified = rows["verified"].astype(bool)
    ranked = pd.to_numeric(rows["ranked_gap"], errors="coerce").where(verified)  # unverified: no gap to rank
    col = f"metric_{metric}" if metric else None
    vals = pd.to_numeric(rows[col], errors="coerce") if col and col in rows.columns else pd.Series(nan, rows.index)
    its = pd.to_numeric(ran["iterations"], errors="coerce") if "iterations" in ran.columns else pd.Series(nan)
    why = ""
    for _, r in rows[~verified].iterrows():
        failed = r.get("metric_verify_failed")
        if not isinstance(failed, str) or not failed:  # the tidy frame keeps numbers only: the message has it
            msg = str(r.get("message", "") or "").split("\n")[0]
            failed = msg.split(f"{REJECTED}: ", 1)[1] if f"{REJECTED}: " in msg else msg
        failed = failed.split("; ")[0]
        if failed:
            why = f"seed {int(r['seed'])}: {failed}"
        break
    return {"gap": float(ranked.max()) if ranked.notna().all() else nan,
            "unverified": float((~verified).mean()),
            "metric": float(vals.mean()) if metric and vals.notna().all() else nan,
            "metric_from_best": float((vals - metric_best).abs().mean()) if metric and vals.notna().all() else nan,
            "iterations": float(its.sum()) if len(its) and its.notna().all() and (its > 0).any() else nan,
            "cells": float(len(skipped)), "skipped": float(skipped.sum()), "no_point": float(no_point.sum()),
            "no_reference": float((verified & gap.isna()).sum()),
            "beyond_bound": float((verified & gap.notna() & ranked.isna()).sum()),
            "metric_missing": float(vals.isna().sum()) if metric else 0.0, "why": why}


def case_skip_reason(summary: dict[str, Any]) -> str | None:
    """Why asv skips a case (every cell skipped: its solver's library absent, or it skips the
    instances; or the solver reported an instance with no reference infeasible), else ``None``."""
    if summary["cells"] and summary["skipped"] == summary["cells"]:
        return f"every cell of this case was skipped ({int(summary['skipped'])}): its solver did not run"
    return None


class LostValue(RuntimeError):
    """A tracked value that cannot be read; :func:`psdbench.asvbench.suites` records it as
    :data:`LOST` and prints :func:`lost_line`."""


def lost_line(case: TrackedCase, what: str, reason: str) -> str:
    """The one line that names a lost value: benchmark value, configuration, instance, failed check."""
    return f"psdbench: lost {what}: {case.config} on {case.instance_set}: {reason}"


def tracked_value(summary: dict[str, Any], what: str, metric: str | None = None) -> float:
    """Value ``what`` of a :func:`case_summary`, or :class:`LostValue` with a one-line reason.

    Parameters
    ----------
    summary : dict
        :func:`case_summary` of the case.
    what : {"gap", "unverified", "metric_from_best", "iterations"}
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
        reference or lies below it beyond its floor, or (``metric_from_best``) a cell lacks the
        metric.  The message starts with the first failed check (``summary["why"]``) when a cell
        did not verify.
    """
    n = int(summary["cells"] - summary["skipped"] - summary.get("no_point", 0.0))
    skipped = case_skip_reason(summary)
    if skipped is not None:  # the asv module skips such a case in setup, before any value is read
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
        text = f"{what} lost: " + "; ".join(why)
        raise LostValue(f"{summary['why']} ({text})" if summary.get("why") else text)
    value = float(summary[what])
    if math.isnan(value):
        raise LostValue(f"{what} lost: no value")
    return value


def tracked_frame(db: Any, reg: Registry) -> pd.DataFrame:
    """The tidy frame of a store's cells, as the report builds it (references, gaps, metrics)."""
    from psdbench.report.frame import tidy_frame
    from psdbench.harness.grid.inputs import ReadOnlyStore
    from psdbench.harness.reference import annotate

    store = ReadOnlyStore(db)
    refs = store.references_frame()
    return tidy_frame(annotate(store.results_frame(), refs), refs, reg.problems, reg.solvers)
