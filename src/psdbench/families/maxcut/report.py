"""Report sections of max-cut at scale: scaling charts, and cuts beside bounds and best-known cuts.

* ``maxcut-scaling`` (family ``maxcut``) and ``sdp-graph-scaling`` (family ``sdp``: the interior-point
  solvers run on the same graphs through the ``gset-class/<name>:sdp`` view and SDPLIB's maxG / qpG
  / thetaG files): time and peak memory against the number of nodes n, one series per solver
  configuration, with the exponent of ``time ~ n^k`` fitted by least squares on log-log axes
  (:func:`fit_exponent`) over the cells that finished (``ok``, ``max_iter``).  A cell that did not
  finish is a result, not a gap: time-outs are drawn at their time limit and out-of-memory cells
  (a ``MemoryError`` or a worker killed near its memory cap) at their time, with their own markers,
  and the table lists, per configuration, the smallest n where each failure happened.
* ``maxcut-cuts`` (family ``maxcut``): per graph and configuration the SDP value reached, the dual
  bound with its kind (``certified`` only when the instance says so; otherwise ``estimate``), the
  Goemans-Williamson cut rounded from the point and their ratio, and for a Gset graph itself the
  best-known cut from the literature with its source (:mod:`.best_known`) and the cut's ratio to it.
  A bound below the best-known cut, or a cut above it, is flagged: the first is an error of the
  bound, the second a cut that beats the literature and needs checking.

Sections read only ``context.frame``: metrics ``n_nodes``, ``edges``, ``cut``, ``dual_bound``,
``dual_bound_certified`` of ``maxcut/sdp``; for other problems n comes from the dataset's name
(:func:`graph_nodes`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from psdbench.report.blocks import Chart, Panel, Series, Table
from psdbench.report.fmt import fmt_num, slug

from . import best_known

#: statuses of a cell that finished with a point whose time measures the solve
FINISHED = ("ok", "max_iter")
#: matrix order of the SDPLIB files on Gset graphs (Benson's relaxations; thetaG has n + 1 rows)
SDPLIB_ORDER = {"maxG11": 800, "maxG32": 2000, "maxG51": 1000, "maxG55": 5000, "maxG60": 7000,
                "qpG11": 1600, "qpG51": 2000, "thetaG11": 801, "thetaG51": 1001}
#: at least this many distinct sizes for an exponent
MIN_SIZES = 2


def graph_nodes(dataset: str, metric: Any = None) -> float:
    """The number of nodes of a cell's graph: the ``n_nodes`` metric, else from the dataset's name."""
    if metric is not None and isinstance(metric, (int, float)) and math.isfinite(metric) and metric > 0:
        return float(metric)
    coll, _, name = str(dataset).partition("/")
    if coll == "gset-class":
        from .gset import parse_name

        try:
            return float(parse_name(name.partition(":")[0]).n)
        except Exception:  # noqa: BLE001 - a name this version cannot parse: no size
            return float("nan")
    if coll == "sdplib" and name in SDPLIB_ORDER:
        return float(SDPLIB_ORDER[name])
    if coll == "gset":
        row = best_known.table().get(name)
        return float(row.nodes) if row else float("nan")
    return float("nan")


def fit_exponent(n: np.ndarray, y: np.ndarray) -> float:
    """Least-squares slope of ``log y`` over ``log n`` (NaN with fewer than two distinct sizes)."""
    n, y = np.asarray(n, float), np.asarray(y, float)
    ok = np.isfinite(n) & np.isfinite(y) & (n > 0) & (y > 0)
    if len(np.unique(n[ok])) < MIN_SIZES:
        return float("nan")
    return float(np.polyfit(np.log(n[ok]), np.log(y[ok]), 1)[0])


def outcome(status: str, message: Any) -> str:
    """``finished`` (``ok`` / ``max_iter``), else the page's word for the cell
    (:func:`psdbench.harness.store.results.outcome`: ``timeout``, ``rejected``, ``error``, ...), with
    ``out_of_memory`` also for a row an older store recorded as an ``error`` / ``crashed`` near the cap."""
    from psdbench.harness.store.results import outcome as page_word

    msg = str(message or "")
    if status in FINISHED:
        return "finished"
    if "out of memory" in msg or "MemoryError" in msg:
        return "out_of_memory"
    return page_word(status, msg)


def _word(row: Any) -> str:
    """The page's outcome word of one cell (``ok``, ``max_iter``, ``rejected``, ...)."""
    from psdbench.harness.store.results import outcome as page_word

    return page_word(str(row["status"]), row.get("message"))


def _graph_rows(frame: pd.DataFrame) -> pd.DataFrame:
    """The cells on graphs, with ``n`` and ``outcome`` columns (skipped cells left out)."""
    if frame.empty:
        return frame
    nn = frame["metric_n_nodes"] if "metric_n_nodes" in frame.columns else pd.Series(np.nan, index=frame.index)
    f = frame.assign(n=[graph_nodes(d, m) for d, m in zip(frame["dataset"], nn)])
    f = f[np.isfinite(f["n"].astype(float)) & (f["status"] != "skipped")].copy()
    f["outcome"] = [outcome(s, m) for s, m in zip(f["status"], f.get("message", pd.Series("", index=f.index)))]
    return f


def _series(f: pd.DataFrame, col: str, label: str, exp: float) -> list[Series]:
    """Median over seeds per n of the finished cells, and the failures as markers."""
    out: list[Series] = []
    done = f[f["outcome"] == "finished"]
    if not done.empty:
        med = done.groupby("n")[col].median()
        tag = f" · n^{exp:.2f}" if math.isfinite(exp) else ""
        out.append(Series(f"{label}{tag}", med.index.tolist(), med.tolist(), colour_key=label, mode="lines+markers"))
    marks = {"timeout": "x", "out_of_memory": "triangle-down"}
    for what, sub in f[f["outcome"] != "finished"].groupby("outcome"):
        y = sub[col].astype(float)
        if col == "wall_time_s" and what == "timeout" and "time_limit_s" in sub.columns:
            y = sub["time_limit_s"].astype(float).fillna(y)
        out.append(Series(f"{label} · {what}", sub["n"].tolist(), y.tolist(), colour_key=label, mode="markers",
                          marker=marks.get(str(what), "circle-open"), legend=False))
    return out


class _Scaling:
    """Time and peak memory against n per solver configuration (module docstring)."""

    name = "maxcut-scaling"
    title = "Scaling with the number of nodes"
    family = "maxcut"
    order = 120

    def render(self, context: Any) -> list:
        f = _graph_rows(context.frame)
        if f.empty or f["n"].nunique() < 1:
            return []
        rows, t_series, m_series = [], [], []
        for label, sub in f.groupby("solver_label", sort=True):
            done = sub[sub["outcome"] == "finished"]
            kt = fit_exponent(done["n"].to_numpy(), done["wall_time_s"].to_numpy())
            km = fit_exponent(done["n"].to_numpy(), done["peak_rss_mb"].to_numpy())
            t_series += _series(sub, "wall_time_s", str(label), kt)
            m_series += _series(sub, "peak_rss_mb", str(label), km)
            fails = {w: int(s["n"].min()) for w, s in sub[sub["outcome"] != "finished"].groupby("outcome")}
            rows.append({
                "configuration": str(label),
                "n (finished)": (f"{int(done['n'].min()):,} - {int(done['n'].max()):,}" if len(done) else "none"),
                "cells finished": f"{len(done)}/{len(sub)}",
                "time exponent k (t ~ n^k)": fmt_num(kt),
                "memory exponent": fmt_num(km),
                "largest n finished: time": (fmt_num(float(done.loc[done["n"].idxmax(), "wall_time_s"])) + " s"
                                              if len(done) else "-"),
                "failures (smallest n)": "; ".join(f"{w} from n = {n:,}" for w, n in sorted(fails.items())) or "none",
            })
        sizes = ", ".join(f"{int(n):,}" for n in sorted(f["n"].unique()))
        chart = Chart(
            name=slug(self.name, context.family), title=f"Time and peak memory against n ({context.family})",
            panels=[Panel("Solve time", t_series, empty="No cell finished."),
                    Panel("Peak memory of the worker", m_series, empty="No cell finished.")],
            x_label="nodes n", y_label="seconds | MiB", log_x=True, log_y=True,
            caption=("Median over seeds of the cells that finished; x: time-outs at their time limit, "
                     "down triangles: out of memory at the time they died (results, not gaps). Legend: "
                     f"the exponent k of a least-squares fit log y = k log n + c. Sizes: {sizes}."))
        table = Table(slug(self.name, context.family, "exponents"), "Fitted exponents and where each solver stops",
                      pd.DataFrame(rows),
                      note=("Exponents from the finished cells only (at least two sizes); a time-out or "
                            "out-of-memory cell is listed at the smallest n where it happened."))
        return [chart, table]


class MaxcutScaling(_Scaling):
    """Scaling of the max-cut solvers (family ``maxcut``)."""


class SdpGraphScaling(_Scaling):
    """The same chart for the SDP family's cells on graphs (interior-point solvers on ``:sdp`` views, maxG files)."""

    name = "sdp-graph-scaling"
    title = "Scaling on graphs (SDP standard form)"
    family = "sdp"
    order = 121


def _fmt_int(x: Any) -> str:
    return f"{x:,.0f}" if isinstance(x, (int, float)) and math.isfinite(x) else "-"


def _fmt_value(x: Any) -> str:
    """An SDP value or bound with three decimals (``fmt_num``'s three digits hide the gap)."""
    try:
        x = float(x)
    except (TypeError, ValueError):
        return "-"
    return f"{x:,.3f}" if math.isfinite(x) else "-"


def _ratio(a: Any, b: Any) -> str:
    return f"{a / b:.4f}" if all(isinstance(v, (int, float)) and math.isfinite(v) for v in (a, b)) and b else "-"


class MaxcutCuts:
    """Rounded cuts beside the dual bound and, for a Gset graph, the best-known cut (module docstring)."""

    name = "maxcut-cuts"
    title = "Cuts, bounds and best-known cuts"
    family = "maxcut"
    order = 110

    def render(self, context: Any) -> list:
        f = context.frame
        if "problem" in f.columns:
            f = f[f["problem"] != "maxcut/boxqp"]  # no cut: a box-QP is not a max-cut
        if f.empty:
            return []
        rows, checks = [], []
        met = lambda r, k: float(r.get(f"metric_{k}", float("nan")))  # noqa: E731
        for (dataset, label), sub in f.groupby(["dataset", "solver_label"], sort=True):
            sub = sub[sub["status"] != "skipped"]
            if sub.empty:
                continue
            r = sub.iloc[int(np.nanargmax(sub.get("metric_cut", pd.Series(0.0, index=sub.index)).fillna(-np.inf)))] \
                if "metric_cut" in sub.columns and sub["metric_cut"].notna().any() else sub.iloc[0]
            cut, bound = met(r, "cut"), met(r, "dual_bound")
            cert = met(r, "dual_bound_certified")
            kind = "certified" if cert == 1.0 else ("estimate" if math.isfinite(bound) else "-")
            bk = best_known.for_dataset(str(dataset))
            best = bk.best_cut if bk else float("nan")
            rows.append({"graph": str(dataset), "configuration": str(label), "status": _word(r),
                         "n": _fmt_int(graph_nodes(dataset, met(r, "n_nodes"))), "edges": _fmt_int(met(r, "edges")),
                         "SDP value": _fmt_value(r.get("objective")), "dual bound": _fmt_value(bound), "bound kind": kind,
                         "rounded cut": _fmt_int(cut), "cut / bound": _ratio(cut, bound),
                         "best-known cut": _fmt_int(best) + (f" ({bk.graph})" if bk else ""),
                         "cut / best-known": _ratio(cut, best)})
            if bk and kind == "certified" and bound < best:
                checks.append(f"{dataset}: the certified bound {fmt_num(bound)} of {label} is below {bk.graph}'s "
                              f"best-known cut {best:,.0f}: the bound is wrong")
            if bk and math.isfinite(cut) and cut > best:
                checks.append(f"{dataset}: {label}'s cut {cut:,.0f} beats {bk.graph}'s best-known {best:,.0f} "
                              "(a new record, to be checked)")
        if not rows:
            return []
        note = ("Per graph and configuration the seed with the largest rounded cut. Bound kind `certified`: "
                "the instance proved the bound in floating point; `estimate`: it did not, and the bound is "
                f"not called certified. Best-known cuts: {best_known.SOURCE}, only for a Gset graph itself "
                "(generated `gset-class` graphs are of Gset's classes, not Gset's graphs).")
        return [Table(slug(self.name, context.family), "Per graph and configuration", pd.DataFrame(rows), note=note,
                      checks=checks)]
