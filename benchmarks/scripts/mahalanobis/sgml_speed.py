"""Wall-time ratio PD-cone / SGML on the SGML paper's objective protocol (section 6.2), in one process.

Usage (madelon, K = 500, MCML, the first 10 folds as in the paper's Fig. 6)::

    PSDBENCH_DATA=../shared/datasets python benchmarks/scripts/mahalanobis/sgml_speed.py --dataset uci/madelon --objective mcml

Every fold is one instance (``protocol = "objective"``); ``sgml`` and ``pd-cone`` run with their
default parameters, which share the paper's main stopping tolerance (Table 3: objective change
below 1e-5, relative to max(1, |Q|)).  BLAS is pinned to one thread (threadpoolctl) for the whole
run; the two solvers alternate on each fold so that drift of the machine hits both.  The output
gives the median wall time of each solver, their ratio, the mean objectives and SGML's time split
(LOBPCG, LP, step size), and every point verifies (the script checks and says so).
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time

from threadpoolctl import threadpool_limits

from psdbench.api import Budget
from psdbench.registry import discover


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="uci/madelon")
    ap.add_argument("--objective", default="mcml")
    ap.add_argument("--folds", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=1)
    ap.add_argument("--solvers", nargs=2, default=["sgml", "pd-cone"], metavar=("FAST", "BASELINE"))
    args = ap.parse_args(argv)

    reg = discover()
    data = reg.load_dataset(args.dataset)
    problem = reg.problem(f"metric/{args.objective}")
    fast, base = (reg.solver(s) for s in args.solvers)
    times: dict[str, list[float]] = {args.solvers[0]: [], args.solvers[1]: []}
    objs: dict[str, list[float]] = {args.solvers[0]: [], args.solvers[1]: []}
    split = {"lobpcg_s": 0.0, "lp_s": 0.0, "step_s": 0.0}
    bad = []
    with threadpool_limits(limits=1):
        for fold in range(args.folds):
            inst = problem.build(data, {"protocol": "objective", "fold": fold}, 0)
            for _ in range(args.repeats):
                for name, solver in ((args.solvers[0], fast), (args.solvers[1], base)):
                    t0 = time.perf_counter()
                    sol = solver.solve(inst, Budget())
                    times[name].append(time.perf_counter() - t0)
                    objs[name].append(inst.objective(sol))
                    if not inst.verify(sol).ok:
                        bad.append((name, fold))
                    if name == args.solvers[0]:
                        for k in split:
                            split[k] += float(sol.info.get(k, 0.0))
            print(f"fold {fold}: " + ", ".join(f"{n} {times[n][-1]:.2f} s (Q={objs[n][-1]:.4g})" for n in times),
                  file=sys.stderr, flush=True)
    med = {n: statistics.median(t) for n, t in times.items()}
    print(f"# {args.dataset}, metric/{args.objective}, folds 0-{args.folds - 1}, {args.repeats} repeat(s); "
          f"{platform.processor() or platform.machine()}, BLAS 1 thread")
    print(f"command: python benchmarks/scripts/mahalanobis/sgml_speed.py {' '.join(argv if argv is not None else sys.argv[1:])}")
    for n in times:
        print(f"{n:10s} median {med[n]:8.3f} s   mean objective {statistics.fmean(objs[n]):.4g}")
    print(f"ratio {args.solvers[1]} / {args.solvers[0]} (medians): {med[args.solvers[1]] / med[args.solvers[0]]:.2f}x")
    total = sum(times[args.solvers[0]])
    print(f"{args.solvers[0]} time split: " + ", ".join(f"{k} {v / total:.0%}" for k, v in split.items()))
    print("every returned point verified" if not bad else f"NOT verified: {bad}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
