"""``dykstra`` against metric-learn's ITML on the same vector pairs (ISBD, eps = 0): optimum and time.

Where the mapping is exact (``pairs = "labels"``, ``divergence = "is"``, ``eps = 0``, equal ``c_k``;
``instance.metric_pairs()["exact"]``), ITML (Davis et al.) solves problem (2) itself by cyclic
Bregman projections, so both solvers must reach the certified optimum of the instance.  For each data
set this script, in one process with BLAS on one thread:

1. builds the instance (seed 0, ``lambda = 1e-3``, 100 pairs per class) and its certified reference
   (Clarabel, Lagrange dual bound);
2. runs ``dykstra`` (``order = "rand"``) to a section 4.1 bound of 1e-9 and reads from its trace the
   wall time of the first epoch whose objective is within ``target`` (1e-4) relative of the reference;
3. runs ``ml-itml`` with its convergence threshold ``tol`` = 1e-3 (metric-learn's default), 1e-4, ...,
   1e-8 (``max_iter`` 10^6) and reports the first fit whose objective (recomputed by the instance) is
   within ``target``, with its wall time; ITML is a black box with no trace, so its time to the
   target is that of the loosest threshold that reaches it;
4. prints the ratio ITML time / ``dykstra`` time, both measured here.

    PYTHONPATH=src python benchmarks/scripts/bregman_dykstra/dykstra_vs_itml.py                      # wine, iris, breast-cancer
    PYTHONPATH=src python benchmarks/scripts/bregman_dykstra/dykstra_vs_itml.py --datasets sklearn/iris:multiclass --ppc 10
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

from psdbench.api import Budget, PsdbenchError  # noqa: E402
from psdbench.families.bregman_dykstra.dykstra import Dykstra  # noqa: E402
from psdbench.families.bregman_dykstra.problem import BregmanPairs  # noqa: E402
from psdbench.registry import discover  # noqa: E402
from psdbench.solvers.metric_learn import MlItml, import_metric_learn  # noqa: E402

TOLS = (1e-3, 1e-4, 1e-5, 1e-6, 1e-7, 1e-8)


def compare(dataset: str, ppc: int, lam: float, target: float) -> dict[str, object]:
    """One data set: reference, dykstra's time to ``target``, ITML's first threshold reaching it."""
    reg = discover()
    inst = BregmanPairs().build(reg.load_dataset(dataset), {"pairs": "labels", "pairs_per_class": ppc,
                                                            "lambda": lam, "divergence": "is"}, 0)
    mapping = inst.metric_pairs()
    ref = inst.certified_reference(300)
    if ref["status"] != "ok" or ref["lower"] is None:
        raise RuntimeError(f"{dataset}: no certified reference ({ref.get('message')})")
    value, scale = float(ref["value"]), max(1.0, abs(float(ref["value"])))
    t0 = time.perf_counter()
    sol = Dykstra().solve(inst, Budget(), order="rand", gap_tol=1e-9, max_epochs=100_000)
    d_total = time.perf_counter() - t0
    hit = [p for p in sorted(sol.trace, key=lambda p: p["epoch"]) if (p["objective"] - value) / scale <= target]
    d_time = float(hit[0]["t"]) if hit else float("nan")
    out: dict[str, object] = {"dataset": dataset, "n": inst.n, "K": inst.K, "exact": mapping["exact"],
                              "reference": value, "interval": value - float(ref["lower"]),
                              "dykstra_s": d_time, "dykstra_final_gap": (inst.objective(sol) - value) / scale,
                              "dykstra_total_s": d_total, "itml": []}
    for tol in TOLS:
        t0 = time.perf_counter()
        s = MlItml().solve(inst, Budget(), tol=tol, max_iter=1_000_000)
        t = time.perf_counter() - t0
        gap = (inst.objective(s) - value) / scale
        out["itml"].append((tol, t, gap))
        if gap <= target:
            break
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--datasets", nargs="+",
                    default=["sklearn/wine:multiclass", "sklearn/iris:multiclass", "sklearn/breast-cancer"])
    ap.add_argument("--ppc", type=int, default=100, help="pairs per class (section 5.2: 100)")
    ap.add_argument("--lambda", dest="lam", type=float, default=1e-3)
    ap.add_argument("--target", type=float, default=1e-4)
    args = ap.parse_args(argv)
    if import_metric_learn() is None:
        print("metric-learn is not installed (pip install 'psdbench[peers]')", file=sys.stderr)
        return 2
    print(f"target: objective within {args.target:g} relative of the certified optimum; BLAS threads = "
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}; lambda = {args.lam:g}, {args.ppc} pairs per class, seed 0\n")
    print("| data set | n | K | mapping exact | dykstra (rand) to target (s) | ITML tol reaching it | ITML time (s) "
          "| ITML gap at that tol | ITML / dykstra |")
    print("|---|---:|---:|---|---:|---:|---:|---:|---:|")
    reg = discover()
    for ds in args.datasets:
        try:
            reg.check_dataset(ds)
        except PsdbenchError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
    for ds in args.datasets:
        r = compare(ds, args.ppc, args.lam, args.target)
        tol, t, gap = r["itml"][-1]
        reached = gap <= args.target
        ratio = t / r["dykstra_s"] if reached and r["dykstra_s"] > 0 else float("nan")
        print(f"| {ds} | {r['n']} | {r['K']} | {r['exact']} | {r['dykstra_s']:.3g} | "
              f"{tol:g}{'' if reached else ' (not reached)'} | {t:.3g} | {gap:.2g} | {ratio:.0f}x |", flush=True)
        looser = ", ".join(f"tol {a:g}: {b:.2g} s, gap {c:.2g}" for a, b, c in r["itml"][:-1])
        if looser:
            print(f"|  |  |  |  |  | (looser: {looser}) |  |  |  |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
