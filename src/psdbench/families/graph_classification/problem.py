"""Graph-based binary classification and its SDP relaxation.

Paper: "Projection-free Graph-based Classifier Learning using Gershgorin Disc Perfect Alignment"
(../shared/papers/gdpa-graph-classifier-sdp.txt), sections 4.1-4.3.

Instance protocol (section 6.1 and ../shared/notes/reference-settings.md): a transductive instance
is either a stratified fold (``n=None``: 5 stratified folds with seed 0, fold ``fold``) or a
stratified random subset of ``n`` samples (seed ``seed``); it is permuted with seed ``seed`` and
its first half is labelled.  Features: NaN already 0 (loader), constant columns dropped, then
``standardize`` (z-score with labelled-half statistics, then unit-length rows) or ``minmax``
(each feature to [0, 1] separately within the labelled and the unlabelled half).  Graph: complete
with ``w_ij = exp(-||f_i - f_j||^2)`` or its ``k``-nearest-neighbour sparsification (symmetrized:
an edge where either end is among the other's k nearest), ``L = D - W``.

Sizes: instances with N <= ``dense_n`` are built dense (the original code path, unchanged
results).  Above it a kNN graph is built sparse end to end (:mod:`.sparse`: scikit-learn's
neighbour search, weights on the stored pairs only), and a complete graph is refused past
``max_dense_n`` with the memory it would need.  The conic solvers are skipped, and no conic
reference is computed, past ``conic_max_n``.

The instance, with the variables a solution may carry, is in :mod:`.instance`.
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Mapping

import numpy as np

from psdbench import api
from psdbench.api import Dataset, PsdbenchError
from psdbench.datasets import binary_samples
from psdbench.families.graph_classification.contract import GraphClassificationKind
from psdbench.families.graph_classification.instance import KIND, GraphClassificationInstance
from psdbench.families.graph_classification.sparse import knn_laplacian


#: What ``psdbench info graph-classification`` and docs/families/graph_classification.md print.
DESCRIPTION = """\
Paper: "Projection-free Graph-based Classifier Learning using Gershgorin Disc Perfect Alignment"
(gdpa-graph-classifier-sdp), section 4: SDP primal (8), its dual (12) and the modified dual (20).

Data of an instance: N nodes (samples of a two-class dataset) in the instance's order, the first
m = floor(N / 2) labelled with known labels xhat in {-1, +1}^m; L = D - W (N x N), the Laplacian of
the complete similarity graph w_ij = exp(-||f_i - f_j||^2) or of its symmetrized k-NN
sparsification (graph = "knn").  (8) relaxes  min x'Lx  over labels x in {-1, +1}^N that agree
with xhat:

    minimize    tr(L X)                                  over X (N x N) and x (N)
    subject to  X_ii = 1                  i = 1..N
                x_i  = xhat_i             i = 1..m
                M = [[X, x], [x', 1]]  is PSD            (size N + 1)                   (8)

Variables a solution may carry (any subset; each one present is verified, one of M or x is needed
for the objective):
  M      (N+1, N+1)  the primal matrix [[X, x], [x', 1]].  Rows / columns 0..N-1 are the nodes in
                     the instance's order (labelled first); the homogenising node is the LAST
                     index N: M[N, N] = 1 and M[i, N] = x_i.  Objective tr(L M[:N, :N]).
  x      (N,)        labels in {-1, +1}: the rank-one point [x; 1][x; 1]' is feasible when x
                     agrees with xhat; objective x'Lx (an upper bound on the optimum).
  y, z   (N+1,), (m,) dual of (12): H = diag(y) + offdiag(z) + [[L, 0], [0, 0]] (z on the
                     homogenising node's row and column, which is last) must be PSD; the dual
                     bound is -(1'y + b'z) with b = 2 xhat (11).
  eps    float       the node-splitting parameter of (15) / (20): with it H-bar (size N + 2, the
                     homogenising node split by label sign) is verified too.
  y_reduced, eps_reduced, s_reduced   the same for the reduced SDP (contract: reduced_sdp()):
                     min tr(Q Z) + const over Z PSD with unit diagonal, Z of size N - m + 1
                     (unlabelled nodes, then the homogenising node last); s_reduced is GDPA's
                     positive scaling vector whose Gershgorin discs certify lambda_min in O(nnz).
  s      (N+2,)      scaling vector of H-bar of (15) (sparse instances).

Metrics: error_rate of the predicted labels (sign of x, or of M's last column) on the m..N-1
unlabelled nodes; xLx; on sparse instances the certificate of a returned dual point.
Reference: the reduced SDP solved by Clarabel (by SCS at 1e-6 where its size N - m + 1 passes
60), its point repaired to exact feasibility (value) and bounded by the dual bound of its
multipliers (lower); none past conic_max_n nodes, where the best verified cell is the reference.
"""


# ----------------------------------------------------------------------------- instance building
def _scale(F: np.ndarray, m: int, scaling: str) -> np.ndarray:
    """Feature scaling of section 6.1 (labelled half = first ``m`` rows)."""
    keep = np.ptp(F, axis=0) > 0  # constant columns dropped
    F = F[:, keep]
    if scaling == "standardize":
        mu = F[:m].mean(axis=0)
        sd = F[:m].std(axis=0)
        sd[sd == 0] = 1.0
        G = (F - mu) / sd
        norms = np.linalg.norm(G, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return G / norms
    if scaling == "minmax":
        out = np.empty_like(F)
        for part in (slice(0, m), slice(m, None)):
            block = F[part]
            lo, span = block.min(axis=0), np.ptp(block, axis=0)
            span[span == 0] = 1.0
            out[part] = (block - lo) / span
        return out
    raise PsdbenchError(f"graph-classification: unknown scaling {scaling!r} (standardize | minmax)")


def _weights(F: np.ndarray, graph: str, k: int) -> np.ndarray:
    """Similarity weights ``exp(-||f_i - f_j||^2)``, complete or kNN-sparsified (symmetric)."""
    sq = np.sum(F**2, axis=1)
    D2 = np.maximum(sq[:, None] + sq[None, :] - 2.0 * F @ F.T, 0.0)
    W = np.exp(-D2)
    np.fill_diagonal(W, 0.0)
    if graph == "complete":
        return W
    if graph == "knn":
        n = F.shape[0]
        kk = min(k, n - 1)
        from sklearn.neighbors import NearestNeighbors  # imported here: `psdbench info` needs no scikit-learn

        nbrs = NearestNeighbors(n_neighbors=kk + 1).fit(F)
        _, ind = nbrs.kneighbors(F)
        A = np.zeros((n, n), dtype=bool)
        rows = np.repeat(np.arange(n), kk + 1)
        A[rows, ind.ravel()] = True
        np.fill_diagonal(A, False)
        A |= A.T
        return np.where(A, W, 0.0)
    raise PsdbenchError(f"graph-classification: unknown graph {graph!r} (complete | knn)")


def _select(y: np.ndarray, params: Mapping[str, Any], seed: int) -> np.ndarray:
    """Indices of the instance's samples, in the instance's (permuted) order."""
    from sklearn.model_selection import StratifiedKFold, train_test_split  # here: `psdbench info` needs none

    n_total = len(y)
    n = params.get("n")
    if n is None:
        folds = StratifiedKFold(n_splits=int(params["n_folds"]), shuffle=True, random_state=0)
        # the wanted fold only: materializing every (train, test) pair is K x n_total indices
        idx = next(itertools.islice(folds.split(np.zeros(n_total), y), int(params["fold"]), None))[1]
    else:
        n = int(n)
        if n > n_total or n < 4:
            raise PsdbenchError(f"graph-classification: n={n} outside [4, {n_total}] for this dataset")
        idx = np.arange(n_total) if n == n_total else train_test_split(
            np.arange(n_total), train_size=n, stratify=y, random_state=seed
        )[0]
    return np.random.default_rng(seed).permutation(np.sort(idx))


class GraphClassification:
    """Problem family ``graph-classification``: SDP relaxation (8) of graph-based classification."""

    name = KIND
    kind = KIND
    preload = ("sklearn.model_selection", "sklearn.neighbors")  # imported by the fork server, not at import
    description = DESCRIPTION
    contract = GraphClassificationKind
    params: dict[str, api.Param] = {
        "n": api.number(low=4, default=None, integer=True,
                        doc="subset size; None = one stratified fold (the paper's protocol)"),
        "n_folds": api.number(low=2, default=5, integer=True, doc="stratified folds when n = None"),
        "fold": api.number(low=0, default=0, integer=True, doc="the fold taken when n = None"),
        "scaling": api.choice("standardize", "minmax", doc="feature scaling of section 6.1"),
        "graph": api.choice("complete", "knn", doc="complete similarity graph or its symmetrized k-NN sparsification"),
        "k": api.number(low=1, default=10, integer=True, doc="neighbours of the knn graph"),
        "noise": api.number(low=0, default=0.0, doc="feature noise sd (the paper adds 1e-12 to avoid NaN in normalization)"),
        "feas_tol": api.number(low=0, default=1e-3, doc="tolerance on equality residuals (entries are O(1))"),
        "psd_tol": api.number(low=0, default=1e-4,
                              doc="lambda_min >= -psd_tol * max(1, ||matrix||): matches 1e-4 first-order solvers"),
        "dense_n": api.number(low=0, default=2000, integer=True,
                              doc="N above which a knn instance is sparse (certified by Gershgorin, not eigh)"),
        "max_dense_n": api.number(low=4, default=5000, integer=True,
                                  doc="largest N of a complete graph (dense N x N matrices); larger is refused"),
        "conic_max_n": api.number(low=4, default=1000, integer=True,
                                  doc="N above which scs / clarabel are skipped and no conic reference is solved"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def expand_params(self, load: Callable[[], Dataset], params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Reject at grid load what :func:`_select` or :meth:`build` would reject in the worker: ``n``
        larger than the dataset, ``fold`` not below ``n_folds``, a complete graph past ``max_dense_n``
        (the parameters are otherwise unchanged)."""
        p = {**self.default_params, **params}
        n_total = len(load().y)
        if p["n"] is not None:
            if int(p["n"]) > n_total:
                raise PsdbenchError(f"graph-classification parameter n = {p['n']} is larger than the dataset "
                                    f"({n_total} samples)")
            N = int(p["n"])
        elif int(p["fold"]) >= int(p["n_folds"]):
            raise PsdbenchError(f"graph-classification parameter fold = {p['fold']} must be below n_folds = {p['n_folds']}")
        else:
            N = -(-n_total // int(p["n_folds"]))  # the largest fold
        if p["graph"] == "complete" and N > int(p["max_dense_n"]):
            raise PsdbenchError(f"graph-classification: a complete graph on N = {N} nodes needs dense N x N matrices "
                                f"({N * N * 8 / 1e9:.2g} GB each); max_dense_n = {p['max_dense_n']} (use graph = 'knn')")
        return [dict(params)]

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> "GraphClassificationInstance":
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        _, y_pm = binary_samples(dataset, self.name)
        idx = _select(dataset.y, p, seed)
        x_true = y_pm[idx]
        F = dataset.X[idx].astype(float)
        if p["noise"]:
            F = F + p["noise"] * np.random.default_rng(seed).standard_normal(F.shape)
        m = len(idx) // 2
        N = len(idx)
        if p["graph"] == "complete" and N > int(p["max_dense_n"]):
            raise PsdbenchError(f"graph-classification: a complete graph on N = {N} nodes needs dense N x N matrices "
                                f"({N * N * 8 / 1e9:.2g} GB each); max_dense_n = {p['max_dense_n']} (use graph = 'knn')")
        F = _scale(F, m, p["scaling"])
        if p["graph"] == "knn" and N > int(p["dense_n"]):
            L = knn_laplacian(F, int(p["k"]))  # scipy.sparse, no N x N array
        else:
            W = _weights(F, p["graph"], int(p["k"]))
            L = np.diag(W.sum(axis=1)) - W
        return GraphClassificationInstance(
            dataset=dataset.name, params={k: p[k] for k in sorted(p)}, seed=int(seed), L=L, x_true=x_true, m=m
        )
