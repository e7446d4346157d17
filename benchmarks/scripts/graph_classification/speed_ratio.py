"""Wall-time ratio SCS / GDPA-LP on WDBC graph-classification instances, in one process.

Usage (the full measurement is slow: SCS takes minutes per solve at n=400)::

    python benchmarks/scripts/graph_classification/speed_ratio.py --n 400 --graph complete knn --seeds 0 1 2 --repeats 3

Every instance is ``sklearn/breast-cancer`` with ``scaling="standardize"``, the given graph and
``k=10`` (used by ``knn`` only).  BLAS is pinned to one thread (threadpoolctl) for the whole run.
``gdpa-lp`` (or ``--gdpa gdpa-lp-elim``) runs with its default parameters; ``scs`` with the solver's defaults
(``eps_abs = eps_rel = 1e-4``) plus ``max_iters`` (``--scs-max-iters``) and whatever
``--scs-params`` adds.  Each (graph, seed, solver) is solved ``--repeats`` times and timed with
``time.perf_counter``; the table gives, per graph, the median over all seeds and repeats of each
solver's wall time and the ratio of the two medians.  Statuses other than ``ok`` are listed, so a
SCS run that stopped at ``max_iters`` is visible.
"""

from __future__ import annotations

import argparse
import json
import platform
import shlex
import sys
import time
from collections import defaultdict
from importlib.metadata import version

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

from psdbench.api import Budget
from psdbench.registry import discover

DATASET = "sklearn/breast-cancer"
PROBLEM = "graph-classification"


def pin_threads() -> threadpool_limits:
    """Limit every BLAS / OpenMP pool to one thread.

    threadpoolctl only reaches libraries already loaded, so the numerical libraries the solvers
    load lazily (SciPy's OpenBLAS, scikit-learn's OpenMP, SCS's own OpenBLAS through cvxpy) are
    imported first.
    """
    import cvxpy  # noqa: F401
    import highspy  # noqa: F401
    import scipy.linalg  # noqa: F401
    import scs  # noqa: F401
    import sklearn.neighbors  # noqa: F401

    return threadpool_limits(1)


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=400, help="instance size (samples; half labelled)")
    ap.add_argument("--graph", nargs="+", default=["complete", "knn"], choices=["complete", "knn"])
    ap.add_argument("--k", type=int, default=10, help="neighbours of the knn graph")
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    ap.add_argument("--repeats", type=int, default=3, help="timed solves per (graph, seed, solver)")
    ap.add_argument("--gdpa", default="gdpa-lp", choices=["gdpa-lp", "gdpa-lp-elim"],
                    help="which GDPA solver to time against SCS")
    ap.add_argument("--scs-max-iters", type=int, default=100000, help="SCS max_iters")
    ap.add_argument("--scs-params", type=json.loads, default={},
                    help='extra SCS options as JSON, e.g. \'{"acceleration_lookback": 0}\'')
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if not isinstance(args.scs_params, dict):
        raise SystemExit("--scs-params must be a JSON object")
    reg = discover()
    limits = pin_threads()  # noqa: F841  (held for the whole run)
    dataset = reg.load_dataset(DATASET)
    problem = reg.problem(PROBLEM)
    solvers = {
        "gdpa": (reg.solver(args.gdpa), {}),
        "scs": (reg.solver("scs"), {"max_iters": args.scs_max_iters, **args.scs_params}),
    }

    times: dict[tuple[str, str], list[float]] = defaultdict(list)
    notes: list[str] = []
    for graph in args.graph:
        for seed in args.seeds:
            inst = problem.build(dataset, {"n": args.n, "scaling": "standardize", "graph": graph, "k": args.k}, seed)
            for name, (solver, params) in solvers.items():
                for rep in range(args.repeats):
                    t0 = time.perf_counter()
                    sol = solver.solve(inst, Budget(), **params)
                    dt = time.perf_counter() - t0
                    times[graph, name].append(dt)
                    status = getattr(sol.status, "value", sol.status)
                    print(f"# {graph:8s} seed={seed} {name:8s} rep={rep} {dt:10.3f} s  status={status} "
                          f"iterations={sol.iterations}", file=sys.stderr, flush=True)
                    if status != "ok":
                        notes.append(f"{graph} seed={seed} {name} rep={rep}: status {status} "
                                     f"after {sol.iterations} iterations {sol.message}".rstrip())

    print(f"command: python {shlex.join(sys.argv)}")
    print(f"dataset: {DATASET}, n={args.n}, scaling=standardize, k={args.k}, seeds={args.seeds}, "
          f"repeats={args.repeats}")
    print(f"scs options: {json.dumps({**solvers['scs'][0].default_params, **solvers['scs'][1]}, sort_keys=True)}")
    pools = threadpool_info()
    blas = sorted({f"{d['internal_api']}={d['num_threads']}" for d in pools})
    print(f"threads: {len(pools)} pools, {', '.join(blas) or 'none found'}; python {platform.python_version()}, "
          f"numpy {version('numpy')}, scipy {version('scipy')}, scs {version('scs')}, cvxpy {version('cvxpy')}, "
          f"highspy {version('highspy')}; {platform.machine()} {platform.processor() or platform.system()}")
    print()
    header = (f"| {'graph':8s} | {args.gdpa + ' median (s)':>23s} | {'scs median (s)':>14s} | "
              f"{'scs / ' + args.gdpa:>20s} | {'samples':>7s} |")
    print(header)
    print("|" + "|".join("-" * (len(c)) for c in header.split("|")[1:-1]) + "|")
    for graph in args.graph:
        g, s = np.median(times[graph, "gdpa"]), np.median(times[graph, "scs"])
        print(f"| {graph:8s} | {g:23.3f} | {s:14.3f} | {s / g:20.1f} | {len(times[graph, 'scs']):7d} |")
    if any(d["num_threads"] != 1 for d in pools):
        notes.append("a thread pool was not limited to one thread: " + ", ".join(
            f"{d['filepath']}={d['num_threads']}" for d in pools if d["num_threads"] != 1))
    if notes:
        print("\nnotes:")
        for line in notes:
            print(f"  {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
