"""How close each solver gets on the SDPLIB problems that stop double precision short of 1e-6.

Usage::

    PSDBENCH_DATA=/work/shared/datasets OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python benchmarks/scripts/sdp/sdp_hard_accuracy.py [--problems hinf1 hinf3 qap6] [--limit 120]

Each native adapter runs at its own default tolerances and at tighter ones (SDPA: epsilonStar =
epsilonDash from 1e-7 to 1e-10; Clarabel with chordal decomposition on / off, and at 1e-10;
CVXOPT at 1e-8 and 1e-9; SCS at eps 1e-4 and 1e-9; SDPA-GMP at its 1e-10 in 200 bits), and each
point's six DIMACS errors are recomputed from the data.  The table gives the largest error, the
one that is largest, the objective ``<C, X>`` and the solver's own word.  A solver that is not
installed is left out with the reason.
"""

from __future__ import annotations

import argparse
import time
import warnings

from psdbench.api import Budget
from psdbench.families.sdp.datasets import SdplibCollection
from psdbench.families.sdp.solvers.native import SdpClarabel, SdpCvxopt, SdpScs
from psdbench.families.sdp.solvers.sdpa import SdpSdpa
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.solvers.sdpa_gmp import SdpSdpaGmp

SETTINGS = [
    (SdpSdpa, {"epsilonStar": 1e-7, "epsilonDash": 1e-7}),
    (SdpSdpa, {"epsilonStar": 1e-8, "epsilonDash": 1e-8}),
    (SdpSdpa, {"epsilonStar": 1e-9, "epsilonDash": 1e-9}),
    (SdpSdpa, {"epsilonStar": 1e-10, "epsilonDash": 1e-10}),
    (SdpClarabel, {}),
    (SdpClarabel, {"chordal": False}),
    (SdpClarabel, {"chordal": False, "tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10}),
    (SdpCvxopt, {}),
    (SdpCvxopt, {"abstol": 1e-9, "reltol": 1e-9, "feastol": 1e-9}),
    (SdpScs, {}),
    (SdpScs, {"eps_abs": 1e-9, "eps_rel": 1e-9}),
    (SdpSdpaGmp, {}),
]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--problems", nargs="+", default=["hinf1", "hinf3", "qap6"])
    ap.add_argument("--limit", type=float, default=120.0, help="seconds per solve")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print("| problem | solver | settings | largest DIMACS error | which | <C,X> | time s | solver says |")
    print("|---|---|---|---|---|---|---|---|")
    for name in args.problems:
        inst = SdpStandard().build(SdplibCollection().load(name), {}, 0)
        for S, opts in SETTINGS:
            solver = S()
            why = solver.skip_reason(inst)
            if why:
                print(f"| {name} | {solver.name} | {opts or 'defaults'} | not run: {why} | | | | |")
                continue
            t0 = time.perf_counter()
            try:
                sol = solver.solve(inst, Budget.seconds(args.limit), **opts)
            except Exception as exc:  # a solver's crash is a result here
                print(f"| {name} | {solver.name} | {opts or 'defaults'} | error | | | | {type(exc).__name__}: {exc} |")
                continue
            dt = time.perf_counter() - t0
            feas = inst.verify(sol)
            errs = {k: v for k, v in feas.details.items() if k.startswith("err")}
            worst = max(errs, key=lambda k: abs(errs[k])) if errs else "-"
            print(f"| {name} | {solver.name} | {opts or 'defaults'} | {feas.max_residual:.1e} | {worst} | "
                  f"{inst.objective(sol):.8g} | {dt:.2f} | {sol.status.value} {sol.message} |", flush=True)


if __name__ == "__main__":
    main()
