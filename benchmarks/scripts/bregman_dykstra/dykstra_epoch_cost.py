"""Time per epoch of the ``dykstra`` solver against n: the O(n^3) per-projection cost of section 4.

Measures, on the section 5.1 half-spaces (``synthetic/dykstra-halfspaces``, K = 50, ISBD,
lambda = 1e-3, instance seed 0), the wall time of one epoch (K projections, each one n x n
eigendecomposition, plus the per-epoch section 4.1 bound) of ``dykstra`` (order ``rand``) for
n = 100, 200, 400, in this one process with BLAS on one thread (``OMP_NUM_THREADS`` /
``OPENBLAS_NUM_THREADS`` / ``MKL_NUM_THREADS`` set to 1 before numpy is imported, unless already
set).  The time of an epoch is read from the solver's trace (``t`` of epoch e minus that of epoch 0),
so the pre-processing (K inverse square roots ``A_k^{-1/2}``) is left out; the per-epoch time is
the median over the measured epochs.  Prints a table and the least-squares slope of
log(time per epoch) against log(n), with 3 (the O(n^3) regime the paper states) beside it.

Ill-conditioned ``A_k``: the section 5.1 matrices ``A_k = F_k F_k'`` (``F_k`` square) are numerically
singular at large n (seed 0, lambda = 1e-3: largest condition number of the 50 ``A_k`` 1e8 at
n = 100, 3e14 at n = 200, 2e16 at n = 400).  ``dykstra`` projects those above a condition number of
1e8 through the generalized eigenproblem of ``(A_k, W^{-1})`` instead of ``A_k^{-1/2}`` (the same
``J`` and (6); ``info["n_pencil"]`` counts them), so the instances run as drawn (``--ridge 0``, the
default).  ``--ridge r`` adds ``r tr(A_k) / n I`` to every ``A_k`` (the table's last column says how
many still take the pencil; a ridge well above 1e-8 sends all through ``A_k^{-1/2}``).

    PYTHONPATH=src python benchmarks/scripts/bregman_dykstra/dykstra_epoch_cost.py            # n = 100, 200, 400, 3 epochs
    PYTHONPATH=src python benchmarks/scripts/bregman_dykstra/dykstra_epoch_cost.py --quick    # n = 100, 200, 1 epoch
    PYTHONPATH=src python benchmarks/scripts/bregman_dykstra/dykstra_epoch_cost.py --sizes 8 16 --K 5 --epochs 1
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from psdbench.api import Budget  # noqa: E402
from psdbench.families.bregman_dykstra.data import dykstra_halfspaces_dataset  # noqa: E402
from psdbench.families.bregman_dykstra.dykstra import Dykstra  # noqa: E402
from psdbench.families.bregman_dykstra.problem import BregmanPairs  # noqa: E402

EXPECTED_SLOPE = 3.0


def epoch_times(n: int, K: int, epochs: int, lam: float = 1e-3, order: str = "rand",
                ridge: float = 0.0) -> dict[str, float]:
    """``{"n", "K", "epochs", "per_epoch_s", "min_epoch_s", "setup_s"}`` of one solve of ``epochs`` epochs."""
    inst = BregmanPairs().build(dykstra_halfspaces_dataset(), {"n": n, "K": K, "lambda": lam, "divergence": "is"}, 0)
    if ridge > 0:  # see the module docstring
        scale = np.trace(inst.A, axis1=1, axis2=2) / n
        inst.A = inst.A + ridge * scale[:, None, None] * np.eye(n)[None]
    t0 = time.perf_counter()
    sol = Dykstra().solve(inst, Budget(), order=order, gap_tol=0.0, max_epochs=epochs)
    total = time.perf_counter() - t0
    t = np.array([p["t"] for p in sorted(sol.trace, key=lambda p: p["epoch"])])
    per = np.diff(t)  # one entry per epoch (trace point 0 is after the pre-processing)
    if not len(per):
        raise RuntimeError(f"n = {n}: no epoch recorded")
    return {"n": n, "K": K, "epochs": len(per), "per_epoch_s": float(np.median(per)), "min_epoch_s": float(per.min()),
            "setup_s": float(total - (t[-1] - t[0])), "n_pencil": int(sol.info.get("n_pencil", 0))}


def loglog_slope(ns: list[int], times: list[float]) -> float:
    """Least-squares slope of log(time) against log(n) (NaN with fewer than two sizes)."""
    if len(ns) < 2:
        return float("nan")
    return float(np.polyfit(np.log(np.asarray(ns, float)), np.log(np.asarray(times, float)), 1)[0])


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[100, 200, 400])
    ap.add_argument("--K", type=int, default=50)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--ridge", type=float, default=0.0, help="A_k += ridge tr(A_k) / n I (0: as drawn; docstring)")
    ap.add_argument("--quick", action="store_true", help="n = 100, 200 and one epoch")
    ap.add_argument("--json", default="", help="also write the rows and the slope to this file")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    sizes, epochs = (args.sizes, args.epochs) if not args.quick else ([100, 200], 1)
    rows = []
    for n in sizes:
        rows.append(epoch_times(n, args.K, epochs, ridge=args.ridge))
        print(f"n = {n}: {rows[-1]['per_epoch_s']:.4g} s per epoch", file=sys.stderr, flush=True)
    slope = loglog_slope([r["n"] for r in rows], [r["per_epoch_s"] for r in rows])
    print(f"dykstra (order rand, ISBD, lambda 1e-3, seed 0), K = {args.K}, ridge = {args.ridge:g}, "
          f"BLAS threads = {os.environ.get('OPENBLAS_NUM_THREADS')}\n")
    print("| n | epochs timed | time per epoch (s, median) | fastest epoch (s) | pre-processing + setup (s) "
          "| A_k by the pencil |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['n']} | {r['epochs']} | {r['per_epoch_s']:.4g} | {r['min_epoch_s']:.4g} | {r['setup_s']:.3g} "
              f"| {r['n_pencil']} of {r['K']} |")
    print(f"\nlog-log slope of time per epoch against n: {slope:.2f} (expected {EXPECTED_SLOPE:g} for O(n^3))")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"rows": rows, "slope": slope, "expected_slope": EXPECTED_SLOPE, "ridge": args.ridge}, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
