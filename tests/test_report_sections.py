"""The report package: sections from plugins, gap-versus-time curves and performance profiles."""

import json
import math
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psdbench.registry import Registry, discover
from psdbench.report import write_report
from psdbench.report.measures import curves as cv
from psdbench.report.measures import profiles as pp
from psdbench.report.blocks import Table, Text
from psdbench.report.frame import tidy_frame
from psdbench.harness.store.db import RESULT_COLUMNS, Store

from .test_report import assert_offline

SRC = Path(__file__).resolve().parents[1] / "src" / "psdbench"

# one problem per family, with the reference objective of its instances
PROBLEMS = {"graph-classification": ("sklearn/breast-cancer", {"n": 40}, 10.0),
            "metric/mcml": ("uci/australian", {"fold": 0}, 0.5),
            "signed-graph": ("synthetic/balanced-gmrf", {"n_nodes": 20, "n_samples": 200}, 100.0)}


def _cell(problem, solver, seed, speed, curve=True):
    dataset, params, ref = PROBLEMS[problem]
    speed = speed * (1 + 0.5 * seed)  # seeds differ, so that the curves' band has a width
    row = {c: None for c in RESULT_COLUMNS}
    final = ref * (1 + 1e-6 * speed)
    row.update(run_id="r", cell_key=f"{problem}-{seed}-{solver}", instance_key=f"{problem}-{seed}", problem=problem,
               dataset=dataset, instance_params=params, seed=seed, solver=solver, solver_params={}, status="ok",
               message="", wall_time_s=1.0 * speed, iterations=5, objective=final, reference_objective=ref,
               reference_kind="certified", feasible=1, metrics={}, trace=[], created_at="2024-01-01T00:00:00")
    points = [{"t": 0.1 * speed * 2 ** i, "objective": ref * (1 + 10.0 ** (-i - 1)), "feasible": int(i != 1),
               "repaired": 0} for i in range(6)] if curve else []
    return row, points


def _store_with_curves(path):
    """Two solvers per family (``fast`` with curves, ``slow`` without in one family), curves in a ``curve`` column."""
    store = Store(path)
    for problem in PROBLEMS:
        for seed in (0, 1, 2):
            for solver, speed in (("fast-solver", 1.0), ("slow-solver", 3.0)):
                row, pts = _cell(problem, solver, seed, speed, curve=not (problem == "signed-graph"
                                                                           and solver == "slow-solver"))
                store.write_result({**row, "curve": pts})
    return store


class _Plugin:
    name, title, family, order = "plugin-section", "A plugin section", "*", 50

    def render(self, context):
        return [Text(f"plugin saw {len(context.frame)} cells of {context.family}"),
                Table("plugin_table", "Plugin table", pd.DataFrame({"family": [context.family]}))]


class _Broken:
    name, title, family, order = "broken-section", "A broken section", "mahalanobis", 60

    def render(self, context):
        raise ValueError("deliberately broken\nsecond line")


def test_every_family_gets_curves_and_profiles(tmp_path):
    store = _store_with_curves(tmp_path / "c.sqlite")
    paths = write_report(store, tmp_path / "out")
    for family in ("graph-classification", "mahalanobis"):  # signed graph ranks by its F-measure, not by gap
        for fig in ("gap_vs_time", "performance_profiles", "data_profiles"):
            png = paths[f"{fig}_{family}_png"]
            assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        sgm = pd.read_csv(paths[f"sgm_{family}"], dtype=str, keep_default_na=False).set_index("configuration")
        # fast-solver reaches 1e-4 first on each of the 3 instances (scaled SGM 1); slow-solver later, also 3/3;
        # the mahalanobis seeds are nested in one fold: one unit (report/measures/units.py), not three
        n = "1/1" if family == "mahalanobis" else "3/3"
        assert sgm.loc["fast-solver", "gap ≤ 0.0001: scaled SGM (reached)"] == f"1.00 ({n})"
        slow = sgm.loc["slow-solver", "gap ≤ 0.0001: scaled SGM (reached)"]
        assert slow.endswith(f"({n})") and float(slow.split()[0]) > 1
        assert sgm.loc["fast-solver", "gap ≤ 0.01: scaled SGM (reached)"] == f"1.00 ({n})"
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "Diamonds: verified cells with one point" in md
    winners = pd.read_csv(paths["winners_per_set"], dtype=str, keep_default_na=False).set_index("family")
    assert winners.loc["mahalanobis", "gap ≤ 0.0001"].startswith("**fast-solver** 1/1")  # one fold: one unit
    assert paths["gap_vs_time_signed-graph_png"].exists() and "sgm_signed-graph" not in paths
    html = paths["html"].read_text(encoding="utf-8")
    assert html.count('class="chart"') >= 7 and 'href="#s-' in html
    assert_offline(html)


def test_plugin_and_broken_sections(tmp_path):
    store = _store_with_curves(tmp_path / "c.sqlite")
    reg = discover()
    registry = Registry(problems=reg.problems, solvers=reg.solvers,
                        reports={"plugin-section": _Plugin(), "broken-section": _Broken()})
    paths = write_report(store, tmp_path / "out", registry=registry)
    md = paths["markdown"].read_text(encoding="utf-8")
    for family in ("graph-classification", "mahalanobis", "signed-graph"):
        assert f"## A plugin section ({family})" in md
        assert f"plugin saw 6 cells of {family}" in md
    assert {"plugin_table", "plugin_table_2", "plugin_table_3"} <= set(paths)
    # the broken section is reported in place (title and one line), the rest of the report is there
    assert "## A broken section" in md and "ValueError: deliberately broken" in md and "second line" not in md
    assert md.count("## A broken section") == 1  # family-specific: once, for its family
    assert paths["html"].exists() and paths["results_csv"].exists()
    # only registered sections run: no generic tables here
    assert not any(k.startswith("status_") for k in paths)


def test_profile_hand_example():
    costs = pd.DataFrame({"A": [1, 3, 2, np.inf], "B": [2, 3, 1, np.inf], "C": [4, np.inf, 1, np.inf]},
                         index=["p1", "p2", "p3", "p4"])
    r = pp.ratios(costs)
    assert r.loc["p1"].tolist() == [1, 2, 4]
    assert r.loc["p2"].tolist() == [1, 1, math.inf]
    assert r.loc["p3"].tolist() == [2, 1, 1]
    assert all(math.isinf(v) for v in r.loc["p4"])  # nobody solved p4
    rho = pp.profile(r, np.array([1.0, 2.0, 4.0]))
    assert rho["A"].tolist() == [0.5, 0.75, 0.75]
    assert rho["B"].tolist() == [0.5, 0.75, 0.75]
    assert rho["C"].tolist() == [0.25, 0.25, 0.5]
    s = pp.summary(r)
    assert s["solved"].tolist() == [0.75, 0.75, 0.5]
    assert s["rho(1)"].tolist() == [0.5, 0.5, 0.25]
    # area over log2 tau in [0, 2]: A has log ratios 0, 1, 0 -> (2 + 1 + 2) / 2 / 4
    assert s["area"].tolist() == pytest.approx([0.625, 0.625, 0.25])


def test_profile_floor_and_time_to_tolerance():
    r = pp.ratios(pd.DataFrame({"A": [0.0], "B": [1e-10]}), floor=1e-12)  # a zero gap is floored, not divided by
    assert r.loc[0, "A"] == 1 and r.loc[0, "B"] == pytest.approx(100)
    curve = [{"t": 0.5, "objective": 10.1, "feasible": 1}, {"t": 1.0, "objective": 10.00001, "feasible": 0},
             {"t": 2.0, "objective": 10.0005, "feasible": 1}]
    # min sense, reference 10: relative gaps 1e-2, (infeasible), 5e-5
    assert pp.time_to_tolerance(curve, 10.0, "min", 1e-4, 3.0, 5e-5, True) == 2.0
    assert pp.time_to_tolerance(curve[:2], 10.0, "min", 1e-4, 3.0, 5e-5, True) == 3.0  # final point reaches it
    assert pp.time_to_tolerance(curve[:2], 10.0, "min", 1e-4, 3.0, 5e-5, False) == math.inf
    # max sense: an objective above the reference is a negative gap
    assert pp.time_to_tolerance([{"t": 1.0, "objective": 11.0}], 10.0, "max", 1e-4, 2.0, math.nan, False) == 1.0


def test_curve_aggregation():
    c1 = cv.cell_curve([{"t": 2.0, "objective": 1.001}, {"t": 1.0, "objective": 1.1},
                        {"t": 1.5, "objective": 1.0, "feasible": 0}], 1.0, "min")
    assert c1.t.tolist() == [1.0, 2.0] and c1.gap == pytest.approx([0.1, 1e-3]) and not c1.repaired
    c2 = cv.cell_curve([{"t": 2.0, "objective": 0.99, "repaired": 1}, {"t": 4.0, "objective": 0.9999}], 1.0, "max")
    assert c2.gap == pytest.approx([1e-2, 1e-4]) and c2.repaired
    floored = cv.cell_curve([{"t": 1.0, "objective": 0.5}], 1.0, "min", floor=1e-12)
    assert floored.gap.tolist() == [1e-12]  # better than the reference: drawn at the floor
    grid = np.array([0.5, 1.0, 2.0, 3.0, 4.0])
    assert cv.best_so_far(c1.t, c1.gap, grid) == pytest.approx([math.inf, 0.1, 1e-3, 1e-3, 1e-3])
    med, lo, hi = cv.aggregate([c1, c2], grid, 0.0, 1.0)
    assert math.isinf(med[0]) and math.isinf(med[1])  # half of the cells have no point yet
    assert med[2:] == pytest.approx([5.5e-3, 5.5e-3, 5.5e-4])
    assert lo[2:] == pytest.approx([1e-3, 1e-3, 1e-4]) and hi[2:] == pytest.approx([1e-2, 1e-2, 1e-3])
    g = cv.time_grid([c1, c2], n=5)
    assert g[0] == 1.0 and g[-1] == 4.0 and len(g) == 5


def test_tidy_frame_defaults_and_missing_curve():
    reg = discover()
    row, _ = _cell("metric/mcml", "sgml", 0, 1.0)
    row["solver_params"] = json.dumps({"max_iter": 7})
    f = tidy_frame(pd.DataFrame([row, {**row, "problem": "unknown/problem", "cell_key": "u"}]), None,
                   reg.problems, reg.solvers)
    assert f["family"].tolist() == ["mahalanobis", "unknown/problem"]
    assert f["p_k_nn"].iloc[0] == reg.problems["metric/mcml"].default_params["k_nn"]
    assert pd.isna(f["p_k_nn"].iloc[1])  # unknown problem: no defaults
    assert f["solver_label"].tolist() == ["sgml (max_iter=7)"] * 2
    assert f["curve"].tolist() == [[], []]  # a store without the column: final points only
    assert f["gap"].iloc[0] == pytest.approx(0.5e-6)  # |reference| = 0.5 < 1: the gap is absolute (0.5 * 1e-6)


def test_generic_code_names_no_plugin():
    names = {"graph-classification", "signed-graph", "sgml", "pgml", "pd-cone", "scs", "clarabel", "metric/mcml",
             "sklearn/breast-cancer", "mahalanobis", "gdpa-lp", "balanced-clime"}
    for folder in ("harness", "report"):
        for path in (SRC / folder).rglob("*.py"):
            text = path.read_text(encoding="utf-8")
            for name in names:
                assert not re.search(rf"(?<![\w/-]){re.escape(name)}(?![\w/-])", text), (path, name)


class _Claims:
    """A plugin section that checks a paper's claim and reads a data file besides the store."""

    name, title, family, order = "claims-section", "A section with claims", "mahalanobis", 120

    def render(self, context):
        from psdbench.report.blocks import DataSource, Finding

        return [Text("claims below"),
                Finding("Paper A", "fast-solver is 3x faster", "3x", "3.1x [2.9-3.3]", "holds", "[2.8, 3.4]", "t-test"),
                Finding("Paper A", "slow-solver is exact", "0", "", "not measured in this run"),
                DataSource("Paper A, Table 2", "/nowhere/table2.csv", False, "the paper's column of Table 2")]


def test_findings_and_data_sources_are_collected(tmp_path):
    from psdbench.report.blocks import Finding

    with pytest.raises(ValueError):
        Finding("P", "c", "", "", "met")  # one vocabulary only
    store = _store_with_curves(tmp_path / "c.sqlite")
    reg = discover()
    registry = Registry(problems=reg.problems, solvers=reg.solvers, reports={"claims": _Claims()})
    paths = write_report(store, tmp_path / "out", registry=registry)
    top = pd.read_csv(paths["findings"], dtype=str, keep_default_na=False)
    assert top["verdict"].tolist() == ["holds", "not measured in this run"]
    assert top["section"].iloc[0].startswith("[A section with claims](#s-")
    assert top["95 % interval of the difference"].iloc[0] == "[2.8, 3.4]"
    sources = pd.read_csv(paths["data_sources"], dtype=str, keep_default_na=False)
    assert sources.loc[0, "status"] == "MISSING" and sources.loc[0, "path"] == "/nowhere/table2.csv"
    html = paths["html"].read_text(encoding="utf-8")
    anchor = re.search(r'href="#(s-[^"]+)">A section with claims', html).group(1)
    assert f'<h2 id="{anchor}">A section with claims' in html  # the link lands on the section
    assert html.index("Every claim checked in this report") < html.index(f'<h2 id="{anchor}"')
    assert html.count('class="v-holds"') == 2  # in the findings table and again in its section
    md = paths["markdown"].read_text(encoding="utf-8")
    assert md.index("## Winners") < md.index("## Findings against the papers") < md.index("## Run details")


def test_below_certified_point_is_marked_not_reached(tmp_path):
    """A verified final point below a certified bound: never reached, drawn as a cross with its distance."""
    from psdbench.report.measures import analysis as an
    from psdbench.report.sections.curves import GapVersusTime
    from psdbench.report.blocks import SectionContext

    reg = discover()
    rows = []
    for solver, obj, below in (("good", 10.0 + 1e-7, False), ("beyond", 9.98, True)):
        row, _ = _cell("metric/mcml", solver, 0, 1.0, curve=False)
        rows.append({**row, "objective": obj, "reference_objective": 10.0, "below_certified": below,
                     "cell_key": solver})
    err = {**rows[0], "status": "error", "objective": None, "reference_objective": None, "cell_key": "err",
           "instance_key": "other-seed", "seed": 1}  # no reference: not drawn, still counted in k/n ok
    f = tidy_frame(pd.DataFrame(rows + [err]), None, reg.problems, reg.solvers)
    times = an.reach_times(f, (1e-2,)).set_index("solver_label")
    assert times.loc["good", "t_0.01"] == 1.0 and math.isinf(times.loc["beyond", "t_0.01"])
    chart = GapVersusTime().render(SectionContext("mahalanobis", f, pd.DataFrame(), reg.problems, tmp_path,
                                                  {"gap_floor": 1e-9}))[0]
    series = {s.label: s for s in chart.panels[0].series}
    cross = series["beyond · 1/1 ok: beyond the certified bound"]
    assert cross.marker == "x" and list(cross.y) == [1e-9]  # at the floor, not as a best gap
    assert "by 0.002" in cross.hover[0]  # (10 - 9.98) / 10
    assert series["good · 1/2 ok"].marker == "diamond" and list(series["good · 1/2 ok"].y) == pytest.approx([1e-8])
