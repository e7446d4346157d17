"""Plugins that fail at import (raise, or call ``sys.exit``) are reported and skipped: the run, the fork
server and the cells of other plugins go on.

The plugins are registered through real entry points: a ``.dist-info`` folder on ``PYTHONPATH``
(what an installed distribution leaves behind), so discovery, the fork server's preload and the
worker all see them, with nothing installed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from psdbench.harness.store.db import Store

ENTRY_POINTS = """\
[psdbench.solvers]
raises-at-import = broken_raises:Solver
exits-at-import = broken_exits:Solver

[psdbench.problems]
exits-problem = broken_exits:Problem

[psdbench.reports]
raises-section = broken_raises:Section
"""


def _install_on_path(root: Path) -> None:
    (root / "broken_raises.py").write_text("raise RuntimeError('this plugin is broken on purpose')\n")
    (root / "broken_exits.py").write_text("import sys\nsys.exit(3)\n")
    info = root / "psdbench_broken_plugins-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: psdbench-broken-plugins\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(ENTRY_POINTS)


def test_broken_plugins_are_reported_and_other_cells_run(tmp_path):
    _install_on_path(tmp_path)
    grid = tmp_path / "g.toml"
    grid.write_text(textwrap.dedent("""
        [run]
        seeds = [0]
        timeout = 600
        reference = false
        [[problems]]
        name = "graph-classification"
        datasets = ["sklearn/breast-cancer"]
        params = { n = [20], graph = ["knn"], k = [5] }
        [[solvers]]
        name = "gdpa-lp"
    """))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    db, out = tmp_path / "r.sqlite", tmp_path / "rep"
    res = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(grid), "--db", str(db),
                          "--report", str(out), "--quiet"], capture_output=True, text=True, env=env, timeout=300)
    assert res.returncode == 0, res.stderr
    # plugins are imported when needed: the run imports its own solver and problem, the report every
    # section, so the broken section is reported and the broken solvers / problem (not in the grid) are not
    assert "plugin reports:raises-section skipped" in res.stderr and "broken on purpose" in res.stderr, res.stderr
    rows = Store(db).results_frame()
    assert rows["status"].tolist() == ["ok"] and rows["objective"].notna().all()
    assert (out / "report.html").is_file()

    # list reads the names from the metadata and the source; a plugin whose source does not state
    # its class is imported, so these broken ones are reported and left out
    listed = subprocess.run([sys.executable, "-m", "psdbench.cli", "list"], capture_output=True,
                            text=True, env=env, timeout=120)
    assert listed.returncode == 0 and "gdpa-lp" in listed.stdout and "raises-at-import" not in listed.stdout
    for name in ("solvers:raises-at-import", "solvers:exits-at-import", "problems:exits-problem"):
        assert f"plugin {name} skipped" in listed.stderr, listed.stderr
    assert "sys.exit(3)" in listed.stderr

    # a grid naming a broken plugin: one line with the reason, exit 2, before any work
    named = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(grid), "--db", str(db),
                            "-s", "raises-at-import", "--report", ""], capture_output=True, text=True, env=env,
                           timeout=120)
    assert named.returncode == 2 and "plugin failed to load" in named.stderr and "broken on purpose" in named.stderr
