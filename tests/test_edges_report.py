"""Edges of the report's files: any parameter value safe in a file name, and a report replaced whole
or not at all under a real SIGTERM at any moment of its writing."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from psdbench.harness.grid.inputs import ReadOnlyStore
from psdbench.harness.store.results import CellResult
from psdbench.harness.store.db import Store
from psdbench.system.outdir import MARKER, safe_stem
from psdbench.report.blocks import Table

from .test_cli_bad_input import cli, snapshot
from .test_edges import _store_with_rows


class _ByParameter:
    """A section naming one table per value of the instance parameter ``graph`` (as a family's may)."""

    name, title, family, order = "by-parameter", "By parameter", "*", 150

    def render(self, context):
        return [Table(f"t_{value}", f"graph = {value}", pd.DataFrame({"solver": sorted(set(sub["solver"]))}))
                for value, sub in context.frame.groupby("p_graph")] + [
            Table("x" * 300, "a long name", pd.DataFrame({"a": [1]}))]


def test_any_parameter_value_is_safe_in_a_file_name(tmp_path):
    from psdbench.cli.preflight import write_report_whole
    from psdbench.registry import discover

    st = Store(tmp_path / "s.sqlite")
    st.write_many([CellResult(run_id="r0", cell_key=f"k{i}", instance_key=f"i{i}", problem="graph-classification",
                              dataset="sklearn/breast-cancer", instance_params={"n": 30, "graph": graph},
                              solver="gdpa-lp", status="ok", wall_time_s=0.1, objective=1.0, feasible=1)
                   for i, graph in enumerate(["a/b", "../../escape", "..", "\\\\back", ".hidden"])])
    st.close()
    reg = discover()
    reg.reports["by-parameter"] = _ByParameter()
    paths = write_report_whole(ReadOnlyStore(tmp_path / "s.sqlite"), str(tmp_path / "rep"), registry=reg)
    written = sorted(p.name for p in (tmp_path / "rep").iterdir())
    assert all(p.parent == tmp_path / "rep" and p.is_file() for p in paths.values())
    assert all(p.is_file() for p in (tmp_path / "rep").iterdir())  # no sub-folder, nothing outside
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rep", "s.sqlite"]
    for stem in ("t_a-b", "t_..-..-escape", "t_..", "t_-back", "t_.hidden"):
        assert f"{stem}.csv" in written, (stem, written)
    long = [n for n in written if n.startswith("xxxx")]
    assert len(long) == 1 and len(long[0].encode()) <= 255
    assert safe_stem("a/b\x00c") == "a-b-c" and safe_stem(".x") == "x" and safe_stem("") == "file"


def _tmp_folders(root: Path) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith(".rep."))


@pytest.mark.slow
def test_report_under_sigterm_is_replaced_whole_or_not_at_all(tmp_path):
    """A real SIGTERM sent when the report's temporary folder first holds a file, when it holds a
    figure, and when it holds report.md (the last file but one; the swap is near): exit 143, no temporary
    folder left, and the report folder is the previous one byte for byte or, had the signal come
    during the swap, wholly the new one (report.html and report.md both new)."""
    _store_with_rows(tmp_path / "s.sqlite", 300)
    assert cli(["report", "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep"])[0] == 0
    before = snapshot(tmp_path / "rep")
    for trigger in ("results.csv", "*.png", "report.md"):
        proc = subprocess.Popen([sys.executable, "-m", "psdbench.cli", "report", "--db", str(tmp_path / "s.sqlite"),
                                 "--out", str(tmp_path / "rep")], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 300
        while proc.poll() is None and time.monotonic() < deadline:  # wait for the event: the file in the folder
            if any(any((tmp_path / t).glob(trigger)) for t in _tmp_folders(tmp_path)):
                break
            time.sleep(0.002)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=300)
        assert proc.returncode in (0, 143), err
        assert _tmp_folders(tmp_path) == []
        after = snapshot(tmp_path / "rep")
        assert set(after) == set(before) and MARKER in after
        changed = {k for k in after if after[k] != before[k]}
        assert changed in (set(), {"report.html", "report.md"} | (changed & {"run_details.csv"})), (trigger, changed)
        if proc.returncode == 143:
            assert err.decode().strip().splitlines() == [
                "psdbench: terminated (SIGTERM); the previous report, if any, is left as it was"]
        before = after
