"""Report section of the graph-classification family (GDPA paper): one solver table per instance group.

One table per (problem, dataset, graph, scaling, N) group: a row per solver configuration (error
rate mean ± std over seeds, objective, reference ``p*``, gap, lower bound, time, iterations), then
the majority-class, label-propagation and SDP-optimum rows (averaged over distinct instances).
Statistics over cells with status ``ok``; ``cells ok/total`` keeps failed cells visible.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from psdbench.families.graph_classification.report_scaling import scaling_blocks
from psdbench.report.measures import aggregate as agg
from psdbench.report.blocks import SectionContext
from psdbench.report.fmt import MISSING, fmt_num, fmt_pct, isnum, slug
from psdbench.report.tables import ExtraRow, Measure, TableSpec, build_table, reached_measure

FAMILY = "graph-classification"
GROUP = ["problem", "dataset", "p_graph", "p_scaling", "p_n"]


def _pct(v: Any) -> str:
    return fmt_pct(*v[:2]) if isinstance(v, tuple) else fmt_pct(v)


def _kinds(v: Any) -> str:
    return v or MISSING


def _lb_ratio(cells: pd.DataFrame, group: pd.DataFrame, value: Any, key: Any) -> float:
    pstar = cells["reference_objective"]
    return agg.mean(cells["metric_lower_bound"] / pstar.where(pstar != 0))


def _gap_lb(cells: pd.DataFrame, group: pd.DataFrame, value: Any, key: Any) -> float:
    return agg.mean(cells["reference_objective"] - cells["metric_lower_bound"])


def _has(frame: pd.DataFrame, col: str) -> bool:
    return col in frame.columns and frame[col].notna().any()


def group_spec(sub: pd.DataFrame, name: str, title: str, options: Any = None) -> TableSpec:
    """The table of one instance group (optional lower-bound and λmin(H̄) columns when recorded)."""
    measures = [Measure("cells ok/total", agg="ok_total", fmt=lambda v: v or MISSING),
                Measure("error rate (%)", "metric_error_rate", "mean_std", _pct),
                Measure("objective", "objective"), Measure("p*", "reference_objective"),
                Measure("ref kind", agg="references", fmt=_kinds, cells="all"),
                Measure("ranked gap (median)", "ranked_gap", "median"), reached_measure(options or {})]
    if _has(sub, "metric_lower_bound"):
        measures += [Measure("lower bound", "metric_lower_bound"), Measure("LB/p*", agg=_lb_ratio),
                     Measure("p* − LB", agg=_gap_lb)]
    if _has(sub, "metric_lambda_min_Hbar"):
        measures.append(Measure("λmin(H̄)", "metric_lambda_min_Hbar"))
    measures += [Measure("median time (s)", "wall_time_s", "median"), Measure("iterations", "iterations")]
    extra = [ExtraRow(label, {"error rate (%)": Measure("", col, "instance_mean_std", _pct, cells="all")},
                      when=lambda v: any(isnum(x) for x in v.values()))
             for label, col in (("majority class", "metric_majority_error"),
                                ("label propagation", "metric_labelprop_error")) if col in sub.columns]
    ref = Measure("", "instance_reference", "instance_mean", cells="all")
    extra.append(ExtraRow("SDP optimum (reference)", {
        "objective": ref, "p*": ref,
        "ref kind": Measure("", agg="references", fmt=_kinds, cells="all"),
        "cells ok/total": Measure("", "instance_reference", "instances", lambda n: f"{n} inst.", cells="all")},
        when=lambda v: isnum(v.get("objective"))))
    meta = (f"{sub['instance_key'].nunique()} instance(s), {sub['seed'].nunique()} seed(s), {len(sub)} cell(s)")
    return TableSpec(name, title, tuple(measures), rows=("solver_label",), row_headers=("solver",),
                     extra_rows=tuple(extra), note=meta)


class GraphClassificationTables:
    """Section "Results by dataset" of the graph-classification family."""

    name = "graph-classification"
    title = "Results by dataset"
    family = FAMILY
    order = 100
    intro = ("Statistics over cells with status `ok`; error rate is mean ± std over seeds (%). "
             "Baseline rows average over distinct instances.  `ranked gap`, `reached`: the report's rules "
             "(glossary), the same as the winners and profiles.")

    def render(self, context: SectionContext) -> list[Any]:
        f = context.frame
        if f.empty:
            return []
        for c in GROUP:
            if c not in f.columns:
                f = f.assign(**{c: np.nan})
        keys = f[GROUP].drop_duplicates()
        keys = keys.assign(_n=pd.to_numeric(keys["p_n"], errors="coerce").fillna(-1))
        keys = keys.sort_values(["problem", "dataset", "p_graph", "p_scaling", "_n"], key=lambda s: s.astype(
            str) if s.dtype == object else s)
        tables = []
        for key in keys.itertuples(index=False):
            mask = np.ones(len(f), bool)
            for c, v in zip(GROUP, key[:len(GROUP)]):
                mask &= (f[c].isna() & pd.isna(v)).to_numpy() | (f[c] == v).to_numpy()
            sub = f[mask]
            n = key.p_n
            title = (f"{key.problem} / {key.dataset} — graph={key.p_graph}, scaling={key.p_scaling}, "
                     f"N={fmt_num(n)}")
            name = "table_" + slug(key.problem, key.dataset, key.p_graph, key.p_scaling,
                                   f"n{fmt_num(n)}" if isnum(n) else None)
            t = build_table(group_spec(sub, name, title, context.options), sub)
            if t is not None:
                tables.append(t)
        return tables + scaling_blocks(f)

