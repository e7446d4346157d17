"""A run's process stopped (SIGSTOP) past a cell's limit and then continued: cell times and the
deadline are measured where the cell runs, so the stopped time is no cell's time.

The cells run while ``psdbench run`` is stopped: one solver streams large checkpoints (which fill
the pipe to the stopped runner) and returns; another never returns and is ended by its worker's own
hard deadline.  The test waits for those events (files the solvers write, the hung worker's death),
never for a length of time.
"""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from psdbench.harness.workers.process import grace_for
from psdbench.harness.store.db import Store

PLUGIN = '''
import os
import time
from pathlib import Path

import numpy as np

from psdbench.api import Solution

MARKS = Path(os.environ["PSDBENCH_TEST_MARKS"])


def _mark(name, text=""):
    tmp = MARKS / (name + ".tmp")
    tmp.write_text(text)
    tmp.rename(MARKS / name)


class _Base:
    kinds = ("graph-classification",)
    default_params = {}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {}

    def warm_up(self, instance):  # untimed: wait until the test has stopped the runner
        _mark(self.name + "-ready", str(os.getpid()))
        while not (MARKS / "stopped").exists():
            time.sleep(0.02)


class Chatty(_Base):
    """Streams 200 checkpoints of 512 KiB (far more than a pipe holds), then returns."""

    name = "stop-chatty"

    def solve(self, instance, budget, **params):
        x = instance.x_true.copy()
        for i in range(200):
            budget.checkpoint(float(i), {"x": x, "pad": np.full(65536, float(i))})
        _mark("stop-chatty-returned")
        return Solution(variables={"x": x})


class Hangs(_Base):
    """Never returns (never looks at the budget)."""

    name = "stop-hang"

    def solve(self, instance, budget, **params):
        while True:
            time.sleep(0.05)
'''

GRID = """
[run]
seeds = [0]
timeout = 10
reference = false

[[problems]]
name = "graph-classification"
datasets = ["sklearn/breast-cancer", "sklearn/wine"]
params = { n = [30], graph = ["knn"], k = [5] }

[[solvers]]
name = "stop-chatty"
where = { dataset = ["sklearn/breast-cancer"] }

[[solvers]]
name = "stop-hang"
where = { dataset = ["sklearn/wine"] }
"""


def _state(pid):
    """A process's state letter (``Z``: died, not yet reaped), or None when it is gone."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


def _wait(cond, proc):
    while not cond():
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.05)


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
@pytest.mark.slow
def test_stopped_runner_counts_no_stopped_time(tmp_path):
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "stop_solvers.py").write_text(PLUGIN)
    info = plugin / "stop_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: stop-solvers\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\nstop-chatty = stop_solvers:Chatty\n"
                                           "stop-hang = stop_solvers:Hangs\n")
    marks = tmp_path / "marks"
    marks.mkdir()
    (tmp_path / "g.toml").write_text(textwrap.dedent(GRID))
    db = tmp_path / "r.sqlite"
    env = dict(os.environ, PSDBENCH_TEST_MARKS=str(marks), OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1",
               PYTHONPATH=os.pathsep.join([str(plugin)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                                                          if p]))
    run = subprocess.Popen([sys.executable, "-m", "psdbench.cli", "run", "--grid", tmp_path / "g.toml", "--db", db,
                            "--report", "", "--quiet", "--jobs", "2"], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        _wait(lambda: (marks / "stop-chatty-ready").exists() and (marks / "stop-hang-ready").exists(), run)
        hung = int((marks / "stop-hang-ready").read_text())
        os.kill(run.pid, signal.SIGSTOP)
        stopped_at = time.monotonic()
        (marks / "stopped").write_text("")
        # while the runner is stopped: the chatty cell returns (its checkpoints do not wait for the
        # runner), and the hung cell's worker ends itself at its deadline + grace (12 s after it started)
        while not ((marks / "stop-chatty-returned").exists() and _state(hung) in ("Z", None)):
            time.sleep(0.05)
        stopped_for = time.monotonic() - stopped_at
        os.kill(run.pid, signal.SIGCONT)
        out, err = run.communicate(timeout=300)
    finally:
        if run.poll() is None:
            os.kill(run.pid, signal.SIGCONT)
            run.kill()
    assert run.returncode == 0, err
    df = Store(db).results_frame().set_index("solver")
    chatty, hang = df.loc["stop-chatty"], df.loc["stop-hang"]
    assert chatty.status == "ok", chatty.message
    # its own solve: the 12 s and more the runner was stopped (measured here) are not in it
    own_solve = float(chatty.wall_time_s)
    assert own_solve < stopped_for
    assert hang.status == "timeout" and hang.message.startswith("killed at the 10 s deadline")
    # killed at its deadline + grace where it ran, recorded so (not the runner's later wake-up)
    assert hang.wall_time_s == pytest.approx(10 + grace_for(10), rel=1e-9)
    assert np.isfinite(chatty.objective)
