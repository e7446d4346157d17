"""GDPA scaling on cod-rna: gdpa-lp-elim's solve time against label propagation's sparse solve.

One process, BLAS on one thread, every size measured in this one run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 PSDBENCH_DATA=/work/shared/datasets \\
        python benchmarks/scripts/graph_classification/gdpa_scaling.py [--sizes 1000 4891 9766 24432 59535] [--full]

Instances: ``uci/cod-rna`` (``--full``: ``uci/cod-rna-full`` for sizes above 59,535), kNN graph
``k = 10``, ``minmax`` scaling (the paper's cod-rna protocol), stratified subset of ``n`` samples,
seed 0, half labelled.  Per size: build time, ``gdpa-lp-elim`` solve time (default parameters),
label propagation's sparse CG solve time measured separately on the same instance, their ratio
(each time the median over repeats until 1 s or 7 runs, so that millisecond solves are not noise),
error rates (gdpa, label propagation, majority class), the certified lower bound and how it was
certified, and peak RSS of the process so far (``ru_maxrss``; sizes run in increasing order, so
it is the peak up to and including that size).  Then the log-log slope of the solve time over
the sizes (least squares) and the paper's GDPA times (Fig. 4 right) at the sizes both have.
"""

from __future__ import annotations

import argparse
import csv
import os
import resource
import time
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

from psdbench.api import Budget
from psdbench.families.graph_classification import sparse as gsp
from psdbench.registry import discover

PAPER = Path(os.environ.get("PSDBENCH_DATA", "/work/shared/datasets")) / "gdpa_paper_results/cod-rna_timing_ms.csv"


def paper_times() -> dict[int, float]:
    """Paper's GDPA time (s) per instance size, from the authors' saved results."""
    if not PAPER.exists():
        return {}
    with PAPER.open() as fh:
        return {int(r["n_sample"]): float(r["time_gdpa_ms"]) / 1e3 for r in csv.DictReader(fh) if r["time_gdpa_ms"]}


def timed(fn, min_total: float = 1.0, max_reps: int = 7) -> tuple[float, object]:
    """Median wall time of ``fn()`` over repeats until ``min_total`` seconds or ``max_reps`` runs; its last result."""
    times, out = [], None
    while not times or (sum(times) < min_total and len(times) < max_reps):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return float(np.median(times)), out


def rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6  # ru_maxrss is in kB on Linux


def run(sizes: list[int], full: bool, k: int, seed: int) -> list[dict]:
    reg = discover()
    problem, solver = reg.problem("graph-classification"), reg.solver("gdpa-lp-elim")
    data = {"uci/cod-rna": reg.load_dataset("uci/cod-rna")}
    rows = []
    for n in sizes:
        name = "uci/cod-rna" if n <= 59535 or not full else "uci/cod-rna-full"
        if name not in data:
            data[name] = reg.load_dataset(name)
        t0 = time.perf_counter()
        inst = problem.build(data[name], {"n": n, "graph": "knn", "k": k, "scaling": "minmax", "dense_n": 0}, seed)
        t_build = time.perf_counter() - t0
        t_solve, sol = timed(lambda: solver.solve(inst, Budget.seconds(1800)))
        t_lp, lp = timed(lambda: gsp.harmonic(inst.L, inst.m, inst.xhat))  # the baseline's solve, timed alone
        t0 = time.perf_counter()
        feas = inst.verify(sol)
        met = inst.evaluate(sol)
        t_verify = time.perf_counter() - t0
        rows.append(dict(dataset=name, n=n, nnz=inst.L.nnz, build_s=t_build, solve_s=t_solve, lp_s=t_lp,
                         ratio=t_solve / t_lp, verify_s=t_verify, status=sol.status.value, feasible=feas.ok,
                         err=met["error_rate"], err_lp=met["labelprop_error"], err_maj=met["majority_error"],
                         lower=met["lower_bound"], xLx=inst.objective(sol), cert=met["certificate"],
                         rss_gb=rss_gb()))
        r = rows[-1]
        print(f"{n:>7} {name:<17} nnz {r['nnz']:>9} build {t_build:7.2f}s solve {t_solve:8.3f}s "
              f"labelprop {t_lp:7.3f}s ratio {r['ratio']:5.2f} verify {t_verify:6.2f}s {r['status']:<8} "
              f"ok={feas.ok} err {100 * r['err']:5.2f}% lp {100 * r['err_lp']:5.2f}% maj {100 * r['err_maj']:5.2f}% "
              f"LB {r['lower']:.5g} x'Lx {r['xLx']:.5g} [{r['cert']}] peakRSS {r['rss_gb']:.2f} GB", flush=True)
    return rows


def slope(rows: list[dict], key: str) -> float:
    """Least-squares slope of log(time) over log(n)."""
    n = np.log([r["n"] for r in rows])
    t = np.log([max(r[key], 1e-9) for r in rows])
    return float(np.polyfit(n, t, 1)[0])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000, 4891, 9766, 24432, 59535])
    ap.add_argument("--full", action="store_true", help="sizes above 59,535 from uci/cod-rna-full")
    ap.add_argument("-k", type=int, default=10)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    with threadpool_limits(1):
        rows = run(sorted(args.sizes), args.full, args.k, args.seed)
    if len(rows) > 1:
        print(f"log-log slope of solve time: {slope(rows, 'solve_s'):.3f}; label propagation: {slope(rows, 'lp_s'):.3f}; "
              f"max ratio {max(r['ratio'] for r in rows):.2f}")
    paper = paper_times()
    both = [(r["n"], r["solve_s"], paper[r["n"]]) for r in rows if r["n"] in paper]
    for n, ours, theirs in both:
        print(f"paper GDPA at n = {n}: {theirs:.3f} s (complete graph, their instance); ours {ours:.3f} s")


if __name__ == "__main__":
    main()
