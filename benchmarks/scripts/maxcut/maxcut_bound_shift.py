"""The certified max-cut bound of a dual plus a constant, ``U(y + c 1)``, against ``U(y)`` (issue 49).

``U(y) = 1'y + n lambda_max(C - Diag y)`` is invariant under ``y -> y + c 1`` in exact arithmetic.
For each graph: the mixing method's dual ``y`` (a fixed sweep tolerance), then the certified bound
(:func:`psdbench.families.maxcut.bound.dual_bound`) of ``y + c s 1`` for the offsets ``c`` (``s`` the
largest absolute row sum of ``C``).  Prints, per offset, the bound, its distance to the exact
``U(y)`` (dense ``eigvalsh`` up to 2,000 nodes, else ARPACK on the centred matrix at tolerance 1e-14),
its relative difference from the bound at ``c = 0``, the factorizations the shift search made and
the seconds.  ``--before REV`` prints the same for the certificate at an earlier commit beside
(``certify.py`` and ``bound.py`` read with ``git show REV:...``, loaded under other names).

    PSDBENCH_DATA=../shared/datasets python benchmarks/scripts/maxcut/maxcut_bound_shift.py --before a843a6a
    ... maxcut_bound_shift.py --cases maxG60,torus100x200 --offsets 0,-1000
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_v, "1")

import argparse  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import types  # noqa: E402
from pathlib import Path  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
CASES = ["random200", "maxG51", "maxG32", "maxG60", "torus100x200"]


def _graph(case: str):
    from psdbench.families.maxcut.graph import graph_from_sdp, random_graph, torus_graph
    from psdbench.families.sdp.datasets import SdplibCollection

    if case.startswith("random"):
        return random_graph(int(case[6:]), 0.05, 1), 0
    if case.startswith("torus"):
        rows, cols = map(int, case[5:].split("x"))
        return torus_graph(rows, cols, 0), 16
    W, _ = graph_from_sdp(SdplibCollection().load(case).payload["sdp"])
    return W, 0


def _exact_lambda_max(S) -> float:
    import numpy as np
    import scipy.sparse.linalg as spla

    n = S.shape[0]
    if n <= 2000:
        return float(np.linalg.eigvalsh(S.toarray())[-1])
    mu = float(S.diagonal().mean())
    op = spla.LinearOperator((n, n), matvec=lambda x: S @ x - mu * x, dtype=float)
    v0 = np.random.default_rng(1).standard_normal(n)
    w = spla.eigsh(op, k=1, which="LA", tol=1e-14, ncv=64, v0=v0, maxiter=5000, return_eigenvectors=False)
    return float(w[0]) + mu


def _old_modules(rev: str):
    """``dual_bound`` of commit ``rev`` and its certify module (counted like the current one)."""
    def show(path: str) -> str:
        return subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"], check=True,
                              capture_output=True, text=True).stdout

    def load(name: str, path: str, package: str) -> types.ModuleType:
        module = types.ModuleType(name)
        module.__package__ = package  # relative imports (.ordering) resolve to today's modules
        sys.modules[name] = module  # dataclasses look their module up
        exec(compile(show(path), f"{rev}:{path}", "exec"), module.__dict__)
        return module

    import psdbench.linalg.certify  # noqa: F401  (today's, restored below)

    cert = load("psdbench.linalg._certify_before", "src/psdbench/linalg/certify.py", "psdbench.linalg")
    saved = sys.modules["psdbench.linalg.certify"]
    sys.modules["psdbench.linalg.certify"] = cert  # the old bound.py imports the old certificate
    try:
        bound = load("psdbench.families.maxcut._bound_before", "src/psdbench/families/maxcut/bound.py",
                     "psdbench.families.maxcut")
    finally:
        sys.modules["psdbench.linalg.certify"] = saved
    return bound.dual_bound, cert


def _counted(cert):
    """Wrap the module's two factorizations with a counter (``certify_psd`` looks them up by name)."""
    count = [0]
    for name in ("_sparse_factor", "_dense_factor"):
        f = getattr(cert, name)

        def wrapped(*a, _f=f, **k):
            count[0] += 1
            return _f(*a, **k)
        setattr(cert, name, wrapped)
    return count


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES), help="random<n>, torus<r>x<c> (rank 16), or an SDPLIB maxG")
    ap.add_argument("--offsets", default="0,10,-10,1000,-1000", help="c, in units of C's largest row sum")
    ap.add_argument("--tol", type=float, default=1e-10, help="the mixing method's sweep tolerance")
    ap.add_argument("--before", default="", help="a commit whose certificate is printed beside")
    a = ap.parse_args(argv)
    import math

    import psdbench.linalg.certify as cert
    from psdbench.families.maxcut.bound import dual_bound, slack_matrix
    from psdbench.families.maxcut.graph import laplacian_cost
    from psdbench.families.maxcut.mixing import default_rank, dual_from_point, mixing

    versions = [("after", dual_bound, _counted(cert))]
    if a.before:
        old_bound, old_cert = _old_modules(a.before)
        versions.insert(0, ("before", old_bound, _counted(old_cert)))
    offsets = [float(c) for c in a.offsets.split(",")]
    print(f"{'case':>13} {'n':>6} {'c':>7} {'version':>7} {'bound':>19} {'(bound-U)/U':>11} "
          f"{'|b-b0|/b0':>9} {'factor.':>7} {'s':>6}  reason")
    for case in a.cases.split(","):
        W, rank = _graph(case)
        C = laplacian_cost(W)
        n = C.shape[0]
        V, _, _ = mixing(C, rank or default_rank(n, 100), 0, tol=a.tol)
        y = dual_from_point(C, V)
        scale = float(abs(C).sum(axis=1).max())
        exact = math.fsum(y.tolist()) + n * _exact_lambda_max(slack_matrix(C, y))
        for label, bound, count in versions:
            b0 = None
            for c in offsets:
                count[0] = 0
                t = time.perf_counter()
                b = bound(C, y + c * scale)
                dt = time.perf_counter() - t
                b0 = b.value if b0 is None else b0
                print(f"{case:>13} {n:>6} {c:>7g} {label:>7} {b.value:>19.12f} {(b.value - exact) / abs(exact):>11.2e} "
                      f"{abs(b.value - b0) / abs(b0):>9.1e} {count[0]:>7} {dt:>6.2f}  {b.kind}: {b.reason[:60]}",
                      flush=True)
        print(f"{case:>13} {n:>6} exact U(y) = {exact:.12f}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
