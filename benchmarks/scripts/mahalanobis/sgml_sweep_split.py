"""One SGML / PGML sweep split in place: the time inside each kernel, measured in the sweep, against the sweep.

The kernel suite (``benchmarks/kernels``) replays each kernel alone on recorded inputs; this script
times them where they run.  It solves the kernel suite's instance (``benchmarks/instances.py``
``metric("mcml", K)``) capped at two sweeps, with every kernel the suite counts wrapped by a
timer that is on during the second sweep only (the suite's measured iteration), and prints the
sweep's time, the time inside the kernels, their ratio and each kernel's calls and time.  The
sweep minus the kernels is the glue; the kernels' time here minus their replayed time (the
suite's report) is what the replay does not see.  Best of ``--repeats`` solves, BLAS on one thread.

    python benchmarks/scripts/mahalanobis/sgml_sweep_split.py --K 250 --solver sgml
"""

from __future__ import annotations

import argparse
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:  # `benchmarks.instances` when run as a script
    sys.path.insert(0, str(ROOT))

KERNELS = ("first_eigvec", "scaled_radii", "block_rows", "block_gradient", "block_vertex", "block_dir_distances",
           "column_distances", "step_size", "pair_distances")


def split(K: int, solver: str, repeats: int = 3) -> tuple[float, dict[str, float], dict[str, int]]:
    """``(sweep seconds, seconds per kernel, calls per kernel)`` of the second sweep, best of ``repeats``."""
    from benchmarks.instances import limit_blas, metric
    from psdbench.api import Budget
    from psdbench.families.mahalanobis import sgml as S

    limits = limit_blas()
    inst = metric("mcml", K)
    acc: dict[str, float] = defaultdict(float)
    cnt: dict[str, int] = defaultdict(int)
    on = [False]

    def timed(name: str, f: Callable) -> Callable:
        def wrapper(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            out = f(*a, **kw)
            if on[0]:
                acc[name] += time.perf_counter() - t0
                cnt[name] += 1
            return out
        return wrapper

    saved = {n: getattr(S, n) for n in KERNELS}
    add, stamps = S.TraceRecorder.add, []

    def stamping_add(self: Any, **kw: Any) -> None:
        if kw.get("phase") == 1:  # end of a sweep
            stamps.append(time.perf_counter())
            on[0] = len(stamps) == 1
        add(self, **kw)

    best = None
    try:
        for n in KERNELS:
            setattr(S, n, timed(n, saved[n]))
        inst.obj.value_and_coef = timed("value_and_coef", inst.obj.value_and_coef)
        S.TraceRecorder.add = stamping_add
        cls = S.Sgml if solver == "sgml" else S.Pgml
        for _ in range(repeats):
            acc.clear(), cnt.clear(), stamps.clear()
            cls().solve(inst, Budget(max_iter=2), tol=0.0, full_phase=False)
            sweep = stamps[1] - stamps[0]
            if best is None or sweep < best[0]:
                best = (sweep, dict(acc), dict(cnt))
    finally:
        for n, f in saved.items():
            setattr(S, n, f)
        S.TraceRecorder.add = add
        limits.unregister()
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--K", type=int, default=250)
    ap.add_argument("--solver", default="sgml", choices=["sgml", "pgml"])
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    sweep, acc, cnt = split(args.K, args.solver, args.repeats)
    total = sum(acc.values())
    print(f"{args.solver} K = {args.K}: sweep {1e3 * sweep:.1f} ms, inside kernels {1e3 * total:.1f} ms, "
          f"glue {1e3 * (sweep - total):.1f} ms, ratio {sweep / total:.2f}")
    for n in sorted(acc, key=lambda n: -acc[n]):
        print(f"  {n:22s} {cnt[n]:5d} calls {1e3 * acc[n]:8.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
