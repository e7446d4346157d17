"""Why gdpa-lp-elim's error is far from the SDP's on complete graphs: bound or rounding?

One process, BLAS on one thread::

    PSDBENCH_DATA=/work/shared/datasets python benchmarks/scripts/graph_classification/gc_complete_gap.py --n 200 400 --seeds 0 1 2 3 4

Per instance (WDBC, ``standardize``, complete and kNN graphs): the reduced SDP solved by SCS
(1e-6) gives ``Z*`` and its dual ``w*``; gdpa-lp-elim gives the split dual's ``y``.  Printed:

* bound: the split dual's certified lower bound over p* (the SDP's value);
* error rates of four roundings: the SDP's own labels (sign of Z*'s t-column, the harness's rule
  for the conic solvers), the first eigenvector of ``Q + diag(w*)`` (the SDP's dual, GDPA's
  rounding rule), the first eigenvector of ``Q + diag(y)`` (gdpa-lp-elim, split dual), and label
  propagation, and complementary slackness ``(Q + diag y) [z_U; 1] = 0`` solved for ``z_U`` at
  ``w*`` and at the split dual's ``y`` (a rounding that uses the dual point).

If the eigenvector of ``Q + diag(w*)`` is as good as the SDP's labels, the rounding rule is fine
and the gap comes from the split dual's ``y``; otherwise the rounding itself loses.
"""

from __future__ import annotations

import argparse

import numpy as np
import scipy.linalg as sla
from threadpoolctl import threadpool_limits

from psdbench.api import Budget
from psdbench.registry import discover


def eig_labels(Q: np.ndarray, y: np.ndarray) -> np.ndarray:
    """``x_U = sign(w_U) sign(w_t)``, ``w`` the first eigenvector of ``Q + diag(y)``."""
    _, V = sla.eigh(Q + np.diag(y), subset_by_index=[0, 0])
    w = V[:, 0]
    return np.where(w[:-1] * (1.0 if w[-1] >= 0 else -1.0) >= 0, 1.0, -1.0)


def slackness_labels(Q: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Complementary slackness ``(Q + diag y) [z_U; 1] = 0`` solved for the t-column ``z_U`` of Z: its signs.

    At the SDP's optimal dual this is the t-column of Z* (where ``Q_UU + diag y_U`` is nonsingular),
    i.e. the SDP's own labels; at another ``y`` it is the rounding that dual point suggests.
    """
    k = Q.shape[0] - 1
    zu = np.linalg.lstsq(Q[:k, :k] + np.diag(y[:k]), -Q[:k, k], rcond=None)[0]
    return np.where(zu >= 0, 1.0, -1.0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, nargs="+", default=[200])
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    ap.add_argument("--graphs", nargs="+", default=["complete", "knn"])
    args = ap.parse_args()
    reg = discover()
    data = reg.load_dataset("sklearn/breast-cancer")
    prob, elim = reg.problem("graph-classification"), reg.solver("gdpa-lp-elim")
    print("graph n seed | LB_split/p* | err: SDP Z-column, eig(Q+diag w*), eig(Q+diag y_split), label prop., "
          "slackness(w*), slackness(y_split)")
    with threadpool_limits(1):
        for graph in args.graphs:
            for n in args.n:
                rows = []
                for seed in args.seeds:
                    inst = prob.build(data, {"n": n, "graph": graph, "k": 10, "scaling": "standardize"}, seed)
                    truth = inst.x_true[inst.m:]
                    prb, Z, diag, Q = inst._reduced_problem()
                    prb.solve(solver="SCS", eps_abs=1e-6, eps_rel=1e-6, max_iters=100000, acceleration_lookback=0)
                    const = inst.reduced_sdp()[1]
                    pstar = float(np.sum(Q * Z.value)) + const
                    w = np.asarray(diag.dual_value, float)
                    zlab = np.where(np.asarray(Z.value)[:-1, -1] >= 0, 1.0, -1.0)
                    sol = elim.solve(inst, Budget.seconds(120))
                    met = inst.evaluate(sol)
                    r = (met["lower_bound"] / pstar, np.mean(zlab != truth), np.mean(eig_labels(Q, w) != truth),
                         np.mean(eig_labels(Q, sol.variables["y_reduced"]) != truth), met["labelprop_error"],
                         np.mean(slackness_labels(Q, w) != truth),
                         np.mean(slackness_labels(Q, sol.variables["y_reduced"]) != truth))
                    rows.append(r)
                    print(f"{graph:8} {n:4} {seed} | {r[0]:.3f} | " + " ".join(f"{100 * e:5.1f}%" for e in r[1:]),
                          flush=True)
                m = np.mean(rows, axis=0)
                print(f"{graph:8} {n:4} mean | {m[0]:.3f} | " + " ".join(f"{100 * e:5.1f}%" for e in m[1:]))


if __name__ == "__main__":
    main()
