"""A solver's own printing stays out of the run's output: its stdout (Python's and the C level's,
where HiGHS prints its banner) is discarded in the worker, and the row still records the cell."""

from __future__ import annotations

import os
import subprocess
import sys

from .test_harness import FAULTY, grid

PLUGIN = FAULTY + '''
import sys

import numpy as np


class Chatty(_Base):
    name = "chatty"

    def solve(self, instance, budget, **params):
        print("CHATTER from print")
        sys.stdout.flush()
        os.write(1, b"CHATTER from file descriptor 1\\n")
        return Solution(variables={"x": np.asarray(instance.x_true, dtype=float).copy()}, message="spoke")
'''


def test_solver_output_does_not_reach_the_runs_stdout(tmp_path):
    (tmp_path / "chatty_solver.py").write_text(PLUGIN)
    info = tmp_path / "chatty_solver-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: chatty-solver\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\nchatty = chatty_solver:Chatty\n")
    g = grid(tmp_path, ["chatty"], seeds=(0, 1))
    env = dict(os.environ, PYTHONPATH=str(tmp_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(g), "--db",
                          str(tmp_path / "r.sqlite"), "--report", "", "--quiet", "--jobs", "2"],
                         env=env, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert "CHATTER" not in out.stdout + out.stderr
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and "2 ok" in lines[0], out.stdout  # the summary line alone
