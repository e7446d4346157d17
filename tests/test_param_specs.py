"""Declarative parameter specs: a bad value in a grid is exit 2 at grid load, naming the parameter."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from psdbench import api
from psdbench.cli.commands import main

GC = ("graph-classification", "sklearn/breast-cancer", "gdpa-lp")
METRIC = ("metric/mcml", "sklearn/breast-cancer", "pd-cone")
SIGNED = ("signed-graph", "synthetic/balanced-gmrf", "clime")

# (problem, dataset, solver, which side gets the bad value, parameter, bad value as TOML)
CASES = [
    (*GC, "problem", "graph", '"knnn"'),
    (*METRIC, "problem", "fold", "-1"),
    (*SIGNED, "problem", "n_nodes", "-3"),
    (GC[0], GC[1], "gdpa-lp", "solver", "epsilon", '"sometimes"'),
    (GC[0], GC[1], "gdpa-lp-elim", "solver", "start", '"random"'),
    (METRIC[0], METRIC[1], "sgml", "solver", "lp_backend", '"glpk"'),
    (METRIC[0], METRIC[1], "pgml", "solver", "max_sweeps", "0"),
    (METRIC[0], METRIC[1], "pd-cone", "solver", "projection", '"foo"'),
    (SIGNED[0], SIGNED[1], "balanced-clime", "solver", "sigma_v", '"mean"'),
    (SIGNED[0], SIGNED[1], "clime", "solver", "rho", '"bic"'),
    (SIGNED[0], SIGNED[1], "glasso", "solver", "balance", '"spectral"'),
    (GC[0], GC[1], "scs", "solver", "eps_abs", "-1e-4"),
]


def _grid(problem: str, dataset: str, solver: str, side: str, param: str, value: str) -> str:
    pp = f"params = {{ {param} = {value} }}" if side == "problem" else ""
    sp = f"params = {{ {param} = {value} }}" if side == "solver" else ""
    return textwrap.dedent(f"""\
        [run]
        seeds = [0]
        timeout = 600

        [[problems]]
        name = "{problem}"
        datasets = ["{dataset}"]
        {pp}

        [[solvers]]
        name = "{solver}"
        {sp}
        """)


@pytest.mark.parametrize("problem, dataset, solver, side, param, value", CASES,
                         ids=[f"{c[2] if c[3] == 'solver' else c[0]}-{c[4]}" for c in CASES])
def test_bad_value_is_exit_2_at_grid_load(tmp_path, capsys, problem, dataset, solver, side, param, value):
    grid = tmp_path / "bad.toml"
    grid.write_text(_grid(problem, dataset, solver, side, param, value))
    db = tmp_path / "never.sqlite"
    assert main(["run", "--grid", str(grid), "--db", str(db), "--report", "", "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    owner = solver if side == "solver" else problem
    assert len(err) == 1 and err[0].startswith("psdbench: error: grid bad:"), err
    assert f"{owner!r} parameter {param} " in err[0], err[0]
    assert not db.exists()  # rejected before any cell ran or the store was opened


def test_bad_value_through_the_real_command(tmp_path):
    grid = tmp_path / "bad.toml"
    grid.write_text(_grid(*METRIC, "solver", "projection", '"foo"'))
    db = tmp_path / "never.sqlite"
    out = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(grid), "--db", str(db),
                          "--report", "", "--quiet"], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 2
    assert out.stderr.strip() == ("psdbench: error: grid bad: solvers[0]: 'pd-cone' parameter projection must be "
                                  "one of 'rescale', 'euclidean', not 'foo'")
    assert not db.exists()


def test_every_builtin_declares_specs_with_docs(registry):
    for obj in [*registry.problems.values(), *registry.solvers.values()]:
        if obj.name in ("clarabel", "mosek"):  # backend options only, passed through (accepts_any_params)
            continue
        if obj.name == "euclidean":  # the identity metric: nothing to set
            assert obj.params == {} and obj.default_params == {}
            continue
        specs = obj.params
        assert specs and all(isinstance(p, api.Param) for p in specs.values()), obj.name
        assert obj.default_params == api.default_params(specs), obj.name
        for k, p in specs.items():
            assert p.doc and "\n" not in p.doc, (obj.name, k)
            assert p.error(p.default) is None, (obj.name, k)


def test_union_specs_accept_each_alternative_and_name_them():
    rho = api.either("hqic", "cv", api.number(low=0), default="hqic")
    assert [rho.error(v) for v in ("hqic", "cv", 0.1, 2)] == [None] * 4
    assert rho.error("bic") == "must be 'hqic' | 'cv' | int or float in [0, inf], not 'bic'"
    assert rho.error(True) is not None and rho.error(None) is not None
    fold = api.either(api.number(low=0, integer=True), "all", default=0)
    assert fold.error("all") is None and fold.error(3) is None and fold.error(1.5) is not None
