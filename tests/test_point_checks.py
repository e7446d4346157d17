"""Newcomer mistakes named: a returned point's variable names and shapes are checked once
(``api.point_mismatch``), by a run (status ``infeasible``, one line, no traceback) and by the
conformance kit (a one-line :class:`~psdbench.testing.ConformanceError`) alike."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from psdbench import api
from psdbench.api import REJECTED, Solution, Status
from psdbench.testing import InfeasiblePointError, VariableNamesError, check_solver

from .test_cli_bad_input import cli

PLUGIN = '''
import numpy as np
from psdbench.api import Solution, Status


class _Base:
    kinds = ("*",)
    default_params = {}

    def library_versions(self):
        return {}

    def supports(self, instance):
        return True


class LowerX(_Base):
    """Returns ``x`` where the SDP family documents ``X``."""
    name = "lower-x"

    def solve(self, instance, budget, **params):
        return Solution(variables={"x": np.zeros(instance.data.N), "y": np.zeros(instance.data.m)}, status=Status.OK)


class ShortX(_Base):
    """Returns an ``X`` of 10 entries."""
    name = "short-x"

    def solve(self, instance, budget, **params):
        return Solution(variables={"X": np.zeros(10), "y": np.zeros(instance.data.m)}, status=Status.OK)


class SmallMetric(_Base):
    """Returns a metric one row and column short."""
    name = "small-metric"

    def solve(self, instance, budget, **params):
        d = instance.D - 1
        return Solution(variables={"X": np.eye(d) / d}, status=Status.OK)
'''
ENTRY_POINTS = """[psdbench.solvers]
lower-x = pc_plug:LowerX
short-x = pc_plug:ShortX
small-metric = pc_plug:SmallMetric
"""


@pytest.fixture(scope="module")
def plug(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("pcplug")
    (d / "pc_plug.py").write_text(PLUGIN)
    info = d / "pc_plug-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: pc-plug\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    return d


def _solvers(plug: Path):
    import importlib
    import sys

    sys.path.insert(0, str(plug))
    try:
        return importlib.import_module("pc_plug")
    finally:
        sys.path.remove(str(plug))


def _run(tmp_path: Path, plug: Path, problem: str, solvers: list[str]) -> list[tuple[str, str, str]]:
    grid = tmp_path / "g.toml"
    grid.write_text("[run]\nseeds = [0]\ntimeout = 600\nreference = false\n\n[[problems]]\n" + problem + "\n"
                    + "".join(f'\n[[solvers]]\nname = "{s}"\n' for s in solvers))
    db = tmp_path / "s.sqlite"
    code, out, err = cli(["run", "--grid", grid, "--db", db, "--report", "", "--quiet", "--jobs", "1"], plug)
    assert code == 0, err
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT solver, status, message FROM history ORDER BY solver").fetchall()
    finally:
        con.close()


SDP = 'name = "sdp/standard"\ndatasets = ["sdp-gen/maxcut"]\nparams = { n = [6] }'
METRIC = 'name = "metric/triplet-margin"\ndatasets = ["sklearn/wine"]'


def test_a_run_names_wrong_variable_names_and_shapes_in_one_line(tmp_path, plug):
    rows = {s: (status, msg) for s, status, msg in _run(tmp_path, plug, SDP, ["lower-x", "short-x"])}
    status, msg = rows["lower-x"]
    assert status == "infeasible"
    assert msg == f"{REJECTED}: returned x, y; expected X, y, Z, y_ray, X_ray, R, x_lp (did you mean X for x?)"
    status, msg = rows["short-x"]  # the declared shape, or (without variable_shapes) the family's own size check
    assert status == "infeasible" and "\n" not in msg and "Traceback" not in msg
    assert msg.startswith(f"{REJECTED}: X has 10 entries, the instance has ") or (
        msg.startswith(f"{REJECTED}: the instance could not check the point (") and "X 10" in msg), msg


def test_a_run_rejects_a_shape_the_instance_declares(tmp_path, plug):
    (solver, status, msg), = _run(tmp_path, plug, METRIC, ["small-metric"])
    assert status == "infeasible" and "\n" not in msg
    assert msg.startswith(f"{REJECTED}: X has shape (12, 12), the instance needs (13, 13)")


def test_the_kit_names_the_same_mistakes(registry, plug):
    mod = _solvers(plug)
    sdp = registry.problem("sdp/standard").build(registry.load_dataset("sdp-gen/maxcut"), {"n": 6}, 0)
    with pytest.raises(VariableNamesError) as err:
        check_solver(mod.LowerX(), [sdp])
    assert str(err.value).endswith("returned x, y; expected X, y, Z, y_ray, X_ray, R, x_lp (did you mean X for x?)")
    with pytest.raises(InfeasiblePointError) as err:
        check_solver(mod.ShortX(), [sdp])
    line = str(err.value)
    assert "X has 10 entries, the instance has " in line or (
        "the instance could not check the point (ValueError: " in line and "X 10" in line), line
    assert "matmul" not in line and "\n" not in line
    metric = registry.problem("metric/triplet-margin").build(registry.load_dataset("sklearn/wine"), {}, 0)
    with pytest.raises(InfeasiblePointError, match=r"X has shape \(12, 12\), the instance needs \(13, 13\)$"):
        check_solver(mod.SmallMetric(), [metric])


def test_point_mismatch_lines():
    inst = SimpleNamespace(variables=("X", "y"), variable_shapes=lambda: {"X": (15,), "y": (3,), "M": (None, 4)})
    assert api.point_mismatch(inst, {"x": np.zeros(15)}) == "returned x; expected X, y (did you mean X for x?)"
    assert api.point_mismatch(inst, {}) == "returned no variables; expected X, y"
    assert api.point_mismatch(inst, {"X": np.zeros(10), "y": np.zeros(3)}) == "X has 10 entries, the instance has 15"
    assert api.point_mismatch(inst, {"X": np.zeros((15, 1))}) == "X has shape (15, 1), the instance needs (15,)"
    assert api.point_mismatch(inst, {"X": np.zeros(15), "y": np.zeros(3)}) is None
    free = SimpleNamespace(variable_shapes=lambda: {"M": (None, 4)})  # no declared names: shapes alone
    assert api.point_mismatch(free, {"M": np.zeros((7, 4))}) is None
    assert api.point_mismatch(free, {"M": np.zeros((7, 3))}) == "M has shape (7, 3), the instance needs (any, 4)"
    assert api.point_mismatch(SimpleNamespace(), {"anything": 1}) is None


def test_every_declared_shape_holds_for_a_verified_point(registry):
    """The built-in families' declared shapes accept the verified points of their own solvers."""
    from psdbench.solvers.conic import Clarabel

    def clarabel(inst):
        return Clarabel().solve(inst, api.Budget()).variables

    cases = [("metric/triplet-margin", "sklearn/wine", {}, clarabel),
             ("metric/lsml", "sklearn/wine", {}, lambda inst: {"M": inst.identity_start()}),
             ("signed-graph", "synthetic/balanced-gmrf", {"n_nodes": 6, "n_samples": 40},
              lambda inst: registry.solver("balanced-clime").solve(inst, api.Budget()).variables)]
    for name, data, params, point in cases:
        problem = registry.problem(name)
        inst = problem.build(registry.load_dataset(data), {**problem.default_params, **params}, 0)
        assert api.variable_shapes(inst), name
        variables = point(inst)
        assert inst.verify(Solution(variables=variables)).ok, name
        assert api.point_mismatch(inst, variables) is None, name
