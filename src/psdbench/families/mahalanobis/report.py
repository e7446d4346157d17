"""Report section of the Mahalanobis (metric-learning) family in the layout of the SGML paper's Tables 4-7.

Tables (problems ``metric/<objective>``; datasets as columns under the paper's names):

* objective protocol (paper section 6.2, Tables 4-5), per objective: mean final objective over
  ``ok`` folds per solver configuration, the reference ``p*``, the paper's rows (and the authors'
  CSV where it differs), ``# better than pgml``; the ``ok/total`` folds; the spread over folds; and
  the ratio to pd-cone (ours, with a 95 % interval of the per-fold ratio, beside the paper's);
* classification protocol (section 6.3, Tables 6-7): k-NN accuracy (%) with ``avg.`` and its spread,
  nearest-class-mean accuracy;
* mean wall time per objective, protocol and configuration.

The paper's numbers come from ``paper_values/*.csv`` (:mod:`.paper_values`); the authors' objective
CSV under ``$PSDBENCH_DATA`` adds ``paper CSV:`` rows, and the section returns a data source block
saying whether it was found; defaults (``protocol``,
``k_nn``) and the sense of each objective come from the tidy frame.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from psdbench.report import findings as fd
from psdbench.report.measures import aggregate as agg
from psdbench.report.measures import analysis as an
from psdbench.report.blocks import Finding, SectionContext
from psdbench.report.fmt import MISSING, fmt_finite, fmt_interval, fmt_mean_std, fmt_num, fmt_sci, slug
from psdbench.report.tables import (ExtraRow, Measure, RowView, Summary, TableSpec, any_finite, build_tables,
                                    reached_measure, row_mean)

from . import paper_values as pv
from .paper_values import PaperValues, is_better

FAMILY = "mahalanobis"
SECTION_TITLE = "Metric learning (SGML paper layout)"
#: Our solver names in the order of the paper's optimizer rows, with the paper's name of the same method.
PAPER_NAME: dict[str, str] = {"pd-cone": "PD-cone", "hbnb": "HBNB", "pgml": "PGML", "sgml": "SGML"}


def fmt_acc(x: Any) -> str:
    """An accuracy already in % with two decimals (the paper's Tables 6-7); NaN/None as ``-``."""
    return fmt_finite(x, ".2f")


def better_count(row: pd.Series, base: pd.Series, sense: str) -> str:
    """``k/n``: over the ``n`` columns where both are finite, the ``k`` where ``row`` is strictly better."""
    both = [k for k in row.index if k in base.index and np.isfinite(row[k]) and np.isfinite(base[k])]
    if not both:
        return MISSING
    return f"{sum(is_better(row[k], base[k], sense) for k in both)}/{len(both)}"


class _Layout:
    """Row / column order and labels of one frame (the paper's dataset names and optimizer order)."""

    def __init__(self, frame: pd.DataFrame, paper: PaperValues) -> None:
        self.paper = paper
        self.datasets = paper.order_datasets(frame["dataset"])
        self.names = dict(zip(frame["solver_label"], frame["solver"]))
        objs = {str(o) for o in frame["objective_name"]}
        self.objectives = [o for o in paper.objectives if o in objs] + sorted(objs - set(paper.objectives))

    def solver_rank(self, label: str) -> tuple[int, str]:
        order = list(PAPER_NAME)
        name = self.names.get(label, "")
        return (order.index(name) if name in order else len(order), label)

    def columns(self, **kw: Any) -> dict[str, Any]:
        """Pivot settings: datasets as columns in the paper's order under the paper's names."""
        return {"pivot": "dataset", "pivot_order": lambda ds: [d for d in self.datasets if d in set(ds)],
                "pivot_label": self.paper.column_label, **kw}

    def labels_of(self, solver: str) -> list[str]:
        return [lab for lab, name in self.names.items() if name == solver]


def _paper_measure(lookup: Any) -> Measure:
    return Measure("", agg=lambda c, g, v, k: lookup(k["dataset"]), fmt=fmt_sci, cells="all")


def objective_specs(sub: pd.DataFrame, objective: str, lay: _Layout, authors: Any,
                    options: Any = None) -> list[tuple[TableSpec, pd.DataFrame]]:
    """Tables 4-5 layout for one objective (objective protocol rows), its folds, spread and ratio tables."""
    sense = str(sub["sense"].iloc[0])
    paper = lay.paper
    pdata = {d: paper.paper_dataset(d) for d in lay.datasets}
    s = slug(objective.lower()).lower()
    order = {"row_order": lambda k: lay.solver_rank(k[0]), "row_headers": ("optimizer",)}
    has_ref = lambda f: np.isfinite(f["instance_reference"].astype(float))  # noqa: E731
    extra = [ExtraRow(lambda f: f"reference p* [{an.reference_text(f[has_ref(f)])}]"
                      if has_ref(f).any() else "reference p*",
                      {"": Measure("", "instance_reference", "instance_mean", fmt_sci, cells="all")})]
    paper_any = any(np.isfinite(paper.objective_value(objective, o, pdata.get(d))) for o in paper.optimizers
                    for d in set(sub["dataset"]))
    if paper_any:
        extra += [ExtraRow(f"paper: {o}", {"": _paper_measure(
            lambda d, o=o: paper.objective_value(objective, o, pdata.get(d)))}) for o in paper.optimizers]
    for o, vals in ((authors or {}).get(objective) or {}).items():
        csv = lambda d, vals=vals: float(vals.get(pdata.get(d), float("nan"))) if pdata.get(d) else float("nan")  # noqa: E731
        differs = any(np.isfinite(csv(d)) and not np.isclose(csv(d), paper.objective_value(objective, o, pdata.get(d)),
                                                               rtol=1e-9, atol=0) for d in set(sub["dataset"]))
        if differs:
            extra.append(ExtraRow(f"paper CSV: {o}", {"": _paper_measure(csv)}))
    pgml = lay.labels_of("pgml")
    summaries: tuple[Summary, ...] = ()
    if pgml:
        base_label = sorted(pgml, key=lambda lab: (-int(np.isfinite(sub.loc[(sub["solver_label"] == lab) & (
            sub["status"] == "ok"), "objective"].astype(float)).groupby(sub["dataset"]).any().sum()), lab))[0]

        def better(row: RowView) -> str:
            if row.data:
                return "" if row.label == base_label else better_count(row.values, row.table[base_label], sense)
            if row.label.startswith("paper: "):
                return "" if row.label == "paper: PGML" else better_count(row.values, row.table["paper: PGML"], sense)
            return ""

        summaries = (Summary(f"# better than {base_label}", better),)
    word = "higher" if sense == "max" else "lower"
    note = (f"{'Maximized' if sense == 'max' else 'Minimized'}.  Mean final objective over `ok` folds (objective "
            "protocol, paper section 6.2: each fold is one instance).  `paper:` rows are the paper's Tables 4-5"
            + ("; `paper CSV:` rows are the authors' CSV where it differs from the paper text"
               if any(str(e.label).startswith("paper CSV:") for e in extra) else "")
            + (f".  `{summaries[0].label}`: datasets where the row's mean is strictly {word} than "
               f"{summaries[0].label[len('# better than '):]}'s (paper rows: than paper PGML)." if summaries else "."))
    main = TableSpec(f"table_metric_objective_{s}", f"{objective}: final objective (Tables 4-5 layout)",
                     (Measure("", "objective", "mean", fmt_sci),), extra_rows=tuple(extra), summaries=summaries,
                     note=note, **lay.columns(**order))

    def ref_folds(c: pd.DataFrame, g: pd.DataFrame, v: Any, k: Any) -> str:
        units = c["unit"] if "unit" in c.columns else c["instance_key"]
        n = units[has_ref(c)].nunique()
        return f"{n}/{units.nunique()} ({an.reference_text(c[has_ref(c)]) or MISSING})"

    folds = TableSpec(f"table_metric_objective_{s}_folds", f"{objective}: folds ok/total and reached",
                      (Measure("", "objective", "ok_units", lambda v: v or MISSING),
                       reached_measure(options or {}, "reached")),
                      extra_rows=(ExtraRow("reference p*", {"": Measure("", agg=ref_folds, fmt=str, cells="all")},
                                           shaded=False),),
                      note="Folds (the independent units: the seeds of a fold are repetitions within it) whose "
                           "cells all have status `ok` and an objective / folds; `reached`: folds that reached "
                           "each target gap by the report's rules (glossary; the winners and profiles count the "
                           "same; `n.r.`: the target is tighter than the reference's accuracy); reference p*: "
                           "folds with a reference / folds, with the reference kinds.",
                      **lay.columns(**order))
    spread = TableSpec(f"table_metric_objective_{s}_spread", f"{objective}: final objective, mean ± std over folds",
                       (Measure("", "objective", "mean_std", lambda v: fmt_mean_std(v, fmt_sci)),),
                       note="Spread of our final objectives over `ok` folds (sample std); the paper gives means only.",
                       **lay.columns(**order))
    return [(main, sub), (folds, sub), (spread, sub)] + ratio_spec(sub, objective, lay, sense)


def ratio_spec(sub: pd.DataFrame, objective: str, lay: _Layout, sense: str) -> list[tuple[TableSpec, pd.DataFrame]]:
    """Our mean objective over pd-cone's next to the paper's same ratio (none without pd-cone)."""
    cands = lay.labels_of("pd-cone")
    if not cands:
        return []
    ok = sub[sub["status"] == "ok"]
    means = {(lab, d): agg.mean(g["objective"]) for (lab, d), g in ok.groupby(["solver_label", "dataset"])}
    denom = sorted(cands, key=lambda lab: (-sum(np.isfinite(means.get((lab, d), np.nan)) for d in lay.datasets),
                                          lab))[0]
    paper = lay.paper
    popt = lambda k: PAPER_NAME.get(lay.names.get(k["solver_label"], ""), "SGML")  # noqa: E731

    def ours(c: pd.DataFrame, g: pd.DataFrame, v: Any, k: Any) -> float:
        base = means.get((denom, k["dataset"]), np.nan)
        return means.get((k["solver_label"], k["dataset"]), np.nan) / base if base != 0 else np.nan

    def paper_ratio(c: pd.DataFrame, g: pd.DataFrame, v: Any, k: Any) -> float:
        d = paper.paper_dataset(k["dataset"])
        return paper.objective_value(objective, popt(k), d) / paper.objective_value(objective, "PD-cone", d) \
            if d else np.nan

    def per_fold(c: pd.DataFrame, g: pd.DataFrame, v: Any, k: Any) -> agg.Interval:
        return agg.paired_difference(sub[sub["dataset"] == k["dataset"]], "objective", k["solver_label"], denom,
                                     ratio=True)

    def within(c: pd.DataFrame, g: pd.DataFrame, v: Any, k: Any) -> str:
        p = paper_ratio(c, g, v, k)
        return MISSING if not np.isfinite(p) else fd.interval_verdict(per_fold(c, g, v, k), p, _relation(sense))

    f = sub[~sub["solver"].isin(["pd-cone"]) & (sub["solver_label"] != denom)]
    if f.empty:
        return []
    dpos = {d: i for i, d in enumerate(lay.datasets)}
    measures = (Measure(f"ours / {denom}", agg=ours, cells="all"),
                Measure("paper optimizer", agg=lambda c, g, v, k: popt(k), fmt=str, cells="all"),
                Measure("paper / PD-cone", agg=paper_ratio, cells="all"),
                Measure("verdict", agg=within, fmt=str, cells="all"),
                Measure("per-fold ratio: geometric mean [95 % CI] (folds)", agg=per_fold, cells="all",
                        fmt=lambda i: fmt_interval(i.mean, i.low, i.high) + (f" ({i.n})" if i.n else "")))
    note = ("Ratio of mean final objectives.  Per-fold ratio: ours / pd-cone on each fold both solved (`ok`), geometric "
            "mean with the 95 % Student-t interval of the mean log ratio; the paper gives no spread.  `verdict` on the claim that ours is "
            + ("≥ the paper's ratio (maximized)" if sense == "max" else "≤ the paper's ratio (minimized)")
            + ", read from that interval: holds when all of it satisfies the claim, within the spread when it "
              "straddles the paper's ratio.")
    return [(TableSpec(f"table_metric_ratio_{slug(objective.lower()).lower()}",
                      f"{objective}: ratio to pd-cone, ours and paper's", measures,
                      rows=("dataset_label", "dataset", "solver_label"), row_headers=("dataset", None, "solver"),
                      row_order=lambda k: (dpos.get(k[1], len(dpos)), lay.solver_rank(k[2])),
                      keep_row=lambda v: bool(np.isfinite(v[f"ours / {denom}"])), note=note), f)]


def _relation(sense: str) -> str:
    return ">=" if sense == "max" else "<="


def ratio_findings(sub: pd.DataFrame, objective: str, lay: _Layout, sense: str) -> list[Finding]:
    """One finding per (dataset, configuration) of the ratio table: our per-fold ratio to pd-cone
    (95 % t interval) against the paper's ratio of the same optimizer to PD-cone."""
    cands = lay.labels_of("pd-cone")
    ok = sub[sub["status"] == "ok"]
    if not cands or ok.empty:
        return []
    denom = sorted(cands, key=lambda lab: (-ok[ok["solver_label"] == lab]["dataset"].nunique(), lab))[0]
    out = []
    for (d, lab), _ in sub[~sub["solver"].isin(["pd-cone"]) & (sub["solver_label"] != denom)].groupby(
            ["dataset", "solver_label"]):
        popt = PAPER_NAME.get(lay.names.get(lab, ""), "SGML")
        pd_name = lay.paper.paper_dataset(d)
        p = (lay.paper.objective_value(objective, popt, pd_name) / lay.paper.objective_value(objective, "PD-cone", pd_name)
             if pd_name else float("nan"))
        if not np.isfinite(p):
            continue
        iv = agg.paired_difference(sub[sub["dataset"] == d], "objective", lab, denom, ratio=True)
        word = "at least" if sense == "max" else "at most"
        claim = (f"{objective} on {lay.paper.column_label(d)}: `{lab}`'s final objective relative to pd-cone is {word} "
                 f"the paper's {popt} / PD-cone")
        out.append(Finding(paper="SGML", claim=claim, paper_value=f"{p:.3g}",
                           ours=f"{iv.mean:.3g} (per-fold ratio, geometric mean)" if iv.n else "-",
                           interval=fd.fmt_interval(iv, ".3g", what="folds"),
                           verdict=fd.interval_verdict(iv, p, _relation(sense)),
                           note=f"{objective} is {'maximized' if sense == 'max' else 'minimized'}; folds both solved"))
    return out


def accuracy_specs(sub: pd.DataFrame, objective: str, k_nn: int, lay: _Layout) -> list[TableSpec]:
    """Tables 6-7 layout: mean k-NN accuracy (%) over ``ok`` seeds, ``avg.``, the paper's rows, the spread."""
    paper = lay.paper
    pct = lambda c, g, v, k: agg.mean(c[v]) * 100.0  # noqa: E731
    pdata = {d: paper.paper_dataset(d) for d in set(sub["dataset"])}
    extra = []
    if k_nn in paper.k_nn and any(np.isfinite(paper.accuracy_value(objective, o, pdata[d], k_nn))
                                  for o in paper.optimizers for d in pdata):
        extra = [ExtraRow(f"paper: {o}", {"": Measure("", agg=lambda c, g, v, k, o=o: paper.accuracy_value(
            objective, o, pdata.get(k["dataset"]), k_nn), fmt=fmt_acc, cells="all")}, when=any_finite)
            for o in paper.optimizers]
    summaries = [Summary("avg.", lambda r: fmt_acc(row_mean(r)))]
    if extra:
        summaries.append(Summary("paper avg. (15)", lambda r: fmt_acc(paper.accuracy_value(
            objective, r.label[len("paper: "):], "avg.", k_nn)) if r.label.startswith("paper: ") else ""))
    summaries.append(Summary("cells ok/total", lambda r: agg.ok_total(r.group, "metric_accuracy") if r.data else ""))
    note = (f"Mean {k_nn}-NN test accuracy (%) over `ok` seeds (classification protocol, paper section 6.3).  "
            "`avg.`: mean over the datasets shown where the row has a value"
            + ("; `paper:` rows are the paper's Tables 6-7 (10 random 90/10 splits) and `paper avg. (15)` its "
               "average over 15 datasets." if extra else "."))
    name = f"table_metric_accuracy_{slug(objective.lower()).lower()}" + ("" if k_nn in paper.k_nn else f"_k{k_nn}")
    order = {"row_order": lambda k: lay.solver_rank(k[0]), "row_headers": ("optimizer",)}
    main = TableSpec(name, f"{objective}: {k_nn}-NN classification accuracy (%) (Tables 6-7 layout)",
                     (Measure("", "metric_accuracy", pct, fmt_acc),), extra_rows=tuple(extra),
                     summaries=tuple(summaries), note=note, **lay.columns(**order))
    spread = TableSpec(f"{name}_spread", f"{objective}: {k_nn}-NN accuracy (%), mean ± std over seeds",
                       (Measure("", "metric_accuracy", lambda c, g, v, k: tuple(
                           x * 100.0 for x in agg.mean_std(c[v])[:2]), lambda v: fmt_mean_std(v, fmt_acc)),),
                       note="Spread of our accuracies over `ok` seeds (sample std); the paper gives means only.",
                       **lay.columns(**order))
    return [main, spread]


def summary_specs(f: pd.DataFrame, lay: _Layout) -> list[tuple[TableSpec, pd.DataFrame]]:
    """Nearest-class-mean accuracy (classification protocol) and mean wall time."""
    obj_rank = lambda o: lay.objectives.index(o) if o in lay.objectives else len(lay.objectives)  # noqa: E731
    cls = f[f["p_protocol"] == "classification"]
    specs: list[tuple[TableSpec, pd.DataFrame]] = []
    if len(cls) and "metric_ncm_accuracy" in cls.columns and cls["metric_ncm_accuracy"].notna().any():
        specs.append((TableSpec(
            "table_metric_ncm_accuracy", "Nearest-class-mean accuracy (%)",
            (Measure("", "metric_ncm_accuracy", lambda c, g, v, k: agg.mean(c[v]) * 100.0, fmt_acc),),
            rows=("objective_name", "solver_label"), row_headers=("objective", "solver"),
            row_order=lambda k: (obj_rank(k[0]), lay.solver_rank(k[1])),
            summaries=(Summary("avg.", lambda r: fmt_acc(row_mean(r))),),
            note="Mean over `ok` seeds of the classification protocol; the paper has no such table for these "
                 "optimizers.", **lay.columns()), cls))
    specs.append((TableSpec(
        "table_metric_time", "Mean wall time (s)", (Measure("", "wall_time_s", "mean", fmt_num),),
        rows=("objective_name", "p_protocol", "solver_label"), row_headers=("objective", "protocol", "solver"),
        row_order=lambda k: (obj_rank(k[0]), str(k[1]), lay.solver_rank(k[2])),
        note="Mean wall time per cell over `ok` cells (one fold or one split each).",
        **{**lay.columns(), "pivot_order": lambda ds: list(lay.datasets)}), f))
    return specs


class MahalanobisTables:
    """Section "Metric learning (SGML paper layout)"."""

    name = "mahalanobis"
    title = SECTION_TITLE
    family = FAMILY
    order = 100
    intro = ("Results of the `metric/*` problems laid out like the SGML paper's Tables 4-7, with the paper's "
             "numbers in `paper:` rows (transcribed from the paper's text, `paper_values/*.csv`).  Statistics over "
             "cells with status `ok`.  Dataset names are the paper's; `WDBC (sklearn copy)` is scikit-learn's copy "
             "of WDBC.")

    def render(self, context: SectionContext) -> list[Any]:
        f = context.frame
        if f.empty:
            return []
        f = f.assign(objective_name=f["problem"].astype(str).str.split("/", n=1).str[-1].str.upper())
        paper = pv.load()
        lay = _Layout(f, paper)
        labels: dict[str, str] = {}
        for d in lay.datasets:  # distinct column labels, as the tables' headers
            lab = paper.column_label(d)
            labels[d] = lab if lab not in labels.values() else f"{lab} ({d})"
        f = f.assign(dataset_label=f["dataset"].map(labels))
        authors = pv.load_authors_csv(paper, context.options.get("data_dir"))
        pairs: list[tuple[TableSpec, pd.DataFrame]] = []
        findings: list[Finding] = []
        for o in lay.objectives:
            sub = f[(f["objective_name"] == o) & (f["p_protocol"] == "objective")]
            if len(sub):
                pairs += objective_specs(sub, o, lay, authors, context.options)
                findings += ratio_findings(sub, o, lay, str(sub["sense"].iloc[0]))
        for o in lay.objectives:
            cls = f[(f["objective_name"] == o) & (f["p_protocol"] == "classification")]
            for k in sorted(pd.to_numeric(cls["p_k_nn"], errors="coerce").dropna().unique()):
                sub = cls[cls["p_k_nn"] == k]
                pairs += [(s, sub) for s in accuracy_specs(sub, o, int(k), lay)]
        pairs += summary_specs(f, lay)
        blocks: list[Any] = []
        if (f["p_protocol"] == "objective").any():  # the authors' CSV feeds the objective tables only
            blocks.append(authors_source(context.options.get("data_dir"), authors is not None))
        blocks += [t for spec, sub in pairs for t in build_tables([spec], sub)]
        return blocks + [fd.finding_block(x, in_place=False) for x in findings]


def authors_source(data_dir: Any, found: bool) -> Any:
    """The data source block of the authors' objective CSV (found, or what its absence drops)."""
    base = data_dir or os.environ.get("PSDBENCH_DATA")
    path = str(Path(base).expanduser() / pv.OBJECTIVE_CSV) if base else f"$PSDBENCH_DATA/{pv.OBJECTIVE_CSV} (PSDBENCH_DATA unset)"
    return fd.source_block("SGML authors' objective table (obj_arXiv_final.tgn as CSV)", path, found,
                           "the Tables 4-5 layout shows no `paper CSV:` rows (the authors' numbers where they differ "
                           "from the paper's text)")
