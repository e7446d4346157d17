"""sdp-burer-monteiro (and sdp-sketchycgal) on an SDPLIB theta problem: time to a point and a
certified bound, and where the time goes.

Usage::

    PSDBENCH_DATA=/work/shared/datasets OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 \\
        python benchmarks/scripts/sdp/sdp_lowrank_theta.py [--problem thetaG51] [--limit 120] \\
        [--solver sdp-burer-monteiro] [--param tol=1e-7 ...] [--json out.jsonl]

The problem is built as the harness builds it (``sdplib/<problem>``), the solver runs with
``--limit`` seconds, then the instance scores the returned factored point as the harness does
(``evaluate``: DIMACS errors from ``R`` and ``y`` and the lower bound from ``y`` with its kind).
Printed: the solve's time, the evaluation's time (the bound's share of it), the objective and the
bound in SDPLIB's sign (published: maximisation, so the bound is an UPPER bound there), their
relative distances to the published value, the DIMACS errors, and the solver's own trace (outer
iterations: objective, relative infeasibility, sigma).  The issue's target: within 1e-6 of the
published value (relative) with a certified bound, in 120 s on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import time

from psdbench.api import Budget
from psdbench.families.sdp.datasets import SdplibCollection
from psdbench.families.sdp.lowrank.lowrank_bound import dual_bound
from psdbench.families.sdp.problem import SdpStandard


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problem", default="thetaG51")
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--solver", default="sdp-burer-monteiro", choices=["sdp-burer-monteiro", "sdp-sketchycgal"])
    ap.add_argument("--param", action="append", default=[], help="solver parameter name=value (repeatable)")
    ap.add_argument("--json", help="append the result as one JSON line to this file")
    args = ap.parse_args()
    params = {}
    for kv in args.param:
        k, v = kv.split("=", 1)
        params[k] = float(v) if any(c in v for c in ".e") else int(v)
    ds = SdplibCollection().load(args.problem)
    t0 = time.perf_counter()
    inst = SdpStandard().build(ds, {}, 0)
    t_build = time.perf_counter() - t0
    if args.solver == "sdp-burer-monteiro":
        from psdbench.families.sdp.lowrank.burer_monteiro import SdpBurerMonteiro as S
    else:
        from psdbench.families.sdp.lowrank.sketchycgal import SdpSketchyCgal as S
    t0 = time.perf_counter()
    sol = S().solve(inst, Budget.seconds(args.limit), **params)
    t_solve = time.perf_counter() - t0
    t0 = time.perf_counter()
    bound = dual_bound(inst.data, sol.variables["y"])
    t_bound = time.perf_counter() - t0
    t0 = time.perf_counter()
    ev = inst.evaluate(sol)
    t_eval = time.perf_counter() - t0
    pub = inst.published  # our sign (minimisation)
    obj = inst.objective(sol)
    out = {"problem": args.problem, "solver": args.solver, "params": params, "limit_s": args.limit,
           "build_s": round(t_build, 3), "solve_s": round(t_solve, 2), "bound_s": round(t_bound, 2),
           "evaluate_s": round(t_eval, 2), "objective_sdplib_sign": -obj, "bound_sdplib_sign": -bound["bound"],
           "bound_kind": bound["kind"], "published": None if pub is None else -pub,
           "objective_rel_to_published": None if pub is None else abs(obj - pub) / abs(pub),
           "bound_rel_to_published": None if pub is None else abs(bound["bound"] - pub) / abs(pub),
           "max_dimacs": ev.get("max_err"), **{f"err{k}": ev.get(f"err{k}") for k in range(1, 7)},
           "info": {k: v for k, v in sol.info.items() if isinstance(v, (int, float, str))},
           "trace": sol.trace}
    print(json.dumps({k: v for k, v in out.items() if k != "trace"}, indent=1))
    print("trace (outer iterations):")
    for p in sol.trace:
        print("  " + "  ".join(f"{k}={v:.6g}" for k, v in p.items()))
    if args.json:
        with open(args.json, "a") as fh:
            fh.write(json.dumps(out) + "\n")


if __name__ == "__main__":
    main()
