"""Fair first cells: a worker's first timed solve against the median cell of the same solver.

The example solver plugin (``example-harmonic``: one linear solve on the unlabelled block) on
``graph-classification`` instances of WDBC, n = 200, kNN graph, seeds 0..19 (20 cells, one per
instance), ``reference = false``, run with ``psdbench run`` on a fresh store.  With ``--jobs 1``
the first stored cell is the worker's first timed solve; with ``--jobs 2`` the first two are
(each worker takes one instance at a time).  The script prints, per repetition, the first cells'
``wall_time_s`` and their ratio to the median of the others, and the same for ``cpu_time_s``
(which a busy machine's preemption does not inflate: a wall-time outlier with a normal CPU time
was waiting for a core, not starting up).  Before each worker's first timed
solve the harness warms the solver up, untimed (``psdbench.api.warm_up``: the solver's
``preload`` imports and its ``warm_up(instance)`` hook, which the example plugin declares).

The plugin is registered through a temporary ``dist-info`` directory on ``PYTHONPATH`` (no
install, no network).  Timings on a shared machine are noisy: read the ratios of one invocation.

    PYTHONPATH=src python benchmarks/scripts/harness/first_cell.py --jobs 1 --repeat 3
    PYTHONPATH=src python benchmarks/scripts/harness/first_cell.py --jobs 2 --repeat 3
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
PLUGIN_SRC = ROOT / "examples" / "solver-plugin" / "src"

GRID = textwrap.dedent("""
    [run]
    name = "first-cell"
    seeds = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19]
    timeout = 60
    reference = false

    [[problems]]
    name = "graph-classification"
    datasets = ["sklearn/breast-cancer"]
    params = { n = [200], graph = ["knn"], k = [5] }

    [[solvers]]
    name = "example-harmonic"
    """)


def _env(work: Path) -> dict[str, str]:
    """``PYTHONPATH`` with a ``dist-info`` that registers ``example-harmonic`` and the plugin's source."""
    info = work / "plugin" / "psdbench_example_plugin-0.1.0.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: psdbench-example-plugin\nVersion: 0.1.0\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\n"
                                           "example-harmonic = psdbench_example_plugin:HarmonicSolver\n")
    old = os.environ.get("PYTHONPATH")
    parts = [str(info.parent), str(PLUGIN_SRC)] + ([old] if old else [])
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(parts), PSDBENCH_REF_CACHE="off")
    env.update({k: "1" for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")})
    return env


def measure(jobs: int, work: Path) -> tuple:
    """``(first cells' wall_time_s, median of the others, the same two for cpu_time_s)`` of one fresh run."""
    grid = work / "first-cell.toml"
    grid.write_text(GRID)
    db = work / f"first-{jobs}.sqlite"
    for p in work.glob(db.name + "*"):
        p.unlink()
    cmd = [sys.executable, "-m", "psdbench.cli", "run", "--grid", str(grid), "--db", str(db), "--jobs", str(jobs),
           "--report", "", "--quiet"]
    proc = subprocess.run(cmd, env=_env(work), capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr}")
    with sqlite3.connect(db) as con:
        rows = con.execute("SELECT wall_time_s, cpu_time_s FROM history WHERE status = 'ok' ORDER BY seq").fetchall()
    if len(rows) != 20:
        raise RuntimeError(f"{db}: {len(rows)} ok cells, expected 20")
    out = []
    for i in range(2):
        values = [r[i] for r in rows]
        out += [values[:jobs], statistics.median(values[jobs:])]
    return tuple(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            first, median, first_cpu, median_cpu = measure(args.jobs, Path(tmp))
            print(f"jobs {args.jobs} run {i}: wall: first cell(s) {', '.join(f'{1e3 * w:.2f} ms' for w in first)}, "
                  f"median of the others {1e3 * median:.2f} ms, ratio " + ", ".join(f"{w / median:.2f}" for w in first)
                  + "; cpu: ratio " + ", ".join(f"{w / median_cpu:.2f}" for w in first_cpu))
    return 0


if __name__ == "__main__":
    sys.exit(main())
