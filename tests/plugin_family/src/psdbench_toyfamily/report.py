"""The family's report section: one table per size, solvers as rows.

Built only from ``context.frame`` (the tidy frame of this family's latest cells), as every
:class:`psdbench.api.ReportSection` must; the renderer writes the blocks.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from psdbench.report.blocks import Table, Text

from . import KIND

TITLE = "Toy family: nearest unit-diagonal PSD matrix"


def _fmt(x: Any) -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "-"
    return f"{v:.4g}" if math.isfinite(v) else "-"


class NearestPsdSection:
    """Objective, gap to the certified reference and time per solver."""

    name = "toy-nearest-psd"
    title = TITLE
    family = KIND
    order = 100

    def render(self, context: Any) -> list:
        df = context.frame
        if df is None or len(df) == 0:
            return []
        label = "solver_label" if "solver_label" in df.columns else "solver"
        size = df["p_n"] if "p_n" in df.columns else df["instance_params"].map(lambda d: (d or {}).get("n"))
        blocks: list = [Text("`||X - A||_F^2` over PSD `X` with unit diagonal; statistics over cells with "
                             "status `ok`, `gap_rel` against the certified reference.")]
        for n, sub in df.assign(_n=size).groupby("_n", sort=True):
            rows = []
            for solver, g in sub.groupby(label, sort=True):
                ok = g[g["status"] == "ok"]
                rows.append({
                    "solver": str(solver),
                    "cells ok/total": f"{len(ok)}/{len(g)}",
                    "objective": _fmt(pd.to_numeric(ok.get("objective"), errors="coerce").mean()),
                    "gap_rel": _fmt(pd.to_numeric(ok.get("gap_rel"), errors="coerce").mean()),
                    "median time (s)": _fmt(pd.to_numeric(ok.get("wall_time_s"), errors="coerce").median()),
                })
            blocks.append(Table(name=f"toy_nearest_psd_n{n}", title=f"{TITLE}, n = {n}",
                                frame=pd.DataFrame(rows)))
        return blocks
