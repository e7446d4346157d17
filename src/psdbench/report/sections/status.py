"""Status summary (counts per configuration and status) and the failures of a family."""

from __future__ import annotations

from typing import Any

import pandas as pd

from psdbench.harness.store.results import OUTCOMES, outcome_column
from psdbench.report import failures_frame
from psdbench.report.measures import analysis as an
from psdbench.report import rules
from psdbench.report.blocks import SectionContext, Table, Text
from psdbench.report.fmt import fmt_num


class StatusSummary:
    """Cells per solver configuration and outcome (:data:`psdbench.harness.store.results.OUTCOMES`: the
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
                      f"{len(f)} cell(s) on {n_inst} instance(s) of {f['problem'].nunique()} problem(s).  Outcomes "
                      f"({', '.join(f'`{c}`' for c in shown)}): see the [glossary](#s-glossary).")]


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
    """Verified points below a certified reference (:mod:`psdbench.report.rules`): within the floor a
    tie at 0, beyond it *beyond the bound* (they beat a proven bound: a tolerance let them through).

    The table names them with what verification measured and the floor they are judged by, so a
    reader can tell whose tolerance it was.  Nothing is rendered when there are none.
    """

    name = "below-certified"
    title = "Points below the reference"
    family = "*"
    order = 5

    def render(self, context: SectionContext) -> list[Any]:
        f = context.frame
        if f.empty:
            return []
        b = f[f["verified"].astype(bool) & (f["gap"].astype(float) < 0)]
        if b.empty:
            return []
        certified = an.reference_certified(b)
        verdicts = [rules.verdict(g, 0.0, fl, c) for g, fl, c in zip(b["gap"].astype(float), b["floor"], certified)]
        out = pd.DataFrame({
            "solver": b["solver_label"], "dataset": b["dataset"],
            "params": b["instance_params"].map(an.param_text),
            "seed": b["seed"].map(lambda s: "" if pd.isna(s) else str(int(s))), "outcome": outcome_column(b),
            "objective": b["objective"].map(lambda v: f"{v:.10g}"),
            "reference": b["reference_objective"].map(lambda v: f"{v:.10g}"),
            "reference kind": an.reference_sources(b).to_numpy(),
            "known to": (b["reference_accuracy"] if "reference_accuracy" in b.columns
                         else pd.Series(float("nan"), index=b.index)).map(fmt_num).to_numpy(),
            "gap": b["gap"].map(fmt_num), "floor": b["floor"].map(fmt_num),
            "ranked gap": b["ranked_gap"].map(fmt_num), "verdict": verdicts,
            "min_eig": b["min_eig"].map(fmt_num), "max_residual": b["max_residual"].map(fmt_num),
        }).reset_index(drop=True)
        n_tie = sum(v == "tie at 0" for v in verdicts)
        return [Table(f"below_reference_{context.family}", "Verified points below the reference", out,
                      f"{len(b)} verified cell(s) end below their instance's reference: {n_tie} within the floor (a tie "
                      f"at 0, reached), {len(b) - n_tie} beyond it (never reached: below a certified bound, or set "
                      "aside by the reference rule because a more accurate point disagrees).  Floor: max(reference "
                      "accuracy (`known to`), verification allowance, repair allowance), see the glossary; reference kind: the one "
                      "name every table gives it.")]
