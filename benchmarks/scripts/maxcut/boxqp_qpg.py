"""qpG51 (SDPLIB's box-QP relaxation of Gset's G51) in its graph form: ``boxqp-mixing`` to a certified gap.

Run (BLAS pinned to one thread here)::

    PSDBENCH_DATA=../shared/datasets python benchmarks/scripts/maxcut/boxqp_qpg.py [--dataset sdplib/qpG51] [--tol 1e-9]

Prints read, solve and certified-bound seconds, the objective, the bound and its kind, the relative
gap, and SDPLIB's published value beside (never the reference).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import time  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default="sdplib/qpG51", help="any dataset name (e.g. gset-class/toroidal-800-pm1)")
    ap.add_argument("--tol", type=float, default=1e-9)
    ap.add_argument("--budget", type=float, default=300.0)
    a = ap.parse_args()
    from psdbench.api import Budget
    from psdbench.families.maxcut.boxqp import BoxqpMixing, MaxcutBoxqp
    from psdbench.registry import discover

    t0 = time.perf_counter()
    inst = MaxcutBoxqp().build(discover().load_dataset(a.dataset), {}, 0)
    t1 = time.perf_counter()
    solver = BoxqpMixing()
    solver.warm_up(inst)  # numba compile, untimed
    t2 = time.perf_counter()
    sol = solver.solve(inst, Budget.seconds(a.budget), tol=a.tol)
    t3 = time.perf_counter()
    b = inst.bound(sol.variables["y"])
    t4 = time.perf_counter()
    obj = inst.objective(sol)
    gap = (b.value - obj) / max(1.0, abs(b.value))
    print(f"{a.dataset}: n = {inst.n}, edges = {inst.W.nnz // 2}, feasible = {inst.verify(sol).ok}, "
          f"rank = {sol.info['rank']}, sweeps = {sol.iterations} ({sol.info['status']})")
    print(f"read {t1 - t0:.2f} s, solve {t3 - t2:.3f} s, bound {t4 - t3:.2f} s, total {t3 - t2 + t4 - t3:.2f} s")
    print(f"objective {obj:.6f}, bound {b.value:.6f} ({b.kind}), gap_rel {gap:.2e}, published {inst.published}")


if __name__ == "__main__":
    main()
