"""Progress of a solve and what each cell says about itself: the SDP section's progress chart and run table.

**Progress.** A solver of ``sdp/standard`` may report its progress in its trace
(``Solution.trace``, points ``{"t": seconds, ...}``), one point per iteration or per log line:

* ``err1`` ... ``err6``: the DIMACS errors of its current iterate (:func:`.errors.dimacs_errors`),
  with ``iter``, the iteration number; the chart draws their largest;
* or ``rel_gap``, or ``objective`` and ``dual_objective``: then the chart draws the relative gap
  ``|p - d| / (1 + |p| + |d|)`` (err5's form), labelled as such: it is what the solver's log tells,
  not the DIMACS errors of a point;
* or ``solver_gap``: the gap the solver's log prints by its own definition (QICS: objectives printed
  to 4 digits, too few for a relative gap below 1e-4), labelled "its own gap".

The points are the solver's word, drawn as reported; only the returned point (and the iterates a
:class:`~psdbench.api.TraceRecorder` keeps) is verified.  The chart shows them whatever the cell's
status, so a first-order method's convergence is visible before (and without) a point that
verifies.  ``sdp-scs`` reports its verbose log this way (:func:`scs_progress`) and, with
``chunk_iters > 0``, the DIMACS errors of each chunk's point; ``sdp-clarabel`` its per-iteration
objectives.

**Runs.** Per cell: the solver's own status word (``info["status"]``, stored as the metric
``solver_status``), iterations, time per iteration, and its log (``info["log"]``), which the
harness keeps gzipped beside the store (``<store>.solutions/<run>/<cell>.log.gz``, the metric
``solver_log``, :func:`psdbench.harness.store.solutions.save_log`); the table links it.
"""

from __future__ import annotations

import math
import os
import re
from pathlib import Path
from typing import Any, Mapping

import numpy as np
import pandas as pd

from psdbench.report.blocks import Chart, Panel, Series, Table

#: the trace fields of the DIMACS errors of an iterate
ERR_FIELDS = tuple(f"err{k}" for k in range(1, 7))
#: one line of SCS 3's verbose log: iter | pri res | dua res | gap | obj | scale | time (s)
_SCS_LINE = re.compile(r"^\s*(\d+)\|\s*(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s+(\S+)\s*$")


def scs_progress(text: str, t_offset: float = 0.0, iter_offset: int = 0) -> list[dict[str, float]]:
    """Trace points from SCS 3's verbose log: ``iter``, ``pri_res``, ``dua_res``, ``gap``, ``rel_gap``, ``t``.

    SCS prints ``gap = |pobj - dobj|`` and ``obj = (pobj + dobj) / 2``, so ``|pobj| + |dobj| =
    max(2 |obj|, gap)`` and the relative gap ``gap / (1 + |pobj| + |dobj|)`` is exact.  ``t`` is
    SCS's own clock plus ``t_offset`` (the solve's start on the caller's clock); ``iter`` adds
    ``iter_offset`` (earlier warm-started chunks).
    """
    out = []
    for line in text.splitlines():
        m = _SCS_LINE.match(line)
        if not m:
            continue
        try:
            it, pri, dua, gap, obj, _, t = (float(v) for v in m.groups())
        except ValueError:
            continue
        out.append({"t": t_offset + t, "iter": iter_offset + it, "pri_res": pri, "dua_res": dua, "gap": gap,
                    "rel_gap": gap / (1.0 + max(2.0 * abs(obj), gap))})
    return out


def largest_error(point: Mapping[str, Any]) -> tuple[float, str]:
    """``(value, what)`` of one trace point: the largest DIMACS error (``"DIMACS"``), else the relative
    gap (``"relative gap"``: ``rel_gap``), else the gap the solver's log prints by its own definition
    (``"its own gap"``: ``solver_gap``), else the relative gap of ``objective`` and ``dual_objective``,
    else ``(nan, "")``."""
    errs = [abs(float(point[k])) for k in ERR_FIELDS if _finite(point.get(k))]
    if errs:
        return max(errs), "DIMACS"
    if _finite(point.get("rel_gap")):
        return abs(float(point["rel_gap"])), "relative gap"
    if _finite(point.get("solver_gap")):
        return abs(float(point["solver_gap"])), "its own gap"
    p, d = point.get("objective"), point.get("dual_objective")
    if _finite(p) and _finite(d):
        p, d = float(p), float(d)
        return abs(p - d) / (1.0 + abs(p) + abs(d)), "relative gap"
    return math.nan, ""


def _finite(v: Any) -> bool:
    try:
        return math.isfinite(float(v))
    except (TypeError, ValueError):
        return False


def _problem(df: pd.DataFrame) -> pd.Series:
    gen = df["dataset"].astype(str).str.startswith("sdp-gen")
    seed = df["seed"].astype(str) if "seed" in df.columns else pd.Series("", index=df.index)
    return df["dataset"].astype(str) + np.where(gen, " s=" + seed.str.replace(r"\.0$", "", regex=True), "")


def progress_chart(df: pd.DataFrame) -> Chart | None:
    """The largest error each solver reported, against time and iterations, one panel per problem."""
    if "trace" not in df.columns:
        return None
    panels: dict[str, list[Series]] = {}
    for prob, label, trace in zip(_problem(df), df["solver_label"].astype(str), df["trace"]):
        if not isinstance(trace, list) or not trace:
            continue
        by_kind: dict[str, list[tuple[float, float, float]]] = {}
        for k, pt in enumerate(trace):
            if not isinstance(pt, Mapping):
                continue
            v, what = largest_error(pt)
            if what and v > 0:  # an exact 0 (a log's first line: both objectives 0) has no place on a log axis
                it = float(pt["iter"]) if _finite(pt.get("iter")) else float(k)
                by_kind.setdefault(what, []).append((float(pt.get("t", math.nan)), it, v))
        for what, pts in by_kind.items():
            pts.sort(key=lambda q: (q[1], q[0]))
            panels.setdefault(prob, []).append(Series(
                label=f"{label} ({what})", x=[q[0] for q in pts], y=[q[2] for q in pts], x_alt=[q[1] for q in pts],
                colour_key=label, mode="lines+markers" if what == "DIMACS" else "lines"))
    if not panels:
        return None
    return Chart("sdp_progress", "Progress: the largest error each solver reported, per problem",
                 [Panel(prob, series, key={"problem": prob}) for prob, series in sorted(panels.items())],
                 x_label="time (s)", y_label="largest error", log_y=True, x_alt_label="iteration",
                 caption="As the solver reported it during the solve (its trace), whatever its final status: "
                         "DIMACS = the largest of err1-err6 of its iterate; relative gap = |p - d| / (1 + |p| + "
                         "|d|) from its log's primal and dual objectives; its own gap = the gap its log prints, by its own "
                         "definition.  Only returned points are verified.")


def _metric(df: pd.DataFrame, key: str) -> pd.Series:
    """A text metric of each cell from its ``metrics`` dict (the frame's ``metric_`` columns are numeric)."""
    if "metrics" not in df.columns:
        return pd.Series(None, index=df.index, dtype=object)
    return df["metrics"].map(lambda m: m.get(key) if isinstance(m, Mapping) else None)


def _word(df: pd.DataFrame) -> pd.Series:
    """The solver's own status word (``solver_status``; stores of before it: the per-solver fields)."""
    out = pd.Series("", index=df.index, dtype=object)
    for key in ("solver_sdpa_phase", "solver_cvxopt_status", "solver_clarabel_status", "solver_scs_status",
                "solver_status"):
        v = _metric(df, key)
        out = out.where(v.isna() | (v.astype(str) == ""), v.astype(str))
    return out


def log_link(rel: Any, options: Mapping[str, Any]) -> str:
    """A Markdown link to a cell's log from the report's folder (``options["store_dir"]`` and
    ``out_dir``), or the path as text when either is unknown, or ``-``."""
    if not isinstance(rel, str) or not rel:
        return "-"
    store_dir, out_dir = options.get("store_dir"), options.get("out_dir")
    if not store_dir or not out_dir:
        return f"`{rel}`"
    target = Path(store_dir) / rel
    if not target.is_file():
        return f"`{rel}` (missing)"
    return f"[log]({Path(os.path.relpath(target, out_dir)).as_posix()})"


def runs_table(df: pd.DataFrame, options: Mapping[str, Any]) -> Table:
    """Per cell: the solver's status word, iterations, time per iteration and its log."""
    it = pd.to_numeric(df["iterations"], errors="coerce")
    t = pd.to_numeric(df["wall_time_s"], errors="coerce")
    per = (t / it).where(it > 0)
    logs = _metric(df, "solver_log")
    from psdbench.harness.store.results import outcome_column

    out = pd.DataFrame({"problem": _problem(df), "solver": df["solver_label"].astype(str), "status": outcome_column(df),
                        "solver's own status": _word(df).replace("", "-"),
                        "iter": it.map(lambda v: "-" if not _finite(v) else f"{v:.0f}"),
                        "time (s)": t.map(lambda v: "-" if not _finite(v) else f"{v:.3g}"),
                        "time / iter (s)": per.map(lambda v: "-" if not _finite(v) else f"{v:.2g}"),
                        "log": [log_link(r, options) for r in logs]})
    return Table("sdp_runs", "Per cell: the solver's own status, iterations, time per iteration, log",
                 out.sort_values(["problem", "solver"]).reset_index(drop=True),
                 note="status: the outcome word every table uses (rejected: the returned point failed its DIMACS "
                      "errors at the problem's tol), whatever the solver's own status, shown beside it.  Logs are gzipped beside the "
                      "store (<store>.solutions/<run>/<cell>.log.gz).")
