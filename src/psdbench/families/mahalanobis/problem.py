"""Mahalanobis metric learning over the PD cone with a trace bound (SGML paper, problem (26)).

    min (or max, DEML) Q(M)   s.t.   M symmetric,  M >= rho I,  tr(M) <= C

with ``Q`` one of the five objectives of the paper's Table 2 (:mod:`.metric_objectives`),
``C = K`` (the number of features) and ``rho = 1e-5`` by default (reference settings).

Protocols (``protocol`` parameter):

``objective``       section 6.2: the dataset is split (seed 0) into ``T = round(N / 4)`` stratified
                    folds and each fold (about 4 samples) is one training set; ``fold`` picks it
                    (``"all"`` expands to every fold, ``max_folds`` keeps the first ones: the paper
                    uses the first 10 on madelon and colon-cancer).  1e-12 Gaussian noise (seeded)
                    is added, then every feature is z-scored and every row scaled to unit length
                    on the fold itself.
``classification``  section 6.3: a stratified split with seed ``seed`` (``test_size`` 0.1 as the
                    paper's text says; the authors' code used 0.4), z-score with training
                    statistics, unit-length rows; ``Q`` is built on the training part and the
                    metric is evaluated by k-NN (``k_nn``; paper 10, code 3) and nearest-class-mean
                    accuracy on the test part.

Variables a solution carries: ``M`` (K x K) and, optionally, ``colours`` (+-1 per feature) when the
solver claims a balanced signed graph (SGML); the claim is then verified too.

Instances (:class:`MahalanobisInstance`, :mod:`.instance`) verify and evaluate a returned point and
compute the certified reference (the problem reduced to the span of the training differences, solved
by Clarabel and bounded by Frank-Wolfe; none for LSML, which is not convex).
"""

from __future__ import annotations

from typing import Any, Callable, Mapping

import numpy as np

from psdbench import api
from psdbench.api import Dataset, PsdbenchError
from psdbench.datasets import binary_samples
from psdbench.families.mahalanobis.contract import MahalanobisKind
from psdbench.families.mahalanobis.instance import CLARABEL_TIGHT, KIND, MahalanobisInstance, classify
from psdbench.families.mahalanobis.objectives import OBJECTIVES, make_objective
from psdbench.solvers.metric_learn import MetricPeerInstance

__all__ = ["CLARABEL_TIGHT", "DESCRIPTION", "KIND", "Deml", "Glr", "Lmnn", "Lsml", "MahalanobisInstance", "MahalanobisProblem",
           "Mcml", "classify", "n_objective_folds", "normalize", "objective_fold"]


# ------------------------------------------------------------------------------------- protocols
def normalize(F: np.ndarray, mean: np.ndarray | None = None, sd: np.ndarray | None = None) -> np.ndarray:
    """z-score (with the given or own statistics), then unit-length rows (the paper's [49] scheme)."""
    mean = F.mean(axis=0) if mean is None else mean
    sd = F.std(axis=0) if sd is None else sd
    G = (F - mean) / np.where(sd > 0, sd, 1.0)
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    return G / np.where(norms > 0, norms, 1.0)


def n_objective_folds(n_samples: int) -> int:
    """``T = round(N / 4)`` (section 6.2), at least 2."""
    return max(2, int(round(n_samples / 4)))


def objective_fold(y: np.ndarray, fold: int, n_folds: int | None = None) -> np.ndarray:
    """Indices of fold ``fold`` of the section 6.2 split (stratified, shuffled with seed 0)."""
    T = n_folds or n_objective_folds(len(y))
    if not 0 <= fold < T:
        raise PsdbenchError(f"metric: fold {fold} outside [0, {T})")
    from sklearn.model_selection import StratifiedKFold  # imported here: `psdbench info` needs no scikit-learn

    skf = StratifiedKFold(n_splits=T, shuffle=True, random_state=0)
    return list(skf.split(np.zeros(len(y)), y))[fold][1]


# --------------------------------------------------------------------------------------- problem
def _open_unit(value: Any) -> str | None:
    """``test_size`` check: a fraction strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        return f"must be a number in (0, 1), not {value!r}"
    return None


#: The part of ``psdbench info metric/<objective>`` (and docs/families/mahalanobis.md) that the five
#: objectives share (``{sense}``: minimize, or maximize for DEML); each problem appends its objective.
DESCRIPTION = """\
Paper: "Signed Graph Metric Learning via Gershgorin Disc Perfect Alignment"
(sgml-signed-graph-metric-learning-gdpa), problem (26) with the objectives of its Table 2.

Data of an instance: n training rows f_i (rows of F, n x K, z-scored and scaled to unit length),
labels y_i = +-1; the pair distances D_ij = (f_i - f_j)' M (f_i - f_j) (25).  Defaults: C = K,
rho = 1e-5.

    {sense}  Q(M)                                       over M (K x K)
    subject to  M symmetric,  M - rho I is PSD,  tr(M) <= C                            (26)

Variables a solution carries:
  M        (K, K)  the metric (verified: symmetric, lambda_min(M) >= rho - psd_tol max(1, ||M||),
                   tr(M) <= C + trace_tol max(1, C)).  Objective Q(M).
  colours  (K,)    optional +-1 per feature: a claim that M is the Laplacian of a balanced signed
                   graph (SGML); the sign pattern is then verified too.

Protocols: "objective" (section 6.2: one stratified fold of about 4 samples is the training set)
or "classification" (section 6.3: Q on the training split, k-NN and nearest-class-mean accuracy on
the test split as metrics).
Reference: Q depends on M only through differences f_i - f_j, which span an r-dimensional
subspace (r <= n - 1): the problem reduced to that subspace is solved by Clarabel (value, made
exactly feasible) and bounded by the Frank-Wolfe bound of that point (lower).  LSML is not convex:
its reference is the best verified value.

Objective Q:
"""


class MahalanobisProblem:
    """Problem family ``metric/<objective>``; subclasses fix ``objective``."""

    objective = ""
    kind = KIND
    preload = ("sklearn.model_selection",)  # imported by the fork server, not at import
    #: what a solver may read: the kind protocol, and the two hooks of the metric-learning peers
    contract = (MahalanobisKind, MetricPeerInstance)
    kind_aliases = ("metric",)  # the kind's name before the family folder was named mahalanobis
    params: dict[str, api.Param] = {
        "protocol": api.choice("objective", "classification",
                               doc="objective (section 6.2) | classification (section 6.3)"),
        "fold": api.either(api.number(low=0, integer=True), "all", default=0,
                           doc='objective protocol: fold index, or "all" (expanded to every fold)'),
        "max_folds": api.number(low=1, default=None, integer=True,
                                doc='with fold = "all": keep the first max_folds folds (paper: 10 on madelon, colon-cancer)'),
        "test_size": api.Param(default=0.1, check=_open_unit,
                               doc="classification protocol: test fraction; paper text 0.1 (90/10), authors' code 0.4"),
        "noise": api.number(low=0, default=None,
                            doc="Gaussian noise sd added before normalization; None = 1e-12 (objective), 0 (classification)"),
        "C": api.number(low=0, default=None, doc="trace bound; None = K"),
        "rho": api.number(low=0, default=1e-5, doc="M >= rho I"),
        "k_nn": api.number(low=1, default=10, integer=True,
                           doc="evaluation: k of the k-NN classifier (paper's tables 10, authors' code 3)"),
        "mu": api.number(low=0, high=1, default=0.5, doc="LMNN: weight of the push term against the pull term"),
        "k_target": api.number(low=1, default=3, integer=True, doc="LMNN target neighbours"),
        "psd_tol": api.number(low=0, default=1e-7, doc="lambda_min >= rho - psd_tol * max(1, ||M||)"),
        "trace_tol": api.number(low=0, default=1e-7, doc="tr(M) <= C + trace_tol * max(1, C)"),
        "sym_tol": api.number(low=0, default=1e-9, doc="asymmetry <= sym_tol * max(1, ||M||)"),
        "zero_tol": api.number(low=0, default=1e-9,
                               doc="entries below zero_tol * ||M|| are not edges (balance check)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    @property
    def name(self) -> str:
        return f"metric/{self.objective}"

    @property
    def sense(self) -> str:
        return OBJECTIVES[self.objective][1]

    def expand_params(self, load: Callable[[], Dataset], params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """``fold = "all"`` becomes one parameter set per fold (the first ``max_folds`` if set).

        ``load`` returns the dataset; it is called only when a fold count is needed.
        """
        if params.get("fold") != "all":
            return [dict(params)]
        T = n_objective_folds(len(load().y))
        keep = T if params.get("max_folds") is None else min(T, int(params["max_folds"]))
        return [{**params, "fold": f} for f in range(keep)]

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> MahalanobisInstance:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        _, y_all = binary_samples(dataset, self.name)
        X = dataset.X.astype(float)
        rng = np.random.default_rng(seed)
        Ft = yt = None
        if p["protocol"] == "objective":
            if p["fold"] == "all":
                raise PsdbenchError(f"{self.name}: fold='all' is expanded by the grid; build one fold at a time")
            idx = objective_fold(y_all, int(p["fold"]))
            noise = 1e-12 if p["noise"] is None else float(p["noise"])
            Fr = X[idx] + noise * rng.standard_normal((len(idx), X.shape[1]))
            F, y = normalize(Fr), y_all[idx]
        elif p["protocol"] == "classification":
            from sklearn.model_selection import train_test_split

            tr, te = train_test_split(np.arange(len(y_all)), test_size=float(p["test_size"]), stratify=y_all,
                                      random_state=seed)
            noise = 0.0 if p["noise"] is None else float(p["noise"])
            Xn = X + noise * rng.standard_normal(X.shape) if noise else X
            mu, sd = Xn[tr].mean(axis=0), Xn[tr].std(axis=0)
            F, y = normalize(Xn[tr], mu, sd), y_all[tr]
            Ft, yt = normalize(Xn[te], mu, sd), y_all[te]
        else:
            raise PsdbenchError(f"{self.name}: unknown protocol {p['protocol']!r} (objective | classification)")
        K = F.shape[1]
        C = float(K if p["C"] is None else p["C"])
        rho = float(p["rho"])
        if K * rho >= C:
            raise PsdbenchError(f"{self.name}: K rho = {K * rho:g} must be below C = {C:g}")
        obj = make_objective(self.objective, F, y, {"mu": p["mu"], "k_target": p["k_target"]})
        tol = {"psd": float(p["psd_tol"]), "trace": float(p["trace_tol"]), "sym": float(p["sym_tol"]),
               "zero": float(p["zero_tol"])}
        return MahalanobisInstance(problem=self.name, dataset=dataset.name, params=p, seed=seed, F=F, y=y, obj=obj,
                              C=C, rho=rho, F_test=Ft, y_test=yt, tol=tol)


class Mcml(MahalanobisProblem):
    """Problem ``metric/mcml``: MCML (Globerson and Roweis): sum of KL(P_i || softmax(-D_i.)), minimized."""

    objective = "mcml"
    description = DESCRIPTION.replace("{sense}", "minimize") + """\
  MCML (Globerson and Roweis), minimized: sum_i KL(P_i || softmax_{k != i}(-D_ik)) with
  P_ij = 1 / (n_c(i) - 1) for same-class j != i (Table 2 up to the constant sum P log P, kept so
  the value is a KL divergence >= 0).
"""


class Deml(MahalanobisProblem):
    """Problem ``metric/deml``: DEML (Xing et al.): sum of dissimilar-pair distances, maximized."""

    objective = "deml"
    description = DESCRIPTION.replace("{sense}", "maximize") + """\
  DEML (Xing et al.), MAXIMIZED: sum over different-class pairs i < j of sqrt(D_ij) (the
  similar-pair constraint relaxed, as section 6.2 says).  Sense "max".
"""


class Lsml(MahalanobisProblem):
    """Problem ``metric/lsml``: LSML (Liu et al.): squared residuals of relative comparisons, minimized (not convex)."""

    objective = "lsml"
    unsupported = ("reference_formulation",)  # not convex: no cvxpy form (conic solvers skip)
    description = DESCRIPTION.replace("{sense}", "minimize") + """\
  LSML (Liu et al.), minimized: sum over similar pairs s and dissimilar pairs d of
  max(0, sqrt(D_s) - sqrt(D_d))^2 (unit weights, no prior).  Not convex: no certified reference.
"""


class Lmnn(MahalanobisProblem):
    """Problem ``metric/lmnn``: LMNN (Weinberger and Saul): pull plus hinge push, minimized."""

    objective = "lmnn"
    description = DESCRIPTION.replace("{sense}", "minimize") + """\
  LMNN (Weinberger and Saul), minimized: (1 - mu) sum_{i, j ~> i} D_ij
  + mu sum_{i, j ~> i} sum_{l: y_l != y_i} [1 + D_ij - D_il]_+ with mu = 0.5 and the k_target = 3
  nearest same-class samples as targets j ~> i.
"""


class Glr(MahalanobisProblem):
    """Problem ``metric/glr``: GLR: graph Laplacian regularizer y' L y with w_ij = exp(-D_ij), minimized."""

    objective = "glr"
    description = DESCRIPTION.replace("{sense}", "minimize") + """\
  GLR (42), minimized: sum_{i<j} exp(-D_ij) (y_i - y_j)^2 = y' L y, the graph Laplacian
  regularizer with w_ij = exp(-D_ij).
"""
