"""maxcut-mixing on gset-class graphs of growing size, in one process, outside the harness.

For each graph: build ``maxcut/sdp`` through the registry (the dataset from the ``gset-class``
collection), warm the solver up, then time one solve (wall clock) and read the instance's own
``evaluate``: the SDP value, the dual bound and its kind, the relative gap to it, the rounded cut.
Prints a row per graph and the least-squares exponent of time over n per class.  BLAS and numba on
one thread.  Timings on a shared machine: read the ratios of one invocation.

    OMP_NUM_THREADS=1 NUMBA_NUM_THREADS=1 PYTHONPATH=src python benchmarks/scripts/maxcut/gset_mixing_scaling.py
    ... gset_mixing_scaling.py --limit 300 toroidal-1000000-pm1
"""

from __future__ import annotations

import argparse
import os
import resource
import time

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import numpy as np  # noqa: E402

from psdbench.api import Budget  # noqa: E402
from psdbench.families.maxcut.report import fit_exponent  # noqa: E402
from psdbench.registry import discover  # noqa: E402

DEFAULT = ["toroidal-800-pm1", "toroidal-100x20-pm1", "toroidal-5000-pm1", "toroidal-10000-pm1",
           "toroidal-20000-pm1", "random-800-p0.06", "random-2000-p0.01", "random-5000-p0.001",
           "random-7000-p0.0007", "random-10000-p0.0002"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("graphs", nargs="*", default=DEFAULT)
    ap.add_argument("--limit", type=float, default=120.0, help="seconds per solve")
    args = ap.parse_args()
    reg = discover()
    problem, solver = reg.problem("maxcut/sdp"), reg.solver("maxcut-mixing")
    rows = []
    print(f"{'graph':24} {'n':>9} {'seconds':>8} {'SDP value':>12} {'dual bound':>12} {'kind':>10} "
          f"{'gap':>9} {'cut':>9} {'maxrss MiB':>10}")
    for g in args.graphs:
        ds = reg.load_dataset(f"gset-class/{g}")
        inst = problem.build(ds, {}, 0)
        solver.warm_up(inst)
        t = time.perf_counter()
        sol = solver.solve(inst, Budget.seconds(args.limit))
        dt = time.perf_counter() - t
        ev = inst.evaluate(sol)
        kind = "certified" if ev.get("dual_bound_certified") == 1.0 else "estimate"
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        rows.append((g.split("-")[0], inst.n, dt))
        print(f"{g:24} {inst.n:>9,} {dt:>8.2f} {inst.objective(sol):>12.3f} {ev.get('dual_bound', np.nan):>12.3f} "
              f"{kind:>10} {ev.get('bound_gap_rel', np.nan):>9.2e} {ev.get('cut', np.nan):>9,.0f} {rss:>10.0f}")
    for cls in sorted({r[0] for r in rows}):
        n = np.array([r[1] for r in rows if r[0] == cls], float)
        s = np.array([r[2] for r in rows if r[0] == cls], float)
        print(f"{cls}: time ~ n^{fit_exponent(n, s):.2f} over n = {int(n.min()):,} ... {int(n.max()):,}")


if __name__ == "__main__":
    main()
