"""Problem ``metric/triplet-margin``: large-margin triplet metric learning (SDPMetric paper, section II).

Protocol (parameters): a stratified 70 / 15 / 15 train / validation / test split per seed
(:func:`.instance.split_70_15_15`, Table I's sizes); ``scaling`` ``"none"`` (raw features) or
``"standardize"`` (z-scores with training statistics; the paper does not state its preprocessing);
optional ``pca`` (a dimension, fitted on the training part after scaling, as the paper does for
USPS / MNIST); triplets: for each training sample its ``n_target`` nearest same-class neighbours
times its ``n_impostor`` nearest other-class neighbours (9 per sample: 1134 on Wine).

Fig. 2 (time versus dimension, "1000 training triplets" at D = 20 ... 100): ``triplets =
"random"`` draws ``n_triplets`` distinct triplets ``(i, j, k)`` (``i != j`` same class, ``k``
another class) uniformly from the training split with the instance seed
(:func:`.instance.random_triplets`); ``dim`` keeps the first ``dim`` features before scaling.  The
dimension is set by ``dim`` rather than ``pca`` because on a random generator a leading block of
columns is itself a random feature vector of that size: instances at different D share their
samples, labels and triplets and differ only in D, with no fitted transform whose spectrum (PCA
concentrates the variance in the first components) would change the conditioning along with D.

The dataset must carry its original labels: use the ``:multiclass`` view (``sklearn/wine:multiclass``,
``uci/breast-cancer:multiclass``, ``uci/diabetes:multiclass``, ``sklearn/digits:multiclass``); a
binary view is accepted too (it is a two-class problem then).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from psdbench import api
from psdbench.api import Dataset, PsdbenchError
from psdbench.families.sdpmetric.contract import TripletMarginKind
from psdbench.solvers.metric_learn import MetricPeerInstance
from psdbench.families.sdpmetric.instance import (KIND, TripletMarginInstance, first_features, make_triplets,
                                                 split_70_15_15)
from psdbench.families.sdpmetric.losses import LOSSES
from psdbench.families.sdpmetric.validation import select_C


def _check_C(value: Any) -> str | None:
    """``C``: a positive number or ``"validate"``."""
    if value == "validate":
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value <= 0:
        return f"must be a positive number or 'validate', not {value!r}"
    return None


#: What ``psdbench info metric/triplet-margin`` and docs/families/sdpmetric.md print.
DESCRIPTION = """\
Paper: Shen, Kim and Wang, "Scalable Large-Margin Mahalanobis Distance Metric Learning"
(sdpmetric-large-margin-metric-learning), section II: problem (8) with the losses (4), (9), (10).

Data of an instance: triplets r = (i, j, k) of training samples a (j a same-class target of i, k an
other-class impostor), u_r = a_i - a_k, v_r = a_i - a_j and A_r = u_r u_r' - v_r v_r' (5); the
loss weight C (chosen on the validation split by default) and the loss.

    maximize    g(X) = max over rho of  rho - C sum_r loss(<A_r, X> - rho)      over X (D x D)
    subject to  X is PSD,  tr(X) = 1                                           (4), (8)

loss(z) = max(0, -z) (hinge, (4)), max(0, -z)^2 (squared hinge, (9)) or Huber (10) with
parameter h: 0 for z >= h, (h - z)^2 / (4 h) for |z| < h, -z for z <= -h.

Variables a solution carries:
  X    (D, D)  the metric (verified: symmetric, lambda_min >= -psd_tol, |tr X - 1| <= trace_tol).
  rho  float   optional margin; ignored by the scoring, which uses the exact maximizer rho*(X),
               so a solver returning only X is scored on the same footing.
The objective is g(X) (sense "max").

Metrics: 3-NN test error (Table II), validation error, the Euclidean baseline, rho*, rank of X.
Reference: the cvxpy formulation solved by Clarabel, its X made exactly feasible (value, a lower
bound of the maximum), and the Frank-Wolfe bound g(X) + lambda_max(G) - <G, X> (the key "lower",
here an upper bound) for the squared hinge and Huber; for the hinge only the best verified value.
"""


class TripletMargin:
    """``metric/triplet-margin``: maximize (8) over ``X >= 0, tr X = 1`` and rho (free)."""

    name = "metric/triplet-margin"
    kind = KIND
    family = "sdpmetric"
    sense = "max"
    description = DESCRIPTION
    #: what a solver may read: the kind protocol, and the two hooks of the metric-learning peers
    contract = (TripletMarginKind, MetricPeerInstance)
    #: the report's time-versus-size plot uses ``dim`` (Fig. 2's D) when it varies
    size_param = "dim"
    params: dict[str, api.Param] = {
        "loss": api.choice("huber", "squared-hinge", "hinge",
                           doc="huber (10) | squared-hinge (9) | hinge (the SDP (4))"),
        "h": api.number(low=1e-6, default=0.5, doc="Huber parameter of (10) (paper: 0.01 to 0.5; Fig. 1 shows 0.5)"),
        "C": api.Param(default=1.0, check=_check_C,
                       doc="loss weight C of (4), (8) (hinge and Huber need C |S| > 1), or 'validate': "
                           "chosen on the validation split from C |S| in (2, 10, 100, 1000) (validation.py)"),
        "scaling": api.choice("standardize", "none",
                              doc="standardize (z-scores, training statistics) | none (raw features)"),
        "pca": api.number(low=1, default=None, integer=True, doc="PCA dimension after scaling (None: no PCA)"),
        "n_target": api.number(low=1, default=3, integer=True, doc="same-class nearest neighbours per sample"),
        "n_impostor": api.number(low=1, default=3, integer=True, doc="other-class nearest neighbours per sample"),
        "triplets": api.choice("knn", "random",
                               doc="knn (n_target x n_impostor nearest neighbours per sample) | random "
                                   "(n_triplets drawn uniformly with the instance seed, Fig. 2)"),
        "n_triplets": api.number(low=1, default=1000, integer=True, doc="triplets = random: how many (Fig. 2: 1000)"),
        "dim": api.number(low=1, default=None, integer=True,
                          doc="keep the first dim features, before scaling (None: all; Fig. 2's D)"),
        "max_train": api.number(low=2, default=None, integer=True,
                                doc="keep max_train training samples drawn at random (seeded; small test instances; None: all)"),
        "psd_tol": api.number(low=0, default=1e-7, doc="verify: lambda_min(X) >= -psd_tol (as metric/*)"),
        "trace_tol": api.number(low=0, default=1e-7, doc="verify: |tr X - 1| <= trace_tol"),
        "sym_tol": api.number(low=0, default=1e-9, doc="verify: asymmetry <= sym_tol"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def expand_params(self, load: Any, params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """Check parameter combinations at grid load (exit 2 before any work): no validated hinge."""
        p = {**self.default_params, **params}
        if p["C"] == "validate" and p["loss"] == "hinge":
            raise PsdbenchError(f"{self.name}: C = 'validate' needs a smooth loss (huber or squared-hinge); "
                                "the hinge SDP (4) takes a numeric C")
        return [dict(params)]

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> TripletMarginInstance:
        """Split, scale, (PCA), build the triplets of the training part."""
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        if dataset.X is None or dataset.y is None:
            raise PsdbenchError(f"{dataset.name}: {self.name} needs samples (X, y)")
        X = first_features(np.asarray(dataset.X, float), p["dim"])
        y = np.asarray(dataset.y)
        if not np.all(np.isfinite(X)):
            raise PsdbenchError(f"{dataset.name}: features contain NaN or inf")
        tr, va, te = split_70_15_15(y, seed)
        if p["max_train"] is not None:
            tr = np.sort(np.random.default_rng(seed).permutation(tr)[: int(p["max_train"])])
        if p["scaling"] == "standardize":
            mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
            X = (X - mu) / np.where(sd > 0, sd, 1.0)
        if p["pca"] is not None:
            from sklearn.decomposition import PCA

            k = int(p["pca"])
            if k > min(len(tr), X.shape[1]):
                raise PsdbenchError(f"{self.name}: pca = {k} above min(n_train, D) = {min(len(tr), X.shape[1])}")
            X = PCA(n_components=k, random_state=0).fit(X[tr]).transform(X)
        U, V, T = make_triplets(X[tr], y[tr], p, seed)
        if len(T) == 0:
            raise PsdbenchError(f"{dataset.name}: no triplets (needs two classes with two samples each)")
        C = 1.0 if p["C"] == "validate" else float(p["C"])
        if p["loss"] != "squared-hinge" and C * len(T) <= 1:
            raise PsdbenchError(f"{self.name}: C |S| = {C * len(T):g} <= 1: (8) is unbounded in rho for {p['loss']}")
        assert p["loss"] in LOSSES
        tol = {"psd": float(p["psd_tol"]), "trace": float(p["trace_tol"]), "sym": float(p["sym_tol"])}
        inst = TripletMarginInstance(problem=self.name, dataset=dataset.name, params=p, seed=seed, F=X[tr], y=y[tr],
                                     U=U, V=V, triplets=T, C=C, loss=str(p["loss"]), h=float(p["h"]),
                                     F_val=X[va], y_val=y[va], F_test=X[te], y_test=y[te], tol=tol)
        if p["C"] == "validate":
            inst, record = select_C(inst)
            inst.selection = record
        return inst
