import re

from psdbench.report import write_report
from psdbench.report.render.chart_html import plotly_js
from psdbench.report.fmt import fmt_pct, markdown_table
from psdbench.harness.store.db import RESULT_COLUMNS, Store


def _row(solver, n, seed, status="ok", err=0.1, **kw):
    inst = f"gc-synth-n{n}-s{seed}"
    metrics = {"error_rate": err, "xLx": 1.5, "majority_error": 0.4 + 0.01 * seed, "labelprop_error": 0.2}
    if solver == "gdpa-lp":
        metrics.update(lower_bound=9.0, lambda_min_H=-0.1, lambda_min_Hbar=1e-3, dual_objective=9.0)
    row = {c: None for c in RESULT_COLUMNS}
    row.update(
        run_id="run-1", cell_key=f"{inst}-{solver}", instance_key=inst, problem="graph-classification",
        dataset="synth", instance_params={"n": n, "graph": "knn", "scaling": "none", "k": 5}, seed=seed,
        solver=solver, solver_params={"tol": 1e-6}, status=status, message="",
        wall_time_s=0.01 * n * (2 if solver == "scs" else 1), cpu_time_s=0.01, peak_rss_mb=100.0,
        iterations=50, objective=10.0, reference_objective=10.0, reference_kind="certified",
        gap_abs=0.0, gap_rel=0.0, feasible=1, min_eig=0.0, max_residual=1e-7, metrics=metrics,
        trace=[{"t": 0.0, "obj": 11.0}, {"t": 0.1, "obj": 10.0}], created_at="2024-01-01T00:00:00+00:00",
    )
    row.update(kw)
    return row


def test_write_report(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    errs = {}
    for solver, base in (("gdpa-lp", 0.10), ("scs", 0.05)):
        for n in (50, 100):
            for seed in (0, 1):
                err = base + 0.02 * seed + n / 10000
                errs[(solver, n, seed)] = err
                store.write_result(_row(solver, n, seed, err=err))
    store.write_result(_row("scs", 200, 0, status="error", message="boom: solver exploded\ntraceback...",
                            cell_key="bad", objective=None, metrics={}, wall_time_s=None))

    paths = write_report(store, tmp_path / "out")
    for name in ("html", "markdown", "results_csv"):
        assert paths[name].exists()
    assert (tmp_path / "out" / "report.html").exists()
    assert (tmp_path / "out" / "report.md").exists()
    assert (tmp_path / "out" / "results.csv").exists()
    assert any(k.startswith("table_") for k in paths)

    text = paths["html"].read_text(encoding="utf-8")
    assert 'class="chart"' in text and paths["time_vs_size_graph-classification_png"].exists()
    assert_offline(text)

    md = paths["markdown"].read_text(encoding="utf-8")
    for solver in ("gdpa-lp", "scs", "majority class", "label propagation", "SDP optimum (reference)"):
        assert solver in md
    # mean error rate of gdpa-lp at n=50 over the two seeds, as a percentage with 1 decimal
    vals = [errs[("gdpa-lp", 50, s)] for s in (0, 1)]
    expected = f"{100 * sum(vals) / len(vals):.1f}"
    assert expected == "11.5"
    n50 = md.split("N=50")[1].split("###")[0]
    gdpa_line = next(line for line in n50.splitlines() if line.startswith("| gdpa-lp"))
    assert expected + " ± " in gdpa_line
    assert "boom: solver exploded" in md and "traceback..." not in md  # the first line only
    assert "1/1" not in n50  # the error cell is at n=200 only


def assert_offline(text):
    """The page embeds plotly.js whole (its map attributions name web sites in strings it never loads);
    everything else has no URL at all, and no element loads anything from outside the file."""
    lib = plotly_js()
    assert text.count(lib) <= 1
    rest = text.replace(lib, "")
    assert not re.search(r"(src|href)\s*=\s*[\"']?(https?:)?//", text.replace(lib, ""))
    assert "http://" not in rest and "https://" not in rest
    assert not re.search(r"<(script|link|img|iframe)[^>]*\s(src|href)\s*=\s*[\"']?(?!data:|#)", rest)


def test_empty_store(tmp_path):
    store = Store(tmp_path / "r.sqlite")
    paths = write_report(store, tmp_path / "out")
    for name in ("html", "markdown", "results_csv"):
        assert paths[name].exists()
    assert "no results" in paths["markdown"].read_text().lower()
    assert "no results" in paths["html"].read_text().lower()


def test_formatters():
    assert fmt_pct(0.1234, 0.0101) == "12.3 ± 1.0"
    assert fmt_pct(None) == "-"
    import pandas as pd

    t = markdown_table(pd.DataFrame({"a": ["x|y"], "b": ["1"]}))
    assert "x\\|y" in t and t.count("\n") == 2


def test_status_words_say_what_happened(tmp_path):
    """A point rejected by verification and a solver's own infeasibility read differently in the
    status table, failures.csv and the header."""
    import pandas as pd

    from psdbench import api

    store = Store(tmp_path / "r.sqlite")
    store.write_result(_row("gdpa-lp", 50, 0))
    store.write_result(_row("scs", 50, 0, status="infeasible", cell_key="rej",
                            message=api.REJECTED + "smallest eigenvalue of X = -2e-05, needs >= -1e-06"))
    store.write_result(_row("scs", 50, 1, status="infeasible", cell_key="inf", objective=None,
                            message=api.SOLVER_INFEASIBLE + "primal infeasible"))
    paths = write_report(store, tmp_path / "out")
    fails = pd.read_csv(paths["failures_csv"], dtype=str, keep_default_na=False).set_index("outcome")
    assert "smallest eigenvalue" in fails.loc["rejected", "message"] and "status" not in fails.columns
    assert fails.loc["solver infeasible", "solver's word"] == "-"
    status = pd.read_csv(paths["status_graph-classification"], dtype=str, keep_default_na=False).set_index("solver")
    assert status.loc["scs (tol=1e-06)", "rejected"] == "1" and status.loc["scs (tol=1e-06)", "solver infeasible"] == "1"
    assert "rejected: 1" in paths["markdown"].read_text(encoding="utf-8")
