"""Time to render the report of a large store, and the size of its HTML (targets: <= 30 s, <= 15 MB).

Usage::

    python benchmarks/report_render.py                      # synthesise a 12,000-cell store, render it
    python benchmarks/report_render.py --db big.sqlite      # reuse (or create) a store at this path

The synthetic store has the shape of the metric-learning all-folds protocol: ``--datasets`` datasets x
``--folds`` folds x ``--seeds`` seeds x ``--configs`` solver configurations (default 12 x 50 x 5 x 4 =
12,000 cells) of one registered problem, each cell with a re-scored curve of ``--points`` log-spaced
points (what a thinned trace keeps), a certified reference on every instance, and a few cells that
end below it, fail verification or time out.  The render is timed once (``write_report``, wall
clock, after the store exists); the output states both numbers and the command.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from psdbench.harness.store.results import CellResult
from psdbench.harness.store.db import Store

PROBLEM = "metric/mcml"


def synthesise(path: Path, datasets: int, folds: int, seeds: int, configs: int, points: int) -> int:
    """Write the synthetic store; return its number of cells."""
    rng = np.random.default_rng(0)
    store = Store(path)
    rows, refs = [], []
    for d in range(datasets):
        for fold in range(folds):
            for seed in range(seeds):
                inst = f"d{d}-f{fold}-s{seed}"
                ref = float(rng.uniform(5, 50))
                refs.append({"instance_key": inst, "problem": PROBLEM, "dataset": f"uci/set-{d:02d}",
                             "instance_params": {"fold": fold}, "seed": seed, "value": ref, "lower": ref * (1 - 1e-9),
                             "gap": 1e-9, "kind": "certified", "solver": "synthetic", "status": "ok"})
                for c in range(configs):
                    rate = 0.5 + c + rng.uniform(0, 0.5)  # configuration c converges at about 10^-(rate t)
                    t = np.geomspace(1e-3, 2.0 + c, points)
                    gaps = 10.0 ** (-rate * t) + 1e-8
                    status, feasible, final_gap = "ok", 1, float(gaps[-1])
                    u = rng.uniform()
                    if u < 0.01:
                        final_gap = -1e-4  # ends below the certified bound
                    elif u < 0.02:
                        status, feasible = "infeasible", 0
                    elif u < 0.03:
                        status = "timeout"
                    curve = [{"t": float(a), "objective": ref * (1 + float(g)), "feasible": 1, "repaired": 0}
                             for a, g in zip(t, gaps)]
                    obj = ref * (1 + final_gap)
                    rows.append(CellResult(
                        run_id="synthetic", cell_key=f"{inst}-c{c}", instance_key=inst, problem=PROBLEM,
                        dataset=f"uci/set-{d:02d}", instance_params={"fold": fold}, seed=seed, solver="pd-cone",
                        solver_params={"tol": 10.0 ** -(c + 3)}, status=status, message="", wall_time_s=float(t[-1]),
                        cpu_time_s=float(t[-1]), peak_rss_mb=200.0, iterations=points, objective=obj,
                        reference_objective=ref, reference_kind="certified", gap_abs=obj - ref,
                        gap_rel=(obj - ref) / ref, feasible=feasible, metrics={}, trace=[], curve=curve))
        store.write_many(rows, refs)
        rows, refs = [], []
    store.start_run("synthetic", "benchmarks/report_render.py (synthetic store)", {"cpus": 0}, {"psdbench": "0"}, {})
    return datasets * folds * seeds * configs


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", default=None, help="store to render (created with the synthetic cells if absent)")
    ap.add_argument("--out", default=None, help="report directory (default: beside the store)")
    ap.add_argument("--datasets", type=int, default=12)
    ap.add_argument("--folds", type=int, default=50)
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--configs", type=int, default=4)
    ap.add_argument("--points", type=int, default=100)
    args = ap.parse_args(argv)
    import tempfile

    from psdbench.report import write_report

    db = Path(args.db) if args.db else Path(tempfile.mkdtemp(prefix="report-render-")) / "big.sqlite"
    if not db.exists():
        t0 = time.perf_counter()
        n = synthesise(db, args.datasets, args.folds, args.seeds, args.configs, args.points)
        print(f"synthesised {n} cells into {db} ({db.stat().st_size / 2**20:.1f} MB) in {time.perf_counter() - t0:.1f} s")
    out = Path(args.out) if args.out else db.parent / "report"
    t0, c0 = time.perf_counter(), time.process_time()
    paths = write_report(Store(db), out)
    secs, cpu = time.perf_counter() - t0, time.process_time() - c0
    mb = paths["html"].stat().st_size / 2**20
    print(f"render: {secs:.1f} s wall, {cpu:.1f} s CPU (target <= 30 s); report.html: {mb:.2f} MB (target <= 15 MB); "
          f"command: python benchmarks/report_render.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    return 0 if secs <= 30 and mb <= 15 else 1


if __name__ == "__main__":
    sys.exit(main())
