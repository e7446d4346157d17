"""The family sections and the generic tables apply the same rules: cell by cell, the graph-classification
tables' `reached` counts equal the per-set SGM table's, and every winners cell's k/n equals its
configuration's in the SGM table.

Fast on a hand-made store; on the default suite's store in the slow step (``PSDBENCH_DEFAULT_STORE``
names a store the default suite already filled, else the suite is run into a temporary store)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pandas as pd
import pytest

from psdbench.harness.reference import annotate
from psdbench.harness.store.db import Store
from psdbench.registry import discover
from psdbench.report.measures import analysis as an
from psdbench.report.blocks import SectionContext, Table
from psdbench.report.frame import drop_superseded, tidy_frame
from psdbench.report.sections.profiles import PerformanceProfiles
from psdbench.report.summary import winners_section

from .test_report_rules import _row

FAMILY = "graph-classification"
TOLS = (1e-2, 1e-4, 1e-6)


def _frame(store: Store) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    reg = discover()
    refs = store.references_frame()
    raw = drop_superseded(annotate(store.results_frame(), refs))
    return tidy_frame(raw, refs, reg.problems, reg.solvers), refs, reg


def mismatches(frame: pd.DataFrame, refs: pd.DataFrame, reg) -> list[str]:
    """Every cell where the graph-classification section, the SGM table and the winners disagree."""
    opts = {"tolerances": TOLS}
    f = frame[frame["family"] == FAMILY].reset_index(drop=True)
    ctx = SectionContext(FAMILY, f, refs, reg.problems, None, opts)
    sgm = next(b for b in PerformanceProfiles().render(ctx) if isinstance(b, Table)).frame
    short = an.tolerance_labels(f, an.short_labels(sorted(f["solver_label"].unique())))
    def reached(text: str) -> int | str:  # "1.00 (3/3)", or "not resolved ...": n.r. (no count)
        m = re.search(r"\((\d+)/\d+\)", text)
        return int(m.group(1)) if m else "n.r." if text.startswith("not resolved") else text

    generic = {(s, c): [reached(str(r[f"gap ≤ {t:g}: scaled SGM (reached)"])) for t in TOLS]
               for s, c, r in zip(sgm["instance set"], sgm["configuration"], sgm.to_dict("records"))
               if "left out" not in c}
    out, checked = [], 0
    for t in reg.reports["graph-classification"].render(ctx):
        if not isinstance(t, Table) or "reached at 0.01 · 0.0001 · 1e-06" not in t.frame.columns:
            continue
        m = re.search(r"graph=(\w+), scaling=(\w+), N=(\d+)", t.title)
        sets = [s for s, _ in generic if f"graph={m.group(1)}" in s and f"scaling={m.group(2)}" in s
                and re.search(rf"\bn={m.group(3)}(\.0)?\b", s)]
        for lab, cell in zip(t.frame.iloc[:, 0], t.frame["reached at 0.01 · 0.0001 · 1e-06"]):
            if lab not in short or not sets or (sets[0], short[lab]) not in generic:
                continue  # a baseline row, or a configuration the SGM table leaves out (ran part of the set)
            ours = [x if x == "n.r." else int(x) for x in str(cell).split(" of ")[0].split(" · ")]
            checked += 1
            if ours != generic[(sets[0], short[lab])]:
                out.append(f"{t.title} / {lab}: section {ours}, SGM table {generic[(sets[0], short[lab])]}")
    per_set = winners_section(f, opts, refs)[1].blocks[0].frame
    for s, row in zip(per_set["instance set"], per_set.to_dict("records")):
        for i, tol in enumerate(TOLS):
            m = re.match(r"\*\*(.+?)\*\* (\d+)/(\d+)", str(row[f"gap ≤ {tol:g}"]))
            if m:
                checked += 1
                if generic.get((s, m.group(1)), [None] * 3)[i] != int(m.group(2)):  # a winner: a resolved target
                    out.append(f"{s} at {tol:g}: winner {m.group(1)} {m.group(2)}, SGM table "
                               f"{generic.get((s, m.group(1)))}")
            elif str(row[f"gap ≤ {tol:g}"]).startswith("not resolved"):
                checked += 1
                if any(v[i] != "n.r." for (ss, _), v in generic.items() if ss == s):
                    out.append(f"{s} at {tol:g}: winners not resolved, the SGM table scores it")
    assert checked, "nothing compared"
    return out


def test_sections_and_generic_tables_agree_on_a_small_store(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    knn = {"graph": "knn", "n": 200, "scaling": "standardize"}
    cells = [(f"knn{s}", lab, t, gap) for s in (0, 1, 2)
             for lab, t, gap in (("gdpa-lp-elim", 0.02, 5e-5), ("scs", 1.2, 1e-3 if s else -5e-8), ("gdpa-lp", 0.5, 1e-7))]
    for inst, lab, t, gap in cells + [("knn0", "clarabel", 0.3, -1e-3)]:
        row = _row(inst, lab, t, gap, knn)
        store.write_result({**row, "metrics": {**row["metrics"], "error_rate": 0.1}})
    frame, refs, reg = _frame(store)
    assert mismatches(frame, refs, reg) == []


@pytest.mark.slow
def test_sections_and_generic_tables_agree_on_the_default_suites_store(tmp_path):
    import psdbench

    path = os.environ.get("PSDBENCH_DEFAULT_STORE")
    if not path:
        path = str(tmp_path / "default.sqlite")
        psdbench.run(suite="default", db=path)
    frame, refs, reg = _frame(Store(Path(path)))
    assert mismatches(frame, refs, reg) == []
