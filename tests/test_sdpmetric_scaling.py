"""SDPMetric Fig. 2 (time versus dimension): random triplets, the ``dim`` parameter, the synthetic
multi-class set, and the time-versus-size plot driven by a problem's ``size_param`` hook."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psdbench import api
from psdbench.api import PsdbenchError
from psdbench.families.sdpmetric.instance import build_triplets, random_triplets, split_70_15_15
from psdbench.report.blocks import Chart, SectionContext, Text
from psdbench.report.sections import timing

RANDOM = {"triplets": "random", "n_triplets": 200, "dim": 7, "loss": "huber"}


@pytest.fixture(scope="module")
def gauss(registry):
    return registry.load_dataset("synthetic/gaussian-classes:multiclass")


@pytest.fixture(scope="module")
def problem(registry):
    return registry.problem("metric/triplet-margin")


def test_gaussian_classes_is_seeded_multiclass(registry, gauss):
    assert gauss.X.shape == (600, 100) and sorted(np.unique(gauss.y)) == [0.0, 1.0, 2.0, 3.0]
    again = registry.load_dataset("synthetic/gaussian-classes:multiclass")
    np.testing.assert_array_equal(gauss.X, again.X)  # fixed generator seed
    binary = registry.load_dataset("synthetic/gaussian-classes")
    np.testing.assert_array_equal(binary.X, gauss.X)
    np.testing.assert_array_equal(binary.y, np.where(gauss.y == 0, 1.0, -1.0))


def test_random_triplets_count_classes_and_seed(problem, gauss):
    inst = problem.build(gauss, RANDOM, 0)
    assert inst.n_triplets == 200 and inst.triplets.shape == (200, 3)
    i, j, k = inst.triplets.T
    assert np.all(inst.y[i] == inst.y[j]) and np.all(i != j) and np.all(inst.y[i] != inst.y[k])
    assert len(np.unique(inst.triplets, axis=0)) == 200  # distinct
    np.testing.assert_allclose(inst.U, inst.F[i] - inst.F[k])
    np.testing.assert_allclose(inst.V, inst.F[i] - inst.F[j])
    same = problem.build(gauss, RANDOM, 0)
    np.testing.assert_array_equal(same.triplets, inst.triplets)  # seeded
    other = problem.build(gauss, RANDOM, 1)
    assert not np.array_equal(other.triplets, inst.triplets)
    # the triplets index the training split of this seed: anchors come from every class
    assert len(np.unique(inst.y[i])) == 4


def test_random_triplets_exhaust_the_valid_set():
    y = np.array([0, 0, 0, 1, 1, 2])
    F = np.arange(12.0).reshape(6, 2)
    valid = {(a, b, c) for a in range(6) for b in range(6) for c in range(6)
             if a != b and y[a] == y[b] and y[c] != y[a]}
    assert len(valid) == 6 * 3 + 2 * 4  # class 0: 3 x 2 x 3, class 1: 2 x 1 x 4
    _, _, T = random_triplets(F, y, len(valid), np.random.default_rng(0))
    assert {tuple(t) for t in T.tolist()} == valid
    with pytest.raises(PsdbenchError, match="valid triplets"):
        random_triplets(F, y, len(valid) + 1, np.random.default_rng(0))


def test_random_triplets_are_uniform_over_anchor_classes():
    # class 0 has 4 samples, class 1 has 2: valid triplets with a class-0 anchor 4 x 3 x 2 = 24,
    # class-1 anchor 2 x 1 x 4 = 8, so a uniform draw has a class-0 anchor 3/4 of the time.
    y = np.array([0, 0, 0, 0, 1, 1])
    F = np.zeros((6, 1))
    _, _, T = random_triplets(F, y, 32, np.random.default_rng(3))  # all of them
    assert np.mean(y[T[:, 0]] == 0) == pytest.approx(0.75)


def test_dim_keeps_the_first_features(problem, gauss):
    inst = problem.build(gauss, {**RANDOM, "scaling": "none"}, 0)
    tr, _, _ = split_70_15_15(np.asarray(gauss.y), 0)
    assert inst.D == 7 and inst.n == 7
    np.testing.assert_array_equal(inst.F, gauss.X[tr][:, :7])
    assert problem.build(gauss, {**RANDOM, "dim": 100}, 0).D == 100
    with pytest.raises(PsdbenchError, match="dim = 101"):
        problem.build(gauss, {**RANDOM, "dim": 101}, 0)


def test_defaults_keep_knn_triplets(problem, gauss):
    inst = problem.build(gauss, {"dim": 5, "max_train": 40}, 0)
    _, _, T = build_triplets(inst.F, inst.y, 3, 3)
    np.testing.assert_array_equal(inst.triplets, T)
    assert problem.default_params["triplets"] == "knn" and problem.default_params["dim"] is None
    assert api.problem_size_param(problem) == "dim"
    assert api.problem_size_param(object()) is None


def _frame(solvers=("fast", "slow"), sizes=(20, 40, 60)) -> pd.DataFrame:
    rows = [{"problem": "toy/sized", "dataset": "synthetic/x", "family": "toy", "status": "ok", "seed": s,
             "solver_label": lab, "wall_time_s": (1.0 + 9.0 * (lab == "slow")) * (d / 20) ** 2 * (1 + s),
             "p_dim": d, "p_n_triplets": 1000}
            for lab in solvers for d in sizes for s in (0, 1)]
    return pd.DataFrame(rows)


class _Sized:
    name, kind, family, size_param = "toy/sized", "toy", "toy", "dim"


def test_time_vs_size_uses_the_problem_hook(tmp_path: Path):
    ctx = SectionContext("toy", _frame(), pd.DataFrame(), {"toy/sized": _Sized()}, tmp_path, {})
    blocks = timing.TimeVersusSize().render(ctx)
    assert len(blocks) == 1 and isinstance(blocks[0], Chart)
    chart = blocks[0]
    assert "`dim`" in chart.caption and chart.log_x and chart.log_y and "dim" in chart.x_label
    lines = [s for s in chart.panels[0].series if s.role == "summary"]
    assert len(lines) == 2  # one per solver, with its min-max band
    for ln in lines:
        np.testing.assert_array_equal(list(ln.x), [20, 40, 60])
    slow = max(lines, key=lambda ln: list(ln.y)[0])
    np.testing.assert_allclose(list(slow.y), [15.0, 60.0, 135.0])  # median over the two seeds
    assert all(lo <= m <= hi for lo, m, hi in zip(slow.y_low, slow.y, slow.y_high))


def test_time_vs_size_without_a_size(tmp_path: Path):
    class Unsized:
        name, kind = "toy/sized", "toy"

    ctx = SectionContext("toy", _frame(), pd.DataFrame(), {"toy/sized": Unsized()}, tmp_path, {})
    blocks = timing.TimeVersusSize().render(ctx)
    assert len(blocks) == 1 and isinstance(blocks[0], Text) and "`n`" in blocks[0].text
    # the option still names it explicitly
    ctx = SectionContext("toy", _frame(), pd.DataFrame(), {"toy/sized": Unsized()}, tmp_path, {"size_param": "dim"})
    assert isinstance(timing.TimeVersusSize().render(ctx)[0], Chart)


def test_time_vs_size_draws_unfinished_cells_hollow(tmp_path: Path):
    f = _frame()
    late = f["solver_label"].eq("slow") & f["p_dim"].eq(60)
    f.loc[late, "status"] = "max_iter"  # the slow solver spent its budget at D = 60
    f = pd.concat([f, f.iloc[:1].assign(status="error", wall_time_s=99.0, p_dim=80)])  # errors are not drawn
    ctx = SectionContext("toy", f, pd.DataFrame(), {"toy/sized": _Sized()}, tmp_path, {})
    (chart,) = timing.TimeVersusSize().render(ctx)
    assert "Hollow markers" in chart.caption
    series = chart.panels[0].series
    hollow = [s for s in series if s.marker == "circle-open"]
    assert len(hollow) == 1 and list(hollow[0].x) == [60]
    np.testing.assert_allclose(list(hollow[0].y), [135.0])  # median of the two max_iter cells
    joined = [s for s in series if s.role == "summary"]
    assert sorted(len(list(s.x)) for s in joined) == [2, 3]  # slow: D = 20, 40 only
    assert 80 not in {x for s in series for x in s.x}
    # legends say k/n ok: slow has 4 ok of its 6 cells, fast 6 ok and the error cell
    assert sorted(s.label for s in joined) == ["fast · 6/7 ok", "slow · 4/6 ok"]
