"""asv for a plugin's repository (issue 39): ``psdbench asv init`` and the verdicts it gives.

The slow test follows ``docs/asv-plugin.md`` offline on the toy family (``tests/plugin_family``)
in a git repository of its own (``benchmarks/scripts/harness/asv_rates.py`` builds it): commit ``a``,
``b`` whose solver sleeps as long as it solves, ``c`` whose points leave the PSD cone, ``d``
whose solver raises.  asv's benchmarks import the psdbench installed in the environment that ran
``psdbench asv init`` (``PYTHONPATH`` does not reach them): run these with that of the tree under test.  Rates
(a 1.5x slowdown flagged, unchanged code not flagged) are measured by that script, not here.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from .test_cli_bad_input import cli

ROOT = Path(__file__).resolve().parents[1]


def _rates_script():
    spec = importlib.util.spec_from_file_location("asv_rates", ROOT / "benchmarks" / "scripts" / "harness" / "asv_rates.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _plugin_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "plugin"
    shutil.copytree(ROOT / "tests" / "plugin_family", repo, ignore=shutil.ignore_patterns("*.egg-info", "build"))
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


def test_asv_init_writes_the_configuration_and_the_stub(tmp_path):
    repo = _plugin_repo(tmp_path)
    code, out, err = cli(["asv", "init", repo, "--suite", "toy-suite"])
    assert code == 0, err
    conf = json.loads((repo / "asv.conf.json").read_text())
    assert conf["project"] == "psdbench-toyfamily" and conf["repo"] == "." and conf["benchmark_dir"] == "benchmarks"
    assert conf["environment_type"] == "virtualenv"
    offline = " ".join(conf["build_command"] + conf["install_command"])
    assert "PIP_NO_INDEX=1" in offline and "--no-build-isolation" in offline and "--no-deps" in offline
    assert "psdbench.asvbench.envlink {env_dir}" in offline
    stub = (repo / "benchmarks" / "bench_psdbench.py").read_text()
    assert "benchmarks_of(['toy-suite'])" in stub
    assert "pin_threads()" in (repo / "benchmarks" / "__init__.py").read_text()
    assert out.count("wrote ") == 3


@pytest.mark.parametrize("case, words", [("missing", "is not a folder"), ("no-git", "is not a git repository"),
                                         ("no-project", "has no [project] name"),
                                         ("exists", "exist(s): pass --force to overwrite")])
def test_asv_init_bad_input_is_one_line_and_writes_nothing(tmp_path, case, words):
    repo = _plugin_repo(tmp_path)
    if case == "missing":
        repo = tmp_path / "nowhere"
    elif case == "no-git":
        shutil.rmtree(repo / ".git")
    elif case == "no-project":
        (repo / "pyproject.toml").write_text("[build-system]\n")
    else:
        (repo / "asv.conf.json").write_text("{}  mine\n")
    code, out, err = cli(["asv", "init", repo])
    assert code == 2 and words in err and err.count("\n") == 1, err
    assert not (repo / "benchmarks").exists()
    if case == "exists":
        assert (repo / "asv.conf.json").read_text() == "{}  mine\n"  # never overwritten unasked
        code, _, err = cli(["asv", "init", repo, "--force"])
        assert code == 0 and json.loads((repo / "asv.conf.json").read_text())["project"] == "psdbench-toyfamily"


def test_each_suite_has_its_own_setup_cache_so_b_runs_only_its_suite():
    """asv keys a setup_cache by its module and first line: one key per tracked suite."""
    get_setup_cache_key = pytest.importorskip("asv_runner.benchmarks._base").get_setup_cache_key

    from psdbench.asvbench import suites

    keys = {name: get_setup_cache_key(getattr(suites, name).setup_cache)
            for name in suites.__all__ if name.endswith("Quality")}
    assert len(keys) >= 6 and len(set(keys.values())) == len(keys)
    assert all(k.startswith("asvbench.suites_cache.") for k in keys.values())
    # the function computes its own suite only
    fn = suites.Sdp_SdpGeneratedQuality.setup_cache
    assert inspect.getclosurevars(fn).nonlocals == {"suite": "sdp-generated"}


def test_benchmarks_of_a_plugin_stub_and_a_name_it_does_not_track():
    from psdbench.api import PsdbenchError
    from psdbench.asvbench.suites import benchmarks_of

    own = benchmarks_of(["sdp-generated"])
    assert set(own) == {"Sdp_SdpGenerated", "Sdp_SdpGeneratedQuality"}
    assert len(benchmarks_of(builtin=True)) >= 12
    with pytest.raises(PsdbenchError, match="no-such-suite"):
        benchmarks_of(["no-such-suite"])


def test_grid_and_the_tracked_values_import_one_way():
    """No circle: harness/grid/expand.py and harness/asvspec.py import neither asvbench/tracked.py nor
    anything of asvbench (a layer above the harness: tests/test_structure.py keeps the order)."""
    src = ROOT / "src" / "psdbench"
    for module in ("harness/grid/expand.py", "harness/asvspec.py"):
        tree = ast.parse((src / module).read_text())
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        assert not any("tracked" in m or m.startswith("psdbench.asvbench") for m in imported), module
    tracked = {n.module for n in ast.walk(ast.parse((src / "asvbench" / "tracked.py").read_text()))
               if isinstance(n, ast.ImportFrom) and n.module}
    assert {"psdbench.harness.asvspec", "psdbench.harness.grid.expand"} <= tracked


@pytest.mark.slow
def test_asv_continuous_names_a_slower_commit_and_prints_a_lost_value_as_a_regression(tmp_path):
    """Plain ``asv continuous a b`` exits 1 naming b's time_solve; ``asv continuous -e a c`` prints
    the table with c's lost gap as a regression and the line naming the failed check."""
    pytest.importorskip("asv", reason="asv is the bench extra (pip install -e '.[bench]'); .ci/run installs it")
    rates = _rates_script()
    commits = rates.make_repo(tmp_path)
    env = rates.asv_env(tmp_path)
    out = rates.continuous(tmp_path, env, commits["a"], commits["b"])
    assert rates.flagged(out), out.stdout[-3000:] + out.stderr[-2000:]
    assert "PERFORMANCE DECREASED" in out.stdout
    out = rates.continuous(tmp_path, env, commits["a"], commits["c"], "-e")
    text = out.stdout + out.stderr
    assert out.returncode == 1, text[-3000:]
    worse = [line for line in out.stdout.splitlines() if line.startswith("| +")]
    assert any("1e+12" in line and "ToyPsd_ToySuiteQuality.track_gap(" in line for line in worse), worse
    assert any("ToyPsd_ToySuiteQuality.track_unverified(" in line for line in worse), worse
    assert ("psdbench: lost gap: toy-altproj on toy/nearest-psd: toy/noisy-corr (n=40): seed 0: smallest "
            "eigenvalue of X = -0.01, needs >= -1e-07 (gap lost: 1 of 1 cells did not verify)") in text


@pytest.mark.slow
def test_asv_continuous_prints_its_table_for_a_commit_whose_solver_raises(tmp_path):
    """Commit d's solver raises: plain ``asv continuous a d`` prints the table (the lost gap a
    regression naming the configuration) and exits 1, not 2; ``psdbench asv continuous a d`` prints
    the same table, then each loss's one line (configuration, instance, the exception), exit 1."""
    pytest.importorskip("asv", reason="asv is the bench extra (pip install -e '.[bench]'); .ci/run installs it")
    import sys

    rates = _rates_script()
    commits = rates.make_repo(tmp_path)
    env = rates.asv_env(tmp_path)
    out = rates.continuous(tmp_path, env, commits["a"], commits["d"])
    text = out.stdout + out.stderr
    assert out.returncode == 1, text[-3000:]
    assert "BENCHMARKS HAVE CHANGED SIGNIFICANTLY" in out.stdout, text[-3000:]
    worse = [line for line in out.stdout.splitlines() if line.startswith("| +")]
    assert any("1e+12" in line and "ToyPsd_ToySuiteQuality.track_gap(" in line and "'toy-altproj'" in line
               for line in worse), worse
    assert "toy-altproj crashed on purpose" not in text  # without -e asv shows no benchmark's output
    wrapped = subprocess.run([sys.executable, "-c", "import sys; from psdbench.cli.commands import main; sys.exit(main())",
                              "asv", "continuous", commits["a"], commits["d"]], cwd=tmp_path / "repo", env=env,
                             capture_output=True, text=True, timeout=900)
    lines = wrapped.stdout.splitlines()
    assert wrapped.returncode == 1, (wrapped.stdout + wrapped.stderr)[-3000:]
    table = max(i for i, line in enumerate(lines) if line.startswith("| +"))
    after = lines[table + 1:]
    case = "toy-altproj on toy/nearest-psd: toy/noisy-corr (n=40): seed 0"
    assert f"psdbench: lost solve: {case}: raised RuntimeError: toy-altproj crashed on purpose" in after, after
    assert (f"psdbench: lost gap: {case}: RuntimeError: toy-altproj crashed on purpose "
            "(gap lost: 1 of 1 cells did not verify)") in after, after
    assert any(line.startswith(f"psdbench: 3 new and 0 standing losses at {commits['d'][:8]}") for line in after), after
