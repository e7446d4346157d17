"""``psdbench export``: a store as a results dataset that pandas reads without psdbench, whose rows
are the store's and the report's (nothing lost, nothing recomputed differently), with its schema
on ``docs/dataset.md``; bad input is one line and exit 2 before anything is written."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import psdbench
from psdbench.harness.grid.inputs import ReadOnlyStore
from psdbench.publish.export import dataset_tables, export_dataset
from psdbench.publish.read import read_dataset, read_manifest
from psdbench.publish.schema import SCHEMA_VERSION, TABLES
from psdbench.report import write_report

from .test_cli_bad_input import cli

ROOT = Path(__file__).resolve().parents[1]
#: Two solvers on one certified instance (its reference is a certified interval), one rejected
#: point at a loose tolerance: rows of every kind the dataset must carry.
GRID = {"run": {"seeds": [0, 1], "timeout": 600},
        "problems": [{"name": "graph-classification", "datasets": ["sklearn/breast-cancer"],
                      "params": {"n": [30], "graph": ["knn"], "k": [5]}}],
        "solvers": [{"name": "gdpa-lp"}, {"name": "scs", "params": {"eps_abs": [1e-3]}}]}


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    d = tmp_path_factory.mktemp("pub")
    psdbench.run(GRID, db=d / "s.sqlite", jobs=1, save_solutions=True)
    return d / "s.sqlite"


def test_every_cell_of_the_store_is_a_row_with_the_stores_numbers(store, tmp_path):
    paths = export_dataset(ReadOnlyStore(store), tmp_path / "ds")
    tables = read_dataset(tmp_path / "ds")
    cells, direct = tables["cells"], psdbench.load(store)
    assert len(cells) == len(direct) == 4 and set(cells["cell_key"]) == set(direct["cell_key"])
    merged = cells.merge(direct, on="cell_key", suffixes=("", "_store"))
    for col in ("objective", "wall_time_s", "gap_abs", "gap_rel", "reference_objective"):
        a, b = merged[col].to_numpy(float), pd.to_numeric(merged[f"{col}_store"]).to_numpy(float)
        assert np.array_equal(np.isnan(a), np.isnan(b)) and np.allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=0, atol=0)
    assert (merged["status"] == merged["status_store"]).all()
    assert set(tables["references"]["instance_key"]) == set(cells["instance_key"])
    assert set(tables["runs"]["run_id"]) == set(cells["run_id"])
    assert paths["manifest"].name == "dataset.json" and (tmp_path / "ds" / ".psdbench-dataset").is_file()


def test_the_ranked_columns_are_the_reports_own(store, tmp_path):
    """gap, floor, ranked_gap, outcome and the reference's accuracy equal the report's results.csv."""
    write_report(ReadOnlyStore(store), tmp_path / "rep")
    report = pd.read_csv(tmp_path / "rep" / "results.csv")
    cells = dataset_tables(ReadOnlyStore(store))["cells"]
    m = cells.merge(report, on="cell_key", suffixes=("", "_report"))
    assert len(m) == len(cells)
    for col in ("gap", "floor", "ranked_gap", "known_to"):
        a, b = m[col].to_numpy(float), m[f"{col}_report"].to_numpy(float)
        assert np.array_equal(np.isnan(a), np.isnan(b)) and np.allclose(a[~np.isnan(a)], b[~np.isnan(b)], rtol=1e-12)
    assert (m["outcome"].astype(str) == m["outcome_report"].astype(str)).all()
    # the certified reference's interval travels with the row: lower <= value, accuracy its width
    ref = m[m["reference_kind"] == "certified"]
    assert len(ref) and (ref["reference_lower"] <= ref["reference_objective"] + 1e-12).all()


def test_a_reader_without_psdbench_reads_it(store, tmp_path):
    export_dataset(ReadOnlyStore(store), tmp_path / "ds")
    code = ("import sys, json; sys.modules['psdbench'] = None\n"  # importing psdbench would fail
            "import pandas as pd\n"
            f"d = {str(tmp_path / 'ds')!r}\n"
            "m = json.load(open(d + '/dataset.json'))\n"
            "c = pd.read_parquet(d + '/' + m['tables']['cells']['file'])\n"
            "assert len(c) == m['tables']['cells']['rows']\n"
            "print(m['schema_version'], len(c), c['ranked_gap'].dtype, c['seed'].dtype)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [str(SCHEMA_VERSION), "4", "float64", "Int64"]


def test_chosen_runs_only_and_the_manifest_describes_every_column(store, tmp_path):
    second = psdbench.run({**GRID, "solvers": [{"name": "gdpa-lp"}]}, db=store.parent / "two.sqlite", jobs=1)
    run_id = second["run_id"].iloc[0]
    tables = dataset_tables(ReadOnlyStore(store.parent / "two.sqlite"), runs=[run_id])
    assert set(tables["cells"]["run_id"]) == {run_id} and list(tables["runs"]["run_id"]) == [run_id]
    export_dataset(ReadOnlyStore(store), tmp_path / "ds")
    manifest = read_manifest(tmp_path / "ds")
    for name, (_, cols) in TABLES.items():
        described = manifest["tables"][name]["columns"]  # in the table's order
        assert [c.name for c in cols] == [d["name"] for d in described][:len(cols)]
        assert all(d["doc"] and d["type"] for d in described)
    metric_cols = [d["name"] for d in manifest["tables"]["cells"]["columns"] if d["name"].startswith("metric_")]
    assert "metric_error_rate" in metric_cols  # the family's task metric travels as a number


def test_each_run_carries_its_fingerprint_and_environment(store, tmp_path):
    """The runs table lifts the machine class and the environment hash out of the machine record;
    both recomputed here from what the row itself lists."""
    import hashlib

    runs = dataset_tables(ReadOnlyStore(store))["runs"]
    assert len(runs) == 1
    machine = json.loads(runs["machine"].iloc[0])
    dists = machine["environment"]["distributions"]
    assert {"numpy", "scipy", "psdbench"} <= set(dists)
    lines = "\n".join(f"{k}=={v}" for k, v in sorted(dists.items()))
    assert runs["environment_hash"].iloc[0] == hashlib.sha256(lines.encode()).hexdigest()[:20]
    cls = {k: machine.get(k) for k in ("processor", "cpus", "memory_gb", "system", "architecture")}
    assert runs["machine_fingerprint"].iloc[0] == hashlib.sha256(json.dumps(cls, sort_keys=True).encode()).hexdigest()[:16]
    pools = json.loads(runs["threads"].iloc[0])["pools"]
    assert any(p.get("user_api") == "blas" and p.get("filepath") for p in pools)  # which BLAS build ran


def test_a_run_times_the_calibration_kernels_and_the_dataset_holds_them_as_rows(tmp_path, monkeypatch):
    from psdbench.harness.calibration import KERNELS

    monkeypatch.setenv("PSDBENCH_CALIBRATION", "on")
    psdbench.run({**GRID, "run": {"seeds": [0], "timeout": 600, "reference": False},
                  "solvers": [{"name": "gdpa-lp"}]}, db=tmp_path / "c.sqlite", jobs=1)
    tables = dataset_tables(ReadOnlyStore(tmp_path / "c.sqlite"))
    cal, runs = tables["calibration"], tables["runs"]
    assert list(cal["kernel"]) == [k[0] for k in KERNELS] and set(cal["run_id"]) == set(runs["run_id"])
    assert (cal["machine_fingerprint"] == runs["machine_fingerprint"].iloc[0]).all()
    assert ((0 < cal["min_s"]) & (cal["min_s"] <= cal["median_s"]) & (cal["median_s"] <= cal["max_s"])).all()
    assert (cal["repeats"] == 5).all()


def test_the_calibration_kernels_compute_what_they_say():
    """Each kernel does its real work (checked against an independent computation), so its time
    measures that work."""
    import scipy.sparse as sp

    from psdbench.harness.calibration import KERNELS

    built = {name: (size, build(size)) for name, size, build in KERNELS}
    n, mm = built["matmul"]
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    assert np.allclose(mm(), np.einsum("ij,jk->ik", a, b))
    n, eig = built["eigh"]
    w, v = eig()
    m = np.random.default_rng(1).standard_normal((n, n))
    assert np.allclose((m + m.T) @ v, v * w, atol=1e-8)
    side, solve = built["sparse_solve"]
    x = solve()
    t = sp.diags([-1.0, 2.0, -1.0], [-1, 0, 1], shape=(side, side))
    lap = sp.kron(sp.eye(side), t) + sp.kron(t, sp.eye(side))
    rhs = np.random.default_rng(2).standard_normal(side * side)
    assert np.linalg.norm(lap @ x - rhs) <= 1e-10 * np.linalg.norm(rhs)
    size, loop = built["interpreter"]
    assert loop() == sum(i * i % 7 for i in range(size))


def test_the_schema_page_lists_every_column():
    import importlib.util

    spec = importlib.util.spec_from_file_location("gen_dataset_page", ROOT / "docs" / "gen_dataset_page.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.main(["--check"]) == 0, "run: python docs/gen_dataset_page.py"
    page = (ROOT / "docs" / "dataset.md").read_text()
    for name, (file, cols) in TABLES.items():
        assert f"`{file}`" in page
        for c in cols:
            assert f"| `{c.name}` | {c.type} | {c.doc} |" in page, (name, c.name)
    assert f"schema version {SCHEMA_VERSION}" in page


def test_bad_input_is_one_line_and_exit_2_and_writes_nothing(store, tmp_path):
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    code, out, err = cli(["export", "--db", store, "--out", foreign])
    assert code == 2 and err.count("\n") == 1 and "not a psdbench dataset" in err
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    code, out, err = cli(["export", "--db", store, "--run", "no-such-run", "--out", tmp_path / "ds"])
    assert code == 2 and "no-such-run" in err and not (tmp_path / "ds").exists()
    code, out, err = cli(["export", "--db", tmp_path / "none.sqlite", "--out", tmp_path / "ds"])
    assert code == 2 and not (tmp_path / "ds").exists() and not (tmp_path / "none.sqlite").exists()
    (tmp_path / "newer").mkdir()
    (tmp_path / "newer" / "dataset.json").write_text(json.dumps({"format": "psdbench-dataset", "schema_version": 99}))
    with pytest.raises(Exception, match="schema version 99"):
        read_manifest(tmp_path / "newer")


def test_export_replaces_its_own_dataset_whole(store, tmp_path):
    code, out, err = cli(["export", "--db", store, "--out", tmp_path / "ds"])
    assert code == 0 and "4 cells" in out
    before = (tmp_path / "ds" / "cells.parquet").read_bytes()
    code, out, err = cli(["export", "--db", store, "--out", tmp_path / "ds"])
    assert code == 0 and sorted(p.name for p in (tmp_path / "ds").iterdir()) == [
        ".psdbench-dataset", "calibration.parquet", "cells.parquet", "dataset.json", "points", "references.parquet",
        "runs.parquet"]
    assert pd.read_parquet(tmp_path / "ds" / "cells.parquet").shape == pd.read_parquet(pd.io.common.BytesIO(before)).shape


def _copy(src: Path, dst: Path) -> Path:
    import shutil

    shutil.copytree(src, dst)
    return dst


def test_verify_reproduces_every_row_and_its_certified_reference(store, tmp_path):
    from psdbench.publish.verify import verify_dataset

    export_dataset(ReadOnlyStore(store), tmp_path / "ds")
    cells = read_dataset(tmp_path / "ds")["cells"]
    assert cells["point"].notna().all()  # every cell saved its point; all are small
    checked, findings = verify_dataset(tmp_path / "ds", references=True)
    refs = read_dataset(tmp_path / "ds")["references"]
    assert checked == len(cells) + int((refs["kind"] == "certified").sum()) and findings == []
    code, out, err = cli(["verify", tmp_path / "ds"])
    assert code == 0 and "all reproduce" in out


def test_verify_finds_an_edited_objective_and_an_edited_point(store, tmp_path):
    import hashlib

    from psdbench.publish.verify import verify_dataset

    ds = tmp_path / "ds"
    export_dataset(ReadOnlyStore(store), ds)
    # 1. an objective edited in the table
    edited = _copy(ds, tmp_path / "objective")
    cells = pd.read_parquet(edited / "cells.parquet")
    target = cells.index[cells["feasible"] == 1][0]
    cells.loc[target, "objective"] = cells.loc[target, "objective"] * (1 - 1e-3)
    cells.to_parquet(edited / "cells.parquet", index=False)
    _, findings = verify_dataset(edited)
    assert [f.key for f in findings] == [cells.loc[target, "cell_key"]] and "objective" in findings[0].what
    # 2. a point's bytes changed under its name: its hash no longer matches
    damaged = _copy(ds, tmp_path / "damaged")
    point = damaged / cells.loc[target, "point"]
    point.write_bytes(point.read_bytes()[:-8] + b"\0" * 8)
    _, findings = verify_dataset(damaged)
    assert any("SHA-256" in f.what for f in findings)
    # 3. a point replaced and re-hashed consistently: the recomputed objective gives it away
    swapped = _copy(ds, tmp_path / "swapped")
    rel = cells.loc[target, "point"]
    with np.load(swapped / rel) as z:
        variables = {k: z[k] * 1.01 for k in z.files}  # a scaled point: another objective
    buf = pd.io.common.BytesIO()
    np.savez(buf, **variables)
    data = buf.getvalue()
    h = hashlib.sha256(data).hexdigest()
    (swapped / f"points/{h}.npz").write_bytes(data)
    table = pd.read_parquet(swapped / "cells.parquet")
    table.loc[target, "point"], table.loc[target, "point_sha256"] = f"points/{h}.npz", h
    table.to_parquet(swapped / "cells.parquet", index=False)
    _, findings = verify_dataset(swapped)
    assert findings and all(f.key == cells.loc[target, "cell_key"] for f in findings)
    assert any(w in f.what for f in findings for w in ("objective", "verification"))
    code, out, err = cli(["verify", swapped])
    assert code == 4 and "do not reproduce" in out


def test_verify_of_a_folder_that_is_no_dataset_is_exit_2(tmp_path):
    code, out, err = cli(["verify", tmp_path])
    assert code == 2 and err.count("\n") == 1 and "dataset.json" in err


def test_merge_keeps_every_measurement_once_and_counts_rows_in_and_out(store, tmp_path):
    from psdbench.publish.merge import merge_datasets
    from psdbench.publish.verify import verify_dataset

    export_dataset(ReadOnlyStore(store), tmp_path / "a")
    psdbench.run({**GRID, "solvers": [{"name": "gdpa-lp"}]}, db=tmp_path / "b.sqlite", jobs=1, save_solutions=True)
    export_dataset(ReadOnlyStore(tmp_path / "b.sqlite"), tmp_path / "b")
    a, b = read_dataset(tmp_path / "a"), read_dataset(tmp_path / "b")
    info = merge_datasets([tmp_path / "a", tmp_path / "b", tmp_path / "a"], tmp_path / "m")
    m = read_dataset(tmp_path / "m")
    # a third source that repeats the first adds nothing; the second's rows are other runs: all kept
    assert info["rows_in"]["cells"] == 2 * len(a["cells"]) + len(b["cells"])
    assert len(m["cells"]) == info["rows_out"]["cells"] == len(a["cells"]) + len(b["cells"])
    assert info["identical_rows_kept_once"]["cells"] == len(a["cells"])
    assert set(m["runs"]["run_id"]) == set(a["runs"]["run_id"]) | set(b["runs"]["run_id"])
    assert info["reference_disagreements"] == [] and info["same_key_different_content"] == {}
    checked, findings = verify_dataset(tmp_path / "m")  # the points came along
    assert checked == len(m["cells"]) and findings == []


def test_merge_reports_references_that_disagree_and_rows_that_differ_under_one_key(store, tmp_path):
    from psdbench.publish.merge import merge_datasets

    export_dataset(ReadOnlyStore(store), tmp_path / "a")
    b = _copy(tmp_path / "a", tmp_path / "b")
    refs = pd.read_parquet(b / "references.parquet")
    i = refs.index[refs["kind"] == "certified"][0]
    width = max(1.0, abs(refs.loc[i, "value"])) * 1e-3
    refs.loc[i, ["value", "lower"]] = refs.loc[i, "value"] + 10 * width, refs.loc[i, "value"] + 9 * width
    refs.to_parquet(b / "references.parquet", index=False)
    cells = pd.read_parquet(b / "cells.parquet")
    cells.loc[0, "objective"] = cells.loc[0, "objective"] + 1.0
    cells.to_parquet(b / "cells.parquet", index=False)
    info = merge_datasets([tmp_path / "a", b], tmp_path / "m")
    assert [d["instance_key"] for d in info["reference_disagreements"]] == [refs.loc[i, "instance_key"]]
    assert len(info["same_key_different_content"]["cells"]) == 1
    code, out, err = cli(["merge", tmp_path / "a", b, "--out", tmp_path / "m2"])
    assert code == 0 and "do not meet" in err and "differ between sources" in err
    code, out, err = cli(["merge", tmp_path / "a", tmp_path / "nothing", "--out", tmp_path / "m3"])
    assert code == 2 and not (tmp_path / "m3").exists()


def test_a_run_recorded_before_fingerprints_gets_its_class_from_its_record():
    """An older run's machine record (processor, CPUs, memory, platform; no fingerprint, system or
    architecture) gets the class this machine's record has: its rows rank with this machine's."""
    from psdbench.harness.fingerprint import machine_record, recorded_class

    now = machine_record(distributions=False)
    old = {k: now[k] for k in ("platform", "processor", "cpus", "memory_gb", "python")}
    assert recorded_class(old) == now["fingerprint"] == recorded_class(now)
    assert recorded_class({k: v for k, v in old.items() if k != "platform"}) is None


def test_verify_evaluates_the_stored_point_again_and_finds_an_edited_metric(store, tmp_path):
    """The family's evaluation (its certified bound, its task metric) is recomputed from the stored
    point: every row reproduces, and one whose recorded metric was edited does not."""
    from psdbench.publish.verify import verify_dataset

    export_dataset(ReadOnlyStore(store), tmp_path / "ds")
    checked, mismatches = verify_dataset(tmp_path / "ds")
    assert checked == 4 and mismatches == []
    cells = pd.read_parquet(tmp_path / "ds" / "cells.parquet")
    i = cells.index[cells["point"].notna() & (cells["status"] == "ok")][0]
    metrics = json.loads(cells.loc[i, "metrics"])
    assert isinstance(metrics.get("error_rate"), float)  # graph classification's task metric
    metrics["error_rate"] += 0.01
    cells.loc[i, "metrics"] = json.dumps(metrics)
    cells.to_parquet(tmp_path / "ds" / "cells.parquet", index=False)
    checked, mismatches = verify_dataset(tmp_path / "ds")
    assert [m.key for m in mismatches] == [cells.loc[i, "cell_key"]]
    assert "metric error_rate" in mismatches[0].what
