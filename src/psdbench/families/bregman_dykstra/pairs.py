"""Pair constraints from labelled vector data (section 5.2, vector case): split, scaling, sampling.

Protocol (each choice is ours where section 5.2 does not state it):

* **Split**: stratified train / test, ``test_size`` of the samples for testing (default 0.25: the
  paper's Brodatz protocol keeps 3 of 4 sub-images for training), ``random_state = seed``.
* **Features**: z-scores with the training mean and standard deviation (``scaling =
  "standardize"``, default; vector sets such as wine mix units, e.g. proline ~ 1000), or raw
  (``"none"``).
* **Distance scale**: the paper's ``b_ub = 0.05`` and ``b_lb = 0.95`` are, "when xi_k = 1", the
  upper bound of the distances within a class and the lower bound of the distances between
  classes, i.e. fractions of a distance range of [0, 1].  We make that literal: after scaling, all
  features (train and test alike) are divided by ``sqrt(D_max)``, where ``D_max`` is the largest
  squared Euclidean distance between two training samples, so that the Euclidean (W = I)
  distance ``D(x_i, x_j; I) = ||x_i - x_j||^2`` of every training pair lies in [0, 1] (the
  maximum is exactly 1).  ``b_ub`` / ``b_lb`` are thus fractions of the training set's squared
  diameter.  k-NN is invariant to this global scale, so "Eye" accuracy is unchanged by it.
* **Pairs**: ``K = pairs_per_class x n_classes`` (section 5.2: 100 x n_c), half similar (same
  class) and half dissimilar, each half drawn uniformly without replacement from all unordered
  training pairs ``i < j`` of that kind whose feature vectors differ (a zero difference would give
  ``A_k = 0``); similar pairs come first (the order metric-learn's ITML sweeps, so ``dykstra``
  with ``order = "cyclic"`` visits the same sequence).  Balanced halves follow
  ``ITML_Supervised``'s sampler; the paper does not say how its K pairs were picked.
* ``A_k = v_k v_k' + eps I`` with ``v_k = x_i - x_j`` (rank one plus ``eps I``, section 4);
  ``y_k = +1``, ``b_k = b_ub`` for similar pairs (``<A_k, W> <= b_ub xi_k``) and ``y_k = -1``,
  ``b_k = b_lb`` for dissimilar pairs (``<A_k, W> >= b_lb xi_k``): problem (2)'s convention.
  With ``eps > 0``, ``<A_k, W> = D(x_i, x_j; W) + eps tr W`` (the constraint is on that, as the
  paper's regularized ``A_k``).  ``c_k = 1 / (lambda K)`` (section 5.1's choice; 5.2 gives none).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from psdbench.api import PsdbenchError


@dataclass
class LabelledPairs:
    """Scaled train / test samples and the K sampled pairs."""

    X_train: np.ndarray
    y_train: np.ndarray
    X_test: np.ndarray
    y_test: np.ndarray
    index: np.ndarray  # (K, 2) training indices i < j
    V: np.ndarray  # (K, n) differences x_i - x_j
    y: np.ndarray  # (K,) +1 similar, -1 dissimilar
    b: np.ndarray  # (K,)
    scale: float  # features were divided by this (sqrt of the training squared diameter)


def split(y: np.ndarray, test_size: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Stratified train / test indices (sorted)."""
    from sklearn.model_selection import train_test_split

    idx = np.arange(len(y))
    tr, te = train_test_split(idx, test_size=test_size, stratify=y, random_state=seed)
    return np.sort(tr), np.sort(te)


def max_sq_distance(X: np.ndarray) -> float:
    """Largest squared Euclidean distance between two rows."""
    sq = np.sum(X * X, axis=1)
    D = sq[:, None] + sq[None, :] - 2.0 * X @ X.T
    return float(np.max(D))


def labelled_pairs(X: np.ndarray, labels: np.ndarray, *, pairs_per_class: int, b_ub: float, b_lb: float,
                   test_size: float, scaling: str, seed: int) -> LabelledPairs:
    """The module docstring's protocol on samples ``X`` (N, n) with class labels ``labels`` (N,)."""
    X = np.asarray(X, float)
    labels = np.asarray(labels)
    if not np.all(np.isfinite(X)):
        raise PsdbenchError("features contain NaN or inf")
    if len(np.unique(labels)) < 2:
        raise PsdbenchError(f"labelled pairs need two classes or more, got {len(np.unique(labels))}")
    tr, te = split(labels, test_size, seed)
    if scaling == "standardize":
        mu, sd = X[tr].mean(axis=0), X[tr].std(axis=0)
        X = (X - mu) / np.where(sd > 0, sd, 1.0)
    elif scaling != "none":
        raise PsdbenchError(f"unknown scaling {scaling!r}")
    return pairs_on_split(X[tr], labels[tr], X[te], labels[te], pairs_per_class=pairs_per_class, b_ub=b_ub,
                          b_lb=b_lb, seed=seed)


def pairs_on_split(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, *, pairs_per_class: int,
                   b_ub: float, b_lb: float, seed: int) -> LabelledPairs:
    """Distance scale and pair sampling of the module docstring on a given train / test split."""
    Xtr, Xte, ytr, yte = np.asarray(Xtr, float), np.asarray(Xte, float), np.asarray(ytr), np.asarray(yte)
    classes = np.unique(ytr)
    if len(classes) < 2:
        raise PsdbenchError(f"labelled pairs need two classes or more, got {len(classes)}")
    dmax = max_sq_distance(Xtr)
    if not dmax > 0:
        raise PsdbenchError("all training samples coincide: no distance scale")
    scale = float(np.sqrt(dmax))
    Xtr, Xte = Xtr / scale, Xte / scale
    K = int(pairs_per_class) * len(classes)
    half = K // 2
    i, j = np.triu_indices(len(ytr), k=1)
    differ = np.any(Xtr[i] != Xtr[j], axis=1)
    same = ytr[i] == ytr[j]
    rng = np.random.default_rng([seed, 52])
    chosen = []
    for mask, count, what in ((same & differ, half, "similar"), (~same & differ, K - half, "dissimilar")):
        pool = np.flatnonzero(mask)
        if len(pool) < count:
            raise PsdbenchError(f"{count} {what} pairs wanted, the training split has {len(pool)}")
        chosen.append(np.sort(rng.choice(pool, size=count, replace=False)))
    sel = np.concatenate(chosen)
    index = np.stack([i[sel], j[sel]], axis=1)
    V = Xtr[index[:, 0]] - Xtr[index[:, 1]]
    y = np.concatenate([np.ones(half), -np.ones(K - half)])
    b = np.where(y > 0, float(b_ub), float(b_lb))
    return LabelledPairs(X_train=Xtr, y_train=ytr, X_test=Xte, y_test=yte, index=index, V=V, y=y, b=b,
                         scale=scale)


def knn_accuracy(Xtr: np.ndarray, ytr: np.ndarray, Xte: np.ndarray, yte: np.ndarray, W: np.ndarray | None,
                 k: int = 3) -> float:
    """k-NN test accuracy under ``D(a, b; W) = (a - b)' W (a - b)`` (``W = None``: Euclidean)."""
    from sklearn.neighbors import KNeighborsClassifier

    if W is not None:
        w, Q = np.linalg.eigh(0.5 * (W + W.T))
        R = Q * np.sqrt(np.clip(w, 0.0, None))  # D(a, b; W) = ||R'(a - b)||^2
        Xtr, Xte = Xtr @ R, Xte @ R
    knn = KNeighborsClassifier(n_neighbors=min(k, len(ytr))).fit(Xtr, ytr)
    return float(np.mean(knn.predict(Xte) == yte))


# ------------------------------------------------------------------ covariance descriptors (section 5.2)
PHIS = ("id", "log", "sqrt", "chol")
#: covariance descriptors get ``ridge x tr(C) / 5 x I`` added so that log, sqrt and chol exist
COV_RIDGE = 1e-3


def pixel_features(img: np.ndarray) -> np.ndarray:
    """Per-pixel ``[I, |I_x|, |I_y|, |I_xx|, |I_yy|]`` (section 5.2's Brodatz features), (pixels, 5).

    Derivatives by central differences (``numpy.gradient``, one-sided at the border).
    """
    img = np.asarray(img, float)
    Iy, Ix = np.gradient(img)
    Iyy = np.gradient(Iy, axis=0)
    Ixx = np.gradient(Ix, axis=1)
    return np.stack([img, np.abs(Ix), np.abs(Iy), np.abs(Ixx), np.abs(Iyy)], axis=-1).reshape(-1, 5)


def covariance_descriptor(img: np.ndarray) -> np.ndarray:
    """5 x 5 covariance of :func:`pixel_features` over the image, plus ``COV_RIDGE tr(C) / 5 I``."""
    C = np.cov(pixel_features(img), rowvar=False)
    C = 0.5 * (C + C.T)
    return C + COV_RIDGE * max(float(np.trace(C)) / 5.0, 1e-12) * np.eye(5)


def phi_map(C: np.ndarray, phi: str) -> np.ndarray:
    """``Phi(C)``: ``id`` C, ``log`` logm(C), ``sqrt`` C^{1/2}, ``chol`` the lower Cholesky factor."""
    if phi == "id":
        return C
    if phi == "chol":
        return np.linalg.cholesky(C)
    w, Q = np.linalg.eigh(C)
    f = np.log(w) if phi == "log" else np.sqrt(w)
    return (Q * f) @ Q.T


def covariance_pairs(X: np.ndarray, labels: np.ndarray, *, phi: str, pairs_per_class: int, b_ub: float,
                     b_lb: float, test_size: float, seed: int) -> LabelledPairs:
    """Section 5.2 with covariance descriptors from square images stored as rows of ``X``.

    Each row is reshaped to a ``s x s`` image (``s = sqrt(D)``; ``sklearn/digits``: 8 x 8), its
    5 x 5 :func:`covariance_descriptor` mapped by ``Phi``; split and pairs as
    :func:`labelled_pairs`; the scale divides every ``Phi(C)`` by ``sqrt(D_max)`` with ``D_max`` the
    largest ``||Phi(C_i) - Phi(C_j)||_F^2 = D_Phi(C_i, C_j; I)`` over training pairs, so that
    Eye distances of training pairs lie in [0, 1].  ``V`` holds the (K, 5, 5) differences
    ``Phi(C_i) - Phi(C_j)`` and ``A_k = V_k V_k'``; ``X_train`` / ``X_test`` hold the scaled
    ``Phi(C)`` (N, 5, 5).
    """
    X = np.asarray(X, float)
    s = int(round(np.sqrt(X.shape[1])))
    if s * s != X.shape[1]:
        raise PsdbenchError(f"covariance pairs need square images as rows (D = {X.shape[1]} is not a square)")
    C = np.stack([covariance_descriptor(row.reshape(s, s)) for row in X])
    tr, te = split(np.asarray(labels), test_size, seed)
    labels = np.asarray(labels)
    return descriptor_pairs(C[tr], labels[tr], C[te], labels[te], phi=phi, pairs_per_class=pairs_per_class,
                            b_ub=b_ub, b_lb=b_lb, seed=seed)


def descriptor_pairs(Ctr: np.ndarray, ytr: np.ndarray, Cte: np.ndarray, yte: np.ndarray, *, phi: str,
                     pairs_per_class: int, b_ub: float, b_lb: float, seed: int) -> LabelledPairs:
    """Pairs of mapped covariance descriptors on a given split (:func:`covariance_pairs`' scale and pairs).

    ``Ctr`` / ``Cte`` are (N, m, m) SPD descriptors; ``Phi`` maps each; ``X_train`` / ``X_test`` of
    the result hold the scaled ``Phi(C)`` and ``V`` the (K, m, m) differences.
    """
    if phi not in PHIS:
        raise PsdbenchError(f"unknown phi {phi!r} (known: {', '.join(PHIS)})")
    Ftr = np.stack([phi_map(C, phi) for C in Ctr])
    Fte = np.stack([phi_map(C, phi) for C in Cte])
    m = Ftr.shape[1]
    d = pairs_on_split(Ftr.reshape(len(Ftr), -1), ytr, Fte.reshape(len(Fte), -1), yte,
                       pairs_per_class=pairs_per_class, b_ub=b_ub, b_lb=b_lb, seed=seed)
    d.X_train = d.X_train.reshape(-1, m, m)
    d.X_test = d.X_test.reshape(-1, m, m)
    d.V = d.V.reshape(-1, m, m)
    return d


def knn_accuracy_matrices(Ftr: np.ndarray, ytr: np.ndarray, Fte: np.ndarray, yte: np.ndarray,
                          W: np.ndarray | None, k: int = 3) -> float:
    """k-NN accuracy under ``D_Phi(X1, X2; W) = <W, (F1 - F2)(F1 - F2)'> = ||R'(F1 - F2)||_F^2`` (W = R R')."""
    if W is not None:
        w, Q = np.linalg.eigh(0.5 * (W + W.T))
        R = Q * np.sqrt(np.clip(w, 0.0, None))
        Ftr, Fte = np.einsum("ij,nik->njk", R, Ftr), np.einsum("ij,nik->njk", R, Fte)
    return knn_accuracy(Ftr.reshape(len(Ftr), -1), ytr, Fte.reshape(len(Fte), -1), yte, None, k)
