"""Status summary (counts per configuration and status) and the failures of a family."""

from __future__ import annotations

from typing import Any

import pandas as pd

from psdbench.report import failures_frame
from psdbench.report.blocks import SectionContext, Table, Text


class StatusSummary:
    """Cells per solver configuration and status, with totals."""

    name = "status"
    title = "Status summary"
    family = "*"
    order = 0

    def render(self, context: SectionContext) -> list[Any]:
        f = context.frame
        if f.empty:
            return []
        counts = pd.crosstab(f["solver_label"], f["status"])
        statuses = ["ok"] * ("ok" in counts.columns) + sorted(c for c in counts.columns if c != "ok")
        counts = counts[statuses]
        counts["total"] = counts.sum(axis=1)
        counts.columns.name = None
        out = counts.reset_index().rename(columns={"solver_label": "solver"})
        out = out.astype({c: str for c in out.columns})
        n_inst = f["instance_key"].nunique()
        return [Table(f"status_{context.family}", "Cells per configuration and status", out,
                      f"{len(f)} cell(s) on {n_inst} instance(s) of {f['problem'].nunique()} problem(s).")]


class Failures:
    """Every cell of the family whose status is not ``ok``, with the first line of its message."""

    name = "failures"
    title = "Failures"
    family = "*"
    order = 1000  # last in each family

    def render(self, context: SectionContext) -> list[Any]:
        fails = failures_frame(context.frame)
        if fails.empty:
            return [Text("No failed cells.")]
        return [Text(f"{len(fails)} cell(s) with status other than `ok`."),
                Table(f"failures_{context.family}", "Failed cells", fails)]
