"""Fair first cells: each worker calls a solver's ``warm_up(instance)`` hook once, untimed, before
its first timed solve of that solver; a failing hook fails the cell, not the run."""

from __future__ import annotations

import textwrap

from psdbench import api
from psdbench.harness.store.db import Store

from .test_harness import cli

WARM = '''
import os, time
import numpy as np
from psdbench.api import Solution

WARMED = []  # per process: the pids of warm-up calls
EVENTS = []  # per process, in order: "warm" (the hook ran), "clock" (the harness read its timer), "solve"
_clock = time.perf_counter


def _logged_clock():  # the worker times solve() with time.perf_counter: log each read
    EVENTS.append("clock")
    return _clock()


time.perf_counter = _logged_clock


class _Base:
    kinds = ("graph-classification",)
    default_params = {}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {}

    def solve(self, instance, budget, **params):
        x = np.ones(instance.n)
        x[: instance.m] = instance.xhat  # the known labels: a feasible point
        EVENTS.append("solve")
        before = EVENTS[:-1]
        # the harness's timer started (its last clock read) after the warm-up: the hook is untimed
        untimed = "warm" in before and before[-1] == "clock" and before.index("warm") < len(before) - 1
        return Solution(variables={"x": x}, info={"warmed": len(WARMED), "pid": os.getpid(),
                                                  "warm_up_untimed": float(untimed)})


class Warm(_Base):
    name = "warm-hook"

    def warm_up(self, instance):
        WARMED.append(instance.n)
        EVENTS.append("warm")


class Cold(_Base):
    name = "warm-broken"

    def warm_up(self, instance):
        raise RuntimeError("cannot warm up")
'''


def test_warm_up_runs_once_per_worker_untimed_and_a_failing_one_fails_its_cells(tmp_path):
    plugin = tmp_path / "plugin"
    plugin.mkdir()
    (plugin / "warm_solvers.py").write_text(WARM)
    info = plugin / "warm_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: warm-solvers\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\nwarm-hook = warm_solvers:Warm\n"
                                           "warm-broken = warm_solvers:Cold\n")
    g = tmp_path / "g.toml"
    g.write_text(textwrap.dedent("""
        [run]
        seeds = [0, 1, 2]
        timeout = 600
        reference = false

        [[problems]]
        name = "graph-classification"
        datasets = ["sklearn/breast-cancer"]
        params = { n = [20], graph = ["knn"], k = [5] }

        [[solvers]]
        name = "warm-hook"

        [[solvers]]
        name = "warm-broken"
        """))
    out = cli(["run", "--grid", g, "--db", tmp_path / "r.sqlite", "--report", "", "--quiet", "--jobs", "1"], plugin)
    assert out.returncode == 0, out.stderr
    df = Store(tmp_path / "r.sqlite").results_frame()
    warm = df[df.solver == "warm-hook"]
    assert warm.status.tolist() == ["ok"] * 3
    assert warm.metric_solver_pid.nunique() == 1 and warm.metric_solver_warmed.tolist() == [1, 1, 1]  # once
    # the hook ran before the harness started the solve's timer (its perf_counter reads are logged)
    assert warm.metric_solver_warm_up_untimed.tolist() == [1, 1, 1]
    broken = df[df.solver == "warm-broken"]
    # a failing hook is retried before each cell (none is timed unwarmed): every cell fails alike, and says why
    assert broken.status.tolist() == ["error"] * 3
    assert broken.message.str.startswith("warm_up failed: RuntimeError: cannot warm up").all()


def test_default_warm_up_imports_the_preload_modules():
    class S:
        preload = ("json",)

    api.warm_up(S(), None)  # no hook: imports only, no error
    calls = []

    class T:
        def warm_up(self, instance):
            calls.append(instance)

    api.warm_up(T(), "inst")
    assert calls == ["inst"]
