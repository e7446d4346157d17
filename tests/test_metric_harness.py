"""The metric problems through the harness: fold expansion, references, the sense of DEML, suites."""

import textwrap

import pytest

from psdbench.harness.grid.expand import expand, read_suite
from psdbench.harness.store.db import Store
from psdbench.registry import discover

from .test_harness import cli


def test_metric_grid_end_to_end(tmp_path):
    body = textwrap.dedent("""
    [run]
    seeds = [0]
    timeout = 600
    reference_timeout = 600

    [[problems]]
    name = "metric/deml"
    datasets = ["sklearn/breast-cancer"]
    params = { fold = "all", max_folds = 2 }

    [[problems]]
    name = "metric/lsml"
    datasets = ["sklearn/breast-cancer"]
    params = { fold = [5] }

    [[solvers]]
    name = "sgml"

    [[solvers]]
    name = "pd-cone"

    [[solvers]]
    name = "clarabel"
    params = { formulation = ["reduced"] }
    where = { dataset = ["sklearn/breast-cancer"] }
    """)
    g = tmp_path / "m.toml"
    g.write_text(body)
    db = tmp_path / "m.sqlite"
    out = cli(["run", "--grid", str(g), "--db", str(db), "--report", str(tmp_path / "rep"), "--quiet"])
    assert out.returncode == 0, out.stderr
    df = Store(db).results_frame()
    assert len(df) == 9  # 2 DEML folds + 1 LSML fold, 3 solvers
    deml = df[df.problem == "metric/deml"]
    assert set(deml.instance_params.map(lambda p: p["fold"])) == {0, 1}
    assert deml.status.eq("ok").all() and deml.reference_kind.eq("certified").all()
    # DEML is maximized: p* is the largest value and the gap (how much worse) is p* - objective >= 0
    assert (deml.reference_objective >= deml.objective - 1e-6).all()
    assert (deml.gap_abs >= -1e-6).all()
    assert (deml.gap_abs - (deml.reference_objective - deml.objective)).abs().max() < 1e-9
    sg = deml[deml.solver == "sgml"]
    assert sg.metric_verify_balanced.eq(1.0).all()
    # LSML has no convex reference: the best verified cell value, marked so; clarabel is skipped
    lsml = df[df.problem == "metric/lsml"]
    assert lsml.reference_kind.eq("best_verified").all()
    assert lsml[lsml.solver == "clarabel"].status.eq("skipped").all()
    assert lsml.reference_objective.iloc[0] == pytest.approx(lsml[lsml.status == "ok"].objective.min())
    html = (tmp_path / "rep" / "report.html").read_text()
    assert "Metric learning (SGML paper layout)" in html


@pytest.mark.parametrize("suite", ["sgml-objective-wdbc", "sgml-classification-wdbc"])
def test_offline_suites_expand(registry, suite):
    spec, name = read_suite(suite, discover())
    grid = expand(spec, name, registry)
    solvers = {c.solver for c in grid.cells}
    assert {"sgml", "pgml", "pd-cone"} <= solvers
    problems = {c.problem for c in grid.cells}
    if suite == "sgml-objective-wdbc":
        assert problems == {f"metric/{o}" for o in ("mcml", "deml", "lsml", "lmnn", "glr")}
        assert len({c.instance_key for c in grid.cells}) == 5 * round(569 / 4)
    else:
        assert len({c.instance_key for c in grid.cells}) == 4 * 10


def test_data_suites_name_the_17_sets(registry, data_dir):
    spec, name = read_suite("sgml-objective", discover())
    sets = {d for p in spec["problems"] for d in p["datasets"]}
    assert len(sets) == 17
    for d in sets:
        registry.check_dataset(d)
    spec, _ = read_suite("sgml-classification", discover())
    assert len({d for p in spec["problems"] for d in p["datasets"]}) == 15
