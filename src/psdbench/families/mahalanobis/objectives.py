"""The five metric-learning objectives of the SGML paper's Table 2, as functions of pair distances.

Paper: "Signed Graph Metric Learning via Gershgorin Disc Perfect Alignment"
(../shared/papers/sgml-signed-graph-metric-learning-gdpa.txt), Table 2 and eq. (42); the settings
the authors' experiments used are in ../shared/notes/reference-settings.md (SGML section).

Every objective depends on ``M`` only through the squared Mahalanobis distances (eq. (25))

    D_ij = (f_i - f_j)' M (f_i - f_j),

so each one is written as ``Q(D)`` with its derivative ``A = dQ/dD`` (an n x n array over *ordered*
pairs, zero where ``Q`` does not depend on ``D_ij``).  The chain rule then gives the gradient for
all of them at once (:func:`gradient_from_pairs`):

    grad_M Q = sum_ij A_ij (f_i - f_j)(f_i - f_j)' = F' (diag(A 1 + A' 1) - A - A') F.

Pairs are unordered (``i < j``) wherever a sum over pairs appears, except in MCML whose softmax is
over ordered pairs.  Labels are +-1.

* ``mcml`` (Globerson and Roweis): ``sum_i KL(P_i || Q_i)`` with ``P_ij = 1 / (n_c(i) - 1)`` for
  same-class ``j != i`` and ``Q_i = softmax_{k != i}(-D_ik)``.  Up to the constant
  ``sum P log P`` this is Table 2's ``sum_{same} P_ij D_ij + sum_i log sum_{k != i} exp(-D_ik)``;
  the constant is kept so the value is a KL divergence (>= 0), as in the paper's Tables 4-5.
  Samples without a same-class partner have an empty ``P_i`` and contribute nothing.
* ``deml`` (Xing et al.): maximize ``sum_{different class, i<j} sqrt(D_ij)``; the similar-pair
  constraint is relaxed, as section 6.2 says.
* ``lsml`` (Liu et al.): all pairs split into similar S and dissimilar D, unit weights, no prior:
  ``sum_{s in S, d in D} max(0, sqrt(D_s) - sqrt(D_d))^2``.  Not convex (no cvxpy form).
* ``lmnn`` (Weinberger and Saul): ``(1 - mu) sum_{i, j ~> i} D_ij + mu sum_{i, j ~> i}
  sum_{l: y_l != y_i} [1 + D_ij - D_il]_+`` with ``mu = 0.5`` and the ``k_target = 3`` nearest
  same-class samples (Euclidean) as targets.  Piecewise linear: ``A`` is a subgradient.
* ``glr`` (eq. (42)): ``sum_{i<j} exp(-D_ij) (y_i - y_j)^2 = y' L y``, the graph Laplacian
  regularizer with ``w_ij = exp(-D_ij)``.  Eq. (42) sums over ordered pairs, which doubles the
  value and leaves the minimizer unchanged; ``y' L y`` is what the authors' experiments report.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from psdbench.api import PsdbenchError

#: distances are floored here inside square roots, so that gradients stay finite
SQRT_FLOOR = 1e-12
#: LSML builds an |S| x |D| array; beyond this many entries it refuses with a clear message
LSML_MAX_PRODUCT = 4_000_000


# ------------------------------------------------------------------------------------- distances
def pair_distances(F: np.ndarray, M: np.ndarray) -> np.ndarray:
    """All squared Mahalanobis distances ``D_ij = (f_i - f_j)' M (f_i - f_j)`` (eq. (25))."""
    G = F @ M @ F.T
    g = np.diag(G)
    D = g[:, None] + g[None, :] - 2.0 * G
    np.fill_diagonal(D, 0.0)
    return np.maximum(D, 0.0)


def gradient_from_pairs(F: np.ndarray, A: np.ndarray) -> np.ndarray:
    """``sum_ij A_ij (f_i - f_j)(f_i - f_j)'`` for an n x n coefficient array ``A``."""
    B = A + A.T
    Lap = np.diag(B.sum(axis=1)) - B
    G = F.T @ Lap @ F
    return 0.5 * (G + G.T)


def _upper(n: int) -> tuple[np.ndarray, np.ndarray]:
    return np.triu_indices(n, 1)


def _first_crossing(b: np.ndarray, w: np.ndarray, need: float) -> float:
    """Smallest ``b_k`` with ``sum_{b_i <= b_k} w_i >= need`` (1.0 if the weights never reach it).

    The answer lies among the few smallest ``b``, so only a growing prefix is selected
    (``argpartition``) and sorted, instead of sorting all ``b``.
    """
    total = float(w.sum())
    if b.size == 0 or total < need:
        return 1.0
    k = min(b.size, max(1024, int(2.0 * b.size * need / total)))  # twice the share of weight needed
    while True:
        first = np.argpartition(b, k - 1)[:k] if k < b.size else np.arange(b.size)
        order = first[np.argsort(b[first], kind="stable")]
        rise = np.cumsum(w[order])
        if rise[-1] >= need or k == b.size:
            i = int(np.searchsorted(rise, need, side="left"))
            return 1.0 if i >= k else float(b[order[i]])
        k = min(b.size, 8 * k)


# ------------------------------------------------------------------------------------ objectives
@dataclass
class PairObjective:
    """A metric-learning objective ``Q(D)`` over the training samples ``F`` with labels ``y``.

    Attributes
    ----------
    name : str
    sense : str
        ``"min"`` or ``"max"`` (DEML is maximized).
    F : ndarray (n, K)
    y : ndarray (n,) of +-1
    params : dict
        Objective parameters (``mu``, ``k_target`` for LMNN).
    """

    name: str
    sense: str
    F: np.ndarray
    y: np.ndarray
    params: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.n = self.F.shape[0]
        self.same = self.y[:, None] == self.y[None, :]
        np.fill_diagonal(self.same, False)
        self.diff = self.y[:, None] != self.y[None, :]
        self._setup()

    # subclasses fill these
    def _setup(self) -> None:
        pass

    def value_D(self, D: np.ndarray) -> float:
        raise NotImplementedError

    def value_and_coef(self, D: np.ndarray) -> tuple[float, np.ndarray]:
        """``Q(D)`` and ``A = dQ/dD`` (a subgradient where ``Q`` has kinks)."""
        raise NotImplementedError

    def cvxpy_expression(self, d: Any, pairs: tuple[np.ndarray, np.ndarray]) -> Any:
        """``Q`` as a DCP cvxpy expression of the unordered-pair distance vector ``d``, or None."""
        return None

    def slope_along(self, D0: np.ndarray, E: np.ndarray) -> Callable[[float], float]:
        """``gamma -> sum(A * E)`` with ``A = dQ/dD`` at ``max(D0 + gamma E, 0)``.

        This is ``Q'(gamma)`` along a Frank-Wolfe direction, all the step-size search needs
        (eqs. (35)-(38) of the SGML paper).  Subclasses override it with a version that skips the
        objective value and the dense coefficient array; the result is the same.
        """
        def dq(gamma: float) -> float:
            _, A = self.value_and_coef(np.maximum(D0 + gamma * E, 0.0))
            return float(np.sum(A * E))

        return dq

    # shared
    def value(self, M: np.ndarray) -> float:
        return self.value_D(pair_distances(self.F, M))

    def value_and_grad(self, M: np.ndarray) -> tuple[float, np.ndarray]:
        """``Q(M)`` and ``grad_M Q`` (K x K, symmetric)."""
        q, A = self.value_and_coef(pair_distances(self.F, M))
        return q, gradient_from_pairs(self.F, A)


class Mcml(PairObjective):
    """Maximally collapsing metric learning: ``sum_i KL(P_i || softmax_{k != i}(-D_ik))``."""

    def _setup(self) -> None:
        counts = self.same.sum(axis=1)
        self.rows = counts > 0
        P = np.where(self.same, 1.0, 0.0)
        P[self.rows] /= counts[self.rows, None]
        self.P = P
        with np.errstate(divide="ignore"):
            self.const = float(np.sum(np.where(P > 0, P * np.log(np.where(P > 0, P, 1.0)), 0.0)))

    def _softmax(self, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``log Q`` (0 on the diagonal, where ``P`` is 0) and ``Q = softmax_{k != i}(-D_ik)`` row-wise."""
        Z = -D
        np.fill_diagonal(Z, -np.inf)
        Z -= Z.max(axis=1, keepdims=True)
        E = np.exp(Z)
        s = E.sum(axis=1, keepdims=True)
        Z -= np.log(s)
        np.fill_diagonal(Z, 0.0)
        E /= s
        return Z, E

    def value_D(self, D: np.ndarray) -> float:
        logq, _ = self._softmax(D)
        return self.const - float(np.sum(self.P * logq))

    def value_and_coef(self, D: np.ndarray) -> tuple[float, np.ndarray]:
        logq, Q = self._softmax(D)
        q = self.const - float(np.sum(self.P * logq))
        if not self.rows.all():  # samples without a same-class partner contribute nothing
            Q[~self.rows] = 0.0
        return q, self.P - Q

    def slope_along(self, D0: np.ndarray, E: np.ndarray) -> Callable[[float], float]:
        # sum((P - Q) * E): the softmax rows alone, no logarithms, no coefficient array
        pe = float(np.sum(self.P * E))
        rows = self.rows

        def dq(gamma: float) -> float:
            Z = D0 + gamma * E
            np.maximum(Z, 0.0, out=Z)
            np.negative(Z, out=Z)
            np.fill_diagonal(Z, -np.inf)
            Z -= Z.max(axis=1, keepdims=True)
            np.exp(Z, out=Z)
            w = np.einsum("ij,ij->i", Z, E) / Z.sum(axis=1)
            return pe - float(w[rows].sum())

        return dq

    def cvxpy_expression(self, d: Any, pairs: tuple[np.ndarray, np.ndarray]) -> Any:
        import cvxpy as cp

        iu, ju = pairs
        index = {(int(a), int(b)): t for t, (a, b) in enumerate(zip(iu, ju))}
        terms = []
        for i in np.flatnonzero(self.rows):
            others = [index[(min(i, k), max(i, k))] for k in range(self.n) if k != i]
            same = [index[(min(i, j), max(i, j))] for j in np.flatnonzero(self.same[i])]
            terms.append(self.P[i, self.same[i]][0] * cp.sum(d[same]) + cp.log_sum_exp(-d[others]))
        return self.const + cp.sum(cp.hstack(terms))


class Deml(PairObjective):
    """Xing et al.'s DEML without its similar-pair constraint: maximize ``sum_{dissimilar} sqrt(D)``."""

    def _setup(self) -> None:
        iu, ju = _upper(self.n)
        keep = self.diff[iu, ju]
        self.iu, self.ju = iu[keep], ju[keep]

    def value_D(self, D: np.ndarray) -> float:
        return float(np.sum(np.sqrt(D[self.iu, self.ju])))

    def value_and_coef(self, D: np.ndarray) -> tuple[float, np.ndarray]:
        d = D[self.iu, self.ju]
        A = np.zeros_like(D)
        A[self.iu, self.ju] = 0.5 / np.sqrt(np.maximum(d, SQRT_FLOOR))
        return float(np.sum(np.sqrt(d))), A

    def slope_along(self, D0: np.ndarray, E: np.ndarray) -> Callable[[float], float]:
        d0, e = D0[self.iu, self.ju], E[self.iu, self.ju]

        def dq(gamma: float) -> float:
            d = np.maximum(d0 + gamma * e, SQRT_FLOOR)
            return float(np.sum(0.5 * e / np.sqrt(d)))

        return dq

    def cvxpy_expression(self, d: Any, pairs: tuple[np.ndarray, np.ndarray]) -> Any:
        import cvxpy as cp

        keep = self.diff[pairs[0], pairs[1]]
        return cp.sum(cp.sqrt(d[np.flatnonzero(keep)]))


class Lsml(PairObjective):
    """Least squared-residual metric learning with unit weights and no prior metric."""

    def _setup(self) -> None:
        iu, ju = _upper(self.n)
        s = self.same[iu, ju]
        self.s_pairs = (iu[s], ju[s])
        self.d_pairs = (iu[~s], ju[~s])
        size = len(self.s_pairs[0]) * len(self.d_pairs[0])
        if size > LSML_MAX_PRODUCT:
            raise PsdbenchError(f"metric/lsml: {len(self.s_pairs[0])} x {len(self.d_pairs[0])} pair comparisons "
                                f"exceed {LSML_MAX_PRODUCT}; use fewer training samples")

    def _residual(self, D: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rs = np.sqrt(np.maximum(D[self.s_pairs], SQRT_FLOOR))
        rd = np.sqrt(np.maximum(D[self.d_pairs], SQRT_FLOOR))
        return np.maximum(rs[:, None] - rd[None, :], 0.0), rs, rd

    def value_D(self, D: np.ndarray) -> float:
        r, _, _ = self._residual(D)
        return float(np.sum(r**2))

    def value_and_coef(self, D: np.ndarray) -> tuple[float, np.ndarray]:
        r, rs, rd = self._residual(D)
        A = np.zeros_like(D)
        # d/dD_s of (sqrt(D_s) - sqrt(D_d))^2 = r / sqrt(D_s); d/dD_d = -r / sqrt(D_d)
        np.add.at(A, self.s_pairs, r.sum(axis=1) / rs)
        np.add.at(A, self.d_pairs, -r.sum(axis=0) / rd)
        return float(np.sum(r**2)), A


class Lmnn(PairObjective):
    """Large margin nearest neighbour with ``mu`` and ``k_target`` Euclidean same-class targets."""

    def _setup(self) -> None:
        self.mu = float(self.params.get("mu", 0.5))
        k = int(self.params.get("k_target", 3))
        E = pair_distances(self.F, np.eye(self.F.shape[1]))
        target = np.zeros((self.n, self.n), dtype=bool)
        for i in range(self.n):
            cand = np.flatnonzero(self.same[i])
            if cand.size:
                order = cand[np.argsort(E[i, cand], kind="stable")]
                target[i, order[:k]] = True
        self.target = target
        self.ti, self.tj = np.nonzero(target)
        # the hinges as a flat list: (t, l) for every target t = (i_t, j_t) and every impostor l of
        # i_t (a sample of the other class); distances are read by flat index into the n x n array
        imp_t, imp_l = np.nonzero(self.diff[self.ti, :])
        self.t_flat = self.ti * self.n + self.tj
        self.imp_t = imp_t
        self.imp_flat = self.ti[imp_t] * self.n + imp_l

    def _hinge(self, D: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Target distances ``D[i_t, j_t]`` and hinge arguments ``1 + D[i_t, j_t] - D[i_t, l]``."""
        Df = D.ravel()
        dt = Df[self.t_flat]
        return dt, 1.0 + dt[self.imp_t] - Df[self.imp_flat]

    def value_D(self, D: np.ndarray) -> float:
        dt, h = self._hinge(D)
        return (1 - self.mu) * float(np.sum(dt)) + self.mu * float(np.sum(np.maximum(h, 0.0)))

    def value_and_coef(self, D: np.ndarray) -> tuple[float, np.ndarray]:
        dt, h = self._hinge(D)
        active = h > 0
        nn = self.n * self.n
        A = -self.mu * np.bincount(self.imp_flat[active], minlength=nn).astype(float)  # impostor terms
        per_target = np.bincount(self.imp_t[active], minlength=len(self.ti))
        A[self.t_flat] += (1 - self.mu) + self.mu * per_target  # target pairs are distinct
        q = (1 - self.mu) * float(np.sum(dt)) + self.mu * float(np.sum(h, where=active))
        return q, A.reshape(self.n, self.n)

    def exact_step(self, D: np.ndarray, E: np.ndarray) -> float:
        """``argmin_{gamma in [0, 1]} Q(D + gamma E)`` exactly: ``Q`` is piecewise linear along a line.

        ``Q'(gamma) = (1 - mu) sum_t E_t + mu sum_{active (t, l)} s_tl`` with hinge slopes
        ``s_tl = E_t - E_il``; a hinge switches at ``gamma = -h_tl / s_tl`` and every switch raises
        ``Q'`` by ``mu |s_tl|``, so the minimizer is the first switch where ``Q'`` reaches 0.
        """
        _, h = self._hinge(D)
        Ef = E.ravel()
        et = Ef[self.t_flat]
        slope = et[self.imp_t] - Ef[self.imp_flat]
        active = (h > 0) | ((h == 0) & (slope > 0))
        g = (1 - self.mu) * float(np.sum(et)) + self.mu * float(np.sum(slope, where=active))
        if g >= 0:
            return 0.0
        # switches ahead in (0, 1): an active hinge falling (h > 0 > s) or an inactive one rising
        # (h < 0 < s), at gamma = |h| / |s| < 1
        ahead = np.flatnonzero((h * slope < 0) & (np.abs(h) < np.abs(slope)))
        s_ahead = np.abs(slope[ahead])
        b = np.abs(h[ahead]) / s_ahead
        return _first_crossing(b, self.mu * s_ahead, -g)

    def cvxpy_expression(self, d: Any, pairs: tuple[np.ndarray, np.ndarray]) -> Any:
        import cvxpy as cp

        iu, ju = pairs
        index = {(int(a), int(b)): t for t, (a, b) in enumerate(zip(iu, ju))}

        def at(i: int, j: int) -> int:
            return index[(min(i, j), max(i, j))]

        tgt = [at(i, j) for i, j in zip(self.ti, self.tj)]
        hinge_a, hinge_b = [], []
        for i, j in zip(self.ti, self.tj):
            for l in np.flatnonzero(self.diff[i]):
                hinge_a.append(at(i, j))
                hinge_b.append(at(i, l))
        expr = (1 - self.mu) * cp.sum(d[tgt])
        if hinge_a:
            expr = expr + self.mu * cp.sum(cp.pos(1 + d[hinge_a] - d[hinge_b]))
        return expr


class Glr(PairObjective):
    """Graph Laplacian regularizer ``y' L y`` with ``w_ij = exp(-D_ij)`` (eq. (42), unordered pairs)."""

    def _setup(self) -> None:
        iu, ju = _upper(self.n)
        w = (self.y[iu] - self.y[ju]) ** 2
        keep = w > 0
        self.iu, self.ju, self.w = iu[keep], ju[keep], w[keep]

    def value_D(self, D: np.ndarray) -> float:
        return float(np.sum(self.w * np.exp(-D[self.iu, self.ju])))

    def value_and_coef(self, D: np.ndarray) -> tuple[float, np.ndarray]:
        e = self.w * np.exp(-D[self.iu, self.ju])
        A = np.zeros_like(D)
        A[self.iu, self.ju] = -e
        return float(np.sum(e)), A

    def slope_along(self, D0: np.ndarray, E: np.ndarray) -> Callable[[float], float]:
        d0, e = D0[self.iu, self.ju], E[self.iu, self.ju]
        we = self.w * e

        def dq(gamma: float) -> float:
            return -float(np.dot(we, np.exp(-np.maximum(d0 + gamma * e, 0.0))))

        return dq

    def cvxpy_expression(self, d: Any, pairs: tuple[np.ndarray, np.ndarray]) -> Any:
        import cvxpy as cp

        w = (self.y[pairs[0]] - self.y[pairs[1]]) ** 2
        keep = np.flatnonzero(w > 0)
        return cp.sum(cp.multiply(w[keep], cp.exp(-d[keep])))


OBJECTIVES: dict[str, tuple[type[PairObjective], str]] = {
    "mcml": (Mcml, "min"),
    "deml": (Deml, "max"),
    "lsml": (Lsml, "min"),
    "lmnn": (Lmnn, "min"),
    "glr": (Glr, "min"),
}


def make_objective(name: str, F: np.ndarray, y: np.ndarray, params: dict[str, Any] | None = None) -> PairObjective:
    """Build objective ``name`` (one of :data:`OBJECTIVES`) over training samples ``F``, labels ``y``."""
    if name not in OBJECTIVES:
        raise PsdbenchError(f"unknown metric objective {name!r} (known: {', '.join(OBJECTIVES)})")
    cls, sense = OBJECTIVES[name]
    return cls(name=name, sense=sense, F=np.asarray(F, float), y=np.asarray(y, float), params=dict(params or {}))
