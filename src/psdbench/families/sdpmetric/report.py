"""Report section of the SDPMetric family: Table II (3-NN test error, mean and std over seeds).

Rows are datasets, columns methods: ``Euclidean`` (the instance's own Euclidean 3-NN baseline) and
one column per solver label and loss; the paper's Table II values (``paper_values/table2.csv``) are
shaded rows beside ours for the datasets it reports.  Only verified cells (``feasible == 1``) count.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import numpy as np
import pandas as pd

from psdbench.report.blocks import Table

#: our dataset names -> the paper's row labels
PAPER_NAMES = {"wine": "Wine", "breast-cancer": "Breast-Cancer", "diabetes": "Diabetes"}
PAPER_METHODS = ("Euclidean", "LMNN", "SDPMetric-S", "SDPMetric-H")


def load_table2() -> pd.DataFrame:
    """The paper's Table II (``dataset, method, mean, std``; percent)."""
    path = resources.files("psdbench.families.sdpmetric") / "paper_values" / "table2.csv"
    with path.open() as fh:
        return pd.read_csv(fh, comment="#")


def paper_name(dataset: str) -> str | None:
    """``uci/diabetes:multiclass`` -> ``Diabetes`` (None if the paper has no such row)."""
    base = dataset.split("/", 1)[-1].split(":", 1)[0]
    return PAPER_NAMES.get(base)


def _cell(values: pd.Series) -> str:
    v = 100.0 * pd.to_numeric(values, errors="coerce").dropna()
    if v.empty:
        return ""
    return f"{v.mean():.2f} ({v.std(ddof=1):.2f})" if len(v) > 1 else f"{v.mean():.2f}"


class Table2:
    """Section ``sdpmetric-table2``: Table II layout with the paper's values."""

    name = "sdpmetric-table2"
    title = "SDPMetric: 3-NN test error (%), Table II layout"
    family = "sdpmetric"
    order = 100

    def render(self, context: Any) -> list[Any]:
        f = context.frame
        if f.empty or "metric_test_error" not in f:
            return []
        f = f[f["feasible"] == 1]
        if f.empty:
            return []
        loss = f["p_loss"].astype(str) if "p_loss" in f else pd.Series("", index=f.index)
        scaling = f["p_scaling"].astype(str) if "p_scaling" in f else pd.Series("", index=f.index)
        f = f.assign(method=f["solver_label"].astype(str) + " (" + loss + ")", scaling=scaling)
        paper = load_table2()
        out = []
        for sc in sorted(f["scaling"].unique()):
            sub = f[f["scaling"] == sc]
            methods = sorted(sub["method"].unique())
            rows = []
            for d in sorted(sub["dataset"].unique()):
                dsub = sub[sub["dataset"] == d]
                eu = dsub.drop_duplicates("instance_key")["metric_euclidean_test_error"]
                row = {"dataset": d, "n_seeds": str(dsub["seed"].nunique()), "Euclidean": _cell(eu)}
                row.update({m: _cell(dsub[dsub["method"] == m]["metric_test_error"]) for m in methods})
                rows.append(row)
                pn = paper_name(d)
                if pn is not None:
                    pv = paper[paper["dataset"] == pn].set_index("method")
                    prow = {"dataset": f"{pn} (paper)", "n_seeds": "10"}
                    for meth in PAPER_METHODS:
                        if meth in pv.index:
                            s = pv.loc[meth, "std"]
                            prow[f"paper {meth}"] = f"{pv.loc[meth, 'mean']:.2f}" + ("" if np.isnan(s) else f" ({s:.2f})")
                    rows.append(prow)
            frame = pd.DataFrame(rows).fillna("")
            shaded = tuple(r["dataset"] for r in rows if r["dataset"].endswith("(paper)"))
            out.append(Table(name=f"sdpmetric-table2-{sc}", title=f"3-NN test error (%), scaling = {sc}",
                             frame=frame, shaded=shaded,
                             note="mean (std) over seeds; paper values from Table II of the SDPMetric paper "
                                  "(paper_values/table2.csv), whose preprocessing is not stated."))
        return out
