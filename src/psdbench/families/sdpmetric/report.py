"""Report section of the SDPMetric family: Tables II and III of the paper, and the paired checks.

* **Table II** (3-NN test error, %, mean and std over splits): datasets as rows, methods as columns,
  one table per ``scaling``; ``Euclidean`` is each instance's own Euclidean 3-NN baseline; the
  paper's values (``paper_values/table2.csv``) are shaded rows beside ours.
* **Paired differences**: each of our methods minus Euclidean and minus LMNN on the same splits
  (pairs keyed by dataset, scaling and seed: the split depends on the seed only), mean, standard
  deviation and 95 % t interval in points, with two findings per row (not above Euclidean; at most
  1 point above LMNN), read from the interval (:mod:`psdbench.report.findings`).
* **Table III** (time per run): the median solve time of each method and the speed-up
  ``median(LMNN) / median(method)``, the paper's ratios (``paper_values/table3.csv``) beside ours;
  the time of choosing ``C`` on the validation split is shown apart (it is not in a solve); a
  finding per dataset on the paper's "LMNN is always slower" from the per-split ratio's spread.
  Without verified LMNN cells a sentence says why Table III is not shown.

Method names follow the paper: ``sdpmetric`` with the squared hinge (9) is ``SDPMetric-S``, with the
Huber loss (10) ``SDPMetric-H``; metric-learn's LMNN (``ml-lmnn``) is ``LMNN``.  Only verified cells
(``feasible == 1``) count.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from psdbench import api
from psdbench.report import findings as fd
from psdbench.harness.store.results import outcome_column
from psdbench.report.blocks import Finding, Table, Text

#: our dataset names -> the paper's row labels
PAPER_NAMES = {"wine": "Wine", "breast-cancer": "Breast-Cancer", "diabetes": "Diabetes"}
PAPER_METHODS = ("Euclidean", "LMNN", "SDPMetric-S", "SDPMetric-H")
#: solvers whose result does not depend on the loss of (8): named without it
PEERS = {"ml-lmnn": "LMNN", "ml-itml": "ITML", "euclidean": "Euclidean"}
#: the paper's names for sdpmetric by loss
OURS = {"squared-hinge": "SDPMetric-S", "huber": "SDPMetric-H"}
KEY = ["dataset", "scaling", "seed"]


def how_to_measure(method: str) -> str:
    """What a run needs to measure a claim against ``method``: for metric-learn's LMNN / ITML the
    `peers` extra's install command and the solver to list (the default suite lists ``ml-lmnn``);
    ``""`` for a method psdbench always has."""
    solver = {v: k for k, v in PEERS.items()}.get(method, "")
    if solver not in ("ml-lmnn", "ml-itml"):
        return ""
    return (f"{method} is metric-learn's `{solver}`: install it with `{api.install_command('peers')}` and run a "
            f"suite that lists `{solver}` (the default suite lists `ml-lmnn`)")


def _paper_csv(name: str) -> pd.DataFrame:
    path = resources.files("psdbench.families.sdpmetric") / "paper_values" / name
    with path.open() as fh:
        return pd.read_csv(fh, comment="#")


def load_table2() -> pd.DataFrame:
    """The paper's Table II (``dataset, method, mean, std``; percent)."""
    return _paper_csv("table2.csv")


def load_table3() -> pd.DataFrame:
    """The paper's Table III (``dataset, method, seconds, upper``; ``upper = 1``: "less than")."""
    return _paper_csv("table3.csv")


def paper_name(dataset: str) -> str | None:
    """``uci/diabetes:multiclass`` -> ``Diabetes`` (None if the paper has no such row)."""
    base = dataset.split("/", 1)[-1].split(":", 1)[0]
    return PAPER_NAMES.get(base)


def method_names(f: pd.DataFrame) -> pd.Series:
    """The paper's method name of every row; other solvers as ``<label> (<loss>)``.

    A solver run in several configurations for one loss keeps its full label in brackets.
    """
    loss = f["p_loss"].astype(str) if "p_loss" in f else pd.Series("", index=f.index)
    names = []
    n_labels = f.assign(loss=loss).groupby(["solver", "loss"])["solver_label"].transform("nunique")
    for solver, label, ls, many in zip(f["solver"], f["solver_label"], loss, n_labels):
        if solver in PEERS:
            base = PEERS[solver]
        elif solver == "sdpmetric" and ls in OURS:
            base = OURS[ls]
        else:
            base = f"{solver} ({ls})"
        names.append(f"{base} [{label}]" if many > 1 else base)
    return pd.Series(names, index=f.index)


def _pct(values: pd.Series) -> str:
    v = 100.0 * pd.to_numeric(values, errors="coerce").dropna()
    if v.empty:
        return ""
    return f"{v.mean():.2f} ({v.std(ddof=1):.2f})" if len(v) > 1 else f"{v.mean():.2f}"


def _order(methods: list[str]) -> list[str]:
    first = [m for m in ("LMNN", "SDPMetric-S", "SDPMetric-H") if m in methods]
    return first + sorted(m for m in methods if m not in first)


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """Verified rows of the nearest-neighbour protocol with ``method``, ``scaling`` and the Euclidean
    rows of every split added."""
    f = frame[frame["feasible"] == 1]
    if "p_triplets" in f:  # Tables II and III are the nearest-neighbour protocol, not Fig. 2's random triplets
        f = f[f["p_triplets"].fillna("knn").astype(str) == "knn"]
    if f.empty or "metric_test_error" not in f:
        return f.iloc[0:0]
    scaling = f["p_scaling"].astype(str) if "p_scaling" in f else pd.Series("", index=f.index)
    f = f.assign(method=method_names(f), scaling=scaling)
    f = f[f["method"] != "Euclidean"]  # the instance's own baseline below covers every split
    eu = f.drop_duplicates(KEY).assign(method="Euclidean", metric_test_error=lambda d: d["metric_euclidean_test_error"],
                                       wall_time_s=np.nan)
    return pd.concat([eu, f], ignore_index=True)


def table2(f: pd.DataFrame, scaling: str, paper: pd.DataFrame) -> Table:
    """Table II for one scaling: ours (mean (std) over splits) and the paper's rows, shaded."""
    sub = f[f["scaling"] == scaling]
    methods = ["Euclidean", *_order([m for m in sub["method"].unique() if m != "Euclidean"])]
    rows = []
    for d in sorted(sub["dataset"].unique()):
        dsub = sub[sub["dataset"] == d]
        row = {"dataset": d, "splits": str(dsub["seed"].nunique())}
        row.update({m: _pct(dsub[dsub["method"] == m]["metric_test_error"]) for m in methods})
        rows.append(row)
        pn = paper_name(d)
        pv = paper[paper["dataset"] == pn].set_index("method") if pn else None
        if pv is not None and not pv.empty:
            prow = {"dataset": f"{pn} (paper)", "splits": "10"}
            for meth in PAPER_METHODS:
                if meth in pv.index:
                    s = pv.loc[meth, "std"]
                    prow[meth] = f"{pv.loc[meth, 'mean']:.2f}" + ("" if np.isnan(s) else f" ({s:.2f})")
            rows.append(prow)
    frame = pd.DataFrame(rows).fillna("")
    rest = _order([c for c in frame.columns if c not in ("dataset", "splits", "Euclidean")])
    frame = frame[["dataset", "splits", "Euclidean", *rest]]  # the paper's columns in its order, ours after
    shaded = tuple(r["dataset"] for r in rows if r["dataset"].endswith("(paper)"))
    return Table(name=f"sdpmetric-table2-{scaling}", title=f"Table II: 3-NN test error (%), scaling = {scaling}",
                 frame=frame, shaded=shaded,
                 note="mean (std) over splits; shaded: the paper's Table II (paper_values/table2.csv). The paper "
                      "states no preprocessing: compare the two scalings.")


def _paper_diff(paper: pd.DataFrame, dataset: str, method: str, base: str) -> float:
    """The paper's Table II ``method - base`` (points) on our dataset's row, NaN where it has none."""
    pn = paper_name(dataset)
    pv = paper[paper["dataset"] == pn].set_index("method")["mean"] if pn else pd.Series(dtype=float)
    return float(pv[method] - pv[base]) if method in pv and base in pv else float("nan")


#: the paired claims: baseline, the most our method may be above it (points), the claim's words
CLAIMS = (("Euclidean", 0.0, "not above"), ("LMNN", 1.0, "at most 1 point above"))


def paired(f: pd.DataFrame, scaling: str, paper: pd.DataFrame | None = None) -> tuple[Table | None, list[Finding]]:
    """Each of our methods minus Euclidean and minus LMNN on the same splits (points), and the findings
    on the two claims (not above Euclidean; at most 1 point above LMNN), read from the 95 % interval
    of the paired difference."""
    paper = load_table2() if paper is None else paper
    sub = f[f["scaling"] == scaling]
    wide = sub.pivot_table(index=KEY, columns="method", values="metric_test_error", aggfunc="mean") * 100.0
    ours = [m for m in _order(list(wide.columns)) if m not in ("Euclidean", "LMNN", "ITML")]
    if not ours:
        return None, []
    rows: list[dict[str, str]] = []
    findings: list[Finding] = []
    for d in sorted(sub["dataset"].unique()):
        wd = wide.xs(d, level="dataset")
        for m in ours:
            row = {"dataset": d, "method": m}
            for base, limit, words in CLAIMS:
                claim = f"{d} ({scaling}): {m}'s 3-NN test error is {words} {base}'s"
                pdiff = _paper_diff(paper, d, m, base)
                pval = f"{pdiff:+.2f} points" if np.isfinite(pdiff) else ""
                diff = (wd[m] - wd[base]).dropna() if base in wd else pd.Series(dtype=float)
                if diff.empty:
                    hint = how_to_measure(base)
                    findings.append(fd.not_measured("SDPMetric", claim, pval, f"no {base} cells on the same splits"
                                                    + (f"; {hint}" if hint else "")))
                    continue
                iv = fd.paired_interval(diff)
                sd = diff.std(ddof=1) if len(diff) > 1 else float("nan")
                row[f"- {base}"] = f"{diff.mean():+.2f} ({sd:.2f})"
                row[f"95 % interval ({base})"] = fd.fmt_interval(iv, what="splits")
                row[f"pairs ({base})"] = str(len(diff))
                findings.append(Finding(
                    paper="SDPMetric", claim=claim, paper_value=pval,
                    ours=f"{diff.mean():+.2f} points, mean over {len(diff)} splits", interval=fd.fmt_interval(
                        iv, what="splits"), verdict=fd.interval_verdict(iv, limit, "<="),
                    note=f"paired by split; the claim holds when the interval is at or below {limit:+g}"))
            if len(row) > 2:
                rows.append(row)
    if not rows:
        return None, findings
    table = Table(name=f"sdpmetric-paired-{scaling}",
                  title=f"Paired differences of 3-NN test error, scaling = {scaling}",
                  frame=pd.DataFrame(rows).fillna(""), checks=[fd.finding_line(x) for x in findings],
                  note="points of test error, method minus baseline on the same split: mean (std over splits) and "
                       "the 95 % Student-t interval of the mean; a claim holds when the whole interval satisfies it.")
    return table, findings


def table3(f: pd.DataFrame, scaling: str, paper: pd.DataFrame) -> tuple[Table | None, list[Finding]]:
    """Median solve time and the speed-up over LMNN, the paper's ratios beside ours, and the findings
    on the paper's claim that LMNN is always slower (the per-split ratio's spread over splits)."""
    sub = f[(f["scaling"] == scaling) & (f["method"] != "Euclidean")]
    if "LMNN" not in set(sub["method"]):
        return None, []
    methods = _order(list(sub["method"].unique()))
    rows, findings = [], []
    for d in sorted(sub["dataset"].unique()):
        dsub = sub[sub["dataset"] == d]
        med = dsub.groupby("method")["wall_time_s"].median()
        row = {"dataset": d}
        for m in methods:
            if m in med and np.isfinite(med[m]) and med[m] > 0:
                row[m] = f"{med[m]:.3g} s ({med.get('LMNN', np.nan) / med[m]:.2g}x)"
        if "metric_C_selection_s" in dsub:
            sel = pd.to_numeric(dsub["metric_C_selection_s"], errors="coerce").dropna()
            row["choosing C (median)"] = f"{sel.median():.3g} s" if not sel.empty else ""
        rows.append(row)
        pn = paper_name(d)
        pv = paper[paper["dataset"] == pn].set_index("method") if pn else None
        if pv is not None and "LMNN" in pv.index:
            prow = {"dataset": f"{pn} (paper)"}
            for meth in ("LMNN", "SDPMetric-S", "SDPMetric-H"):
                if meth in pv.index:
                    sec, upper = pv.loc[meth, "seconds"], bool(pv.loc[meth, "upper"])
                    ratio = pv.loc["LMNN", "seconds"] / sec
                    prow[meth] = f"{'< ' if upper else ''}{sec:g} s ({'> ' if upper else ''}{ratio:.2g}x)"
            rows.append(prow)
        times = dsub.pivot_table(index="seed", columns="method", values="wall_time_s", aggfunc="median")
        for m in [m for m in ("SDPMetric-S", "SDPMetric-H") if m in times]:
            ratio = (times["LMNN"] / times[m]).replace([np.inf, -np.inf], np.nan).dropna()
            ours, interval, verdict = fd.ratio_claim(ratio, 1.0, ">", "splits")
            p_ratio = (f"{'> ' if bool(pv.loc[m, 'upper']) else ''}{pv.loc['LMNN', 'seconds'] / pv.loc[m, 'seconds']:.2g}x"
                       if pv is not None and m in pv.index and "LMNN" in pv.index else "")
            findings.append(Finding(
                paper="SDPMetric", claim=f"{d} ({scaling}): LMNN is slower than {m} (time per run)", paper_value=p_ratio,
                ours=ours, interval=interval, verdict=verdict,
                note="time(LMNN) / time(method) on each split, median [min to max]; holds when the 95 % interval of "
                     "the geometric mean is above 1x"))
    frame = pd.DataFrame(rows).fillna("")
    shaded = tuple(r["dataset"] for r in rows if r["dataset"].endswith("(paper)"))
    table = Table(name=f"sdpmetric-table3-{scaling}", title=f"Table III: time per run, scaling = {scaling}",
                  frame=frame, shaded=shaded, checks=[fd.finding_line(x) for x in findings],
                  note="median solve time over splits and, in brackets, the speed-up median(LMNN) / median(method) "
                       "measured in the same run; shaded: the paper's Table III (its machine, its code), as ratios. "
                       "Choosing C on the validation split happens when the instance is built and is not in a solve.")
    return table, findings


def no_table3(f: pd.DataFrame, frame: pd.DataFrame) -> str:
    """The sentence that stands for Table III when this run has no verified LMNN cells to time against."""
    lmnn = frame[frame["solver"] == "ml-lmnn"] if "solver" in frame else frame.iloc[0:0]
    if lmnn.empty:
        why = f"no `ml-lmnn` cells ({how_to_measure('LMNN')})"
    else:
        counts = ", ".join(f"{n} {s}" for s, n in outcome_column(lmnn).value_counts().items())
        why = f"no verified `ml-lmnn` cells on the nearest-neighbour protocol ({counts})"
    return (f"**Table III (time per run against LMNN) is not shown**: this run has {why}. The paper's Table III "
            "is in `paper_values/table3.csv`.")


class Table2:
    """Section ``sdpmetric-table2``: Tables II and III of the SDPMetric paper, and the paired checks."""

    name = "sdpmetric-table2"
    title = "SDPMetric: Table II (3-NN test error) and Table III (time per run)"
    family = "sdpmetric"
    order = 100

    def render(self, context: Any) -> list[Any]:
        f = tidy(context.frame)
        if f.empty:
            return []
        t2, t3 = load_table2(), load_table3()
        out: list[Any] = []
        findings: list[Finding] = []
        has_t3 = False
        for sc in sorted(f["scaling"].unique()):
            out.append(table2(f, sc, t2))
            pt, pf = paired(f, sc, t2)
            tt, tf = table3(f, sc, t3)
            out.extend(t for t in (pt, tt) if t is not None)
            findings += pf + tf
            has_t3 |= tt is not None
        if not has_t3:
            out.append(Text(no_table3(f, context.frame)))
            r = t3.pivot_table(index="dataset", columns="method", values="seconds")
            r = pd.concat([r["LMNN"] / r[m] for m in ("SDPMetric-S", "SDPMetric-H")]).dropna()
            findings.append(fd.not_measured("SDPMetric", "LMNN is always slower than SDPMetric (Table III)",
                                            f"LMNN / SDPMetric {r.min():.2g}x to {r.max():.0f}x", "no verified LMNN "
                                            f"cells in this run; {how_to_measure('LMNN')}"))
        return out + [fd.finding_block(x) for x in findings]
