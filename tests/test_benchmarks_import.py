"""Every script and asv module under ``benchmarks/`` imports with the current package layout.

They are run by hand or by asv, never by the test command, so a moved module would otherwise go
unnoticed until someone measures.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("path", [p for p in BENCHMARKS if p.name != "__init__.py"], ids=lambda p: p.name)
def test_benchmark_module_imports(path):
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # module level only: no measurement runs
    assert module.__doc__, f"{path.name} has no docstring saying what it measures"


def _load(name):
    path = Path(__file__).resolve().parents[1] / "benchmarks" / f"{name}.py"
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
