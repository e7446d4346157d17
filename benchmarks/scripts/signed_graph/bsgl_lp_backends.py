"""Time of the balanced-CLIME column LP (12) per column: HiGHS against the section V ADMM.

For a seeded section VI-A instance, every sampled column is solved at ``rho = rho_l + 0.03``
(rho_l from the minimum-feasibility LP (21), true polarities) by

* ``highs``: HiGHS dual simplex, cold start (a new model per column);
* ``admm-cholesky``: the ADMM of (89)-(111), (89) by a factor computed once per LP;
* ``admm-cg``: the same with conjugate gradient warm-started at the previous iterate (the paper's);

in the dense form (45) when K >= N and the K << N form (136) otherwise.  One process, BLAS
pinned to one thread; medians over the sampled columns, and the ratio to HiGHS from this run.

    python benchmarks/scripts/signed_graph/bsgl_lp_backends.py --columns 5
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from psdbench.families.signed_graph.data import balanced_gmrf  # noqa: E402
from psdbench.families.signed_graph.clime_lp import ColumnLP, min_feasible_rho  # noqa: E402
from psdbench.families.signed_graph.slp_admm import ColumnADMM  # noqa: E402
from psdbench.families.signed_graph.problem import sample_covariance  # noqa: E402


def run(n: int, k: int, columns: int, seed: int, max_iter: int) -> None:
    s = balanced_gmrf(n, k, 0.2, 0.0, seed)
    C = sample_covariance(s.X)
    form = "sparse" if k < n else "dense"
    rows = {"highs": [], "admm-cholesky": [], "admm-cg": []}
    agree, conv = [], {"admm-cholesky": 0, "admm-cg": 0}
    for i in np.linspace(0, n - 1, columns).astype(int):
        signs = s.polarity[i] * s.polarity
        rho = min_feasible_rho(C, i, signs)[0] + 0.03
        t0 = time.perf_counter()
        _, ref = ColumnLP(C, i, signs).solve(rho)
        rows["highs"].append(time.perf_counter() - t0)
        for solver in ("cholesky", "cg"):
            t0 = time.perf_counter()
            res = ColumnADMM(C=C, X=s.X, i=i, signs=signs, form=form, linear_solver=solver, max_iter=max_iter).solve(rho)
            rows[f"admm-{solver}"].append(time.perf_counter() - t0)
            conv[f"admm-{solver}"] += int(res.converged)
            agree.append(abs(res.objective - ref) / ref)
    h = np.median(rows["highs"])
    print(f"N={n} K={k} ({form} form), {columns} columns, seed {seed}:")
    for name, ts in rows.items():
        extra = "" if name == "highs" else f"  converged {conv[name]}/{columns}"
        print(f"  {name:14s} median {np.median(ts) * 1e3:10.2f} ms/column  ratio to highs {np.median(ts) / h:9.1f}{extra}")
    print(f"  largest relative objective difference ADMM vs HiGHS: {max(agree):.2e}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--columns", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--max-iter", type=int, default=100000)
    a = ap.parse_args()
    for n, k in ((50, 500), (50, 50), (100, 500), (100, 50)):
        run(n, k, a.columns, a.seed, a.max_iter)


if __name__ == "__main__":
    main()
