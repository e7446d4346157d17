"""A run every cell of which fails for a harness reason is not a success: exit 3, the reason in one line."""

import textwrap

import psdbench.harness.limits as limits
from psdbench.cli.commands import main
from psdbench.harness.store.db import Store

GRID = """
[run]
seeds = [0, 1]
timeout = 600
reference = false
memory_mb = 64

[[problems]]
name = "graph-classification"
datasets = ["sklearn/breast-cancer"]
params = { n = [30], graph = ["knn"], k = [5] }

[[solvers]]
name = "gdpa-lp"
"""


def test_all_cells_failed_by_the_harness_exit_3_with_the_reason(tmp_path, monkeypatch, capsys):
    """Real workers under a 64 MiB cap (far below what one needs to start) all die: harness failures."""
    monkeypatch.setattr(limits, "check_memory_mb", lambda *a, **k: None)  # the grid check would refuse 64 MiB
    (tmp_path / "g.toml").write_text(textwrap.dedent(GRID))
    db = tmp_path / "r.sqlite"
    code = main(["run", "--grid", str(tmp_path / "g.toml"), "--db", str(db), "--report", "", "--quiet", "--jobs", "1"])
    err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("psdbench:")]
    assert code == 3
    assert len(err) == 1 and err[0].startswith("psdbench: error: all 2 cells run now failed in the harness")
    assert "below what a worker needs" in err[0]
    df = Store(db).results_frame()
    assert len(df) == 2 and set(df.status) == {"crashed"}  # stored, and computed again by the next run
    assert all(m.startswith(limits.HARNESS_PREFIX) for m in df.message)
    assert Store(db).done_keys() == set()
