"""Benchmark instances, built by the project's own problem code: one module for the kernel benchmarks.

``benchmarks/bench_kernels.py`` / ``bench_gdpa_scaling.py`` (asv) and ``benchmarks/kernels/``
(pytest-benchmark, one kernel at a time) build their instances here, so a change of protocol
changes both; asv's whole solves (``bench_suites.py``) take theirs from the families' suites.  Every
builder is deterministic (fixed seeds) and offline (scikit-learn's bundled sets and seeded
generators only).

Sizes
-----
``graph_classification(n)``  WDBC subset of ``n`` samples (at most 569), kNN graph (k = 10); the
                             kernel suite passes ``dataset = DIGITS`` (1797 samples) for n up to 1500,
                             and ``dense_n = 0`` for the solvers' sparse path.
``metric(objective, K)``     the section 6.2 objective protocol (fold 0, about 4 samples) on a
                             seeded 40-sample, ``K``-feature Gaussian set (scikit-learn's
                             ``make_classification``); ``metric_wdbc`` is WDBC (K = 30).
``triplet_margin(dim)``      SDPMetric's Fig. 2 setting: ``synthetic/gaussian-classes``, the first
                             ``dim`` features (at most 100), 1000 random triplets, Huber loss.
``bregman_pairs(n, K)``      stochastic Dykstra's section 5.1 half-spaces (ISBD, lambda = 1e-3).
``signed_graph(n_nodes)``    the BSGL section VI-A GMRF instance (K = 500 samples, noiseless).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from psdbench.api import Dataset, Instance
from psdbench.asvbench import limit_blas  # noqa: F401  (re-exported: the kernel benchmarks pin BLAS with it)
from psdbench.registry import Registry, discover

#: WDBC, scikit-learn's copy (offline).
WDBC = "sklearn/breast-cancer"
#: scikit-learn's digits (offline, 1797 samples; binary view): graph sizes beyond WDBC's 569.
DIGITS = "sklearn/digits"


def _registry(reg: Registry | None) -> Registry:
    return reg if reg is not None else discover()


def graph_classification(n: int = 100, graph: str = "knn", k: int = 10, seed: int = 0, dataset: str = WDBC,
                         reg: Registry | None = None, dense_n: int | None = None) -> Instance:
    """``graph-classification`` on a subset of ``n`` samples of ``dataset`` (first half labelled).

    ``dense_n`` (the problem's parameter; default 2000) below ``n`` builds the kNN instance sparse,
    so the solvers take their sparse path (``dense_n = 0``: sparse at every size).
    """
    reg = _registry(reg)
    params = {"n": n, "graph": graph, "k": k, **({} if dense_n is None else {"dense_n": int(dense_n)})}
    return reg.problem("graph-classification").build(reg.load_dataset(dataset), params, seed)


def metric_wdbc(objective: str, params: dict[str, Any] | None = None, seed: int = 0,
                reg: Registry | None = None) -> Instance:
    """``metric/<objective>`` on WDBC (K = 30); default: the objective protocol, fold 3."""
    reg = _registry(reg)
    params = {"protocol": "objective", "fold": 3} if params is None else params
    return reg.problem(f"metric/{objective}").build(reg.load_dataset(WDBC), params, seed)


def gaussian_features(K: int, n_samples: int = 40, seed: int = 0) -> Dataset:
    """A seeded two-class Gaussian set with ``K`` features (a fifth informative), for metric sizes."""
    from sklearn.datasets import make_classification

    X, y = make_classification(n_samples=n_samples, n_features=K, n_informative=max(2, K // 5), n_redundant=0,
                               n_classes=2, random_state=seed)
    return Dataset(name=f"bench/gaussian-{K}", X=X, y=np.where(y > 0, 1.0, -1.0),
                   source="benchmarks/instances.py (sklearn make_classification)", label_coding="1 -> +1, 0 -> -1")


def metric(objective: str, K: int, fold: int = 0, seed: int = 0, reg: Registry | None = None) -> Instance:
    """``metric/<objective>``, section 6.2 objective protocol, on :func:`gaussian_features` ``(K)``."""
    reg = _registry(reg)
    return reg.problem(f"metric/{objective}").build(gaussian_features(K), {"protocol": "objective", "fold": fold}, seed)


def triplet_margin(dim: int, n_triplets: int = 1000, seed: int = 0, reg: Registry | None = None) -> Instance:
    """``metric/triplet-margin``: SDPMetric's Fig. 2 setting at feature dimension ``dim``."""
    reg = _registry(reg)
    params = {"triplets": "random", "n_triplets": n_triplets, "dim": dim, "loss": "huber", "h": 0.5}
    return reg.problem("metric/triplet-margin").build(reg.load_dataset("synthetic/gaussian-classes"), params, seed)


def bregman_pairs(n: int, K: int = 50, divergence: str = "is", seed: int = 0, reg: Registry | None = None) -> Instance:
    """``metric/bregman-pairs`` on the section 5.1 half-spaces (``lambda = 1e-3``)."""
    reg = _registry(reg)
    params = {"n": n, "K": K, "lambda": 1e-3, "divergence": divergence}
    return reg.problem("metric/bregman-pairs").build(reg.load_dataset("synthetic/dykstra-halfspaces"), params, seed)


def signed_graph(n_nodes: int = 50, n_samples: int = 500, noise_sd: float = 0.0, seed: int = 0,
                 reg: Registry | None = None) -> Instance:
    """``signed-graph`` on ``synthetic/balanced-gmrf`` (section VI-A)."""
    reg = _registry(reg)
    params = {"n_nodes": n_nodes, "n_samples": n_samples, "noise_sd": noise_sd}
    return reg.problem("signed-graph").build(reg.load_dataset("synthetic/balanced-gmrf"), params, seed)


def column_lp_data(n_nodes: int = 50, n_samples: int = 500, seed: int = 0) -> dict[str, Any]:
    """Data of one column LP (12) of balanced CLIME: covariance, signs of column 0, ``rho = rho_l + 0.03``."""
    from psdbench.families.signed_graph.clime_lp import min_feasible_rho
    from psdbench.families.signed_graph.data import balanced_gmrf
    from psdbench.families.signed_graph.problem import sample_covariance

    s = balanced_gmrf(n_nodes, n_samples, 0.2, 0.0, seed)
    C = sample_covariance(s.X)
    signs = s.polarity[0] * s.polarity
    return {"C": C, "signs": signs, "rho": min_feasible_rho(C, 0, signs)[0] + 0.03, "i": 0}
