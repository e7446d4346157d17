"""Report section ``bregman-dykstra-classification``: Fig. 2 of the stochastic Dykstra paper and its claim.

Section 5.2 / Fig. 2: 3-NN test accuracy of covariance descriptors under the learned ``W`` for each
map ``Phi`` (id, log, sqrt, chol) and each slack divergence (ISBD, L2BD, REBD), beside ``W = I``
("Eye") on the same split.  The section reads the ``dykstra`` cells on ``metric/bregman-pairs`` with
``pairs = "covariance"`` (or ``"labels"``: vector pairs, one "Phi" ``-``) and their ``acc_W`` /
``acc_eye`` metrics, one group per data set (``images/textures`` per patch size, digits, ...).

* **Table**: mean +- std over seeds of the accuracy (percent) per (set, Phi): Eye, then each
  divergence, with the seed count.
* **Figure**: one panel per set, bars per Phi (Eye, ISBD, L2BD, REBD), error bars one std.
* **Claim** (Fig. 2, as its caption and section 5.2 state it): for every Phi, the learned ``W``
  with ISBD is not worse than Eye on average over seeds, and strictly better wherever Eye's mean
  is below 100 %; a finding per (set, Phi), read from the 95 % t interval of the paired difference
  (W - Eye, same seed).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from psdbench.report import findings as fd
from psdbench.report.blocks import Figure, Finding, Table
from psdbench.report.render.plot import colours, panel_grid, shared_legend, to_png

PROBLEM = "metric/bregman-pairs"
SOLVER = "dykstra"
PHI_ORDER = ("id", "log", "sqrt", "chol", "-")
DIVS = (("is", "ISBD"), ("l2", "L2BD"), ("re", "REBD"))


def _set_label(dataset: str, patch: Any) -> str:
    if dataset == "images/textures":
        return f"{dataset} ({int(float(patch))} px patches)"
    return dataset


def tidy(frame: pd.DataFrame) -> pd.DataFrame:
    """``dykstra`` cells on labelled pairs with both accuracies: ``set``, ``phi``, ``div``, ``seed``, ``acc_W``, ``acc_eye``."""
    need = {"p_pairs", "metric_acc_W", "metric_acc_eye"}
    if not need <= set(frame.columns):
        return frame.iloc[0:0]
    f = frame[(frame["problem"] == PROBLEM) & (frame["solver"] == SOLVER)
              & frame["p_pairs"].astype(str).isin(["covariance", "labels"])]
    f = f.assign(acc_W=pd.to_numeric(f["metric_acc_W"], errors="coerce"),
                 acc_eye=pd.to_numeric(f["metric_acc_eye"], errors="coerce"))
    f = f[np.isfinite(f["acc_W"]) & np.isfinite(f["acc_eye"])]
    if f.empty:
        return f
    patch = f["p_patch"] if "p_patch" in f else pd.Series(128, index=f.index)
    phi = np.where(f["p_pairs"].astype(str) == "covariance", f.get("p_phi", pd.Series("id", index=f.index)).astype(str), "-")
    return f.assign(set=[_set_label(d, p) for d, p in zip(f["dataset"], patch)], phi=phi,
                    div=f["p_divergence"].astype(str))


def _pct(values: pd.Series) -> str:
    v = 100.0 * values.to_numpy(float)
    return f"{v.mean():.1f} +- {v.std(ddof=1):.1f}" if len(v) > 1 else f"{v.mean():.1f}"


def _phis(values: Any) -> list[str]:
    return [p for p in PHI_ORDER if p in set(values)]


def accuracy_table(f: pd.DataFrame) -> tuple[Table, list[Finding]]:
    """Mean +- std accuracy per (set, Phi), and the findings on the claim (the table's checks)."""
    rows, findings = [], []
    for s in sorted(f["set"].unique()):
        fs = f[f["set"] == s]
        for phi in _phis(fs["phi"].unique()):
            g = fs[fs["phi"] == phi]
            eye = g.drop_duplicates("seed")[["seed", "acc_eye"]]
            row = {"set / Phi": f"{s} / {phi}", "Eye": _pct(eye["acc_eye"])}
            for key, label in DIVS:
                d = g[g["div"] == key]
                row[label] = _pct(d["acc_W"]) if len(d) else ""
            row["seeds"] = str(eye["seed"].nunique())
            rows.append(row)
            found = _claim(s, phi, g[g["div"] == "is"])
            if found is not None:
                findings.append(found)
    note = ("3-NN test accuracy (percent), mean +- std over seeds, of `dykstra`'s W for each slack divergence, and of "
            "Eye (W = I) on the same split. Each row is one data set and map Phi; the checks test, for ISBD, the "
            "claim read from Fig. 2.")
    return Table(name="dykstra-fig2", title="Fig. 2: 3-NN accuracy per Phi and divergence, against Eye",
                 frame=pd.DataFrame(rows), note=note, checks=[fd.finding_line(x) for x in findings]), findings


def _claim(s: str, phi: str, d: pd.DataFrame) -> Finding | None:
    """ISBD's W not worse than Eye on average (Eye at 100 %), strictly better where Eye is below 100 %,
    read from the 95 % interval of the paired difference W - Eye over seeds (None without cells)."""
    if d.empty:
        return None
    diff = 100.0 * (d["acc_W"].to_numpy(float) - d["acc_eye"].to_numpy(float))
    iv = fd.paired_interval(diff)
    if float(d["acc_eye"].mean()) >= 1.0:
        want, relation = "not worse than Eye (Eye is 100 %)", ">="
    else:
        want, relation = "strictly better than Eye (Eye below 100 %)", ">"
    return Finding(paper="Stochastic Dykstra", claim=f"{s}, Phi = {phi}: the ISBD-learned W is {want} (Fig. 2)",
                   paper_value="W above Eye (Fig. 2)", ours=f"W - Eye = {diff.mean():+.2f} points, mean",
                   interval=fd.fmt_interval(iv, unit=" points", what="seeds"),
                   verdict=fd.interval_verdict(iv, 0.0, relation), note="3-NN accuracy, paired by seed")


def figure2(f: pd.DataFrame) -> Figure:
    """Bars per Phi (Eye and each divergence), one panel per set, error bars one std over seeds."""
    sets = sorted(f["set"].unique())
    fig, axes = panel_grid(len(sets), ncol=min(2, len(sets)), width=5.6, height=3.6)
    names = ["Eye"] + [label for _, label in DIVS]
    col = colours(names)
    handles: dict[str, Any] = {}
    for ax, s in zip(axes, sets):
        fs = f[f["set"] == s]
        phis = _phis(fs["phi"].unique())
        width = 0.8 / len(names)
        lows = []
        for j, name in enumerate(names):
            means, stds = [], []
            for phi in phis:
                g = fs[fs["phi"] == phi]
                v = (g.drop_duplicates("seed")["acc_eye"] if name == "Eye"
                     else g[g["div"] == dict((lab, k) for k, lab in DIVS)[name]]["acc_W"]).to_numpy(float) * 100
                means.append(v.mean() if len(v) else np.nan)
                stds.append(v.std(ddof=1) if len(v) > 1 else 0.0)
            x = np.arange(len(phis)) + (j - (len(names) - 1) / 2) * width
            h = ax.bar(x, means, width, yerr=stds, color=col[name], capsize=2, label=name)
            handles.setdefault(name, h)
            lows += [m - e for m, e in zip(means, stds) if np.isfinite(m)]
        ax.set_xticks(np.arange(len(phis)), phis)
        ax.set_ylim(max(0.0, min(lows, default=0.0) - 5.0), 100.5)
        ax.set_ylabel("3-NN accuracy (%)")
        k = fs["seed"].nunique()
        ax.set_title(f"{s} ({k} seed{'s' if k > 1 else ''})", fontsize=10)
        ax.grid(True, axis="y", alpha=0.3)
    rows = shared_legend(fig, list(handles.values()), list(handles), ncol=len(handles))
    return Figure(name="dykstra-fig2", title="Fig. 2: 3-NN accuracy per Phi (bars: Eye and the learned W per divergence)",
                  png=to_png(fig, rows),
                  caption="Mean over seeds, error bars one standard deviation. Eye is W = I on the same split and map Phi.")


class DykstraClassification:
    """Section ``bregman-dykstra-classification``: Fig. 2 of the stochastic Dykstra paper."""

    name = "bregman-dykstra-classification"
    title = "Stochastic Dykstra: Fig. 2 (3-NN accuracy of covariance descriptors per Phi and divergence)"
    family = "bregman-dykstra"
    order = 101

    def render(self, context: Any) -> list[Any]:
        f = tidy(context.frame)
        if f.empty:
            return []
        table, findings = accuracy_table(f)
        return [figure2(f), table] + [fd.finding_block(x) for x in findings]
