"""The mixing method (``gc-mixing``) beside ``gdpa-lp-elim`` on cod-rna, at one certified gap.

One process, BLAS on one thread, every size measured in this one run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1 NUMBA_NUM_THREADS=1 \\
        PSDBENCH_DATA=/work/shared/datasets \\
        python benchmarks/scripts/graph_classification/gc_mixing_vs_gdpa.py [--folds 1000 500 100 50 20] [--full] [--budget 900]

Instances: ``uci/cod-rna-full`` cut into K stratified folds, fold 0 (the grid
``benchmarks/grids/gdpa-cod-rna-folds.toml``: kNN ``k = 10``, ``minmax``, seed 0, half labelled),
and with ``--full`` the whole set (488,565 nodes).  Per size:

1. ``gdpa-lp-elim`` (default parameters): its solve time, then the family's own certificate of
   its returned dual (Gershgorin discs of its scaling, O(nnz)); its relative gap
   ``gap = (x'Lx - LB) / |x'Lx|`` between its labels' objective and that certified lower bound.
2. ``gc-mixing``'s kernel (the max-cut mixing sweep on ``C = -Q``, rank 16 unless ``--rank``):
   sweeps in chunks (1, 2, 4, ... continued from the point, ``V0``); after each chunk the dual
   ``y_i = ||sum_{j != i} Q_ij v_j|| - Q_ii`` and the t-column labels give an uncertified gap; once
   that is at most GDPA's gap, the family's certificate (LDL^T of ``Q + diag y`` with its rigorous
   residual) is computed, and the run stops when the *certified* gap is at most GDPA's.  Its time is
   sweeps + duals + every certification attempt.
3. The ratio mixing / GDPA of the times to that same certified gap; then the mixing run continued
   from there to a stationary point (sweep gain below ``--conv-tol`` relative, within the budget
   left), certified once: the SDP's value to that accuracy, beside which GDPA's (split dual) bound
   is read.

``--sweeps-only``: per size only the mixing sweeps from the seeded start to ``--conv-tol``, timed.

A size where the mixing method does not reach GDPA's gap within ``--budget`` seconds is reported
with the gap it reached.  At the end: log-log slopes of both times over the sizes, and the load.
"""

from __future__ import annotations

import argparse
import math
import os
import resource
import time

import numpy as np
from threadpoolctl import threadpool_limits

from psdbench.api import Budget
from psdbench.families.graph_classification.mixing import reduced_cost, reduced_dual, t_column_labels
from psdbench.families.maxcut.mixing import initial_point, mixing
from psdbench.registry import discover


def rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6


def gap(upper: float, lower: float) -> float:
    return (upper - lower) / max(abs(upper), 1e-300)


def run_size(problem, gdpa, data, params: dict, rank: int, budget: float, seed: int, conv_tol: float) -> dict:
    t0 = time.perf_counter()
    inst = problem.build(data, {**params, "graph": "knn", "k": 10, "scaling": "minmax", "dense_n": 0}, seed)
    t_build = time.perf_counter() - t0
    N = inst.n
    # 1. GDPA: solve, then the family's certificate of its dual
    t0 = time.perf_counter()
    sol = gdpa.solve(inst, Budget.seconds(1800))
    t_g = time.perf_counter() - t0
    t0 = time.perf_counter()
    ev = inst.evaluate(sol)
    t_gc = time.perf_counter() - t0
    gap_g = gap(ev["xLx"], ev["lower_bound"])
    row = dict(N=N, nnz=int(inst.L.nnz), build_s=t_build, gdpa_s=t_g, gdpa_cert_s=t_gc, gdpa_total_s=t_g + t_gc,
               gdpa_lb=ev["lower_bound"], gdpa_xLx=ev["xLx"], gdpa_gap=gap_g, gdpa_cert=ev["certificate"],
               gdpa_err=ev["error_rate"])
    # 2. the mixing method to the same certified gap
    Q, const = reduced_cost(inst)
    C = -Q
    k = min(rank, Q.shape[0])
    t_start = time.perf_counter()
    V = initial_point(Q.shape[0], k, seed)
    sweeps, chunk, t_cert, certs = 0, 1, 0.0, 0
    reached, cert_gap, lb, xLx, err, kind = False, math.inf, -math.inf, math.nan, math.nan, ""
    while time.perf_counter() - t_start < budget:
        V, s, _ = mixing(C, k, seed, tol=0.0, max_sweeps=chunk, V0=V)
        sweeps += s
        y = reduced_dual(Q, V)
        x = t_column_labels(inst, V)
        xLx = float(x @ (inst.L @ x))
        est = gap(xLx, const - float(np.sum(y)))
        if est <= gap_g:
            t1 = time.perf_counter()
            sol_m = type(sol)(variables={"y_reduced": y, "x": x})
            em = inst.evaluate(sol_m)
            t_cert += time.perf_counter() - t1
            certs += 1
            lb, kind, err = em["lower_bound"], em["certificate"], em["error_rate"]
            cert_gap = gap(xLx, lb)
            if kind != "ldlt":  # no factorization fits: no certificate at this size, stop trying
                break
            if cert_gap <= gap_g:
                reached = True
                break
        chunk = min(2 * chunk, 64)
    t_m = time.perf_counter() - t_start
    # 3. continued to a stationary point (sweep gain < conv_tol relative), certified once
    t1 = time.perf_counter()
    V, s, why = mixing(C, k, seed, tol=conv_tol, max_sweeps=100_000, V0=V,
                       budget=Budget.seconds(max(1.0, budget - t_m)))
    t_sweeps = time.perf_counter() - t1
    y = reduced_dual(Q, V)
    x = t_column_labels(inst, V)
    em = inst.evaluate(type(sol)(variables={"y_reduced": y, "x": x}))
    row.update(conv_s=t_m + time.perf_counter() - t1, conv_more_sweeps_s=t_sweeps, conv_sweeps=sweeps + s, conv_why=why, conv_lb=em["lower_bound"],
               conv_cert=em["certificate"], conv_sdp=const + float(np.sum(V * (Q @ V))), conv_xLx=em["xLx"],
               conv_err=em["error_rate"], conv_gap=gap(em["xLx"], em["lower_bound"]))
    row.update(mix_s=t_m, mix_cert_s=t_cert, mix_certs=certs, mix_sweeps=sweeps, mix_rank=k, mix_lb=lb,
               mix_xLx=xLx, mix_gap=cert_gap, mix_cert=kind, mix_err=err, reached=reached,
               ratio=t_m / (t_g + t_gc), rss_gb=rss_gb())
    return row


def slope(rows: list[dict], key: str) -> float:
    n = np.log([r["N"] for r in rows])
    t = np.log([max(r[key], 1e-9) for r in rows])
    return float(np.polyfit(n, t, 1)[0]) if len(rows) > 1 else math.nan


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--folds", type=int, nargs="*", default=[1000, 500, 100, 50, 20])
    ap.add_argument("--full", action="store_true", help="then the whole cod-rna (488,565 nodes)")
    ap.add_argument("--rank", type=int, default=16)
    ap.add_argument("--budget", type=float, default=900.0, help="seconds of the mixing method per size")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--conv-tol", type=float, default=1e-6, help="the continued run's sweep-gain tolerance")
    ap.add_argument("--sweeps-only", action="store_true",
                    help="only the mixing sweeps from the seeded start to --conv-tol, timed (no GDPA, no certificate)")
    a = ap.parse_args()
    if any(K < 2 for K in a.folds) or a.rank < 1 or a.budget <= 0:
        ap.error("folds must be >= 2, rank >= 1, budget > 0")
    print(f"load (uptime): {os.getloadavg()}", flush=True)
    reg = discover()
    problem, gdpa = reg.problem("graph-classification"), reg.solver("gdpa-lp-elim")
    data = reg.load_dataset("uci/cod-rna-full")
    sizes = [{"n_folds": K, "fold": 0} for K in a.folds] + ([{"n": 488565}] if a.full else [])
    rows = []
    if a.sweeps_only:
        with threadpool_limits(1):
            mixing(-reduced_cost_warm(), 2, 0, max_sweeps=1)
            for params in sizes:
                inst = problem.build(data, {**params, "graph": "knn", "k": 10, "scaling": "minmax", "dense_n": 0}, a.seed)
                Q, _ = reduced_cost(inst)
                t0 = time.perf_counter()
                _, s, why = mixing(-Q, min(a.rank, Q.shape[0]), a.seed, tol=a.conv_tol)
                dt = time.perf_counter() - t0
                print(f"N {inst.n:>7} reduced {Q.shape[0]:>7} {s} sweeps ({why}) {dt:.2f}s {1e3 * dt / s:.1f} ms/sweep "
                      f"| load {os.getloadavg()[0]:.1f}", flush=True)
        return
    with threadpool_limits(1):
        mixing(-reduced_cost_warm(), 2, 0, max_sweeps=1)  # compile the sweep (untimed)
        for params in sizes:
            r = run_size(problem, gdpa, data, params, a.rank, a.budget, a.seed, a.conv_tol)
            rows.append(r)
            print(f"N {r['N']:>7} nnz {r['nnz']:>8} build {r['build_s']:6.1f}s | gdpa {r['gdpa_s']:7.3f}s "
                  f"+cert {r['gdpa_cert_s']:6.3f}s gap {r['gdpa_gap']:.4f} [{r['gdpa_cert']}] err {100 * r['gdpa_err']:.2f}% | "
                  f"mixing {r['mix_s']:8.2f}s (cert {r['mix_cert_s']:.2f}s x{r['mix_certs']}) {r['mix_sweeps']} sweeps "
                  f"gap {r['mix_gap']:.4f} [{r['mix_cert']}] err {100 * r['mix_err']:.2f}% reached={r['reached']} | "
                  f"ratio {r['ratio']:.1f} | LB {r['gdpa_lb']:.6g} / {r['mix_lb']:.6g} | peakRSS {r['rss_gb']:.2f} GB "
                  f"| load {os.getloadavg()[0]:.1f}", flush=True)
            print(f"    continued: {r['conv_s']:.2f}s in all ({r['conv_more_sweeps_s']:.2f}s of further sweeps, "
                  f"the rest certification) {r['conv_sweeps']} sweeps ({r['conv_why']}) SDP primal "
                  f"{r['conv_sdp']:.7g} lower bound {r['conv_lb']:.7g} [{r['conv_cert']}; ldlt certified, lanczos an estimate] (GDPA's LB "
                  f"{r['gdpa_lb'] / r['conv_lb']:.4f} of it) gap {r['conv_gap']:.4f} err {100 * r['conv_err']:.2f}%",
                  flush=True)
    done = [r for r in rows if r["reached"]]
    print(f"log-log slope of time over N: gdpa {slope(rows, 'gdpa_total_s'):.2f}, "
          f"mixing (sizes reached) {slope(done, 'mix_s'):.2f}; load (uptime): {os.getloadavg()}")


def reduced_cost_warm():
    import scipy.sparse as sp

    return sp.csr_matrix(np.array([[0.0, 1.0], [1.0, 0.0]]))


if __name__ == "__main__":
    main()
