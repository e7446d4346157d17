"""Round trip of a third-party solver plugin: install, discover, run through the CLI.

``examples/solver-plugin`` registers ``example-harmonic`` (harmonic-function label propagation)
through the ``psdbench.solvers`` entry-point group.  It is installed offline (no package index,
no build isolation, no dependencies) into a folder of the test's own on the path (``conftest.installed``).  Its error rate must equal the
instance's ``labelprop_error`` baseline, which psdbench computes independently of the plugin.
"""

from __future__ import annotations

import importlib.util
import math
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from psdbench.harness.store.db import Store

from .conftest import installed

PLUGIN_DIR = Path(__file__).resolve().parents[1] / "examples" / "solver-plugin"
DIST = "psdbench-example-plugin"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "psdbench.cli", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def plugin_installed(tmp_path_factory):
    # offline: --no-index --no-build-isolation --no-deps, on a copy (see conftest); an installed copy is left as it is
    with installed(PLUGIN_DIR, DIST, tmp_path_factory.mktemp("solver-plugin")):
        yield PLUGIN_DIR


def test_plugin_listed(plugin_installed):
    res = _cli("list", "solvers")
    assert res.returncode == 0, res.stderr
    assert "example-harmonic" in res.stdout, res.stdout


def test_plugin_runs_through_cli(plugin_installed, tmp_path):
    grid = tmp_path / "plugin.toml"
    grid.write_text(textwrap.dedent("""\
        [run]
        name = "plugin-test"
        seeds = [0]
        timeout = 600
        reference_timeout = 600

        [[problems]]
        name = "graph-classification"
        datasets = ["sklearn/breast-cancer"]
        params = { n = [40], graph = ["knn"], k = [5] }

        [[solvers]]
        name = "example-harmonic"

        [[solvers]]
        name = "gdpa-lp"
        """))
    db = tmp_path / "x.sqlite"
    res = _cli("run", "--grid", str(grid), "--db", str(db), "--report", "", "--quiet", cwd=tmp_path)
    assert res.returncode == 0, f"psdbench run failed:\n{res.stdout}\n{res.stderr}"

    df = Store(db).results_frame()
    assert set(df["solver"]) >= {"example-harmonic", "gdpa-lp"}, df[["solver", "status"]]
    rows = df[df["solver"] == "example-harmonic"]
    assert len(rows) == 1
    row = rows.iloc[0]
    assert row["status"] == "ok", row["message"]
    assert int(row["feasible"]) == 1
    assert math.isfinite(row["metric_error_rate"])
    # Same algorithm as the instance's label-propagation baseline: an independent check.
    assert row["metric_error_rate"] == pytest.approx(row["metric_labelprop_error"], abs=1e-12)


def test_plugin_passes_the_conformance_kit(monkeypatch):
    """The example's own conformance test (examples/solver-plugin/tests) passes, imported from source."""
    monkeypatch.syspath_prepend(str(PLUGIN_DIR / "src"))
    spec = importlib.util.spec_from_file_location("plugin_conformance", PLUGIN_DIR / "tests" / "test_conformance.py")
    plugin_tests = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(plugin_tests)
    plugin_tests.test_harmonic_solver_conforms()
