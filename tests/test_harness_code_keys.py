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

from psdbench.harness.store import keys

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = ROOT / "examples" / "solver-plugin" / "src" / "psdbench_example_plugin"

GRID = textwrap.dedent("""
    [run]
    seeds = [0]
    timeout = 600
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


@pytest.mark.slow
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


TOY = ROOT / "tests" / "plugin_family" / "src" / "psdbench_toyfamily"
CLIP = textwrap.dedent("""
    from psdbench.api import Solution, Status

    from .problem import project_psd, unit_diagonal


    class Clip:
        \"\"\"One projection onto the PSD cone, then the unit diagonal (family twofam-b's solver).\"\"\"

        name = "twofam-clip"
        kinds = ("twofam-a",)
        default_params: dict = {}

        def supports(self, instance):
            return True

        def library_versions(self):
            return {}

        def solve(self, instance, budget, **params):
            return Solution(variables={"X": unit_diagonal(project_psd(instance.A))}, status=Status.OK, iterations=1)
    """)
SECOND = textwrap.dedent("""
    from .problem import NearestPsd


    class SecondNearestPsd(NearestPsd):
        \"\"\"The same problem as a second family of the package.\"\"\"

        name = "twofam-b/nearest-psd"
        family = "twofam-b"
    """)
TWO_FAMILIES = textwrap.dedent("""
    [run]
    seeds = [0]
    timeout = 600
    reference = false

    [[problems]]
    name = "twofam-a/nearest-psd"
    datasets = ["twofam/noisy-corr"]
    params = { n = [6, 8] }

    [[problems]]
    name = "twofam-b/nearest-psd"
    datasets = ["twofam/noisy-corr"]
    params = { n = [6, 8] }

    [[solvers]]
    name = "twofam-altproj"
    where = { problem = ["twofam-a/nearest-psd"] }

    [[solvers]]
    name = "twofam-clip"
    where = { problem = ["twofam-b/nearest-psd"] }
    """)


@pytest.fixture
def two_families(tmp_path):
    """One package holding two families (the toy plugin family's modules, renamed, and a second
    family beside it with a solver of its own), registered like an installed distribution."""
    src = tmp_path / "twofam"
    pkg = src / "twofam_pkg"
    shutil.copytree(TOY, pkg, ignore=shutil.ignore_patterns("__pycache__", "suites"))
    for f in pkg.glob("*.py"):
        f.write_text(f.read_text().replace("toy/nearest-psd", "twofam-a/nearest-psd")
                     .replace("toy/noisy-corr", "twofam/noisy-corr").replace("toy-altproj", "twofam-altproj")
                     .replace('"toy-psd"', '"twofam-a"'))
    (pkg / "second.py").write_text(SECOND)
    (pkg / "clip.py").write_text(CLIP)
    info = src / "twofam_pkg-0.1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: twofam-pkg\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text(
        "[psdbench.problems]\ntwofam-a/nearest-psd = twofam_pkg.problem:NearestPsd\n"
        "twofam-b/nearest-psd = twofam_pkg.second:SecondNearestPsd\n"
        "[psdbench.datasets]\ntwofam/noisy-corr = twofam_pkg.data:noisy_corr\n"
        "[psdbench.solvers]\ntwofam-altproj = twofam_pkg.altproj:AlternatingProjections\n"
        "twofam-clip = twofam_pkg.clip:Clip\n"
        "[psdbench.reports]\ntwofam-a-section = twofam_pkg.report:NearestPsdSection\n")
    return src


def test_editing_one_solver_of_a_package_with_two_families_reruns_exactly_its_cells(tmp_path, two_families):
    grid, db = tmp_path / "g.toml", tmp_path / "r.sqlite"
    grid.write_text(TWO_FAMILIES)
    run = ["run", "--grid", grid, "--db", db, "--report", "", "--quiet", "--jobs", "1"]
    first = psdbench(run, two_families)
    assert first.returncode == 0 and "(4 run now" in first.stdout, first.stdout + first.stderr
    pkg = two_families / "twofam_pkg"

    report = pkg / "report.py"  # a report section nothing the cells run imports: nothing re-runs
    report.write_text(report.read_text() + "\n# edited\n")
    after_report = psdbench(run, two_families)
    assert after_report.returncode == 0 and "(0 run now" in after_report.stdout, after_report.stdout

    solver = pkg / "altproj.py"  # family twofam-a's solver: its 2 cells, not twofam-clip's
    solver.write_text(solver.read_text().replace("Y, dS = A.copy(), np.zeros_like(A)",
                                                 "Y, dS = A.copy(), np.zeros_like(A)  # edited"))
    edited = psdbench(run, two_families)
    assert edited.returncode == 0, edited.stderr
    assert "(2 run now" in edited.stdout and \
        "2 cells re-run because code changed (solver twofam-altproj: 2)" in edited.stdout, edited.stdout
    hist = pd.DataFrame(json.loads(psdbench(["results", "--db", db, "--format", "json", "--all"],
                                            two_families).stdout))
    assert hist.groupby("solver").size().to_dict() == {"twofam-altproj": 4, "twofam-clip": 2}


def test_code_hash_follows_the_module_files(tmp_path, monkeypatch):
    pkg = tmp_path / "codehash_pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("class S:\n    name = 's'\n")
    (pkg / "suite.toml").write_text("[run]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import codehash_pkg

    def fresh() -> str:
        for cached in (keys._listing, keys.module_file, keys._read, keys._imports, keys._file_hash, keys._module_code):
            cached.cache_clear()
        return keys.code_hash(codehash_pkg.S())

    first = keys.code_hash(codehash_pkg.S())
    assert len(first) == 20 and keys.code_hash(codehash_pkg.S) == first
    (pkg / "suite.toml").write_text("[run]\nseeds = [1]\n")  # not code: same hash
    assert fresh() == first
    (pkg / "helper.py").write_text("X = 1\n")  # a module of the package the class does not import
    assert fresh() == first
    (pkg / "__init__.py").write_text("class S:\n    name = 's'\n\n    def f(self):\n"
                                     "        from .helper import X\n        return X\n")
    imports = fresh()  # now imported (inside a function): part of the hash, so is an edit of it
    assert imports != first and set(keys.module_closure("codehash_pkg")) == {"codehash_pkg", "codehash_pkg.helper"}
    (pkg / "helper.py").write_text("X = 2\n")
    assert fresh() not in (first, imports)


def test_builtin_code_hash_covers_the_modules_a_solver_imports(registry):
    gdpa = keys.module_closure(type(registry.solver("gdpa-lp")).__module__)
    assert "psdbench.families.graph_classification.gdpa_lp" in gdpa and "psdbench.linalg.gdpa" in gdpa
    # the contract, harness and report are psdbench's version's; a sibling it never imports is not there
    assert not any(m.split(".")[1] in ("api", "harness", "report", "hooks") for m in gdpa)
    assert "psdbench.families.graph_classification.report_scaling" not in gdpa
    assert not any(m.startswith("psdbench.families.mahalanobis") for m in gdpa)
    # two families' solvers hash different code; the generic conic solvers only their own module
    assert keys.code_hash(registry.solver("gdpa-lp")) != keys.code_hash(registry.solver("sgml"))
    assert set(keys.module_closure(type(registry.solver("scs")).__module__)) == {"psdbench.solvers",
                                                                                 "psdbench.solvers.conic"}
