"""The max-cut report sections on a hand-built frame: exponents, failures as results, cuts beside bounds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from psdbench.harness.store.db import RESULT_COLUMNS
from psdbench.report.blocks import Chart, SectionContext, Table
from psdbench.report.frame import tidy_frame
from psdbench.families.maxcut.report import (MaxcutCuts, MaxcutScaling, SdpGraphScaling, fit_exponent,
                                             graph_nodes, outcome)


def _row(dataset, solver, status="ok", t=1.0, mem=100.0, message="", metrics=None, objective=1.0, seed=0):
    row = {c: None for c in RESULT_COLUMNS}
    row.update(run_id="r", cell_key=f"{dataset}-{solver}-{seed}", instance_key=dataset, problem="p", dataset=dataset,
               instance_params={}, seed=seed, solver=solver, solver_params={}, status=status, message=message,
               wall_time_s=t, peak_rss_mb=mem, objective=objective, feasible=1 if status == "ok" else None,
               metrics=metrics or {}, trace=[], created_at="2026-01-01T00:00:00", time_limit_s=600.0)
    return row


def _ctx(rows, family):
    f = tidy_frame(pd.DataFrame(rows), None, {}, {})
    return SectionContext(family=family, frame=f, refs=pd.DataFrame(), problems={}, out_dir=None, options={})


def test_fit_exponent_recovers_a_power_law():
    n = np.array([1e3, 1e4, 1e5, 1e6])
    assert fit_exponent(n, 3e-6 * n ** 1.5) == pytest.approx(1.5)
    assert np.isnan(fit_exponent(np.array([10.0, 10.0]), np.array([1.0, 2.0])))  # one size: no exponent


def test_graph_nodes_and_outcomes():
    assert graph_nodes("gset-class/toroidal-20000-pm1:sdp") == 20000
    assert graph_nodes("sdplib/maxG60") == 7000
    assert graph_nodes("gset-class/anything", 512.0) == 512
    assert np.isnan(graph_nodes("uci/cod-rna"))
    assert outcome("crashed", "likely out of memory, its address space was at ...") == "out_of_memory"
    assert outcome("error", "MemoryError: Unable to allocate") == "out_of_memory"
    assert outcome("timeout", "") == "timeout" and outcome("max_iter", "") == "finished"


def test_scaling_section_fits_exponents_and_keeps_failures():
    sizes = [800, 2000, 5000, 20000]
    rows = [_row(f"gset-class/toroidal-{n}-pm1", "fast", t=1e-4 * n, mem=0.01 * n ** 1.0, seed=s)
            for n in sizes for s in (0, 1)]
    rows += [_row(f"gset-class/toroidal-{n}-pm1", "ipm", t=1e-9 * n ** 3, mem=1e-5 * n ** 2) for n in sizes[:2]]
    rows += [_row("gset-class/toroidal-5000-pm1", "ipm", status="timeout", t=612.0),
             _row("gset-class/toroidal-20000-pm1", "ipm", status="crashed", t=40.0,
                  message="worker died (signal 6); likely out of memory, its address space was at 9000 MiB")]
    blocks = MaxcutScaling().render(_ctx(rows, "maxcut"))
    chart, table = blocks
    assert isinstance(chart, Chart) and isinstance(table, Table)
    t = table.frame.set_index("configuration")
    assert float(t.loc["fast", "time exponent k (t ~ n^k)"]) == pytest.approx(1.0, abs=1e-3)
    assert float(t.loc["fast", "memory exponent"]) == pytest.approx(1.0, abs=1e-3)
    assert float(t.loc["ipm", "time exponent k (t ~ n^k)"]) == pytest.approx(3.0, abs=1e-3)
    assert t.loc["ipm", "cells finished"] == "2/4"
    assert t.loc["ipm", "failures (smallest n)"] == "out_of_memory from n = 20,000; timeout from n = 5,000"
    time_panel = chart.panels[0]
    timeouts = [s for s in time_panel.series if s.label == "ipm · timeout"]
    assert timeouts and timeouts[0].y == [600.0]  # drawn at its time limit
    assert any(s.label.startswith("fast · n^1.00") for s in time_panel.series)
    # the SDP family's copy of the section reads the same kind of rows
    assert SdpGraphScaling().family == "sdp" and len(SdpGraphScaling().render(_ctx(rows, "sdp"))) == 2


def test_cuts_section_shows_best_known_only_for_gset_graphs_and_flags_contradictions():
    m = lambda cut, bound, cert: {"cut": cut, "dual_bound": bound, "dual_bound_certified": cert,  # noqa: E731
                                  "n_nodes": 2000, "edges": 4000}
    rows = [_row("sdplib/maxG32", "mix", metrics=m(1380.0, 1567.7, 1.0), objective=1567.6),
            _row("sdplib/maxG32", "bad", metrics=m(1420.0, 1400.0, 1.0), objective=1399.0),
            _row("gset-class/toroidal-2000-pm1", "mix", metrics=m(1350.0, 1560.0, 0.0), objective=1559.9)]
    (table,) = MaxcutCuts().render(_ctx(rows, "maxcut"))
    f = table.frame.set_index(["graph", "configuration"])
    assert f.loc[("sdplib/maxG32", "mix"), "best-known cut"] == "1,410 (G32)"
    assert f.loc[("sdplib/maxG32", "mix"), "cut / best-known"] == f"{1380 / 1410:.4f}"
    assert f.loc[("sdplib/maxG32", "mix"), "bound kind"] == "certified"
    assert f.loc[("gset-class/toroidal-2000-pm1", "mix"), "best-known cut"] == "-"
    assert f.loc[("gset-class/toroidal-2000-pm1", "mix"), "bound kind"] == "estimate"
    assert any("below G32's best-known cut" in c for c in table.checks)
    assert any("beats G32's best-known" in c for c in table.checks)
    assert "Benlic and Hao" in table.note


def test_sdp_graph_scaling_renders_in_the_real_report(tmp_path):
    """Rows of sdp/standard on graph views, written to a store: the report's HTML and Markdown carry the chart."""
    from psdbench.harness.store.db import Store
    from psdbench.report import write_report

    store = Store(tmp_path / "s.sqlite")
    for n in (800, 2000, 5000):
        for solver, k in (("sdp-csdp", 3.0), ("sdp-clarabel", 2.5)):
            row = _row(f"gset-class/toroidal-{n}-pm1:sdp", solver, t=1e-9 * n ** k, mem=1e-4 * n ** 2)
            store.write_result({**row, "problem": "sdp/standard", "cell_key": f"{n}-{solver}"})
    store.write_result({**_row("gset-class/toroidal-20000-pm1:sdp", "sdp-csdp", status="timeout", t=605.0),
                        "problem": "sdp/standard", "cell_key": "20000-csdp"})
    store.close()
    out = write_report(Store(tmp_path / "s.sqlite"), tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Scaling on graphs (SDP standard form)" in md
    assert "timeout from n = 20,000" in md
    assert (tmp_path / "rep" / "report.html").read_text().count("Time and peak memory against n") >= 1
    assert out


def test_maxcut_sections_render_in_the_real_report(tmp_path):
    """maxcut/sdp rows in a store: the cuts table (best-known beside maxG32) and the scaling chart render."""
    from psdbench.harness.store.db import Store
    from psdbench.registry import discover
    from psdbench.report import write_report

    if "maxcut/sdp" not in discover().problems:
        pytest.skip("maxcut/sdp is not registered in this environment")
    store = Store(tmp_path / "s.sqlite")
    for n, ds in ((800, "gset-class/toroidal-800-pm1"), (2000, "sdplib/maxG32"), (5000, "gset-class/toroidal-5000-pm1")):
        met = {"n_nodes": n, "edges": 2 * n, "cut": 0.7 * n, "dual_bound": 0.78 * n, "dual_bound_certified": 1.0}
        row = _row(ds, "maxcut-mixing", t=1e-3 * n, mem=50 + 0.01 * n, metrics=met, objective=0.78 * n - 1e-3)
        store.write_result({**row, "problem": "maxcut/sdp", "cell_key": f"mc-{n}"})
    store.close()
    write_report(Store(tmp_path / "s.sqlite"), tmp_path / "rep")
    md = (tmp_path / "rep" / "report.md").read_text()
    assert "Cuts, bounds and best-known cuts" in md and "1,410 (G32)" in md
    assert "Scaling with the number of nodes" in md and "Fitted exponents" in md


def test_cuts_table_shows_values_finely_enough_to_see_the_gap():
    rows = [_row("sdplib/maxG60", "mix", metrics={"cut": 13903.0, "dual_bound": 15222.330092, "dual_bound_certified": 1.0},
                 objective=15222.267741)]
    (table,) = MaxcutCuts().render(_ctx(rows, "maxcut"))
    assert table.frame["SDP value"].iloc[0] == "15,222.268" and table.frame["dual bound"].iloc[0] == "15,222.330"
