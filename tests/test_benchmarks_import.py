"""Every script and asv module under ``benchmarks/`` imports with the current package layout.

They are run by hand or by asv, never by the test command, so a moved module would otherwise go
unnoticed until someone measures.  asv's package ``benchmarks`` holds the asv modules
(``bench_*.py``) and what they share (``instances.py``, ``cli_latency.py``); the one-off
measurement scripts behind the findings live in ``benchmarks/scripts/`` (no ``__init__.py``, so
asv's discovery, which walks packages only, never imports them).  The asv checks below read ``asv.conf.json`` and the modules as
asv's discovery does (no asv, no environment build, no network): asv imports every module of the
``benchmarks`` package, in an environment holding only psdbench's dependencies, and benchmarks
whatever carries a ``time_`` / ``timeraw_`` / ``mem_`` / ``peakmem_`` / ``track_`` prefix.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import json
import math
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = sorted((ROOT / "benchmarks").glob("*.py"))
SCRIPTS = sorted((ROOT / "benchmarks" / "scripts").rglob("*.py"))
ASV_PREFIX = re.compile(r"^(time|timeraw|mem|peakmem|track)_")
ASV_MODULES = [p for p in BENCHMARKS if p.name.startswith("bench_")]


@pytest.mark.parametrize("path", [p for p in BENCHMARKS + SCRIPTS if p.name != "__init__.py"], ids=lambda p: p.name)
def test_benchmark_module_imports(path):
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # module level only: no measurement runs
    assert module.__doc__, f"{path.name} has no docstring saying what it measures"


def _load(name):
    path, = (Path(__file__).resolve().parents[1] / "benchmarks" / "scripts").glob(f"*/{name}.py")
    spec = importlib.util.spec_from_file_location(f"bench_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_sdpmetric_speed_smoke(tmp_path, capsys):
    """``sdpmetric_speed.py table2`` end to end on a tiny Wine setting (40 training samples, short runs)."""
    pytest.importorskip("metric_learn")
    module = _load("sdpmetric_speed")
    out = tmp_path / "run.json"
    rc = module.main(["table2", "--datasets", "sklearn/wine:multiclass", "--seeds", "0", "--scaling", "standardize",
                      "--max-train", "40", "--C", "1", "--cbar", "10", "--max-iter", "50", "--lmnn-max-iter", "10",
                      "--json", str(out)])
    assert rc == 0
    text = capsys.readouterr().out
    assert "claim (a)" in text and "| C=1 |" in text and "| cbar=10 |" in text
    import json

    rows = json.loads(out.read_text())["summary"]
    assert {r["setting"] for r in rows} == {"C=1", "cbar=10"}
    assert all(r["C_S"] == [10.0] for r in rows if r["setting"] == "cbar=10")


def test_sdpmetric_speed_default_C_is_validate(capsys):
    """Without --C / --cbar the setting is C = 'validate'; a psdbench without it gives exit 2, not a crash."""
    module = _load("sdpmetric_speed")
    problem = module.discover().problem(module.PROBLEM)
    args = module._parser().parse_args(["table2"])
    if problem.params["C"].error("validate") is None:
        assert module.settings_of(args, problem) == [("C", "validate")]
        assert module.settings_of(module._parser().parse_args(["table2", "--cbar", "10"]), problem) == [("cbar", 10.0)]
    else:
        assert module.main(["table2", "--seeds", "0"]) == 2
        assert "give --C VALUE or --cbar VALUE" in capsys.readouterr().err


def test_dykstra_epoch_cost_smoke(capsys, tmp_path):
    """``dykstra_epoch_cost.py`` end to end on tiny sizes (n = 6, 12; K = 4; one epoch)."""
    module = _load("dykstra_epoch_cost")
    out = tmp_path / "cost.json"
    assert module.main(["--sizes", "6", "12", "--K", "4", "--epochs", "1", "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "| 6 | 1 |" in text and "| 12 | 1 |" in text and "log-log slope" in text
    import json

    rec = json.loads(out.read_text())
    assert [r["n"] for r in rec["rows"]] == [6, 12] and all(r["per_epoch_s"] > 0 for r in rec["rows"])
    assert abs(module.loglog_slope([10, 20, 40], [1.0, 8.0, 64.0]) - 3.0) < 1e-12


def test_dykstra_vs_itml_smoke(capsys):
    """``dykstra_vs_itml.py`` on iris with 5 pairs per class: both reach the certified optimum to 1e-4."""
    from psdbench.solvers.metric_learn import import_metric_learn

    if import_metric_learn() is None:
        pytest.skip("metric-learn not installed")
    module = _load("dykstra_vs_itml")
    r = module.compare("sklearn/iris:multiclass", 5, 1e-3, 1e-4)
    assert r["exact"] is True and r["interval"] <= 1e-6 * max(1.0, abs(r["reference"]))
    assert r["dykstra_s"] > 0 and r["dykstra_final_gap"] <= 1e-4
    tol, t, gap = r["itml"][-1]
    assert gap <= 1e-4 and t > 0


# --- asv -----------------------------------------------------------------------------------------


def _asv_conf() -> dict:
    text = (ROOT / "asv.conf.json").read_text()
    return json.loads(re.sub(r"(?m)^\s*//.*$", "", text))  # asv also accepts // comment lines


def test_asv_conf():
    """The configuration parses and points at this layout; what asv writes is git-ignored."""
    conf = _asv_conf()
    assert conf["repo"] == "." and conf["branches"] == ["main"] and conf["dvcs"] == "git"
    assert (ROOT / conf["benchmark_dir"] / "__init__.py").is_file()
    assert conf["environment_type"] == "virtualenv"
    assert any("{build_cache_dir}" in c for c in conf["build_command"])
    assert any("{wheel_file}" in c for c in conf["install_command"])
    ignored = (ROOT / ".gitignore").read_text().split()
    assert ".asv/" in ignored
    for key in ("env_dir", "results_dir", "html_dir"):
        assert conf[key].startswith(".asv/"), key


def _module(path: Path):
    """``benchmarks.<stem>``: the name asv imports it by."""
    return importlib.import_module(f"benchmarks.{path.stem}")


def _asv_names(module) -> list[str]:
    """What asv's discovery would benchmark in ``module``: prefixed functions, prefixed methods of public classes."""
    names = []
    for attr, value in vars(module).items():
        if attr.startswith("_"):
            continue
        if inspect.isclass(value) and not inspect.isabstract(value):
            names += [f"{attr}.{m}" for m, f in inspect.getmembers(value, inspect.isfunction) if ASV_PREFIX.match(m)]
        elif inspect.isfunction(value) and ASV_PREFIX.match(attr):
            names.append(attr)
    return names


@pytest.mark.parametrize("path", ASV_MODULES, ids=lambda p: p.name)
def test_asv_module_benchmarks(path):
    """Each class of an asv module has benchmarks, and its params fit its methods' signatures."""
    module = _module(path)
    classes = [c for n, c in inspect.getmembers(module, inspect.isclass)
               if c.__module__ in (module.__name__, "psdbench.asvbench.suites")]  # bench_suites re-exports the shipped ones
    assert classes, f"{path.name} defines no benchmark class"
    for cls in classes:
        methods = [m for m, _ in inspect.getmembers(cls, inspect.isfunction) if ASV_PREFIX.match(m)]
        assert methods, f"{cls.__name__} has no time_/track_/peakmem_ method: asv would skip it"
        params = getattr(cls, "params", [])
        names = getattr(cls, "param_names", [])
        assert len(params) == len(names), f"{cls.__name__}: params and param_names differ in length"
        cached = 1 if hasattr(cls, "setup_cache") else 0  # asv passes setup_cache's value first
        for m in methods + [m for m in ("setup", "teardown") if hasattr(cls, m)]:
            n_args = len(inspect.signature(getattr(cls, m)).parameters) - 1  # self
            assert n_args == len(names) + cached, \
                f"{cls.__name__}.{m} takes {n_args} arguments, params has {len(names)}"


@pytest.mark.parametrize("path", [p for p in BENCHMARKS if p not in ASV_MODULES and p.name != "__init__.py"],
                         ids=lambda p: p.name)
def test_shared_modules_hold_no_asv_benchmark(path):
    """asv imports every module of its package: a prefixed name there would be benchmarked by every ``asv run``."""
    assert _asv_names(_module(path)) == []


def test_asv_never_imports_the_scripts():
    """The one-off scripts are outside asv's package: ``benchmarks/scripts`` is no package, so
    asv's discovery (``pkgutil.iter_modules`` over the package, recursively) does not list it."""
    import pkgutil

    import benchmarks

    assert not list((ROOT / "benchmarks" / "scripts").rglob("__init__.py"))
    listed = {name for _, name, _ in pkgutil.iter_modules(benchmarks.__path__)}
    assert "scripts" not in listed and not listed & {p.stem for p in SCRIPTS}
    assert len(SCRIPTS) >= 18 and len(BENCHMARKS) <= 9


def _top_level_imports(path: Path) -> set[str]:
    """Top-level package names imported when the module loads (imports inside functions excluded)."""
    out = set()
    for node in ast.parse(path.read_text()).body:
        nodes = [node]
        if isinstance(node, (ast.If, ast.Try)):
            nodes = list(ast.walk(node))
        for n in nodes:
            if isinstance(n, ast.Import):
                out |= {a.name.split(".")[0] for a in n.names}
            elif isinstance(n, ast.ImportFrom) and n.level == 0 and n.module:
                out.add(n.module.split(".")[0])
    return out


def _canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_benchmark_modules_import_only_dependencies():
    """asv's environments hold psdbench and its dependencies only: a module-level import of anything
    else (pytest, an optional extra) fails asv's discovery, and with it every benchmark."""
    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    allowed_dists = {_canonical(re.match(r"[A-Za-z0-9_.-]+", d).group(0)) for d in deps}
    dist_of = packages_distributions()
    bad = {}
    for path in BENCHMARKS + SCRIPTS:
        for name in _top_level_imports(path):
            if name in sys.stdlib_module_names or name in ("psdbench", "benchmarks", "__future__"):
                continue
            if not {_canonical(d) for d in dist_of.get(name, [])} & allowed_dists:
                bad.setdefault(path.name, []).append(name)
    assert bad == {}, f"module-level imports outside pyproject's dependencies: {bad}"


def test_benchmarks_package_pins_blas_threads():
    """Importing ``benchmarks`` before NumPy (as asv does) leaves every BLAS / OpenMP pool at one thread."""
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")}
    code = ("import benchmarks, numpy, scipy.linalg; from threadpoolctl import threadpool_info; "
            "print(max(p['num_threads'] for p in threadpool_info()))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "1"


def test_data_benchmark_skips_without_data(monkeypatch):
    """Without ``PSDBENCH_DATA`` the cod-rna benchmark's setup raises NotImplementedError: asv's skip."""
    monkeypatch.delenv("PSDBENCH_DATA", raising=False)
    bench = importlib.import_module("benchmarks.bench_gdpa_scaling").GdpaCodRna10k()
    with pytest.raises(NotImplementedError, match="PSDBENCH_DATA"):
        bench.setup()
    bench.teardown()  # asv tears down after a skipping setup too


def test_docs_document_asv_workflow():
    """docs/benchmarks.md's asv section gives the commands a fresh clone needs and names every asv
    class; the README's tour shows the first ones and links to it."""
    page = (ROOT / "docs" / "benchmarks.md").read_text()
    section = page.split("\n## asv\n", 1)[1].split("\n## ", 1)[0]
    for command in ("install -e '.[bench]'", "asv machine --yes", "asv run --quick", "HEAD^!",
                    "--python=same", "--set-commit-hash", "asv continuous", "asv compare", "asv publish"):
        assert command in section, f"docs/benchmarks.md's asv section lacks {command!r}"
    readme = (ROOT / "README.md").read_text()
    assert "docs/benchmarks.md" in readme and "asv machine --yes" in readme and "asv continuous" in readme
    assert "`<Family>_<Suite>.time_solve`" in section and "`<Family>_<Suite>Quality.track_gap`" in section
    for path in ASV_MODULES:
        module = _module(path)
        for name, cls in inspect.getmembers(module, inspect.isclass):
            # bench_suites' classes are made per tracked suite (named by the pattern above)
            if cls.__module__ == module.__name__ and not name.startswith("_") and not getattr(cls, "suite", ""):
                assert f"`{name}`" in section, f"docs/benchmarks.md's asv section does not name {name}"


#: Every built-in family and the suite asv tracks it by (its ``[asv]`` table).
TRACKED_FAMILIES = {"graph-classification": "gdpa-wdbc-small", "mahalanobis": "sgml-objective-small",
                    "signed-graph": "signed-graph-small", "sdpmetric": "sdpmetric-small",
                    "bregman-dykstra": "dykstra-small", "sdp": "sdp-generated"}


def test_every_family_is_tracked_by_asv_from_its_suites():
    """bench_suites makes a solves class and a quality class for each family's tracked suite, with
    one parameter pair per instance set and solver configuration the suite runs (at asv's seeds)."""
    module = _module(ROOT / "benchmarks" / "bench_suites.py")
    families = {case.family: case.suite for _, (*_, cases) in module.TRACKED.items() for case in cases.values()}
    assert {f: families.get(f) for f in TRACKED_FAMILIES} == TRACKED_FAMILIES
    for name, (suite, _, _, _, cases) in module.TRACKED.items():
        solves, quality = getattr(module, name), getattr(module, name + "Quality")
        assert solves.suite == quality.suite == suite and set(cases) <= {
            (s, c) for s in solves.params[0] for c in solves.params[1]}
        assert all(len({cell[3] for cell in case.cells}) == 1 for case in cases.values())  # seed 0 only
    gc = module.TRACKED["GraphClassification_GdpaWdbcSmall"]
    assert gc[2:4] == ("error_rate", 0.0) and sorted(c for _, c in gc[4]) == ["gdpa-lp", "gdpa-lp-elim",
                                                                              "scs (formulation=reduced)"]
    # the larger-is-better metrics are tracked as their distance from 1 (their [asv] metric_best)
    assert module.TRACKED["SignedGraph_SignedGraphSmall"][2:4] == ("f_measure", 1.0)
    assert module.TRACKED["Mahalanobis_SgmlObjectiveSmall"][2:4] == ("verify_balanced", 1.0)
    quality = module.SignedGraph_SignedGraphSmallQuality
    assert quality.track_metric_from_best.unit == "|f_measure - 1| (0: its best; 1e12: lost)"
    assert not hasattr(module.BregmanDykstra_DykstraSmallQuality, "track_metric_from_best")  # no metric declared


def _summary(**values):
    base = {"gap": 1e-8, "unverified": 0.0, "metric": 0.9, "metric_from_best": 0.1, "cells": 1.0,
            "no_reference": 0.0, "beyond_bound": 0.0, "metric_missing": 0.0, "skipped": 0.0, "iterations": 12.0,
            "no_point": 0.0, "why": ""}
    return {**base, **values}


def test_a_lost_gap_is_a_value_above_any_cost_with_its_reason_in_one_line(capsys):
    """What asv records for a signed-graph case: the values of a healthy run, LOST (a value, so
    asv prints its table and flags the rise) with a one-line reason naming configuration, instance
    and failed check when the point stops verifying, and a larger value when the F-measure drops."""
    from psdbench.asvbench.tracked import LOST

    module = _module(ROOT / "benchmarks" / "bench_suites.py")
    cls = module.SignedGraph_SignedGraphSmallQuality
    key = next(iter(cls.cases))
    bench = cls()

    def measured(**values):
        return {"SignedGraph_SignedGraphSmall": {key: _summary(**values)}}

    healthy = measured()
    bench.setup(healthy, *key)
    assert bench.track_gap(healthy, *key) == 1e-8 and bench.track_unverified(healthy, *key) == 0.0
    assert bench.track_metric_from_best(healthy, *key) == 0.1
    assert bench.track_iterations(healthy, *key) == 12.0
    capsys.readouterr()
    lost = measured(gap=math.nan, unverified=1.0, metric_from_best=0.4,  # the point no longer verifies
                    why="seed 0: F-check = 0.3, needs <= 0.1")
    assert bench.track_gap(lost, *key) == LOST and LOST > 1e9
    assert capsys.readouterr().err == (f"psdbench: lost gap: {key[1]} on {key[0]}: seed 0: F-check = 0.3, needs "
                                       "<= 0.1 (gap lost: 1 of 1 cells did not verify)\n")
    assert bench.track_unverified(lost, *key) == 1.0 and bench.track_metric_from_best(lost, *key) == 0.4
    assert bench.track_gap(measured(gap=math.nan, no_reference=1.0), *key) == LOST
    assert "gap lost: 1 of 1 cells have no reference" in capsys.readouterr().err
    assert math.isnan(bench.track_iterations(measured(iterations=math.nan), *key))  # n/a: no work reported
    with pytest.raises(NotImplementedError, match="every cell of this case was skipped"):  # asv's skip: n/a
        bench.setup(measured(skipped=1.0), *key)


@pytest.mark.parametrize("table, words", [("bogus = 1", "[asv] must be a table of metric, metric_best, seeds"),
                                          ("seeds = []", "[asv] seeds must be a non-empty list"),
                                          ("metric = 3", "[asv] metric must be the name of a metric"),
                                          ('metric = "accuracy"\nmetric_best = "1"',
                                           "[asv] metric_best must be a finite number (the metric's best value), "
                                           "not '1'")])
def test_a_malformed_asv_table_is_a_one_line_error_at_load(tmp_path, table, words):
    from psdbench.api import PsdbenchError
    from psdbench.session import prepare

    grid = (f"[run]\nseeds = [0]\n\n[asv]\n{table}\n\n[[problems]]\nname = \"graph-classification\"\n"
            "datasets = [\"sklearn/breast-cancer\"]\nparams = { n = [20] }\n\n[[solvers]]\nname = \"gdpa-lp\"\n")
    (tmp_path / "g.toml").write_text(grid)
    with pytest.raises(PsdbenchError, match=re.escape(words)):
        prepare(tmp_path / "g.toml", db=tmp_path / "s.sqlite")
    assert not (tmp_path / "s.sqlite").exists()
