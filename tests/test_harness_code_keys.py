"""Cell keys hash the code that computes a cell: an edited solver's cells run again, and say why.

The example solver plugin (``examples/solver-plugin``) is copied to a temporary folder and
registered there through a ``dist-info`` directory on ``PYTHONPATH`` (no install); editing the
copy without changing its version must re-run exactly its cells, and ``results`` must then show
the same rows as the report.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from psdbench.harness import keys

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "solver-plugin" / "src" / "psdbench_example_plugin"

GRID = textwrap.dedent("""
    [run]
    seeds = [0]
    timeout = 60
    reference = false

    [[problems]]
    name = "graph-classification"
    datasets = ["sklearn/breast-cancer"]
    params = { n = [20, 24], graph = ["knn"], k = [5] }

    [[solvers]]
    name = "gdpa-lp"

    [[solvers]]
    name = "example-harmonic"
    """)


@pytest.fixture
def plugin(tmp_path):
    """A copy of the example plugin, registered like an installed distribution; returns its folder."""
    src = tmp_path / "plugin"
    shutil.copytree(PLUGIN, src / PLUGIN.name, ignore=shutil.ignore_patterns("__pycache__"))
    info = src / "psdbench_example_plugin-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: psdbench-example-plugin\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\n"
                                           "example-harmonic = psdbench_example_plugin:HarmonicSolver\n")
    return src


def psdbench(args: list[str], plugin_dir: Path) -> subprocess.CompletedProcess:
    """The command line in a fresh process (code hashes are cached per process, as modules are)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(plugin_dir), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "psdbench.cli", *map(str, args)], env=env, capture_output=True,
                          text=True, timeout=600)


def test_editing_a_solver_reruns_exactly_its_cells_and_results_agrees_with_the_report(tmp_path, plugin):
    grid, db = tmp_path / "g.toml", tmp_path / "r.sqlite"
    grid.write_text(GRID)
    run = ["run", "--grid", grid, "--db", db, "--report", "", "--quiet", "--jobs", "1"]
    first = psdbench(run, plugin)
    assert first.returncode == 0, first.stderr
    assert "re-run because code changed" not in first.stdout
    again = psdbench(run, plugin)  # nothing changed: nothing runs
    assert again.returncode == 0 and "(0 run now" in again.stdout, again.stdout

    code = plugin / PLUGIN.name / "__init__.py"  # an edit of the solver's code, same version
    code.write_text(code.read_text().replace("x[m:] = np.where(f >= 0, 1.0, -1.0)  # ties -> +1",
                                             "x[m:] = np.where(f >= 0.0, 1.0, -1.0)  # ties -> +1 (edited)"))
    edited = psdbench(run, plugin)
    assert edited.returncode == 0, edited.stderr
    assert "(2 run now" in edited.stdout and \
        "2 cells re-run because code changed (solver example-harmonic: 2)" in edited.stdout, edited.stdout

    hist = pd.DataFrame(json.loads(psdbench(["results", "--db", db, "--format", "json", "--all"], plugin).stdout))
    assert len(hist) == 6 and hist.groupby("solver").size().to_dict() == {"example-harmonic": 4, "gdpa-lp": 2}
    cur = psdbench(["results", "--db", db, "--format", "json"], plugin)
    current = pd.DataFrame(json.loads(cur.stdout))
    assert len(current) == 4 and current.cell_id.is_unique
    newest = hist[hist.solver == "example-harmonic"].run_id.max()
    assert set(current[current.solver == "example-harmonic"].run_id) == {newest}
    assert current[current.solver == "example-harmonic"].solver_code.nunique() == 1

    out = tmp_path / "report"
    rep = psdbench(["report", "--db", db, "--out", out], plugin)
    assert rep.returncode == 0, rep.stderr
    shown = pd.read_csv(out / "results.csv")
    assert sorted(zip(shown.solver, shown.run_id)) == sorted(zip(current.solver, current.run_id))


def test_code_hash_follows_the_module_files(tmp_path, monkeypatch):
    pkg = tmp_path / "codehash_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("class S:\n    name = 's'\n")
    (pkg / "suite.toml").write_text("[run]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import codehash_pkg

    first = keys.code_hash(codehash_pkg.S())
    assert len(first) == 20 and keys.code_hash(codehash_pkg.S) == first
    (pkg / "suite.toml").write_text("[run]\nseeds = [1]\n")  # not code: same hash
    keys._hash_root.cache_clear(), keys._module_code.cache_clear()
    assert keys.code_hash(codehash_pkg.S()) == first
    (pkg / "helper.py").write_text("X = 1\n")  # a new module of the package: another hash
    keys._hash_root.cache_clear(), keys._module_code.cache_clear()
    assert keys.code_hash(codehash_pkg.S()) != first


def test_builtin_code_hash_covers_the_family_and_the_psdbench_code_it_imports(registry):
    root = Path(keys.__file__).resolve().parents[1]
    gc = keys._root(type(registry.solver("gdpa-lp")).__module__)
    assert gc == root / "families" / "graph_classification"
    _, linked = keys._hash_root(gc)
    assert root / "linalg" in linked and not any(p.name in ("harness", "report") for p in linked)
    # two families' solvers hash different code; the generic conic solvers their own subpackage
    assert keys.code_hash(registry.solver("gdpa-lp")) != keys.code_hash(registry.solver("sgml"))
    assert keys._root(type(registry.solver("scs")).__module__) == root / "solvers"
