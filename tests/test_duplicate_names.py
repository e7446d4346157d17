"""A name that two distributions register is never resolved silently.

An outside distribution (``maxcut-legacy``, a ``.dist-info`` folder on ``sys.path`` / ``PYTHONPATH``:
real ``importlib.metadata`` discovery, nothing installed, no package index) registers its own
problem ``maxcut/sdp`` and solver ``maxcut-mixing`` (names psdbench registers too), a dataset
collection ``sklearn`` and a suite ``maxcut-small`` (both also psdbench's).  Its problem is a
stand-in built on the toy family's code (``tests/plugin_family/src``, imported as a module, not
registered): the nearest unit-diagonal PSD matrix, so a run of it is told from psdbench's max-cut
by its family and its variables.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from psdbench.api import PsdbenchError
from psdbench.harness.store.db import Store
from psdbench.registry.qualified import AmbiguousName, split
from psdbench.registry import discover

from .test_cli_bad_input import cli

TOY_SRC = Path(__file__).resolve().parent / "plugin_family" / "src"
DIST = "maxcut-legacy"

ENTRY_POINTS = """\
[psdbench.problems]
maxcut/sdp = legacy_maxcut:LegacyMaxcut
legacy/only = legacy_maxcut:LegacyMaxcut

[psdbench.solvers]
maxcut-mixing = legacy_maxcut:LegacyMixing

[psdbench.datasets]
legacy/tiny = psdbench_toyfamily.data:noisy_corr
sklearn = legacy_maxcut:LegacySklearn

[psdbench.suites]
legacy = legacy_suites
"""

MODULE = '''\
"""The legacy package's own max-cut family (here: the toy family's problem under other names)."""
from psdbench_toyfamily.altproj import AlternatingProjections
from psdbench_toyfamily.problem import NearestPsd


class LegacyMaxcut(NearestPsd):
    """Legacy max-cut (outside distribution)."""

    name = "maxcut/sdp"
    family = "legacy-maxcut"


class LegacyMixing(AlternatingProjections):
    """Legacy mixing (outside distribution)."""

    name = "maxcut-mixing"


class LegacySklearn:
    """A collection that happens to be called sklearn too."""

    def names(self):
        return ["wine"]

    def load(self, name):
        raise AssertionError("never loaded: the name is ambiguous")
'''

GRID = """\
[run]
seeds = [0]
timeout = 60
reference = false

[[problems]]
name = "{problem}"
datasets = ["legacy/tiny"]
params = {{ n = [6] }}

[[solvers]]
name = "{solver}"
"""


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The outside distribution on ``sys.path`` and on ``PYTHONPATH`` (for the CLI's processes)."""
    root = tmp_path / "site"
    root.mkdir()
    (root / "legacy_maxcut.py").write_text(MODULE)
    suites = root / "legacy_suites"
    suites.mkdir()
    (suites / "__init__.py").write_text("")
    (suites / "legacy-small.toml").write_text(GRID.format(problem=f"{DIST}:maxcut/sdp", solver=f"{DIST}:maxcut-mixing"))
    (suites / "maxcut-small.toml").write_text(GRID.format(problem=f"{DIST}:maxcut/sdp", solver=f"{DIST}:maxcut-mixing"))
    info = root / "maxcut_legacy-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {DIST}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)
    for path in (str(TOY_SRC), str(root)):
        monkeypatch.syspath_prepend(path)
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join([str(root), str(TOY_SRC), os.environ.get("PYTHONPATH", "")]))
    return root


def _run(*args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "psdbench.cli", *map(str, args)], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def test_split_leaves_registered_names_alone():
    assert split("maxcut-legacy:maxcut/sdp") == ("maxcut-legacy", "maxcut/sdp")
    assert split("Maxcut_Legacy:maxcut-mixing") == ("maxcut-legacy", "maxcut-mixing")
    assert split("sklearn/wine:multiclass") == (None, "sklearn/wine:multiclass")  # a view suffix, not a qualifier
    assert split("maxcut/sdp") == (None, "maxcut/sdp") and split("gdpa-lp") == (None, "gdpa-lp")
    assert split(":x") == (None, ":x") and split("x:") == (None, "x:")


def test_lookup_of_a_duplicated_name_names_both_distributions(site):
    reg = discover(preload=False)
    for what, look in (("problem", reg.problem), ("solver", reg.solver)):
        name = "maxcut/sdp" if what == "problem" else "maxcut-mixing"
        with pytest.raises(AmbiguousName) as err:
            look(name)
        line = str(err.value)
        assert line == (f"{what} {name!r} is registered by 2 distributions (maxcut-legacy, psdbench): name one as "
                        f"DIST:NAME, maxcut-legacy:{name} or psdbench:{name}")
        assert isinstance(err.value, PsdbenchError)
    # neither is reached bare by a mapping lookup either
    assert reg.problems.get("maxcut/sdp") is None and "maxcut-mixing" not in reg.solvers
    # each by its qualified name: the outside one is the legacy class, psdbench's its own
    assert type(reg.problem("maxcut-legacy:maxcut/sdp")).__name__ == "LegacyMaxcut"
    assert type(reg.problem("Maxcut_Legacy:maxcut/sdp")).__name__ == "LegacyMaxcut"  # any spelling of the dist
    assert type(reg.problem("psdbench:maxcut/sdp")).__module__ == "psdbench.families.maxcut.problem"
    assert type(reg.solver("maxcut-legacy:maxcut-mixing")).__name__ == "LegacyMixing"
    assert type(reg.solver("psdbench:maxcut-mixing")).__module__ == "psdbench.families.maxcut.mixing"
    # names only one distribution registers are unchanged, and reachable qualified too
    assert type(reg.problem("legacy/only")).__name__ == "LegacyMaxcut"
    assert type(reg.problem("maxcut-legacy:legacy/only")).__name__ == "LegacyMaxcut"
    assert reg.solver("gdpa-lp") is reg.solver("psdbench:gdpa-lp")
    with pytest.raises(PsdbenchError, match="unknown problem 'psdbench:legacy/only'"):
        reg.problem("psdbench:legacy/only")  # psdbench does not register it
    assert {"maxcut-legacy:maxcut/sdp", "psdbench:maxcut/sdp", "legacy/only", "graph-classification"} <= set(
        reg.problems.names()) and "maxcut/sdp" not in reg.problems.names()
    assert reg.duplicates() == {"problems": {"maxcut/sdp": ("maxcut-legacy", "psdbench")},
                                "solvers": {"maxcut-mixing": ("maxcut-legacy", "psdbench")},
                                "datasets": {"sklearn": ("maxcut-legacy", "psdbench")},
                                "suites": {"maxcut-small": ("maxcut-legacy", "psdbench")}}
    # the built-ins alone have no duplicate
    assert discover(preload=False, only="psdbench").duplicates() == {}


def test_datasets_and_suites_of_two_distributions(site):
    reg = discover(preload=False)
    with pytest.raises(AmbiguousName, match=r"^dataset collection 'sklearn' is registered by 2 distributions "
                                            r"\(maxcut-legacy, psdbench\)"):
        reg.check_dataset("sklearn/wine")
    ds = reg.load_dataset("psdbench:sklearn/wine")
    assert ds.X.shape == (178, 13)  # scikit-learn's wine
    assert reg.load_dataset("psdbench:sklearn/wine:multiclass").y.max() == 2  # a view keeps its suffix
    assert reg.match_datasets("maxcut-legacy:sklearn/w*") == ["maxcut-legacy:sklearn/wine"]
    assert "legacy/tiny" in reg.dataset_names() and "maxcut-legacy:sklearn/wine" in reg.dataset_names()
    with pytest.raises(AmbiguousName, match="^suite 'maxcut-small' is registered by 2 distributions"):
        reg.read_suite("maxcut-small")
    assert reg.read_suite(f"{DIST}:maxcut-small")["problems"][0]["name"] == f"{DIST}:maxcut/sdp"
    assert "maxcut/sdp" in str(reg.read_suite("psdbench:maxcut-small")["problems"])
    assert reg.read_suite("legacy-small") == reg.read_suite(f"{DIST}:legacy-small")


def test_list_warns_and_info_refuses_the_bare_name(site):
    code, out, err = cli(["list"])
    assert code == 0
    lines = out.splitlines()
    assert "maxcut/sdp" not in [ln.split("\t")[0] for ln in lines]
    for name in ("maxcut-legacy:maxcut/sdp", "psdbench:maxcut/sdp", "maxcut-legacy:maxcut-mixing",
                 "psdbench:maxcut-mixing", "maxcut-legacy:maxcut-small", "psdbench:maxcut-small",
                 "maxcut-legacy:sklearn/wine", "legacy/only", "legacy/tiny", "gdpa-lp"):
        assert any(ln.split("\t")[0] == name for ln in lines), name
    warnings = [ln for ln in err.splitlines() if "distributions" in ln]
    assert sorted(warnings) == sorted(
        f"psdbench: warning: {what} {name!r} is registered by 2 distributions (maxcut-legacy, psdbench): "
        f"name one as DIST:NAME, maxcut-legacy:{name} or psdbench:{name}"
        for what, name in (("problem", "maxcut/sdp"), ("solver", "maxcut-mixing"), ("dataset", "sklearn"),
                           ("suite", "maxcut-small")))
    code, out, err = cli(["info", "maxcut/sdp"])
    assert code == 2 and out == "" and "registered by 2 distributions (maxcut-legacy, psdbench)" in err
    code, out, err = cli(["info", "maxcut-legacy:maxcut/sdp"])
    assert code == 0 and "family: legacy-maxcut" in out


def test_run_refuses_the_bare_name_and_runs_the_qualified_one(site, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    bare = work / "bare.toml"
    bare.write_text(GRID.format(problem="maxcut/sdp", solver="maxcut-legacy:maxcut-mixing"))
    db = work / "r.sqlite"
    # a grid naming the duplicated problem, the command line naming the duplicated solver, a suite that is
    # psdbench's and the outside one's: one line naming both distributions, exit 2, nothing written
    for args, what, name in ((("--grid", bare), "problem", "maxcut/sdp"),
                             (("--grid", bare, "-p", "maxcut-legacy:maxcut/sdp", "-s", "maxcut-mixing"),
                              "solver", "maxcut-mixing"),
                             (("--suite", "maxcut-small"), "suite", "maxcut-small"),
                             (("--suite", "psdbench:maxcut-small", "-s", "psdbench:maxcut-mixing"),
                              "problem", "maxcut/sdp")):
        res = _run("run", *args, "--db", db, "--report", "", cwd=work)
        assert res.returncode == 2 and res.stdout == "", res.stderr
        assert res.stderr.strip().splitlines() == [
            f"psdbench: error: {what} {name!r} is registered by 2 distributions (maxcut-legacy, psdbench): name one "
            f"as DIST:NAME, maxcut-legacy:{name} or psdbench:{name}"], res.stderr
        assert not db.exists()

    # -p DIST:NAME picks the grid's bare entry (its datasets and parameters) from that distribution
    res = _run("run", "--grid", bare, "-p", "maxcut-legacy:maxcut/sdp", "--db", db, "--report", "", "--quiet",
               cwd=work)
    assert res.returncode == 0, res.stderr
    # the outside distribution's suite names its plugins qualified
    res = _run("run", "--suite", "legacy-small", "--db", db, "--report", "", "--quiet", cwd=work)
    assert res.returncode == 0, res.stderr
    rows = Store(db).results_frame()
    assert len(rows) == 1  # the same cell: the suite and the selection name it alike, so it resumed
    row = rows.iloc[0]
    assert (row["problem"], row["solver"], row["dataset"], row["status"]) == (
        "maxcut-legacy:maxcut/sdp", "maxcut-legacy:maxcut-mixing", "legacy/tiny", "ok")
    # the legacy problem ran (the nearest unit-diagonal PSD matrix: its metric, not a cut)
    assert "distance" in row["metrics"] and row["instance_params"]["n"] == 6

    # unqualified names of plugins only one distribution registers run as before and are stored bare
    only = work / "only.toml"
    only.write_text(GRID.format(problem="legacy/only", solver="maxcut-legacy:maxcut-mixing"))
    res = _run("run", "--grid", only, "--db", db, "--report", "", "--quiet", cwd=work)
    assert res.returncode == 0, res.stderr
    assert "legacy/only" in set(Store(db).results_frame()["problem"])
