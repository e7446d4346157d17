"""Problem ``metric/bregman-pairs``: problem (2) of the stochastic Dykstra paper (section 2.2).

Datasets: ``synthetic/dykstra-halfspaces`` (section 5.1, :mod:`.data`): the dataset's ``payload``
key ``"generator"`` names the generator; the instance draws ``A_k = F_k F_k'`` (``F_k`` n x n,
U[-0.5, 0.5]), ``y_k = +-1``, ``b = 1``, ``c = 1 / (lambda K)`` from the parameters ``n``, ``K``,
``lambda`` and its seed (``pairs = "synthetic"``, the default).

``pairs = "labels"``: pair constraints from a labelled vector dataset (section 5.2, vector case;
any ``X``/``y`` dataset, e.g. ``sklearn/wine:multiclass``, ``sklearn/iris:multiclass``; a binary
view is a two-class problem): stratified train / test split, z-scored features divided by the
square root of the training set's largest squared distance (so Euclidean pair distances lie in
[0, 1] and ``b_ub = 0.05`` / ``b_lb = 0.95`` are fractions of it), ``K = pairs_per_class x
n_classes`` pairs (half similar, half dissimilar), ``A_k = (x_i - x_j)(x_i - x_j)' + eps I``,
``c_k = 1 / (lambda K)``; :mod:`.pairs` states every choice.  ``n`` and ``K`` follow from the data
there (setting them is an error).  ``eps = 0`` (default) keeps ``A_k`` rank one: ``dykstra`` then
projects by Sherman-Morrison (:func:`.projection.project_rank_one`); ``eps > 0`` takes section 4's
general ``A_k^{-1/2}`` path.

``pairs = "covariance"``: section 5.2 with covariance descriptors (5 x 5 covariance of
``[I, |I_x|, |I_y|, |I_xx|, |I_yy|]`` plus a small ridge, mapped by ``phi``; ``A_k = (Phi_i -
Phi_j)(Phi_i - Phi_j)' + eps I``; Eye distances scaled to [0, 1] as for vectors), on either

* ``images/textures`` (:mod:`.textures`): the paper's Brodatz protocol on scikit-image's three
  bundled textures -- a test sub-image per texture drawn by the seed, ``patches_per_image``
  random ``patch`` x ``patch`` patches on each side; or
* a dataset of square images stored as rows, e.g. ``sklearn/digits:multiclass`` (8 x 8, 10
  classes): one descriptor per image (ETH-80 style) and a stratified split
  (:func:`.pairs.covariance_pairs`).
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from psdbench import api
from psdbench.api import Dataset, PsdbenchError
from psdbench.families.bregman_dykstra.contract import BregmanPairsKind
from psdbench.families.bregman_dykstra.data import GENERATOR, dykstra_halfspaces
from psdbench.solvers.metric_learn import MetricPeerInstance
from psdbench.families.bregman_dykstra.divergence import DIVERGENCES
from psdbench.families.bregman_dykstra.instance import KIND, BregmanPairsInstance
from psdbench.families.bregman_dykstra.pairs import PHIS, covariance_pairs, descriptor_pairs, labelled_pairs
from psdbench.families.bregman_dykstra.textures import brodatz_descriptors


#: What ``psdbench info metric/bregman-pairs`` and docs/families/bregman_dykstra.md print.
DESCRIPTION = """\
Paper: Matsuzawa, Relator, Sese and Kato, "Stochastic Dykstra Algorithms for Metric Learning on
Positive Semi-Definite Cone" (stochastic-dykstra-psd-metric-learning), section 2.2, problem (2).

Data of an instance: K half-spaces given by symmetric A_k (n x n), signs y_k = +-1, bounds b_k > 0
and weights c_k = 1 / (lambda K): synthetic (section 5.1, A_k = F_k F_k', b_k = 1) or pair
constraints of labelled data (section 5.2: A_k = (x_i - x_j)(x_i - x_j)' + eps I, similar pairs
y = +1 with b_ub, dissimilar pairs y = -1 with b_lb).

    minimize    BD((W, xi), (I, 1)) = tr W - log det W - n + sum_k c_k BD_1(xi_k, 1)
    over        W (n x n) symmetric positive definite, xi (K)
    subject to  y_k <A_k, W> <= y_k b_k xi_k          k = 1..K                               (2)

BD_1(xi, 1) = phi(xi) - phi(1) - phi'(1)(xi - 1) with phi = -log (divergence "is"),
xi^2 / 2 ("l2") or (log xi - 1) xi ("re").

Variables a solution carries:
  W   (n, n)  the metric (verified symmetric positive definite).
  xi  (K,)    optional slacks; with them the objective is (2) at (W, xi) and the constraints are
              verified; without them, at the best feasible slack for W:
              xi*_k = max(1, <A_k, W> / b_k) for y_k = +1, min(1, <A_k, W> / b_k) for y_k = -1.

Metrics: the objective's parts and the constraint activity; on labelled pairs the 3-NN test
accuracy with W (acc_W) and with W = I (acc_eye).
Reference: Clarabel on the cvxpy form, its point repaired to exact feasibility (value), and the
Lagrange dual bound g(alpha) = log det(I + S) + sum_k min_xi [c_k BD_1(xi, 1) - alpha_k y_k b_k xi],
S = sum_k alpha_k y_k A_k, at Clarabel's constraint duals (lower).
"""


class BregmanPairs:
    """``metric/bregman-pairs``: minimize ``BD((W, xi), (I, 1))`` over the K half-spaces of (2)."""

    name = "metric/bregman-pairs"
    kind = KIND
    family = "bregman-dykstra"
    sense = "min"
    description = DESCRIPTION
    #: what a solver may read: the kind protocol, and the two hooks of the metric-learning peers
    contract = (BregmanPairsKind, MetricPeerInstance)
    size_param = "n"
    params: dict[str, api.Param] = {
        "divergence": api.choice(*DIVERGENCES, doc="slack seed of section 2.2: is (ISBD) | l2 (L2BD) | re (REBD)"),
        "n": api.number(low=1, default=10, integer=True, doc="matrix size (section 5.1: 10, 50, 100)"),
        "K": api.number(low=1, default=50, integer=True, doc="number of half-spaces (section 5.1: 50)"),
        "lambda": api.number(low=1e-300, default=1e-3, doc="c_k = 1 / (lambda K) (section 5.1: 1e-2, 1e-3, 1e-4)"),
        "pairs": api.choice("synthetic", "labels", "covariance",
                            doc="synthetic (section 5.1 half-spaces) | labels (section 5.2 pairs from X/y vectors) | "
                                "covariance (section 5.2 covariance descriptors of square images, e.g. sklearn/digits)"),
        "phi": api.choice(*PHIS, doc="pairs = covariance: Phi of section 5.2: id | log | sqrt | chol"),
        "pairs_per_class": api.number(low=1, default=100, integer=True,
                                      doc="pairs = labels: K = pairs_per_class x n_classes (section 5.2: 100)"),
        "b_ub": api.number(low=1e-300, default=0.05, doc="pairs = labels: bound of similar pairs (section 5.2: 0.05)"),
        "b_lb": api.number(low=1e-300, default=0.95, doc="pairs = labels: bound of dissimilar pairs (section 5.2: 0.95)"),
        "eps": api.number(low=0, default=0.0,
                          doc="pairs = labels: A_k = v v' + eps I (0: rank one, Sherman-Morrison projection)"),
        "test_size": api.number(low=1e-9, high=1 - 1e-9, default=0.25,
                                doc="pairs = labels: stratified test fraction (Brodatz protocol: 1 of 4)"),
        "scaling": api.choice("standardize", "none",
                              doc="pairs = labels: z-scores with training statistics | raw, before the [0, 1] distance scale"),
        "patch": api.number(low=3, default=128, integer=True,
                            doc="pairs = covariance on images/textures: patch side in pixels (section 5.2: 128)"),
        "patches_per_image": api.number(low=1, default=50, integer=True,
                                        doc="pairs = covariance on images/textures: descriptors per texture and side (50)"),
        "pd_tol": api.number(low=0, default=0.0, doc="verify: lambda_min(W) > pd_tol"),
        "constraint_tol": api.number(low=0, default=1e-7,
                                     doc="verify: y_k (<A_k, W> - b_k xi_k) <= tol (1 + |<A_k, W>|)"),
        "sym_tol": api.number(low=0, default=1e-9, doc="verify: asymmetry of W <= sym_tol"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> BregmanPairsInstance:
        """Draw the section 5.1 half-spaces from the parameters and the seed."""
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        tol = {"pd": float(p["pd_tol"]), "constraint": float(p["constraint_tol"]), "sym": float(p["sym_tol"])}
        if p["pairs"] in ("labels", "covariance"):
            return self._build_labels(dataset, params, p, seed, tol)
        gen = dataset.payload.get("generator") if dataset.payload else None
        if gen != GENERATOR:
            raise PsdbenchError(f"{dataset.name}: {self.name} reads payload['generator'] == {GENERATOR!r} "
                                "(synthetic/dykstra-halfspaces); for pairs from labelled X/y data set pairs = 'labels'")
        h = dykstra_halfspaces(int(p["n"]), int(p["K"]), float(p["lambda"]), seed)
        return BregmanPairsInstance(problem=self.name, dataset=dataset.name, params=p, seed=seed, A=h.A, y=h.y,
                                    b=h.b, c=h.c, divergence=str(p["divergence"]), tol=tol)

    def _build_labels(self, dataset: Dataset, params: Mapping[str, Any], p: dict[str, Any], seed: int,
                      tol: dict[str, float]) -> BregmanPairsInstance:
        """Section 5.2 pairs from ``(X, y)`` (:mod:`.pairs`)."""
        textures = (dataset.payload or {}).get("texture_images")
        if (dataset.X is None or dataset.y is None) and not (p["pairs"] == "covariance" and textures is not None):
            raise PsdbenchError(f"{dataset.name}: {self.name} with pairs = {p['pairs']!r} needs samples (X, y)"
                                + (" or texture images (images/textures)" if p["pairs"] == "covariance" else ""))
        fixed = [k for k in ("n", "K") if k in params]
        if fixed:
            raise PsdbenchError(f"{self.name}: with pairs = 'labels', n is the feature count and K = "
                                f"pairs_per_class x n_classes; do not set {', '.join(fixed)}")
        common = dict(pairs_per_class=int(p["pairs_per_class"]), b_ub=float(p["b_ub"]), b_lb=float(p["b_lb"]),
                      test_size=float(p["test_size"]), seed=seed)
        eps = float(p["eps"])
        if p["pairs"] == "covariance" and textures is not None:
            Ctr, ytr, Cte, yte = brodatz_descriptors(textures, patch=int(p["patch"]),
                                                     patches_per_image=int(p["patches_per_image"]), seed=seed)
            d = descriptor_pairs(Ctr, ytr, Cte, yte, phi=str(p["phi"]), pairs_per_class=int(p["pairs_per_class"]),
                                 b_ub=float(p["b_ub"]), b_lb=float(p["b_lb"]), seed=seed)
        elif p["pairs"] == "covariance":
            d = covariance_pairs(np.asarray(dataset.X, float), np.asarray(dataset.y), phi=str(p["phi"]), **common)
        if p["pairs"] == "covariance":
            K, n = d.V.shape[:2]
            A = np.einsum("kia,kja->kij", d.V, d.V) + eps * np.eye(n)[None]
            if eps == 0.0 and np.min(np.linalg.eigvalsh(A)) <= 0:
                raise PsdbenchError(f"{dataset.name}: some A_k = (Phi_i - Phi_j)^2 is singular; set eps > 0 (section 4)")
        else:
            d = labelled_pairs(np.asarray(dataset.X, float), np.asarray(dataset.y), scaling=str(p["scaling"]), **common)
            K, n = d.V.shape
            A = np.einsum("ki,kj->kij", d.V, d.V) + eps * np.eye(n)[None]
        c = np.full(K, 1.0 / (float(p["lambda"]) * K))
        p = {**p, "n": n, "K": K}
        return BregmanPairsInstance(problem=self.name, dataset=dataset.name, params=p, seed=seed, A=A, y=d.y,
                                    b=d.b, c=c, divergence=str(p["divergence"]), tol=tol, V=d.V, eps=eps, data=d)
