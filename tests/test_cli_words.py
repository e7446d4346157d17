"""One vocabulary across the commands, and a newcomer's first run: a point verification refused is
``rejected`` in ``results`` (table, CSV, JSON), ``compare`` and the run's closing line while the
store keeps its contract status ``infeasible``; ``--quiet`` keeps the closing line; ``run --out``
names the report folder as ``report --out`` does (``--report`` still accepted); a configuration
not run for a missing extra ends the closing line with the install command."""

from __future__ import annotations

import csv
import io
import json

import pandas as pd

from psdbench.api import REJECTED, install_command, missing_extra
from psdbench.cli.commands import _closing_line
from psdbench.harness.store.results import CellResult, missing_extras
from psdbench.harness.store.db import Store

from .test_cli_bad_input import cli, grid


def _row(key: str, solver: str, status: str = "ok", message: str = "", **kw) -> CellResult:
    return CellResult(run_id="r", cell_key=key, instance_key="i" + key[-1], problem="p", dataset="d/x",
                      instance_params={"n": int(key[-1])}, solver=solver, status=status, message=message,
                      wall_time_s=1.0, objective=1.0, gap_rel=0.0, feasible=1, **kw)


def test_a_refused_point_is_rejected_in_results_and_compare_and_infeasible_in_the_store(tmp_path):
    a, b = Store(tmp_path / "a.sqlite"), Store(tmp_path / "b.sqlite")
    a.write_result(_row("k1", "s"))
    b.write_result(_row("K1", "s", status="infeasible", message=f"{REJECTED}: min eigenvalue -1e-3 < -1e-6"))
    a.close(), b.close()
    code, out, err = cli(["results", "--db", tmp_path / "b.sqlite", "--format", "csv"])
    assert code == 0, err
    (rec,) = list(csv.DictReader(io.StringIO(out)))
    assert rec["status"] == "infeasible" and rec["outcome"] == "rejected"  # the contract kept, the word beside it
    code, out, err = cli(["results", "--db", tmp_path / "b.sqlite", "--format", "json"])
    assert code == 0 and [(r["status"], r["outcome"]) for r in json.loads(out)] == [("infeasible", "rejected")]
    code, out, err = cli(["results", "--db", tmp_path / "b.sqlite"])
    assert code == 0 and "rejected" in out and "infeasible" not in out
    code, out, err = cli(["compare", tmp_path / "a.sqlite", tmp_path / "b.sqlite"])
    assert code == 0 and "ok>rejected" in out and "infeasible" not in out, out
    code, out, err = cli(["compare", tmp_path / "a.sqlite", tmp_path / "b.sqlite", "--format", "json"])
    (cell,) = json.loads(out)["cells"]
    assert (cell["status_a"], cell["status_b"], cell["outcome_a"], cell["outcome_b"]) == (
        "ok", "infeasible", "ok", "rejected")
    assert cell["flags"] == "status"


def test_closing_line_counts_outcomes_and_ends_with_the_install_command_of_a_missing_extra():
    why = missing_extra("metric-learn", "peers")
    assert why == "metric-learn is not installed: pip install 'psdbench[peers]'"
    rows = [_row("k1", "euclidean"), _row("k2", "ml-lmnn", "skipped", why), _row("k3", "ml-lmnn", "skipped", why),
            _row("k4", "ml-itml", "skipped", why), _row("k5", "scs", "skipped", "scs does not support this kind"),
            _row("k6", "gdpa-lp", "infeasible", f"{REJECTED}: trace 2 != 1")]
    mine = pd.DataFrame([r.__dict__ for r in rows])
    assert missing_extras(mine) == {"peers": 2}  # configurations (ml-lmnn, ml-itml), not cells
    line = _closing_line("R", mine, "g", "s.sqlite", {"ran": 6, "elsewhere": 1})
    assert line.startswith("run R: 6 cells of grid g in s.sqlite: 1 ok, 1 rejected, 4 skipped (6 run now, "
                           "1 left to another run)")
    assert line.endswith(f"; 2 configurations not run: missing extra 'peers': {install_command('peers')}")
    assert line.count("skipped") == 1  # one meaning: the outcome
    assert not missing_extras(mine[mine["solver"] != "ml-lmnn"].assign(status="ok"))  # only skipped cells count
    lone = _closing_line("R", mine.iloc[[1]], "g", "s.sqlite", {"ran": 1})
    assert lone.endswith("; 1 configuration not run: missing extra 'peers': pip install 'psdbench[peers]'")


def test_quiet_keeps_the_closing_line_and_run_out_names_the_report_folder_as_report_does(tmp_path):
    g = tmp_path / "g.toml"
    g.write_text(grid())
    code, out, err = cli(["run", "--grid", g, "--db", tmp_path / "s.sqlite", "--out", tmp_path / "rep", "--quiet",
                          "--jobs", "1"])
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith("run ") and " cells of grid " in lines[0] and "(1 run now, 0 left to another run)" in lines[0]
    assert lines[1].startswith(f"report: {tmp_path / 'rep' / 'report.html'}") and (tmp_path / "rep" / "report.md").is_file()
    assert "psdbench: " not in err  # --quiet: no progress line
    # the former name still works, and names the folder it was given
    code, out, err = cli(["run", "--grid", g, "--db", tmp_path / "s.sqlite", "--report", tmp_path / "old", "--quiet"])
    assert code == 0 and "(0 run now" in out and (tmp_path / "old" / "report.html").is_file(), out + err
    code, out, err = cli(["run", "--grid", g, "--db", tmp_path / "s.sqlite", "--report", tmp_path / "a", "--out",
                          tmp_path / "b", "--quiet"])
    assert code == 2 and out == "" and err.count("\n") == 1 and "two report folders" in err
    assert not (tmp_path / "a").exists() and not (tmp_path / "b").exists()
    code, out, _ = cli(["run", "--help"])
    assert "--out DIR" in out and "--report" not in out


def test_the_default_suite_has_a_small_max_cut_problem_so_its_report_has_the_family(tmp_path):
    from psdbench.session import prepare

    cells = prepare(suite="default", problems=["maxcut/sdp"], db=tmp_path / "x.sqlite").grid.cells
    assert cells, "the default suite lists no maxcut/sdp problem"
    assert {c.problem for c in cells} == {"maxcut/sdp"} and {c.dataset for c in cells} == {"maxcut-gen/random"}
    assert {c.solver for c in cells} == {"maxcut-mixing", "clarabel"} and {c.instance_params["n"] for c in cells} == {40}
    assert len(cells) == 6  # two solvers x three seeds: seconds, not minutes
    assert not (tmp_path / "x.sqlite").exists()
