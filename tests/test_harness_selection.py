"""The selections a new author types first, and the conformance kit's first surprises.

* ``run -s scs -p 'graph-classification[n=50]'`` on the default suite: solver entries whose
  ``where`` names a parameter of a problem the selection dropped, or that give no cell among the
  kept ones, are dropped (not errors); a solver named with ``-s`` that gives no cell at all still
  is, while one the grid lists and ``-s`` did not name is dropped (``--suite sdp-large -p
  maxcut/boxqp``: the suite's solvers of other forms).
* ``-p`` of a problem the grid does not list, without ``-d``: a one-line hint to add ``-d``.
* ``where = { problem = [...] }`` keeps a solver to problems by name.
* ``collection/<glob>`` in a grid's or ``-d``'s datasets: every name of the collection it matches.
* ``check_solver`` on a solver without ``library_versions``: a conformance message, not an
  ``AttributeError``; ``check_problem`` solves no Clarabel reference unless asked.
* A worker that dies by a signal with its address space at its cap (as a Rust library aborts on a
  failed allocation) says it likely ran out of memory.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from psdbench import testing
from psdbench.api import PsdbenchError, Solution
from psdbench.session import prepare

from .test_harness import cli


def test_a_solver_and_a_problem_selected_from_the_default_suite(tmp_path):
    g = prepare(solvers=["scs"], problems=["graph-classification[n=50]"], db=tmp_path / "r.sqlite").grid
    assert {c.solver for c in g.cells} == {"scs"} and {c.instance_params["n"] for c in g.cells} == {50}
    # the suite's scs entries at n = 50: reduced (both graphs) and primal (complete graph), 3 seeds each
    forms = sorted((c.solver_params["formulation"], c.instance_params["graph"]) for c in g.cells)
    assert forms == sorted([("reduced", "complete"), ("reduced", "knn"), ("primal", "complete")] * 3)
    assert not (tmp_path / "r.sqlite").exists()
    with pytest.raises(PsdbenchError, match="solver 'clarabel' gives no cell"):  # still an error: no cell at all
        prepare(solvers=["clarabel"], problems=["graph-classification[n=200]"], db=tmp_path / "r.sqlite")


def test_a_problem_selection_drops_the_grids_solvers_it_leaves_without_cells(tmp_path):
    spec = {"run": {"seeds": [0], "reference": False},
            "problems": [{"name": "metric/glr", "datasets": ["sklearn/breast-cancer"], "params": {"fold": 0}},
                         {"name": "sdp/standard", "datasets": ["sdp-gen/theta"], "params": {"n": 12}}],
            "solvers": [{"name": "sgml"}, {"name": "sdp-burer-monteiro"}]}
    whole = prepare(spec, db=tmp_path / "r.sqlite").grid
    assert {(c.solver, c.problem) for c in whole.cells} == {("sgml", "metric/glr"), ("sdp-burer-monteiro", "sdp/standard")}
    g = prepare(spec, problems=["metric/glr"], db=tmp_path / "r.sqlite").grid  # sdp-burer-monteiro: dropped
    assert {(c.solver, c.problem) for c in g.cells} == {("sgml", "metric/glr")}
    g = prepare(spec, problems=["sdp/standard"], db=tmp_path / "r.sqlite").grid  # sgml: dropped
    assert {(c.solver, c.problem) for c in g.cells} == {("sdp-burer-monteiro", "sdp/standard")}
    with pytest.raises(PsdbenchError, match="solver 'sdp-burer-monteiro' gives no cell"):  # named: an error
        prepare(spec, problems=["metric/glr"], solvers=["sdp-burer-monteiro"], db=tmp_path / "r.sqlite")
    spec["solvers"] = [{"name": "sdp-burer-monteiro"}]
    with pytest.raises(PsdbenchError, match="solver 'sdp-burer-monteiro' gives no cell"):  # none left: an error
        prepare(spec, problems=["metric/glr"], db=tmp_path / "r.sqlite")
    assert not (tmp_path / "r.sqlite").exists()


def test_a_problem_the_grid_does_not_list_needs_datasets(tmp_path):
    with pytest.raises(PsdbenchError, match=r"'metric/lsml' is not in grid default.*add -d DATASET"):
        prepare(solvers=["pd-cone"], problems=["metric/lsml"], db=tmp_path / "r.sqlite")
    g = prepare(solvers=["pd-cone"], problems=["metric/lsml[fold=0]"], datasets=["sklearn/breast-cancer"],
                db=tmp_path / "r.sqlite").grid
    assert {(c.problem, c.dataset) for c in g.cells} == {("metric/lsml", "sklearn/breast-cancer")}


def test_where_selects_problems_by_name(tmp_path):
    spec = {"run": {"seeds": [0], "reference": False},
            "problems": [{"name": "metric/mcml", "datasets": ["sklearn/breast-cancer"], "params": {"fold": 0}},
                         {"name": "metric/glr", "datasets": ["sklearn/breast-cancer"], "params": {"fold": 0}}],
            "solvers": [{"name": "sgml"}, {"name": "scs", "where": {"problem": ["metric/glr"]}}]}
    g = prepare(spec, db=tmp_path / "r.sqlite").grid
    assert {(c.solver, c.problem) for c in g.cells} == {("sgml", "metric/mcml"), ("sgml", "metric/glr"),
                                                         ("scs", "metric/glr")}
    spec["solvers"][1]["where"] = {"problem": ["metric/nope"]}
    with pytest.raises(PsdbenchError, match="matches no instance"):
        prepare(spec, db=tmp_path / "r.sqlite")


def test_a_dataset_pattern_stands_for_every_name_it_matches(tmp_path, monkeypatch):
    """``collection/<glob>``: every dataset of the collection it matches, once each, in order; a
    folder's new file joins without code; a pattern matching nothing is one line before any work."""
    from psdbench.families.sdp.generators import theta
    from psdbench.families.sdp.sdpa_io import write_sdpa

    spec = {"run": {"seeds": [0], "reference": False},
            "problems": [{"name": "sdp/standard", "datasets": ["sdp-gen/*", "sdp-gen/theta"], "params": {"n": 6}}],
            "solvers": [{"name": "sdp-clarabel"}]}
    g = prepare(spec, db=tmp_path / "r.sqlite").grid
    assert [c.dataset for c in g.cells] == ["sdp-gen/maxcut", "sdp-gen/theta", "sdp-gen/infeasible"]  # its order
    folder = tmp_path / "mine"
    (folder / "sub").mkdir(parents=True)
    for name in ("a1.dat-s", "a2.dat-s", "b1.dat-s", "sub/a3.dat-s"):
        write_sdpa(theta(5, 0.5, 0), folder / name)
    monkeypatch.setenv("PSDBENCH_SDPA_DIR", str(folder))
    spec["problems"][0]["datasets"] = ["sdpa-dir/a?"]
    assert [c.dataset for c in prepare(spec, db=tmp_path / "r.sqlite").grid.cells] == ["sdpa-dir/a1", "sdpa-dir/a2"]
    spec["problems"][0]["datasets"] = ["sdpa-dir/*"]
    assert len(prepare(spec, db=tmp_path / "r.sqlite").grid.cells) == 4  # sub-folders too
    spec["problems"][0]["datasets"] = ["sdpa-dir/zz*"]
    with pytest.raises(PsdbenchError, match=r"^grid .*: dataset pattern 'sdpa-dir/zz\*' matches no dataset of "
                                            r"sdpa-dir \(found: a1, a2, b1, sub/a3\)$"):
        prepare(spec, db=tmp_path / "r.sqlite")
    assert not (tmp_path / "r.sqlite").exists()


class _NoVersions:
    name = "no-versions"
    kinds = ("graph-classification",)
    default_params: dict = {}

    def supports(self, instance):
        return True

    def solve(self, instance, budget, **params):
        return Solution(variables={"x": np.ones(instance.n)})


def test_check_solver_names_a_missing_library_versions(registry, wdbc):
    inst = registry.problem("graph-classification").build(wdbc, {"n": 20, "graph": "knn", "k": 5}, 0)
    with pytest.raises(testing.ConformanceError, match="no library_versions"):
        testing.check_solver(_NoVersions(), [inst])

    class Raising(_NoVersions):
        def library_versions(self):
            raise KeyError("numpy")

    with pytest.raises(testing.ConformanceError, match="library_versions\\(\\) raised KeyError"):
        testing.check_solver(Raising(), [inst])


def test_check_problem_solves_a_reference_only_when_asked(registry, wdbc, monkeypatch):
    calls = []
    monkeypatch.setattr(testing, "_reference_point", lambda instance: calls.append(instance) or None)
    problem = registry.problem("graph-classification")
    inst = testing.check_problem(problem, wdbc, {"n": 20, "graph": "knn", "k": 5})
    assert inst.n == 20 and calls == []
    with pytest.raises(testing.ConformanceError, match="pass point="):  # asked: solved (here: no point)
        testing.check_problem(problem, wdbc, {"n": 20, "graph": "knn", "k": 5}, solve_reference=True)
    assert len(calls) == 1


ABORTS = '''
import mmap, os, time
from psdbench.api import Solution


class Aborts:
    """Reserves address space (untouched, as a growing Rust Vec does) until the cap refuses, then aborts."""
    name = "reserve-abort"
    kinds = ("graph-classification",)
    default_params = {}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {}

    def solve(self, instance, budget, **params):
        held = []
        try:
            while True:
                held.append(mmap.mmap(-1, 64 * 2**20))
        except (OSError, MemoryError):
            # held for ten of the runner's samples (MEMORY_POLL, 0.5 s): on a loaded machine its
            # thread may wake late, and a death by signal is judged by the last sample before it
            time.sleep(5.0)
            os.abort()
'''


def test_a_worker_aborting_at_its_address_space_cap_says_it_ran_out_of_memory(tmp_path):
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "abort_solvers.py").write_text(ABORTS)
    info = plugin / "abort_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: abort-solvers\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\nreserve-abort = abort_solvers:Aborts\n")
    g = tmp_path / "g.toml"
    g.write_text(textwrap.dedent("""
        [run]
        seeds = [0]
        timeout = 600
        # above what a forked worker needs to start (about 3 GB of address space with every plugin,
        # and pyarrow through pandas, imported; checked at grid load): the unbounded hog meets the cap
        memory_mb = 5000
        reference = false

        [[problems]]
        name = "graph-classification"
        datasets = ["sklearn/breast-cancer"]
        params = { n = [20], graph = ["knn"], k = [5] }

        [[solvers]]
        name = "reserve-abort"
        """))
    out = cli(["run", "--grid", g, "--db", tmp_path / "r.sqlite", "--report", "", "--quiet", "--jobs", "1"], plugin)
    assert out.returncode == 0, out.stderr
    from psdbench.harness.store.db import Store

    row = Store(tmp_path / "r.sqlite").results_frame().iloc[0]
    assert row.status == "out_of_memory" and "signal 6" in row.message, row.message  # Mittelmann's "m", not a crash
    assert row.message.startswith("out of memory") and "of its 5000 MiB cap" in row.message, row.message
    assert len(row.message.splitlines()) == 1
