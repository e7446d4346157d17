"""Report blocks of the ``gdpa-scaling`` suite: time and peak memory versus N, beside the paper's times.

For the paper's algorithm ``gdpa-lp`` and psdbench's variant ``gdpa-lp-elim`` apart (:data:`SOLVERS`: a
finding about the paper's algorithm is read on that algorithm only), every (graph, scaling) group where
the solver ran at three or more sizes (datasets
side by side, e.g. ``uci/cod-rna`` subsets and ``uci/cod-rna-full``): a row per (dataset, N) (median solve time, label propagation's sparse-solve time on the same instances and
the ratio, peak RSS of the worker, error rates of GDPA / label propagation / majority class, the
certified lower bound and how it was certified, the paper's GDPA time at that size) and a log-log
figure of time and peak memory with the least-squares slopes.

The paper's times are the GDPA column of the authors' saved cod-rna timing results, copied into
:data:`PAPER_GDPA_S` from ``gdpa_paper_results/cod-rna_timing_ms.csv`` of the shared datasets
(graph-classifier paper, Fig. 4 right): their own instance (complete graph, one labelled node), so a
reference beside ours, not the same experiment, and only at the paper's sizes (within 1 %).  Columns
that no row of a group can fill (no label-propagation time, no paper size) are left out and the
note says why.  Peak memory that varies by less than :data:`FLAT_RSS` over the sizes is drawn as
flat, without a slope.  The findings (:mod:`psdbench.report.findings`): the solve time's log-log slope with
its 95 % interval against 1.3, and the time ratio to label propagation against 20, both over the sizes
whose median solve takes at least :data:`MIN_TIMED_S` (below, the harness is timed, not the solve).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from psdbench.report import findings as fd
from psdbench.report.blocks import Figure, Finding, Table
from psdbench.report.fmt import fmt_num, slug

#: The solvers whose scaling is shown, each with what its findings are about: the paper's algorithm
#: (``gdpa-lp``) and psdbench's variant of it (``gdpa-lp-elim``), never one for the other.
SOLVERS = {"gdpa-lp": "GDPA", "gdpa-lp-elim": "GDPA (psdbench's variant, gdpa-lp-elim)"}
#: The smallest median solve time (seconds) a size must take to enter the fits: below it the
#: harness's own cost per cell (2-4 ms measured, docs/benchmarks.md "Harness throughput"), first-call
#: costs and timer jitter are of the order of the solve, so the time is not the solve's.
MIN_TIMED_S = 0.1
#: GDPA time in seconds per instance size (n_sample -> time_gdpa_ms / 1000), cod-rna_timing_ms.csv
PAPER_GDPA_S = {4: 0.0901318, 14: 0.0186826, 48: 0.0207003, 95: 0.0113118, 488: 0.0461394, 970: 0.0281085,
                4891: 0.365758, 9766: 1.42493, 24432: 8.68787}


#: peak RSS whose max / min over the sizes is below this is "flat": no log-log slope is fitted
FLAT_RSS = 1.2
#: the targets the findings read: slope of the solve time over N, time ratio to label propagation
SLOPE_TARGET, RATIO_TARGET = 1.3, 20.0


def paper_time(n: int) -> float:
    """The paper's GDPA time at an instance size within 1 % of ``n`` (its K-fold sizes), else NaN."""
    near = [t for size, t in PAPER_GDPA_S.items() if abs(size - n) <= 0.01 * size]
    return near[0] if near else float("nan")


def loglog_slope(n: np.ndarray, t: np.ndarray) -> float:
    """Least-squares slope of ``log t`` over ``log n`` (NaN with fewer than two distinct sizes)."""
    ok = np.isfinite(n) & np.isfinite(t) & (n > 0) & (t > 0)
    if len(np.unique(n[ok])) < 2:
        return float("nan")
    return float(np.polyfit(np.log(n[ok]), np.log(t[ok]), 1)[0])


def slope_interval(n: np.ndarray, t: np.ndarray, level: float = 0.95) -> tuple[float, float, float]:
    """``(slope, low, high)``: least-squares log-log slope and its Student-t interval (NaN ends with
    fewer than three distinct sizes)."""
    from scipy import stats

    ok = np.isfinite(n) & np.isfinite(t) & (n > 0) & (t > 0)
    x, y = np.log(n[ok]), np.log(t[ok])
    if len(np.unique(x)) < 2:
        return float("nan"), float("nan"), float("nan")
    if len(x) < 3:
        return loglog_slope(n, t), float("nan"), float("nan")
    r = stats.linregress(x, y)
    half = float(stats.t.ppf(0.5 + level / 2, len(x) - 2)) * float(r.stderr)
    return float(r.slope), float(r.slope) - half, float(r.slope) + half


def _col(f: pd.DataFrame, name: str) -> pd.Series:
    return pd.to_numeric(f[name], errors="coerce") if name in f.columns else pd.Series(np.nan, index=f.index)


def _certificates(sub: pd.DataFrame) -> list[str]:
    """The ``certificate`` metric (a string: the frame's numeric metric column drops it) of the cells."""
    if "metrics" not in sub.columns:
        return []
    return sorted({str(m["certificate"]) for m in sub["metrics"] if isinstance(m, dict) and m.get("certificate")})


def scaling_frame(f: pd.DataFrame, solver: str = "gdpa-lp-elim") -> pd.DataFrame:
    """One row per (N, dataset): medians over the ok ``solver`` cells of the group."""
    g = f[(f["solver"] == solver) & (f["status"] == "ok")]
    g = g.assign(N=_col(g, "metric_n_nodes").fillna(_col(g, "p_n")))  # fold instances: N from the metric
    rows = []
    for (n, dataset), sub in g.groupby(["N", "dataset"]):
        certs = _certificates(sub)
        rows.append({"N": int(n), "dataset": dataset, "cells": len(sub), "time_s": _col(sub, "wall_time_s").median(),
                     "labelprop_s": _col(sub, "metric_labelprop_time_s").median(),
                     "peak_rss_mb": _col(sub, "peak_rss_mb").max(),
                     "error": _col(sub, "metric_error_rate").mean(), "error_lp": _col(sub, "metric_labelprop_error").mean(),
                     "error_majority": _col(sub, "metric_majority_error").mean(),
                     "lower_bound": _col(sub, "metric_lower_bound").median(), "certificate": ", ".join(certs) or "-",
                     "paper_s": paper_time(int(n))})
    return pd.DataFrame(rows)


def _pct(v: float) -> str:
    return "-" if not np.isfinite(v) else f"{100 * v:.2f}"


def _figure(s: pd.DataFrame, name: str, title: str, solver: str) -> Figure:
    from psdbench.report.render.plot import panel_grid, to_png

    n = s["N"].to_numpy(float)
    fig, axes = panel_grid(2, ncol=2, width=4.8, height=3.6)
    a1, a2 = axes[0], axes[1]
    for col, label, style in (("time_s", solver, "o-"), ("labelprop_s", "label propagation", "s--"),
                              ("paper_s", "paper GDPA (their instance)", "^:")):
        t = s[col].to_numpy(float)
        if np.isfinite(t).any():
            a1.loglog(n, t, style, label=f"{label} (slope {loglog_slope(n, t):.2f})")
    a1.set(xlabel="N", ylabel="time (s)")
    a1.legend(fontsize=8)
    m = s["peak_rss_mb"].to_numpy(float)
    flat = flat_memory(m)
    if flat:
        a2.semilogx(n, m, "o-", label=f"peak RSS: {flat}")
        a2.set_ylim(0.0, 1.25 * float(np.nanmax(m)))  # a flat line at its height, not a zoom into its noise
    elif np.isfinite(m).any():
        a2.loglog(n, m, "o-", label=f"peak RSS (slope {loglog_slope(n, m):.2f})")
    if np.isfinite(m).any():
        a2.legend(fontsize=8)
    a2.set(xlabel="N", ylabel="peak RSS of the worker (MB)")
    for a in (a1, a2):
        a.grid(True, which="both", alpha=0.3)
    return Figure(name=name, title=title, png=to_png(fig),
                  caption="Median over seeds per N, log-log, least-squares slopes in the legend"
                          + ("; peak memory varies by less than a factor "
                             f"{FLAT_RSS:g} over the sizes, so it is drawn on a linear axis from 0 without a slope"
                             if flat else "")
                          + ". Paper: GDPA-LP on the authors' instance (complete graph, one labelled node), beside ours "
                            "for reference only.")


def flat_memory(m: np.ndarray) -> str:
    """``"flat at 270 MB (269.5 to 271.7)"`` when the finite values vary by less than :data:`FLAT_RSS`, else ""."""
    v = m[np.isfinite(m) & (m > 0)]
    if len(v) < 2 or v.max() / v.min() >= FLAT_RSS:
        return ""
    return f"flat at {np.median(v):.0f} MB ({v.min():.1f} to {v.max():.1f})"


def scaling_blocks(f: pd.DataFrame) -> list[Any]:
    """The table and figure of every (solver of :data:`SOLVERS`, group) with three or more sizes."""
    if f.empty or "p_n" not in f.columns:
        return []
    out: list[Any] = []
    keys = [c for c in ("p_graph", "p_scaling") if c in f.columns]
    for solver in (x for x in SOLVERS if x in set(f["solver"])):
        for key, g in f.groupby(keys, dropna=False):
            out += _group_blocks(scaling_frame(g, solver), key, solver)
    return out


def _group_blocks(s: pd.DataFrame, key: Any, solver: str) -> list[Any]:
    """One solver's table, figure and findings on one (graph, scaling) group (none below three sizes)."""
    if s.empty or s["N"].nunique() < 3:
        return []
    key = key if isinstance(key, tuple) else (key,)
    label = ", ".join([*sorted(set(s["dataset"])), *(str(k) for k in key)])
    name = "scaling_" + slug(*[str(k) for k in key], *([] if solver == "gdpa-lp-elim" else [solver]))
    timed = s[s["time_s"] >= MIN_TIMED_S]
    slope, low, high = slope_interval(timed["N"].to_numpy(float), timed["time_s"].to_numpy(float))
    ratio = s["time_s"] / s["labelprop_s"]
    frame = pd.DataFrame({
        "N": [fmt_num(v) for v in s["N"]], "dataset": s["dataset"], "cells": s["cells"],
        "time (s)": [fmt_num(v) + ("" if v >= MIN_TIMED_S else " (not fitted)") for v in s["time_s"]],
        "label prop. (s)": [fmt_num(v) for v in s["labelprop_s"]],
        "ratio": [fmt_num(v) for v in ratio], "peak RSS (MB)": [fmt_num(v) for v in s["peak_rss_mb"]],
        "error (%)": [_pct(v) for v in s["error"]], "label prop. error (%)": [_pct(v) for v in s["error_lp"]],
        "majority (%)": [_pct(v) for v in s["error_majority"]],
        "lower bound": [fmt_num(v) for v in s["lower_bound"]], "certificate": s["certificate"],
        "paper GDPA (s)": [fmt_num(v) if np.isfinite(v) else "-" for v in s["paper_s"]]})
    dropped = []
    if not np.isfinite(s["labelprop_s"].to_numpy(float)).any():
        frame = frame.drop(columns=["label prop. (s)", "ratio"])
        dropped.append("no cell recorded label propagation's solve time (`labelprop_time_s`)")
    if not np.isfinite(s["paper_s"].to_numpy(float)).any():
        frame = frame.drop(columns=["paper GDPA (s)"])
        dropped.append("the paper's GDPA times are at N = " + ", ".join(f"{k:,}" for k in PAPER_GDPA_S)
                       + " (its cod-rna folds), none within 1 % of this group's sizes")
    if "certificate" in frame and set(frame["certificate"]) == {"-"}:
        frame = frame.drop(columns=["certificate"])
    findings = scaling_findings(slope, low, high, (timed["time_s"] / timed["labelprop_s"]).to_numpy(float), label,
                                solver, len(s) - len(timed))
    note = (f"`{solver}` cells with status ok; label propagation timed by the instance on the same instance "
            "(sparse CG, or a dense solve on a dense instance); `certificate`: gershgorin (proven in O(nnz)), "
            f"lobpcg (estimate), eigh (dense).  The fits and the findings use the sizes whose median solve takes "
            f"at least {MIN_TIMED_S:g} s (below, the harness's cost per cell and timer jitter are of the order of "
            "the solve): the others are marked `not fitted`.")
    if dropped:
        note += " Not shown: " + "; ".join(dropped) + "."
    return [Table(name, f"{SOLVERS[solver]} scaling: {label}", frame, checks=[fd.finding_line(x) for x in findings],
                  note=note),
            _figure(s, name + "_plot", f"{SOLVERS[solver]} scaling: {label}: time and peak memory versus N", solver),
            *[fd.finding_block(x) for x in findings]]


def scaling_findings(slope: float, low: float, high: float, ratios: np.ndarray, label: str,
                     solver: str = "gdpa-lp", untimed: int = 0) -> list[Finding]:
    """The slope of the solve time over N (95 % interval against :data:`SLOPE_TARGET`) and the time
    ratio to label propagation (spread over sizes against :data:`RATIO_TARGET`), of ``solver`` at the
    sizes whose solve is timed (``untimed``: how many sizes were below :data:`MIN_TIMED_S`).  The paper's
    claim is read on the paper's algorithm only; a variant's finding is labelled as the variant's."""
    found = []
    who = SOLVERS.get(solver, solver)
    subject = "GDPA" if solver == "gdpa-lp" else f"`{solver}`"
    claim = f"{label}: {subject}'s solve time grows about linearly in N (log-log slope at most {SLOPE_TARGET:g})"
    if not np.isfinite(slope):
        why = "fewer than two sizes" + (f" with a median solve of at least {MIN_TIMED_S:g} s ({untimed} below it: "
                                        "there the harness, not the solve, is timed)" if untimed else "")
        found.append(fd.not_measured(who, claim, "O(nnz) per LP (LOBPCG, section 5.1)", why))
    else:
        ours = f"slope {slope:.2f}" + (f" [{low:.2f}, {high:.2f}] (95 %)" if np.isfinite(low) else " (no interval)")
        found.append(Finding(paper=who, claim=claim, paper_value="O(nnz) per LP (LOBPCG, section 5.1)", ours=ours,
                             verdict=fd.verdict(low, high, SLOPE_TARGET, "<=") if np.isfinite(low)
                             else fd.verdict(slope, slope, SLOPE_TARGET, "<="),
                             note=f"least-squares fit of log(median time) on log N over the sizes timed (at least "
                                  f"{MIN_TIMED_S:g} s)" + (f"; {untimed} smaller sizes not fitted" if untimed else "")))
    claim = f"{label}: {subject} takes at most {RATIO_TARGET:g}x label propagation's time on the same instance"
    sp = fd.spread(ratios)
    ours, interval, verdict = fd.ratio_claim(ratios, RATIO_TARGET, "<=", "sizes") if sp.n else ("", "", "")
    if not sp.n:
        found.append(fd.not_measured(f"{who}: psdbench target", claim, "", "no label-propagation time recorded at a "
                                                                          "size whose solve is timed"))
    else:
        found.append(Finding(paper=f"{who}: psdbench target", claim=claim, paper_value="",
                             ours=ours, interval=interval, verdict=verdict,
                             note="median time ratio per size, median [min to max] over the sizes; verdict from "
                                  "the 95 % interval of their geometric mean"))
    return found
