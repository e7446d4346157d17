"""One deadline for the budget and the kill; checkpoints of killed cells; curves re-scored by the harness."""

import textwrap

import numpy as np
import pytest

from psdbench.api import Feasibility, Solution
from psdbench.harness.store.db import Store
from psdbench.harness.workers.worker import rescore

from .test_harness import GENEROUS, cli

PLUGIN = '''
import time

import numpy as np

from psdbench.api import Solution, Status, TraceRecorder


class _Base:
    kinds = ("graph-classification",)
    default_params = {}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {}


def points(instance):
    """Three label points: all-positive (feasible), the truth (feasible), half the truth (infeasible)."""
    ones = np.ones(instance.n)
    ones[: instance.m] = instance.xhat
    return [ones, instance.x_true.copy(), 0.5 * instance.x_true]


class Sleeper(_Base):
    """Checkpoints three points, then ignores the deadline."""

    name = "deadline-sleeper"

    def solve(self, instance, budget, **params):
        rec = TraceRecorder(budget, ratio=1.0, min_gap_s=0.0)
        for x in points(instance):
            rec.add(objective=0.0, variables={"x": x})
        time.sleep(3600)


class Honours(_Base):
    """Iterates until ``budget.expired()``, then returns its point with status timeout."""

    name = "deadline-honours"

    def solve(self, instance, budget, **params):
        rec = TraceRecorder(budget)
        x = points(instance)[0]
        it = 0
        while not budget.expired():
            rec.add(objective=0.0, variables={"x": x})
            time.sleep(0.01)
            it += 1
        x = instance.x_true.copy()
        return Solution(variables={"x": x}, status=Status.TIMEOUT, iterations=it, iterates=rec.finish({"x": x}))


class Liar(_Base):
    """Reports an objective of -1e9 at every iterate; the curve must show the instance's values."""

    name = "objective-liar"

    def solve(self, instance, budget, **params):
        rec = TraceRecorder(budget, ratio=1.0, min_gap_s=0.0)
        for x in points(instance):
            rec.add(objective=-1e9, variables={"x": x})
        x = instance.x_true.copy()
        return Solution(variables={"x": x}, iterations=3, trace=rec.points, iterates=rec.finish({"x": x}))
'''

ENTRY_POINTS = """[psdbench.solvers]
deadline-sleeper = deadline_solvers:Sleeper
deadline-honours = deadline_solvers:Honours
objective-liar = deadline_solvers:Liar
"""


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    d = tmp_path_factory.mktemp("deadline")
    (d / "deadline_solvers.py").write_text(PLUGIN)
    info = d / "deadline_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: deadline-solvers\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return d


def _grid(path, solvers, timeout):
    path.write_text(textwrap.dedent(f"""
    [run]
    seeds = [0]
    timeout = {timeout}
    reference = false

    [[problems]]
    name = "graph-classification"
    datasets = ["sklearn/breast-cancer"]
    params = {{ n = [30], graph = ["knn"], k = [5] }}
    """) + "".join(f'\n[[solvers]]\nname = "{s}"\n' for s in solvers))
    return path


@pytest.fixture(scope="module")
def results(plugin_path, tmp_path_factory):
    """The two solvers that run into the deadline, timeout 3 s (grace 2 s), then, into the same
    store, the liar that returns at once, under a limit no machine's load comes near; no reference."""
    d = tmp_path_factory.mktemp("grid")
    db = d / "r.sqlite"
    for g in (_grid(d / "g.toml", ["deadline-sleeper", "deadline-honours"], 3),
              _grid(d / "liar.toml", ["objective-liar"], GENEROUS)):
        out = cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--jobs", "2",
                   "--save-solutions"], plugin_path)
        assert out.returncode == 0, out.stderr
    df = Store(db).results_frame().set_index("solver")
    df.attrs["db"] = db
    return df


@pytest.fixture(scope="module")
def instance(registry, wdbc):
    return registry.problem("graph-classification").build(wdbc, {"n": 30, "graph": "knn", "k": 5}, 0)


def _obj(instance, x):
    return float(x @ instance.L @ x)


def _repaired(instance, x):
    """Graph classification's repair of labels, by hand: signs, the labelled entries set to xhat."""
    y = np.where(x < 0, -1.0, 1.0)
    y[: instance.m] = instance.xhat
    return y


def _points(instance):
    ones = np.ones(instance.n)
    ones[: instance.m] = instance.xhat
    return [ones, instance.x_true.copy(), 0.5 * instance.x_true]


def test_killed_cell_keeps_its_best_verified_checkpoint(results, instance):
    r = results.loc["deadline-sleeper"]
    assert r.status == "timeout" and "killed at the 3 s deadline + 2 s grace" in r.message
    assert r.wall_time_s >= 5.0
    feasible = [_obj(instance, x) for x in _points(instance)[:2]]
    assert r.objective == pytest.approx(min(feasible), rel=1e-12)
    assert r.feasible == 1 and r.objective > _obj(instance, _points(instance)[2])  # the infeasible one is lower
    # the infeasible checkpoint is drawn as its repair (the family's exactly feasible point near it)
    assert [p["feasible"] for p in r.curve] == [1, 1, 1] and [p["repaired"] for p in r.curve] == [0, 0, 1]
    drawn = _points(instance)[:2] + [_repaired(instance, _points(instance)[2])]
    assert [p["objective"] for p in r.curve] == pytest.approx([_obj(instance, x) for x in drawn])


def test_saved_solutions_are_the_returned_point_or_the_kept_checkpoint(results, instance):
    from psdbench import load_solution

    db = results.attrs["db"]
    kept = load_solution(db, results.loc["deadline-sleeper"])  # killed: the best verified checkpoint
    best = min(_points(instance)[:2], key=lambda x: _obj(instance, x))
    assert set(kept) == {"x"} and np.array_equal(kept["x"], best)
    assert _obj(instance, kept["x"]) == pytest.approx(results.loc["deadline-sleeper"].objective, rel=1e-12)
    for name in ("deadline-honours", "objective-liar"):  # returned: the point itself, bit for bit
        row = results.loc[name]
        assert row.solution == f"r.solutions/{row.run_id}/{row.cell_key}.npz"
        assert np.array_equal(load_solution(db, row)["x"], instance.x_true)


def test_solver_that_honours_the_deadline_returns_timeout_with_its_point(results, instance):
    r = results.loc["deadline-honours"]
    assert r.status == "timeout" and r.feasible == 1 and r.iterations > 0
    assert r.objective == pytest.approx(_obj(instance, instance.x_true), rel=1e-12)
    assert "killed" not in r.message
    assert r.curve[-1]["objective"] == r.objective and r.curve[-1]["t"] == pytest.approx(r.wall_time_s)
    ts = [p["t"] for p in r.curve]
    assert ts == sorted(ts)


def test_curve_is_rescored_not_the_solvers_word(results, instance):
    r = results.loc["objective-liar"]
    assert r.status == "ok" and all(p["objective"] == -1e9 for p in r.trace[:3])  # the trace is kept as reported
    drawn = _points(instance)[:2] + [_repaired(instance, _points(instance)[2]), instance.x_true]
    truth = [_obj(instance, x) for x in drawn]
    assert [p["objective"] for p in r.curve] == pytest.approx(truth, rel=1e-12)
    assert [p["feasible"] for p in r.curve] == [1, 1, 1, 1] and [p["repaired"] for p in r.curve] == [0, 0, 1, 0]


class _Repairable:
    """An instance whose points are numbers ``v``: feasible iff ``v >= 0``; repair clips at 0."""

    def objective(self, sol):
        return float(sol.variables["v"]) ** 2 + 1.0

    def verify(self, sol):
        ok = float(sol.variables["v"]) >= 0
        return Feasibility(ok=ok, min_eig=0.0, max_residual=0.0 if ok else 1.0)

    def repair(self, sol):
        return Solution(variables={"v": np.maximum(sol.variables["v"], 0.0)})


def test_rescore_repairs_infeasible_iterates_and_puts_the_final_point_last():
    its = [(0.3, {"v": np.array(2.0)}), (0.1, {"v": np.array(-3.0)}), (0.5, {"v": np.array(np.nan)}),
           (0.6, {"v": np.array(1.0)})]
    final = {"t": 0.7, "objective": 2.0, "feasible": 1, "repaired": 0}
    curve = rescore(_Repairable(), its, final, {"v": np.array(1.0)})
    assert curve == [{"t": 0.1, "objective": 1.0, "feasible": 1, "repaired": 1},
                     {"t": 0.3, "objective": 5.0, "feasible": 1, "repaired": 0}, final]
