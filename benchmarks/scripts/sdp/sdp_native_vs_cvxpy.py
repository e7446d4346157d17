"""SCS and Clarabel on SDPLIB problems: native adapters against the cvxpy path, compile time apart.

Usage::

    PSDBENCH_DATA=/work/shared/datasets OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/scripts/sdp/sdp_native_vs_cvxpy.py [--problems truss1 hinf1 ...] [--repeat 3]
    python benchmarks/scripts/sdp/sdp_native_vs_cvxpy.py --read thetaG51        # the reader's time alone

For each problem and solver (same tolerances on both paths: SCS eps_abs = eps_rel = 1e-4 with
max_iters 100000; Clarabel's defaults, chordal decomposition on as cvxpy leaves it), the median
over ``--repeat`` runs of

* ``native``: wall time of the adapter's ``solve`` (``sdp-scs`` on the dual form and on (P),
  ``sdp-clarabel``: building the svec data, the solver's setup and its iterations);
* ``compile``: wall time of ``problem.get_problem_data(solver)`` on a fresh cvxpy formulation
  (``SdpInstance.reference_formulation``): cvxpy's canonicalization alone;
* ``cvxpy solve``: wall time of ``problem.solve(solver)`` on another fresh formulation (compile,
  solver, unpacking), and the solver time cvxpy reports (``solver_stats.solve_time``);

with both objectives and each point's largest DIMACS error (recomputed from the data).  The
ratio ``cvxpy solve / native`` is what the modelling layer costs end to end.  Timings on a shared
machine are noisy: the ratios come from one process, interleaved, median of the repeats.
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import numpy as np

from psdbench.api import Budget, Solution
from psdbench.families.sdp.datasets import SdplibCollection
from psdbench.families.sdp.solvers.native import SdpClarabel, SdpScs
from psdbench.families.sdp.problem import SdpStandard

DEFAULT = ["truss1", "truss4", "hinf1", "control1", "theta1", "qap5", "mcp100", "truss5"]
CVX = {"sdp-scs": ("SCS", {"eps_abs": 1e-4, "eps_rel": 1e-4, "max_iters": 100000}),
       "sdp-clarabel": ("CLARABEL", {})}
#: the native runs: (label, solver, its parameters); SCS on both forms (the dual form is its default)
NATIVE = [("sdp-scs", SdpScs(), {}), ("sdp-scs[form=primal]", SdpScs(), {"form": "primal"}),
          ("sdp-clarabel", SdpClarabel(), {})]


def _native(solver, inst, params):
    t = time.perf_counter()
    sol = solver.solve(inst, Budget.seconds(600), **params)
    return time.perf_counter() - t, sol


def _cvxpy(inst, backend, opts):
    form = inst.reference_formulation()
    t = time.perf_counter()
    form.problem.get_problem_data(backend)
    compile_s = time.perf_counter() - t
    form = inst.reference_formulation()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        form.problem.solve(solver=backend, **opts)
    total = time.perf_counter() - t
    stats = float(form.problem.solver_stats.solve_time or np.nan)
    sol = Solution(variables=form.extract()) if form.problem.status in ("optimal", "optimal_inaccurate") else None
    return compile_s, total, stats, sol


def _err(inst, sol):
    if sol is None or "X" not in sol.variables:
        return float("nan")
    return inst.evaluate(sol).get("max_err", float("nan"))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="*", default=DEFAULT)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--read", default=None, help="only time reading this SDPLIB file (median of --repeat)")
    args = ap.parse_args()
    col = SdplibCollection()
    if args.read:
        from psdbench.families.sdp.sdpa_io import read_sdpa

        path = col.path(args.read)
        ts = []
        for _ in range(max(args.repeat, 1)):
            t = time.perf_counter()
            d = read_sdpa(path)
            ts.append(time.perf_counter() - t)
        print(f"read {path.name}: m = {d.m}, n = {d.n}, nnz(A) = {d.A.nnz}: median {statistics.median(ts):.3f} s "
              f"(min {min(ts):.3f}, max {max(ts):.3f}) over {len(ts)} reads")
        return
    pr = SdpStandard()
    print(f"{'problem':10s} {'solver':20s} {'native s':>9s} {'compile s':>9s} {'cvxpy s':>9s} {'(solver)':>9s} "
          f"{'cvxpy/native':>12s} {'obj native':>14s} {'obj cvxpy':>14s} {'err native':>10s} {'err cvxpy':>10s}")
    for name in args.problems:
        inst = pr.build(col.load(name), {}, 0)
        for label, solver, params in NATIVE:
            backend, opts = CVX[solver.name]
            nat, comp, tot, st = [], [], [], []
            sol_n = sol_c = None
            for _ in range(args.repeat):
                t, sol_n = _native(solver, inst, params)
                nat.append(t)
                c, total, stats, sol_c = _cvxpy(inst, backend, opts)
                comp.append(c)
                tot.append(total)
                st.append(stats)
            mn, mc, mt, ms = (statistics.median(v) for v in (nat, comp, tot, st))
            on = inst.objective(sol_n) if sol_n is not None and "X" in sol_n.variables else float("nan")
            oc = inst.objective(sol_c) if sol_c is not None else float("nan")
            print(f"{name:10s} {label:20s} {mn:9.3f} {mc:9.3f} {mt:9.3f} {ms:9.3f} {mt / mn:12.2f} "
                  f"{on:14.8g} {oc:14.8g} {_err(inst, sol_n):10.1e} {_err(inst, sol_c):10.1e}", flush=True)


if __name__ == "__main__":
    main()
