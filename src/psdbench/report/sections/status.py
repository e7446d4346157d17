"""Status summary (counts per configuration and status) and the failures of a family."""

from __future__ import annotations

from typing import Any

import pandas as pd

from psdbench.harness.results import OUTCOMES, outcome_column
from psdbench.report import failures_frame
from psdbench.report.blocks import SectionContext, Table, Text


class StatusSummary:
    """Cells per solver configuration and outcome (:data:`psdbench.harness.results.OUTCOMES`: the
    status, with ``rejected`` / ``solver infeasible`` and ``inaccurate`` told apart), with totals."""

    name = "status"
    title = "Status summary"
    family = "*"
    order = 0

    def render(self, context: SectionContext) -> list[Any]:
        f = context.frame
        if f.empty:
            return []
        counts = pd.crosstab(f["solver_label"], outcome_column(f))
        statuses = ["ok"] * ("ok" in counts.columns) + sorted(c for c in counts.columns if c != "ok")
        counts = counts[statuses]
        counts["total"] = counts.sum(axis=1)
        counts.columns.name = None
        out = counts.reset_index().rename(columns={"solver_label": "solver"})
        out = out.astype({c: str for c in out.columns})
        n_inst = f["instance_key"].nunique()
        shown = [c for c in statuses if c in OUTCOMES]
        return [Table(f"status_{context.family}", "Cells per configuration and outcome", out,
                      f"{len(f)} cell(s) on {n_inst} instance(s) of {f['problem'].nunique()} problem(s).  "
                      + "  ".join(f"`{c}`: {OUTCOMES[c]}." for c in shown))]


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


class BelowCertified:
    """Verified points that beat a certified reference: their objective is below what any feasible
    point attains, so a tolerance (the solver's feasibility, or the certificate) let them through.

    Their gaps are negative and are not a win; the table names them with what verification measured
    so a reader can tell whose tolerance it was.  Nothing is rendered when there are none.
    """

    name = "below-certified"
    title = "Points beyond the certified bound"
    family = "*"
    order = 5

    def render(self, context: SectionContext) -> list[Any]:
        f = context.frame
        if f.empty or not f["below_certified"].any():
            return []
        b = f[f["below_certified"]]
        out = pd.DataFrame({
            "solver": b["solver_label"], "dataset": b["dataset"],
            "params": b["instance_params"].map(lambda d: ", ".join(f"{k}={d[k]}" for k in sorted(d))),
            "seed": b["seed"].map(lambda s: "" if pd.isna(s) else str(int(s))), "status": b["status"],
            "objective": b["objective"].map(lambda v: f"{v:.10g}"),
            "certified p*": b["reference_objective"].map(lambda v: f"{v:.10g}"),
            "gap_rel": b["gap_rel"].map(lambda v: f"{v:.3g}"),
            "min_eig": b["min_eig"].map(lambda v: "" if pd.isna(v) else f"{v:.3g}"),
            "max_residual": b["max_residual"].map(lambda v: "" if pd.isna(v) else f"{v:.3g}"),
        }).reset_index(drop=True)
        return [Text(f"{len(b)} verified cell(s) of {b['solver_label'].nunique()} configuration(s) end below "
                     "the certified reference by more than its certificate's width: they passed verification "
                     "within its tolerances but beat a proven bound, so their negative gaps measure the "
                     "tolerance, not a better solution."),
                Table(f"below_certified_{context.family}", "Cells below the certified reference", out)]
