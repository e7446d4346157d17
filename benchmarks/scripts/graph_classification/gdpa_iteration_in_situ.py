"""One GDPA iteration against its kernels timed in place, inside the solve (no replay).

    python benchmarks/scripts/graph_classification/gdpa_iteration_in_situ.py [--n 1500] [--repeats 3]

The kernel suite (``benchmarks/kernels``) replays each kernel on recorded inputs in its own
benchmark; here every kernel call of a capped solve (two LPs, ``tol = 0``) is wrapped by a timer,
and the kernels' time in LP 2 is set against that iteration's time read off the solver's own trace
(consecutive trace points), for ``gdpa-lp`` and ``gdpa-lp-elim`` on the dense path and on the
sparse path (``dense_n = 0``; ``gdpa-lp-elim`` with ``scalars = "gdpa"``, as in
``kern_graph_sparse.py``).  BLAS is pinned to one thread.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import ExitStack
from pathlib import Path
from typing import Any, Callable
from unittest import mock

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))


def _timed(name: str, f: Callable, acc: dict[str, list[float]]) -> Callable:
    def wrapper(*a: Any, **k: Any) -> Any:
        t0 = time.perf_counter()
        out = f(*a, **k)
        acc.setdefault(name, []).append(time.perf_counter() - t0)
        return out
    return wrapper


def measure(label: str, inst: Any, solver: Any, params: dict, targets: list[tuple[Any, str]], repeats: int) -> None:
    """Print, per repeat, LP 2's iteration time, its kernels' time in place, and their ratio."""
    from psdbench.api import Budget

    for _ in range(repeats):
        acc: dict[str, list[float]] = {}
        with ExitStack() as stack:
            for o, a in targets:
                stack.enter_context(mock.patch.object(o, a, _timed(a, getattr(o, a), acc)))
            sol = solver.solve(inst, Budget(max_iter=2), tol=0.0, **params)
        it = sol.trace[-1]["t"] - sol.trace[-2]["t"]
        kern = sum(v[-1] for v in acc.values())  # each kernel runs once per iteration: its last call is LP 2's
        parts = ", ".join(f"{k} {1e3 * v[-1]:.2f}" for k, v in acc.items())
        print(f"{label:22s} iteration {1e3 * it:8.2f} ms  kernels {1e3 * kern:8.2f} ms  ratio {it / kern:5.2f}  ({parts})")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1500, help="digits subset size (at most 1797)")
    ap.add_argument("--repeats", type=int, default=3)
    args = ap.parse_args(argv)
    from benchmarks.instances import DIGITS, graph_classification, limit_blas

    limits = limit_blas()  # noqa: F841 (kept for the run)
    from psdbench.families.graph_classification import gdpa_lp, gdpa_lp_elim, sparse_elim, sparse_gdpa_lp
    from psdbench.families.graph_classification.gdpa_lp import GdpaLp, SplitDualLP
    from psdbench.families.graph_classification.gdpa_lp_elim import GdpaLpElim
    from psdbench.linalg.gershgorin_lp import AffineSignedMatrix, DiagAffineMatrix

    dense = graph_classification(args.n, dataset=DIGITS)
    sparse = graph_classification(args.n, dataset=DIGITS, dense_n=0)
    measure("gdpa-lp dense", dense, GdpaLp(), {}, [(dense, "split_dual_matrix"), (gdpa_lp, "first_eigvec"),
                                                   (SplitDualLP, "build"), (gdpa_lp, "solve_lp")], args.repeats)
    measure("gdpa-lp-elim dense", dense, GdpaLpElim(), {},
            [(gdpa_lp_elim, "gershgorin_rows"), (gdpa_lp_elim, "solve_lp"), (AffineSignedMatrix, "evaluate"),
             (gdpa_lp_elim, "first_eigvec")], args.repeats)
    measure("gdpa-lp sparse", sparse, GdpaLp(), {}, [(sparse, "split_dual_matrix"), (sparse_gdpa_lp, "first_eigvec"),
                                                     (sparse_gdpa_lp, "lp_rows"), (sparse_gdpa_lp, "solve_lp")],
            args.repeats)
    measure("gdpa-lp-elim sparse", sparse, GdpaLpElim(), {"scalars": "gdpa"},
            [(DiagAffineMatrix, "tight_rows"), (DiagAffineMatrix, "evaluate"), (sparse_elim, "first_eigvec")],
            args.repeats)
    return 0


if __name__ == "__main__":
    sys.exit(main())
