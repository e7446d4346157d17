"""The metric-learning section of the report (SGML paper's Tables 4-7 layout)."""

import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psdbench import api
from psdbench.families.mahalanobis import paper_values as pv
from psdbench.families.mahalanobis.problem import Deml, Glr
from psdbench.report import write_report
from psdbench.report.fmt import fmt_num
from psdbench.harness.store.db import RESULT_COLUMNS, Store

from .test_report import _row as _graph_row
from .test_report import assert_offline

PAPER_TEXT = Path(__file__).resolve().parents[2] / "shared" / "papers" / "sgml-signed-graph-metric-learning-gdpa.txt"

# objective protocol: final objective of fold f is BASE + 0.01 f (folds 0, 1, 2); sgml fails on fold 2
BASE = {
    ("mcml", "uci/australian"): {"pd-cone": 0.10, "pgml": 0.50, "sgml": 0.30},
    ("mcml", "sklearn/breast-cancer"): {"pd-cone": 0.05, "pgml": 0.20, "sgml": 0.40},
    ("deml", "uci/australian"): {"pd-cone": 20.0, "pgml": 8.0, "sgml": 10.0},
    ("deml", "sklearn/breast-cancer"): {"pd-cone": 30.0, "pgml": 12.0, "sgml": 13.0},
}
# classification protocol: k-NN accuracy for seeds 0 and 1
ACC = {
    ("mcml", "uci/australian"): {"pd-cone": (0.90, 0.90), "pgml": (0.70, 0.80), "sgml": (0.80, 0.90)},
    ("mcml", "sklearn/breast-cancer"): {"pd-cone": (0.99, 0.97), "pgml": (0.93, 0.95), "sgml": (0.95, 0.97)},
    ("deml", "uci/australian"): {"pd-cone": (0.85, 0.85), "pgml": (0.75, 0.75), "sgml": (0.80, 0.80)},
}
SOLVER_PARAMS = {"pd-cone": {"max_iter": 1000}, "pgml": {}, "sgml": {}}
PD = "pd-cone (max_iter=1000)"


def _metric_row(problem, dataset, solver, key, params, seed=0, status="ok", objective=1.0, metrics=None, **kw):
    row = {c: None for c in RESULT_COLUMNS}
    row.update(
        run_id="run-m", cell_key=f"{key}-{solver}", instance_key=key, problem=f"metric/{problem}", dataset=dataset,
        instance_params=params, seed=seed, solver=solver, solver_params=SOLVER_PARAMS[solver], status=status,
        message="" if status == "ok" else "hit max_iter", wall_time_s=0.5, cpu_time_s=0.5, peak_rss_mb=50.0,
        iterations=10, objective=objective, reference_objective=None, reference_kind="none", gap_abs=None,
        gap_rel=None, feasible=1, min_eig=1e-5, max_residual=0.0, metrics=metrics or {}, trace=[],
        created_at="2024-01-01T00:00:00+00:00",
    )
    row.update(kw)
    return row


def _fill_metric(store):
    for (prob, ds), solvers in BASE.items():
        for solver, base in solvers.items():
            for fold in range(3):
                key = f"{prob}-{ds}-fold{fold}"
                status = "max_iter" if (solver == "sgml" and fold == 2) else "ok"
                obj = 99.0 if status != "ok" else base + 0.01 * fold
                store.write_result(_metric_row(
                    prob, ds, solver, key, {"protocol": "objective", "fold": fold}, status=status, objective=obj,
                    reference_objective=0.09 + 0.001 * fold, reference_kind="certified",
                    wall_time_s={"pd-cone": 4.0, "pgml": 2.0, "sgml": 1.0}[solver] + fold))
    for (prob, ds), solvers in ACC.items():
        for solver, accs in solvers.items():
            for seed, acc in enumerate(accs):
                key = f"{prob}-{ds}-split{seed}"
                store.write_result(_metric_row(
                    prob, ds, solver, key, {"protocol": "classification", "k_nn": 10}, seed=seed,
                    metrics={"accuracy": acc, "ncm_accuracy": 0.6 + 0.1 * seed}))


def _csv(path):
    """A table CSV as strings, indexed by its row label."""
    return pd.read_csv(path, dtype=str, keep_default_na=False).set_index("optimizer")


@pytest.fixture
def metric_report(tmp_path, monkeypatch):
    monkeypatch.delenv("PSDBENCH_DATA", raising=False)
    store = Store(tmp_path / "m.sqlite")
    _fill_metric(store)
    return write_report(store, tmp_path / "out")


def test_objective_tables(metric_report):
    paths = metric_report
    t = _csv(paths["table_metric_objective_mcml"])
    assert list(t.columns) == ["Australian", "WDBC (sklearn copy)", "# better than pgml"]
    assert list(t.index[:3]) == [PD, "pgml", "sgml"]
    # mean over ok folds only: sgml fold 2 (objective 99) is excluded
    assert t.loc["sgml", "Australian"] == "0.305"
    assert t.loc["pgml", "Australian"] == "0.51"
    assert t.loc[PD, "WDBC (sklearn copy)"] == "0.06"
    ref = [r for r in t.index if r.startswith("reference p* [certified interval")]  # the one kind name, with accuracy
    assert len(ref) == 1 and t.loc[ref[0], "Australian"] == "0.091"
    # the paper's Tables 4-5 beside ours; sklearn's copy of WDBC gets the paper's WDBC column
    assert t.loc["paper: SGML", "Australian"] == "0.203"
    assert t.loc["paper: PGML", "WDBC (sklearn copy)"] == "0.275"
    assert t.loc["paper: PD-cone", "Australian"] == "0.00521"
    # minimization: sgml is lower than pgml on Australian only; pd-cone on both
    assert t.loc["sgml", "# better than pgml"] == "1/2"
    assert t.loc[PD, "# better than pgml"] == "2/2"
    assert t.loc["paper: SGML", "# better than pgml"] == "2/2"
    assert not any(i.startswith("paper CSV") for i in t.index)  # PSDBENCH_DATA unset

    folds = _csv(paths["table_metric_objective_mcml_folds"])
    assert folds.loc["sgml", "Australian"] == "2/3"
    assert folds.loc["pgml", "Australian"] == "3/3"
    assert folds.loc["reference p*", "Australian"] == "3/3 (certified interval)"


def test_deml_is_maximized(metric_report):
    t = _csv(metric_report["table_metric_objective_deml"])
    assert t.loc["pgml", "Australian"] == "8.01"
    # max sense: sgml (10.005, 13.005) beats pgml (8.01, 12.01) on both datasets; a min sense would give 0/2
    assert t.loc["sgml", "# better than pgml"] == "2/2"
    assert t.loc[PD, "# better than pgml"] == "2/2"
    assert t.loc["paper: SGML", "Australian"] == "9.91"
    assert t.loc["paper: HBNB", "# better than pgml"] == "0/2"  # paper HBNB < PGML on Australian and WDBC

    ratio = pd.read_csv(metric_report["table_metric_ratio_deml"], dtype=str, keep_default_na=False)
    r = ratio[(ratio["dataset"] == "Australian") & (ratio["solver"] == "sgml")].iloc[0]
    assert r[f"ours / {PD}"] == "0.5"  # 10.005 / 20.01
    assert r["paper optimizer"] == "SGML"
    assert r["paper / PD-cone"] == fmt_num(9.91 / 16.2)
    assert r["verdict"] == "does not hold"  # 0.5 [0.498, 0.502] < 0.612 for a maximization


def test_ratio_table_min(metric_report):
    ratio = pd.read_csv(metric_report["table_metric_ratio_mcml"], dtype=str, keep_default_na=False)
    assert set(ratio["solver"]) == {"pgml", "sgml"}
    r = ratio[(ratio["dataset"] == "Australian") & (ratio["solver"] == "pgml")].iloc[0]
    assert r[f"ours / {PD}"] == fmt_num(0.51 / 0.11)
    assert r["paper optimizer"] == "PGML"
    assert r["paper / PD-cone"] == fmt_num(0.306 / 0.00521)
    assert r["verdict"] == "holds"  # 4.3 to 5 per fold, far below the paper's 58.7


def test_classification_tables(metric_report):
    t = _csv(metric_report["table_metric_accuracy_mcml"])
    assert t.loc["sgml", "Australian"] == "85.00"
    assert t.loc["sgml", "WDBC (sklearn copy)"] == "96.00"
    assert t.loc["sgml", "avg."] == "90.50"
    assert t.loc["pgml", "cells ok/total"] == "4/4"
    assert t.loc["paper: SGML", "Australian"] == "87.09"
    assert t.loc["paper: SGML", "WDBC (sklearn copy)"] == "95.95"
    assert t.loc["paper: SGML", "avg."] == "91.52"  # over the two datasets shown
    assert t.loc["paper: SGML", "paper avg. (15)"] == "78.93"
    assert t.loc["sgml", "paper avg. (15)"] == ""

    d = _csv(metric_report["table_metric_accuracy_deml"])
    assert list(d.columns[:2]) == ["Australian", "avg."]
    assert d.loc["paper: PGML", "Australian"] == "86.79"

    ncm = pd.read_csv(metric_report["table_metric_ncm_accuracy"], dtype=str, keep_default_na=False)
    row = ncm[(ncm["objective"] == "MCML") & (ncm["solver"] == "sgml")].iloc[0]
    assert row["Australian"] == "65.00"


def test_time_table_and_report_files(metric_report):
    paths = metric_report
    tt = pd.read_csv(paths["table_metric_time"], dtype=str, keep_default_na=False)
    row = tt[(tt["objective"] == "MCML") & (tt["protocol"] == "objective") & (tt["solver"] == "sgml")].iloc[0]
    assert row["Australian"] == "1.5"  # folds 0 and 1 (fold 2 failed)
    for name, p in paths.items():
        if name.startswith("table_metric"):
            assert p.exists() and p.name == f"{name}.csv"
    # no per-group tables of section 2 for metric/* problems
    assert not any(k.startswith("table_metric-") for k in paths)
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "## Metric learning (SGML paper layout)" in md
    assert "Results by dataset" not in md
    assert "| paper: SGML" in md
    text = paths["html"].read_text(encoding="utf-8")
    assert re.search(r'<h2 id="s-[^"]+">Metric learning \(SGML paper layout\)</h2>', text)
    assert '<tr class="baseline"><td>paper: SGML</td>' in text
    assert_offline(text)
    assert "hit max_iter" in md  # failures still listed


def test_paper_csv_rows(tmp_path, monkeypatch, data_dir):
    if not (data_dir / pv.OBJECTIVE_CSV).exists():
        pytest.skip("sgml_paper_results absent")
    monkeypatch.setenv("PSDBENCH_DATA", str(data_dir))
    store = Store(tmp_path / "m.sqlite")
    _fill_metric(store)
    paths = write_report(store, tmp_path / "out")
    t = _csv(paths["table_metric_objective_mcml"])
    # the authors' CSV (obj_arXiv_final) differs from the paper text for SGML; it has no PGML
    assert t.loc["paper CSV: SGML", "Australian"] == "0.174"
    assert t.loc["paper: SGML", "Australian"] == "0.203"
    assert "paper CSV: PGML" not in t.index and "paper CSV: HBNB" not in t.index
    md = paths["markdown"].read_text(encoding="utf-8")
    assert f"Data: SGML authors' objective table (obj_arXiv_final.tgn as CSV) read from `{data_dir / pv.OBJECTIVE_CSV}`" in md


def test_missing_authors_csv_and_findings_are_blocks(tmp_path, monkeypatch):
    """Without PSDBENCH_DATA the section says which rows it dropped (a DataSource found=False); the
    ratio table's verdicts come back as Findings, one per row with a paper ratio."""
    from psdbench.families.mahalanobis.report import MahalanobisTables
    from psdbench.registry import discover
    from psdbench.report.blocks import DataSource, Finding, SectionContext
    from psdbench.report.frame import tidy_frame

    monkeypatch.delenv("PSDBENCH_DATA", raising=False)
    store = Store(tmp_path / "m.sqlite")
    _fill_metric(store)
    reg = discover()
    refs = store.references_frame()
    frame = tidy_frame(store.results_frame(), refs, reg.problems, reg.solvers)
    ctx = SectionContext("mahalanobis", frame[frame["family"] == "mahalanobis"], refs, reg.problems, tmp_path, {})
    blocks = MahalanobisTables().render(ctx)
    (src,) = [b for b in blocks if isinstance(b, DataSource)]
    assert not src.found and "PSDBENCH_DATA unset" in src.path and "paper CSV:" in src.affects
    found = {(f.claim.split(":")[0], f.claim.split("`")[1]): f for f in blocks if isinstance(f, Finding)}
    assert found[("DEML on Australian", "sgml")].verdict == "does not hold"
    assert found[("DEML on Australian", "sgml")].paper_value == f"{9.91 / 16.2:.3g}"
    assert found[("MCML on Australian", "pgml")].verdict == "holds"


def test_graph_only_store_unchanged(tmp_path):
    store = Store(tmp_path / "g.sqlite")
    for solver in ("gdpa-lp", "scs"):
        for seed in (0, 1):
            store.write_result(_graph_row(solver, 50, seed))
    paths = write_report(store, tmp_path / "out")
    assert not any(k.startswith("table_metric") for k in paths)
    assert any(k.startswith("table_graph-classification") for k in paths)
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "Results by dataset" in md and "Metric learning" not in md
    assert "Metric learning" not in paths["html"].read_text(encoding="utf-8")


def test_mixed_store_and_all_failed(tmp_path, monkeypatch):
    monkeypatch.delenv("PSDBENCH_DATA", raising=False)
    store = Store(tmp_path / "x.sqlite")
    store.write_result(_graph_row("scs", 50, 0))
    for fold in range(2):
        store.write_result(_metric_row("lsml", "uci/liver-disorders", "sgml", f"l{fold}",
                                       {"protocol": "objective", "fold": fold}, status="timeout", objective=None))
    paths = write_report(store, tmp_path / "out")
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "Results by dataset" in md and "Metric learning (SGML paper layout)" in md
    t = _csv(paths["table_metric_objective_lsml"])
    assert list(t.columns) == ["Liverdisorders"]  # no pgml: no "better than" column
    assert t.loc["sgml", "Liverdisorders"] == "-"
    assert t.loc["paper: SGML", "Liverdisorders"] == "0.039"
    assert _csv(paths["table_metric_objective_lsml_folds"]).loc["sgml", "Liverdisorders"] == "0/2"
    assert "table_metric_ratio_lsml" not in paths  # no pd-cone


def test_dataset_names():
    names = {
        "uci/australian": "Australian", "uci/breast-cancer": "Breastcancer", "uci/diabetes": "Diabetes",
        "uci/fourclass": "Fourclass", "uci/german": "German", "uci/haberman": "Haberman", "uci/heart": "Heart",
        "uci/ILPD": "ILPD", "uci/liver-disorders": "Liverdisorders", "uci/monk1": "Monk1", "uci/pima": "Pima",
        "uci/planning": "Planning", "uci/voting": "Voting", "uci/wdbc": "WDBC", "uci/sonar": "Sonar",
        "uci/madelon": "madelon", "uci/colon-cancer": "colon-cancer", "sklearn/breast-cancer": "WDBC",
    }
    paper = pv.load()
    for ds, name in names.items():
        assert paper.paper_dataset(ds) == name, ds
    assert paper.paper_dataset("synthetic/blobs") is None
    assert paper.column_label("sklearn/breast-cancer") == "WDBC (sklearn copy)"
    assert paper.order_datasets(["uci/sonar", "sklearn/breast-cancer", "zzz/x", "uci/wdbc", "uci/australian"]) == [
        "uci/australian", "uci/wdbc", "sklearn/breast-cancer", "uci/sonar", "zzz/x"]
    # the sense of each objective comes from the problem (the tidy frame's ``sense`` column)
    assert api.problem_sense(Deml()) == "max" and api.problem_sense(Glr()) == "min"
    assert pv.is_better(2.0, 1.0, "max") and pv.is_better(1.0, 2.0, "min") and not pv.is_better(float("nan"), 1, "min")


def _paper_rows(frame, objectives):
    """``{objective: {optimizer: values in the paper's dataset order}}`` of a paper-values frame."""
    return {o: {opt: tuple(g["value"]) for opt, g in frame[frame["objective"] == o].groupby("optimizer", sort=False)}
            for o in objectives}


def test_paper_constants_match_paper_summaries():
    paper = pv.load()
    assert paper.datasets[:3] == ("Australian", "Breastcancer", "Diabetes") and len(paper.datasets) == 17
    assert paper.accuracy_datasets == paper.datasets[:15] and paper.k_nn == (10,)
    # Tables 6-7: the printed avg. is the mean of the 15 datasets (each value and the avg. rounded to 0.005)
    for objective, rows in _paper_rows(paper.accuracy, ("MCML", "DEML", "LMNN", "GLR")).items():
        for opt, vals in rows.items():
            assert len(vals) == 16
            assert abs(np.mean(vals[:15]) - vals[15]) <= 0.01, (objective, opt)
    # Table 5's "over PD-cone" column: mean over the 17 datasets of the ratio to PD-cone
    over = {"MCML": (61.4, 20.6, 19.7), "DEML": (0.558, 0.595, 0.611), "LSML": (3.52, 38.8, 2.25),
            "LMNN": (1.30, 1.43, 1.28), "GLR": (71.1, 104, 52.5)}
    for objective, expected in over.items():
        rows = _paper_rows(paper.objective, (objective,))[objective]
        assert all(len(v) == 17 for v in rows.values())
        for opt, want in zip(("HBNB", "PGML", "SGML"), expected):
            got = np.mean(np.array(rows[opt]) / np.array(rows["PD-cone"]))
            assert math.isclose(float(f"{got:.3g}"), want, rel_tol=1e-9), (objective, opt, got)


@pytest.mark.skipif(not PAPER_TEXT.exists(), reason="paper text absent")
def test_paper_constants_match_paper_text():
    paper = pv.load()
    lines = PAPER_TEXT.read_text(encoding="utf-8").splitlines()
    starts = [i for i, line in enumerate(lines) if "| dataset |" in line]
    assert len(starts) == 4  # Tables 4, 5, 6, 7

    def rows(start):
        cols, out = None, []
        for line in lines[start:start + 30]:
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if len(cells) < 3:
                continue
            if cells[1] == "dataset":
                cols = cells[2:]
            elif cells[1] in paper.optimizers:
                out.append((cells[1], dict(zip(cols, cells[2:]))))
        return out

    assert paper.objectives == ("MCML", "DEML", "LSML", "LMNN", "GLR")
    for start, objectives, kind in ((starts[0], paper.objectives, "obj"), (starts[1], paper.objectives, "obj"),
                                    (starts[2], ("MCML", "DEML", "LMNN", "GLR"), "acc"),
                                    (starts[3], ("MCML", "DEML", "LMNN", "GLR"), "acc")):
        parsed = rows(start)[:4 * len(objectives)]
        assert len(parsed) == 4 * len(objectives)
        for i, (opt, cells) in enumerate(parsed):
            objective = objectives[i // 4]
            for col, text in cells.items():
                if not re.fullmatch(r"\d\.\d\dE[+-]\d\d|\d\d\.\d\d", text):
                    continue
                if kind == "obj":
                    if col not in paper.datasets:  # Table 5's "over PD-cone" and "# of best" columns
                        continue
                    assert paper.objective_value(objective, opt, col) == float(text), (objective, opt, col)
                else:
                    want = paper.accuracy_value(objective, opt, "avg." if col == "" else col, 10)
                    assert want == float(text), (objective, opt, col)
