"""Outside result files (benchopt, asv) imported as dataset rows labelled "reported, not verified"
(:mod:`psdbench.publish.outside`): the mapping, stable keys, merge keeping them once, bad input."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from psdbench.api import DataError, PsdbenchError
from psdbench.publish.merge import merge_datasets
from psdbench.publish.outside import OUTCOME, import_results
from psdbench.publish.read import read_dataset, read_manifest

#: What benchopt's ``get_sys_info`` records with every row (``benchopt/utils/sys_info.py``).
SYS_INFO = {"env-OMP_NUM_THREADS": None, "platform": "Linux", "platform-architecture": "x86_64",
            "platform-release": "6.1.0", "platform-version": "#1 SMP", "system-cpus": 2,
            "system-processor": "Intel(R) Xeon(R) CPU", "system-ram (GB)": 8, "version-cuda": None,
            "version-numpy": "2.1.0", "version-numpy-libs": "blas=openblas, lapack=openblas",
            "version-scipy": "1.14.1", "benchmark-git-tag": None}
#: Solver -> (sampling strategy, stop values in the order benchopt's stopping criterion visits them).
SOLVERS = {"cd": ("Iteration", [0, 1, 2, 4, 8]), "ista[step=0.5]": ("Iteration", [0, 1, 3, 7]),
           "sklearn[tol]": ("Tolerance", [1.0, 0.1, 0.01, 0.001])}
DATASETS = {"Simulated[n_samples=50]": {"p_dataset_n_samples": 50}, "leukemia": {}}


def _value(solver: str, dataset: str, rep: int, stop: float, strategy: str) -> float:
    """A made-up objective: decreasing along the curve, different per cell."""
    progress = -math.log10(stop) if strategy == "Tolerance" else stop
    return 10.0 + len(solver) + len(dataset) / 10 + rep - progress


def benchopt_frame(old_names: bool = False) -> pd.DataFrame:
    """A benchopt results frame with benchopt's own columns (``_generate_runs.py`` meta, ``stop_val``,
    ``time``, ``objective_*``, sys info, ``run_date``), rows shuffled (file order is not trusted)."""
    rows = []
    for dataset, dparams in DATASETS.items():
        for solver, (strategy, stops) in SOLVERS.items():
            for rep in range(2):
                for i, stop in enumerate(stops):
                    rows.append({
                        "base_seed": 0, "objective_name": "Lasso[reg=0.1]", "obj_description": "Lasso",
                        "solver_name": solver, "solver_description": "", "dataset_name": dataset, "idx_rep": rep,
                        "sampling_strategy": strategy, "file_objective": "objective.py", "p_obj_reg": 0.1,
                        "file_solver": "solvers/s.py", "p_solver_step": 0.5 if solver.startswith("ista") else None,
                        "file_dataset": "datasets/d.py", **{"p_dataset_n_samples": None, **dparams},
                        "stop_val": stop, "time": 0.01 * (i + 1) + rep,
                        "objective_value": _value(solver, dataset, rep, stop, strategy),
                        "objective_support_size": 5 + i, **SYS_INFO, "run_date": "2026-07-01T12:00:00"})
    df = pd.DataFrame(rows).sample(frac=1.0, random_state=0).reset_index(drop=True)
    return df.rename(columns={"dataset_name": "data_name"}) if old_names else df


@pytest.fixture
def results(tmp_path) -> Path:
    path = tmp_path / "outputs" / "benchopt_run_2026-07-01_12h00m00.parquet"
    path.parent.mkdir()
    benchopt_frame().to_parquet(path, index=False)
    return path


def test_a_benchopt_file_becomes_each_curves_final_point_reported_not_verified(results, tmp_path):
    counts = import_results([results], "benchopt", tmp_path / "ds")
    n = len(DATASETS) * len(SOLVERS) * 2
    assert counts["cells"] == n and counts["runs"] == 1 and counts["left_out"] == len(benchopt_frame()) - n
    tables = read_dataset(tmp_path / "ds")
    cells, runs = tables["cells"], tables["runs"]
    assert len(cells) == n
    for r in cells.to_dict("records"):
        strategy, stops = SOLVERS[r["solver"]]
        final = min(stops) if strategy == "Tolerance" else max(stops)  # the last stop value visited
        assert r["problem"] == "benchopt/Lasso[reg=0.1]" and r["dataset"] in DATASETS and r["seed"] in (0, 1)
        assert r["objective"] == pytest.approx(_value(r["solver"], r["dataset"], r["seed"], final, strategy))
        assert r["wall_time_s"] == pytest.approx(0.01 * len(stops) + r["seed"])
        assert json.loads(r["metrics"])["stop_val"] == final and r["metric_support_size"] == 5 + len(stops) - 1
        assert r["iterations"] == final if strategy == "Iteration" else pd.isna(r["iterations"])
        inst = json.loads(r["instance_params"])
        assert inst["obj_reg"] == 0.1 and inst["base_seed"] == 0
        assert ("dataset_n_samples" in inst) == r["dataset"].startswith("Simulated")
        assert json.loads(r["solver_params"]) == ({"step": 0.5} if r["solver"].startswith("ista") else {})
        assert r["solver_label"] == r["solver"] and "benchopt" in r["message"] and results.name in r["message"]
    assert (cells["provenance"] == "benchopt").all() and (cells["status"] == "ok").all()
    assert (cells["outcome"] == OUTCOME).all() and (cells["reference_kind"] == "none").all()
    for col in ("feasible", "gap", "ranked_gap", "gap_abs", "gap_rel", "floor", "reference_objective"):
        assert cells[col].isna().all(), col  # nobody verified the point: no verdict, no gap
    assert cells["cell_key"].is_unique and cells["cell_id"].is_unique
    assert set(cells["run_id"]) == set(runs["run_id"]) and len(runs) == 1
    run = runs.iloc[0]
    assert run["command"] == f"imported from benchopt: {results.name}"
    machine, versions = json.loads(run["machine"]), json.loads(run["versions"])
    assert machine["system-processor"] == SYS_INFO["system-processor"] and machine["platform"] == "Linux"
    assert versions["numpy"] == "2.1.0" and versions["scipy"] == "1.14.1" and run["machine_fingerprint"]
    source = read_manifest(tmp_path / "ds")["source"]["imported"]
    import hashlib

    assert source == [{"path": str(results), "format": "benchopt",
                       "sha256": hashlib.sha256(results.read_bytes()).hexdigest()}]
    assert tables["references"].empty


def test_keys_are_stable_and_a_merge_keeps_a_file_imported_twice_once(results, tmp_path):
    import_results([results], "benchopt", tmp_path / "a")
    import_results([results, results], "benchopt", tmp_path / "b")  # the same file twice: read once
    a, b = read_dataset(tmp_path / "a")["cells"], read_dataset(tmp_path / "b")["cells"]
    for col in ("cell_key", "cell_id", "instance_key", "run_id"):
        assert list(a[col]) == list(b[col]), col
    info = merge_datasets([tmp_path / "a", tmp_path / "b"], tmp_path / "m")
    merged = read_dataset(tmp_path / "m")
    assert info["rows_in"]["cells"] == 2 * len(a) and len(merged["cells"]) == len(a) and len(merged["runs"]) == 1
    assert info["identical_rows_kept_once"]["cells"] == len(a) and not info["same_key_different_content"]
    assert (merged["cells"]["provenance"] == "benchopt").all()
    # a csv of benchopt before 1.8 (``data_name``) maps to the same cells, as another run
    csv = tmp_path / "old.csv"
    benchopt_frame(old_names=True).to_csv(csv, index=False)
    import_results([csv], "benchopt", tmp_path / "c")
    c = read_dataset(tmp_path / "c")["cells"]
    assert sorted(c["dataset"]) == sorted(a["dataset"]) and sorted(c["instance_key"]) == sorted(a["instance_key"])
    assert set(c["run_id"]).isdisjoint(a["run_id"])


def test_a_dataset_without_provenance_reads_and_merges_with_it_empty(results, tmp_path):
    import_results([results], "benchopt", tmp_path / "new")
    import_results([results], "benchopt", tmp_path / "old")
    cells_file = tmp_path / "old" / "cells.parquet"  # as a psdbench before the column wrote it
    cells = pd.read_parquet(cells_file).drop(columns=["provenance"])
    cells["cell_key"] = cells["cell_key"] + "-old"
    cells.to_parquet(cells_file, index=False)
    manifest = json.loads((tmp_path / "old" / "dataset.json").read_text())
    manifest["tables"]["cells"]["columns"] = [c for c in manifest["tables"]["cells"]["columns"] if c["name"] != "provenance"]
    (tmp_path / "old" / "dataset.json").write_text(json.dumps(manifest))
    assert "provenance" not in read_dataset(tmp_path / "old")["cells"].columns
    merge_datasets([tmp_path / "new", tmp_path / "old"], tmp_path / "m")
    merged = read_dataset(tmp_path / "m")["cells"]
    assert len(merged) == 2 * len(cells) and (merged["provenance"] == "benchopt").sum() == len(cells)
    assert merged["provenance"].isna().sum() == len(cells)  # typed_table fills the column the old one lacks


def _one_line_and_nothing_written(call, out: Path, match: str, exc: type = DataError) -> None:
    with pytest.raises(exc, match=match) as info:
        call()
    assert "\n" not in str(info.value) and str(info.value)
    assert not out.exists()


def test_bad_input_is_one_line_and_writes_nothing(results, tmp_path):
    out = tmp_path / "ds"
    _one_line_and_nothing_written(lambda: import_results([results], "nevergrad", out), out, "benchopt or asv")
    _one_line_and_nothing_written(lambda: import_results([tmp_path / "none.parquet"], "benchopt", out), out, "cannot read")
    _one_line_and_nothing_written(lambda: import_results([], "benchopt", out), out, "no benchopt results file")
    wrong = tmp_path / "wrong.parquet"
    benchopt_frame().drop(columns=["objective_value"]).to_parquet(wrong, index=False)
    _one_line_and_nothing_written(lambda: import_results([results, wrong], "benchopt", out), out, "objective_value")
    broken = tmp_path / "broken.parquet"
    broken.write_bytes(b"PAR1 not really")
    _one_line_and_nothing_written(lambda: import_results([broken], "benchopt", out), out, "not a readable benchopt")
    text = tmp_path / "r.json"
    text.write_text("{}")
    _one_line_and_nothing_written(lambda: import_results([text], "benchopt", out), out, "parquet or .csv")
    _one_line_and_nothing_written(lambda: import_results([results], "asv", out), out, "not an asv results file")
    bad_stop = tmp_path / "bad_stop.csv"
    benchopt_frame().assign(stop_val="soon").to_csv(bad_stop, index=False)
    _one_line_and_nothing_written(lambda: import_results([bad_stop], "benchopt", out), out, "stop_val")
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    with pytest.raises(PsdbenchError, match="not a psdbench dataset") as info:
        import_results([results], "benchopt", foreign)
    assert "\n" not in str(info.value) and sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]


# ------------------------------------------------------------------------------------------ asv
COMMIT = "0123456789abcdef0123456789abcdef01234567"
BENCHMARKS = {
    "bench_suites.Sdp.time_solve": {"name": "bench_suites.Sdp.time_solve", "type": "time", "unit": "seconds",
                                    "version": "v1", "param_names": ["instance_set", "configuration"],
                                    "params": [["'theta1'", "'theta2'"], ["'scs'", "'clarabel'"]]},
    "bench_suites.Sdp.peakmem_solve": {"name": "bench_suites.Sdp.peakmem_solve", "type": "peakmemory", "unit": "bytes",
                                       "version": "v1", "param_names": [], "params": []},
    "bench_kernels.time_eigh": {"name": "bench_kernels.time_eigh", "type": "time", "unit": "seconds", "version": "v2",
                                "param_names": ["n"], "params": [["100", "200"]]},
}
MACHINE = {"arch": "x86_64", "cpu": "Intel(R) Xeon(R) CPU", "machine": "box", "num_cpu": "2", "os": "Linux 6.1",
           "ram": "8000000000"}


def asv_results(root: Path) -> Path:
    """A results folder written by asv's own code (``asv.results.Results.save``, ``asv.util.write_json``);
    the test skips without asv (the ``bench`` extra, which ``.ci/run`` installs)."""
    import datetime

    pytest.importorskip("asv")

    from asv import util
    from asv.results import Results
    from asv.runner import BenchmarkResult

    util.write_json(root / "benchmarks.json", BENCHMARKS, api_version=2)
    util.write_json(root / "box" / "machine.json", MACHINE, api_version=1)
    res = Results({**MACHINE, "python": "3.11"}, {"numpy": ""}, COMMIT, 1700000000000, "3.11",
                  "virtualenv-py3.11", {})
    when = datetime.datetime(2026, 7, 1, tzinfo=datetime.timezone.utc)
    samples = [[0.10, 0.11, 0.12], [0.20, 0.21, 0.22], None, None]
    res.add_result(BENCHMARKS["bench_suites.Sdp.time_solve"],
                   BenchmarkResult(result=[0.11, 0.21, None, float("nan")], samples=samples, number=[1, 1, None, None],
                                   errcode=0, stderr="", profile=None), started_at=when, duration=3.0)
    res.add_result(BENCHMARKS["bench_suites.Sdp.peakmem_solve"],
                   BenchmarkResult(result=[1.5e8], samples=[None], number=[None], errcode=0, stderr="", profile=None),
                   started_at=when, duration=1.0)
    res.add_result(BENCHMARKS["bench_kernels.time_eigh"],
                   BenchmarkResult(result=[0.002, 0.009], samples=[[0.002] * 3, [0.009] * 3], number=[10, 10],
                                   errcode=0, stderr="", profile=None), started_at=when, duration=2.0)
    res.save(str(root))
    (path,) = [p for p in (root / "box").glob("*.json") if p.name != "machine.json"]
    return path


def test_asv_timings_become_rows_with_asvs_parameters_and_commit(tmp_path):
    path = asv_results(tmp_path / "results")
    counts = import_results([path, path.parent / "machine.json"], "asv", tmp_path / "ds")
    assert counts["cells"] == 6 and counts["left_out"] == 1  # peakmem: bytes of the process, no column
    tables = read_dataset(tmp_path / "ds")
    cells = tables["cells"].set_index("problem")
    solve = tables["cells"][tables["cells"]["problem"] == "asv/bench_suites.Sdp.time_solve"]
    params = [json.loads(p) for p in solve["instance_params"]]
    assert params == [{"instance_set": s, "configuration": c} for s in ("theta1", "theta2") for c in ("scs", "clarabel")]
    assert list(solve["status"]) == ["ok", "ok", "error", "skipped"]
    assert np.allclose(solve["wall_time_s"].to_numpy(float)[:2], [0.11, 0.21]) and solve["wall_time_s"].iloc[2:].isna().all()
    eigh = cells.loc["asv/bench_kernels.time_eigh"]
    assert [json.loads(p) for p in eigh["instance_params"]] == [{"n": 100}, {"n": 200}]
    assert np.allclose(eigh["wall_time_s"].to_numpy(float), [0.002, 0.009])
    assert (tables["cells"]["provenance"] == "asv").all() and tables["cells"]["objective"].isna().all()
    assert tables["cells"]["feasible"].isna().all() and tables["cells"]["gap"].isna().all()
    assert (tables["cells"]["solver_code"] == COMMIT).all() and (tables["cells"]["outcome"] == OUTCOME).all()
    run = tables["runs"].iloc[0]
    assert json.loads(run["machine"]) == MACHINE and json.loads(run["versions"])["commit_hash"] == COMMIT
    assert run["machine_fingerprint"] and run["started_at"].startswith("2026-07-01")
    import_results([path], "asv", tmp_path / "again")
    again = read_dataset(tmp_path / "again")["cells"]
    assert list(again["cell_key"]) == list(tables["cells"]["cell_key"])
    merge_datasets([tmp_path / "ds", tmp_path / "again"], tmp_path / "m")
    assert len(read_dataset(tmp_path / "m")["cells"]) == 6
    (tmp_path / "results" / "benchmarks.json").unlink()  # without it: asv's default names, kind by name
    import_results([path], "asv", tmp_path / "bare")
    bare = read_dataset(tmp_path / "bare")["cells"]
    assert len(bare) == 6 and {"param1": 100} in [json.loads(p) for p in bare["instance_params"]]


def test_asv_bad_input_is_one_line_and_writes_nothing(tmp_path):
    out = tmp_path / "ds"
    old = tmp_path / "05d283b9-py2.7.json"  # asv's results format version 1 (asv before 0.5)
    old.write_text(json.dumps({"commit_hash": COMMIT, "env_name": "py2.7", "params": {}, "results": {},
                               "result_columns": [], "version": 1}))
    _one_line_and_nothing_written(lambda: import_results([old], "asv", out), out, "format version 1")
    foreign = tmp_path / "x.json"
    foreign.write_text(json.dumps({"results": []}))
    _one_line_and_nothing_written(lambda: import_results([foreign], "asv", out), out, "not an asv results file")
    _one_line_and_nothing_written(lambda: import_results([tmp_path / "machine.json"], "asv", out), out, "no asv results")
    garbage = tmp_path / "y.json"
    garbage.write_bytes(b"\x00PAR1")
    _one_line_and_nothing_written(lambda: import_results([garbage], "asv", out), out, "not JSON")


def test_psdbenchs_own_export_is_labelled_psdbench(tmp_path):
    import psdbench
    from psdbench.harness.grid.inputs import ReadOnlyStore
    from psdbench.publish.export import dataset_tables

    grid = {"run": {"seeds": [0], "timeout": 600},
            "problems": [{"name": "graph-classification", "datasets": ["sklearn/breast-cancer"],
                          "params": {"n": [30], "graph": ["knn"], "k": [5]}}],
            "solvers": [{"name": "gdpa-lp"}]}
    psdbench.run(grid, db=tmp_path / "s.sqlite", jobs=1)
    cells = dataset_tables(ReadOnlyStore(tmp_path / "s.sqlite"))["cells"]
    assert len(cells) == 1 and (cells["provenance"] == "psdbench").all()
