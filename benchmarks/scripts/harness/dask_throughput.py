"""Harness time per cell on a two-worker Dask cluster, beside the local backend's.

The grid of ``harness_overhead.py``: 200 cells of the example solver plugin (``example-harmonic``,
well under a millisecond each) on WDBC ``graph-classification`` instances, ``reference = false``.
Each setting runs ``psdbench run`` as a subprocess on a fresh store, then again (every cell stored:
a resumed rerun, i.e. start-up, grid expansion and the store's reads, no cluster work), and reports

    harness ms per cell = (run wall - resumed wall - sum of the cells' wall_time_s) / cells

(the same definition as ``harness_overhead.py``; with two workers the cells' time is spread over
both, so this wall-clock figure is conservative), and, apart, the seconds the Dask run spent before
its first cell (connect, register the worker plugin, start each worker's cell process: a fresh
interpreter importing every plugin, :mod:`psdbench.harness.workers.spawned`), read from the stored rows'
``created_at`` against the run's start.

Settings: the local backend at ``--jobs 2``, and ``--backend dask`` on ``dask scheduler`` + ``dask
worker --nworkers 2 --nthreads 1`` started as subprocesses on 127.0.0.1 (free ports, Dask's default
configuration, nanny workers), kept up across both runs.  Timings on a shared machine are inflated:
compare the two settings of one invocation.

    python benchmarks/scripts/harness/dask_throughput.py [--cells 200] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path



def _overhead_script() -> object:
    """``harness_overhead.py`` beside this script (the same grid and plugin)."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import harness_overhead

    return harness_overhead


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_cluster(env: dict[str, str], work: Path) -> tuple[str, list[subprocess.Popen]]:
    """``dask scheduler`` and ``dask worker --nworkers 2 --nthreads 1``; returns once both workers are up."""
    from distributed import Client

    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = str(Path(sys.executable).parent / "dask")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "start_new_session": True, "cwd": work,
             "env": env}
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
                              **quiet)]
    procs.append(subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads", "1", "--host",
                                   "127.0.0.1", "--no-dashboard"], **quiet))
    with Client(address, timeout="120s") as c:
        c.wait_for_workers(2, timeout=300)
    return address, procs


def _run(args: list[str], env: dict[str, str]) -> float:
    t0 = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--report", "", "--quiet", *args], env=env,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"psdbench run {' '.join(args)} exited {proc.returncode}:\n{proc.stderr}")
    return time.perf_counter() - t0


def measure(cells: int, extra: list[str], name: str, work: Path, env: dict[str, str]) -> dict[str, float]:
    grid = work / f"grid-{cells}.toml"
    grid.write_text(_overhead_script().grid_text(cells))
    db = work / f"{name}.sqlite"
    args = ["--grid", str(grid), "--db", str(db), *extra]
    run = _run(args, env)
    resumed = _run(args, env)
    with sqlite3.connect(db) as con:
        n, solver, ok = con.execute("SELECT count(*), sum(wall_time_s), sum(status = 'ok') FROM results").fetchone()
        started = con.execute("SELECT started_at FROM runs ORDER BY started_at LIMIT 1").fetchone()[0]
        first = con.execute("SELECT min(created_at) FROM results").fetchone()[0]
    if n != cells:
        raise RuntimeError(f"{db}: {n} rows stored, expected {cells}")
    before = (datetime.fromisoformat(first) - datetime.fromisoformat(started)).total_seconds()
    return {"setting": name, "cells": cells, "run_wall_s": run, "resumed_wall_s": resumed, "solver_sum_s": solver,
            "ok": ok, "before_first_cell_s": before, "harness_ms_per_cell": 1e3 * (run - resumed - solver) / cells,
            "harness_ms_per_cell_after_first": 1e3 * (run - resumed - solver - before) / cells}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cells", type=int, default=200)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="psdbench-dask-throughput-") as tmp:
        work = Path(tmp)
        env = _overhead_script()._env(work, None)
        rows.append(measure(args.cells, ["--jobs", "2"], "local-jobs2", work, env))
        address, procs = start_cluster({k: v for k, v in env.items() if k != "PSDBENCH_DATA"}, work)
        try:
            rows.append(measure(args.cells, ["--backend", "dask", "--scheduler", address], "dask-2-workers", work,
                                env))
        finally:
            for p in reversed(procs):
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    for r in rows:
        print(f"{r['setting']:15s} {r['cells']} cells: run {r['run_wall_s']:6.2f} s, resumed {r['resumed_wall_s']:5.2f} s, "
              f"cells {r['solver_sum_s']:6.3f} s, {r['ok']} ok, {r['before_first_cell_s']:5.2f} s before the first "
              f"cell -> {r['harness_ms_per_cell']:6.1f} ms/cell ({r['harness_ms_per_cell_after_first']:5.1f} after "
              "the first)", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
