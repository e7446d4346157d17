"""Whether two versions of SGML / PGML give the same results: run a fixed set of solves, save, compare.

``run`` solves, with whichever ``psdbench`` is importable (set ``PYTHONPATH=<checkout>/src`` to
pick a checkout), every objective with ``sgml`` and ``pgml`` at each size ``K`` of the kernel
suite's instances (``benchmarks/instances.py``), capped at two sweeps and to convergence, plus the
near-identity start, iterate checks, the HiGHS backend (K = 12) and two WDBC folds, and pickles
the final matrix, colours, every trace objective, the iteration counts and the status.
``compare`` reports the largest relative difference (final M, every trace objective) and fails
on different counts, colours, statuses, or a difference above ``--rtol``.

    PYTHONPATH=../main-checkout/src python benchmarks/scripts/mahalanobis/sgml_equivalence.py run before.pkl --sizes 12,25,50
    python benchmarks/scripts/mahalanobis/sgml_equivalence.py run after.pkl --sizes 12,25,50
    python benchmarks/scripts/mahalanobis/sgml_equivalence.py compare before.pkl after.pkl
"""

from __future__ import annotations

import argparse
import pickle
import sys
from pathlib import Path
from typing import Any, Callable

import numpy as np

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:  # `benchmarks.instances` when run as a script
    sys.path.insert(0, str(ROOT))

OBJECTIVES = ("mcml", "deml", "lsml", "lmnn", "glr")


def cases(sizes: list[int]) -> list[tuple[str, Callable[[], Any]]]:
    """``(name, solve)`` of every solve compared."""
    from benchmarks.instances import metric, metric_wdbc
    from psdbench.api import Budget
    from psdbench.families.mahalanobis.sgml import Pgml, Sgml

    out: list[tuple[str, Callable[[], Any]]] = []
    for K in sizes:
        for obj in OBJECTIVES:
            for name, cls in (("sgml", Sgml), ("pgml", Pgml)):
                out.append((f"{name}/{obj}/K{K}/sweeps2", lambda K=K, o=obj, c=cls: c().solve(
                    metric(o, K), Budget(max_iter=2), tol=0.0, full_phase=False)))
                out.append((f"{name}/{obj}/K{K}/default", lambda K=K, o=obj, c=cls: c().solve(metric(o, K), Budget())))
        out.append((f"sgml/mcml/K{K}/near-identity",
                    lambda K=K: Sgml().solve(metric("mcml", K), Budget(), init="near-identity")))
        out.append((f"sgml/mcml/K{K}/check",
                    lambda K=K: Sgml().solve(metric("mcml", K), Budget(max_iter=3), check_iterates=True)))
    out.append(("sgml/mcml/K12/highs", lambda: Sgml().solve(metric("mcml", 12), Budget(), lp_backend="highs")))
    for fold in (0, 3):
        for name, cls in (("sgml", Sgml), ("pgml", Pgml)):
            for obj in ("mcml", "lsml"):
                out.append((f"{name}/{obj}/wdbc-fold{fold}", lambda f=fold, o=obj, c=cls: c().solve(
                    metric_wdbc(o, {"protocol": "objective", "fold": f}), Budget())))
    return out


def run(path: Path, sizes: list[int]) -> int:
    import psdbench
    from benchmarks.instances import limit_blas

    limits = limit_blas()
    res = {}
    for key, solve in cases(sizes):
        sol = solve()
        res[key] = {"M": sol.variables["M"], "colours": sol.variables["colours"],
                    "info": {k: v for k, v in sol.info.items() if not k.endswith("_s")},  # no timers
                    "trace": [p["objective"] for p in sol.trace], "iterations": sol.iterations,
                    "status": str(sol.status)}
    limits.unregister()
    path.write_bytes(pickle.dumps(res))
    print(f"{len(res)} solves with {psdbench.__file__} -> {path}")
    return 0


def compare(a_path: Path, b_path: Path, rtol: float) -> int:
    a, b = pickle.loads(a_path.read_bytes()), pickle.loads(b_path.read_bytes())
    if a.keys() != b.keys():
        print("different sets of solves")
        return 1
    worst, identical, bad = 0.0, 0, []
    for k in a:
        x, y = a[k], b[k]
        if (x["info"] != y["info"] or x["status"] != y["status"] or x["iterations"] != y["iterations"]
                or not np.array_equal(x["colours"], y["colours"]) or len(x["trace"]) != len(y["trace"])):
            bad.append(f"{k}: counts, colours, status or trace length differ")
            continue
        r = max([float(np.max(np.abs(x["M"] - y["M"]))) / max(1e-300, float(np.max(np.abs(x["M"]))))]
                + [abs(p - q) / max(1e-300, abs(p)) for p, q in zip(x["trace"], y["trace"])])
        worst, identical = max(worst, r), identical + (r == 0.0)
        if r > rtol:
            bad.append(f"{k}: relative difference {r:.3g}")
    print("\n".join(bad))
    print(f"{len(a)} solves; bit-identical {identical}; worst relative difference {worst:.3g} "
          f"(final M, every trace objective); {len(bad)} beyond rtol {rtol:g} or with other differences")
    return 1 if bad else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("out", type=Path)
    r.add_argument("--sizes", default="12,25,50", help="comma-separated K")
    c = sub.add_parser("compare")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    c.add_argument("--rtol", type=float, default=1e-12)
    args = ap.parse_args(argv)
    if args.cmd == "run":
        return run(args.out, [int(k) for k in args.sizes.split(",")])
    return compare(args.a, args.b, args.rtol)


if __name__ == "__main__":
    sys.exit(main())
