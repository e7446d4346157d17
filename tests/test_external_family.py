"""A problem family added from outside the repository, through entry points only.

``tests/plugin_family`` is a package of its own (``psdbench-toyfamily``) that registers a problem
(``toy/nearest-psd``), a dataset (``toy/noisy-corr``), a solver (``toy-altproj``), a report
section (``toy-nearest-psd``) and a suite (``toy-suite``).  It is installed offline (no package
index, no build isolation, no dependencies) into a folder of the test's own on the path
(``conftest.installed``: never into the environment) and driven through the command line like a
user would.  Nothing in psdbench names it.  The conformance kit
(``psdbench.testing``) checks its problem and solvers where the kit is present.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from psdbench.harness.store.db import Store

from .conftest import installed

FAMILY_DIR = Path(__file__).resolve().parent / "plugin_family"
DIST = "psdbench-toyfamily"
SECTION_TITLE = "Toy family: nearest unit-diagonal PSD matrix"


def _cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "psdbench.cli", *args], capture_output=True, text=True, cwd=cwd)


@pytest.fixture(scope="module")
def family_installed(tmp_path_factory):
    # offline: --no-index --no-build-isolation --no-deps, on a copy (see conftest); an installed copy is left as it is
    with installed(FAMILY_DIR, DIST, tmp_path_factory.mktemp("toyfamily")):
        yield FAMILY_DIR


@pytest.fixture(scope="module")
def suite_run(family_installed, tmp_path_factory):
    """``psdbench run --suite toy-suite`` into a fresh store (once for the module)."""
    work = tmp_path_factory.mktemp("toyrun")
    db = work / "toy.sqlite"
    res = _cli("run", "--suite", "toy-suite", "--db", str(db), "--report", "", "--quiet", cwd=work)
    return work, db, res


def test_asv_tracks_the_family_with_no_asv_code_of_its_own(family_installed):
    """Its suite's ``[asv]`` table is all: benchmarks/bench_suites.py makes its classes."""
    code = ("import benchmarks.bench_suites as b; print(sorted(b.ToyPsd_ToySuite.params[1]), "
            "b.ToyPsd_ToySuiteQuality.suite)")
    res = subprocess.run([sys.executable, "-c", code], cwd=FAMILY_DIR.parents[1], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    assert res.stdout.split() == ["['clarabel',", "'toy-altproj']", "toy-suite"]


@pytest.mark.parametrize("what,name", [("problems", "toy/nearest-psd"), ("solvers", "toy-altproj"),
                                       ("datasets", "toy/noisy-corr"), ("suites", "toy-suite")])
def test_listed(family_installed, what, name):
    res = _cli("list", what)
    assert res.returncode == 0, res.stderr
    assert name in res.stdout.split(), res.stdout
    assert "warning: plugin" not in res.stderr, res.stderr  # every entry point of the family loaded


def test_suite_runs_beside_a_builtin_conic_solver(suite_run):
    _, db, res = suite_run
    assert res.returncode == 0, f"psdbench run failed:\n{res.stdout}\n{res.stderr}"
    df = Store(db).results_frame()
    assert set(df["problem"]) == {"toy/nearest-psd"} and set(df["dataset"]) == {"toy/noisy-corr"}
    assert len(df) == 8, df[["solver", "seed", "status"]]  # n in {6, 10} x seeds {0, 1} x 2 solvers
    assert (df["status"] == "ok").all(), df[["solver", "instance_params", "seed", "status", "message"]]
    assert (df["feasible"] == 1).all()
    # both solvers ran on the same four instances, and agree on the optimum
    by_solver = {s: g.set_index("instance_key")["objective"] for s, g in df.groupby("solver")}
    assert set(by_solver) == {"toy-altproj", "clarabel"}
    assert set(by_solver["toy-altproj"].index) == set(by_solver["clarabel"].index)
    assert len(by_solver["clarabel"]) == 4
    for key, value in by_solver["clarabel"].items():
        assert by_solver["toy-altproj"][key] == pytest.approx(value, rel=1e-6)
    # the family's certified reference (dual bound) was used for the gaps
    assert (df["reference_kind"] == "certified").all()
    assert (df["gap_rel"].abs() < 1e-6).all()
    # the family's own metrics and the solver's trace were stored
    assert df["metric_distance"].notna().all()
    traces = df.loc[df["solver"] == "toy-altproj", "trace"]
    assert all(len(t) > 1 and "objective" in t[-1] for t in traces)


def test_report_shows_the_family_section(suite_run):
    work, db, run = suite_run
    assert run.returncode == 0, run.stderr
    out = work / "report"
    res = _cli("report", "--db", str(db), "--out", str(out), cwd=work)
    assert res.returncode == 0, f"psdbench report failed:\n{res.stdout}\n{res.stderr}"
    text = (out / "report.md").read_text(encoding="utf-8")
    assert SECTION_TITLE in text
    assert SECTION_TITLE in (out / "report.html").read_text(encoding="utf-8")


def test_family_passes_the_conformance_kit(monkeypatch):
    """The family's problem and both solvers keep psdbench's contracts (``psdbench.testing``)."""
    testing = pytest.importorskip("psdbench.testing", reason="the conformance kit comes with the contracts branch")
    monkeypatch.syspath_prepend(str(FAMILY_DIR / "src"))  # imported from source: no install needed
    from psdbench_toyfamily.altproj import AlternatingProjections
    from psdbench_toyfamily.contract import NearestPsdKind
    from psdbench_toyfamily.data import noisy_corr
    from psdbench_toyfamily.problem import NearestPsd

    from psdbench.solvers.conic import Clarabel

    instances = [testing.check_problem(NearestPsd(), noisy_corr(), {"n": n}, seed=s, kind=NearestPsdKind,
                                         solve_reference=True)
                 for n, s in ((6, 0), (10, 1))]
    testing.check_solver(AlternatingProjections(), instances, deadline_s=60.0, grace_s=2.0)
    testing.check_solver(Clarabel(), instances, deadline_s=60.0, grace_s=2.0)
