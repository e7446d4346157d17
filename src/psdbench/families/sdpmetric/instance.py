"""Instance of ``metric/triplet-margin``: the SDPMetric problem (8) on one split of one dataset.

    maximize  g(X) = max_rho  rho - C sum_r loss(<A_r, X> - rho)   s.t.  X >= 0,  tr X = 1      (4), (8)

Scoring: a solution carries ``X`` (D x D) and optionally ``rho``; :meth:`objective` ignores the
returned ``rho`` and scores ``g(X) = f(X, rho*(X))`` with ``rho*(X)`` the exact 1-D maximizer
(:func:`.losses.best_rho`), so a solver that returns only ``X`` (a peer, a conic solver at a loose
tolerance) is scored on the same footing as one that returns its own ``rho``.

Reference (:meth:`certified_reference`): the cvxpy formulation solved by Clarabel, its ``X`` made
exactly feasible (negative eigenvalues clipped, trace rescaled to 1), and the Frank-Wolfe bound of
that point.  ``f`` is jointly concave, so for any feasible ``Y``, with ``rho* = rho*(X)`` and
``G = nabla_X f(X, rho*)``,

    g(Y) = f(Y, rho_Y) <= f(X, rho*) + <G, Y - X> + (d f / d rho)(X, rho*) (rho_Y - rho*)
         = g(X) + <G, Y - X>                       (d f / d rho = 0 at the interior maximizer rho*)

and ``max_{Y >= 0, tr Y = 1} <G, Y> = lambda_max(G)``, hence ``g* <= g(X) + lambda_max(G) - <G, X>``.
This needs ``f`` differentiable in rho (squared hinge, Huber); for the hinge the bound is not
formed and the reference is the best verified value.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np

from psdbench.api import Check, Feasibility, Formulation, PsdbenchError, Solution
from psdbench.linalg.psd import asymmetry
from psdbench.families.sdpmetric import losses
from psdbench.solvers.conic import solve_reference_clarabel

KIND = "triplet-margin"
#: Clarabel settings of the reference solve


# ------------------------------------------------------------------------------------ protocol
def split_70_15_15(y: np.ndarray, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Stratified train / validation / test indices; validation and test each ``floor(0.15 N)``.

    Gives Table I's sizes: Wine 126 / 26 / 26, Breast-Cancer 479 / 102 / 102, Diabetes 538 / 115 / 115.
    """
    from sklearn.model_selection import train_test_split

    n = len(y)
    nv = int(np.floor(0.15 * n))
    idx = np.arange(n)
    tr, rest = train_test_split(idx, test_size=2 * nv, stratify=y, random_state=seed)
    va, te = train_test_split(rest, test_size=nv, stratify=y[rest], random_state=seed)
    return np.sort(tr), np.sort(va), np.sort(te)


def build_triplets(F: np.ndarray, y: np.ndarray, n_target: int, n_impostor: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Triplets ``(i, j, k)``: ``j`` among the ``n_target`` nearest same-class neighbours of ``i``,
    ``k`` among its ``n_impostor`` nearest other-class neighbours (Euclidean, in ``F``'s space).

    Returns ``U = a_i - a_k`` (impostor differences), ``V = a_i - a_j`` (target differences), so that
    ``A_r = u_r u_r' - v_r v_r'`` (5), and the ``(i, j, k)`` index array.  Never the D x D x m tensor.
    """
    sq = np.sum(F**2, axis=1)
    dist = sq[:, None] + sq[None, :] - 2.0 * F @ F.T
    np.fill_diagonal(dist, np.inf)
    rows = []
    for i in range(len(y)):
        same = np.flatnonzero(y == y[i])
        same = same[same != i]
        other = np.flatnonzero(y != y[i])
        js = same[np.argsort(dist[i, same], kind="stable")[:n_target]]
        ks = other[np.argsort(dist[i, other], kind="stable")[:n_impostor]]
        rows.extend((i, j, k) for j in js for k in ks)
    T = np.asarray(rows, dtype=int).reshape(-1, 3)
    return F[T[:, 0]] - F[T[:, 2]], F[T[:, 0]] - F[T[:, 1]], T


def random_triplets(F: np.ndarray, y: np.ndarray, n: int,
                    rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` distinct triplets ``(i, j, k)`` drawn uniformly from all valid ones of ``(F, y)``.

    Valid: ``i != j`` of the same class, ``k`` of another class.  Each draw is uniform over the set
    of valid triplets (the anchor ``i`` with probability proportional to its number of valid
    ``(j, k)`` pairs, then ``j`` and ``k`` uniformly); repeated triplets are dropped and drawn again,
    so the result is a uniform sample without replacement, in the order drawn.

    Parameters
    ----------
    F : ndarray, shape (N, D)
        Training features.
    y : ndarray, shape (N,)
        Training labels (at least two classes, one with two samples).
    n : int
        Number of triplets; at most the number of valid triplets.
    rng : numpy.random.Generator
        The only source of randomness (seed it from the instance seed).

    Returns
    -------
    U, V, T : ndarray
        As :func:`build_triplets`: ``U = a_i - a_k``, ``V = a_i - a_j``, ``T`` the ``(i, j, k)`` rows.
    """
    y = np.asarray(y)
    classes, cls, counts = np.unique(y, return_inverse=True, return_counts=True)
    size = counts[cls]  # class size of each sample
    weight = (size - 1).astype(float) * (len(y) - size)  # valid (j, k) pairs per anchor
    total = int(weight.sum())
    if n > total:
        raise PsdbenchError(f"n_triplets = {n} above the {total} valid triplets of the training split")
    members = [np.flatnonzero(cls == c) for c in range(len(classes))]
    others = [np.flatnonzero(cls != c) for c in range(len(classes))]
    seen: dict[tuple[int, int, int], None] = {}
    while len(seen) < n:
        for i in rng.choice(len(y), size=n - len(seen), p=weight / weight.sum()):
            c = cls[i]
            j = members[c][rng.integers(len(members[c]) - 1)]
            j = j if j != i else members[c][-1]  # uniform over the class without i
            k = others[c][rng.integers(len(others[c]))]
            seen.setdefault((int(i), int(j), int(k)))
    T = np.asarray(list(seen), dtype=int).reshape(-1, 3)
    return F[T[:, 0]] - F[T[:, 2]], F[T[:, 0]] - F[T[:, 1]], T


def make_triplets(F: np.ndarray, y: np.ndarray, params: dict[str, Any],
                  seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The triplets the parameters ask for: ``triplets = "knn"`` (:func:`build_triplets` with
    ``n_target``, ``n_impostor``) or ``"random"`` (:func:`random_triplets`, ``n_triplets`` of them,
    generator ``np.random.default_rng([seed, 1])``: a stream of its own, apart from ``max_train``'s)."""
    if params.get("triplets", "knn") == "random":
        return random_triplets(F, y, int(params["n_triplets"]), np.random.default_rng([seed, 1]))
    return build_triplets(F, y, int(params["n_target"]), int(params["n_impostor"]))


def first_features(X: np.ndarray, dim: int | None) -> np.ndarray:
    """The first ``dim`` columns of ``X`` (``None``: all); a one-line error if there are fewer."""
    if dim is None:
        return X
    if int(dim) > X.shape[1]:
        raise PsdbenchError(f"dim = {dim} above the {X.shape[1]} features of the dataset")
    return X[:, : int(dim)]


def knn_error(F: np.ndarray, y: np.ndarray, Ft: np.ndarray, yt: np.ndarray, X: np.ndarray | None, k: int = 3) -> float:
    """k-NN error on ``(Ft, yt)`` with the Mahalanobis distance of ``X`` (features mapped by ``X^{1/2}``);
    ``X = None``: Euclidean."""
    from sklearn.neighbors import KNeighborsClassifier

    if X is not None:
        w, Q = np.linalg.eigh(0.5 * (X + X.T))
        R = Q * np.sqrt(np.clip(w, 0.0, None))  # d_X(a, b) = ||R'(a - b)||^2
        F, Ft = F @ R, Ft @ R
    knn = KNeighborsClassifier(n_neighbors=min(k, len(y))).fit(F, y)
    return float(np.mean(knn.predict(Ft) != yt))


def feasible_point(X: np.ndarray) -> np.ndarray:
    """An exactly feasible ``X``: symmetrized, negative eigenvalues clipped, trace rescaled to 1."""
    w, Q = np.linalg.eigh(0.5 * (X + X.T))
    w = np.clip(w, 0.0, None)
    if w.sum() <= 0:
        return np.eye(len(w)) / len(w)
    Y = (Q * (w / w.sum())) @ Q.T
    return 0.5 * (Y + Y.T)


# ------------------------------------------------------------------------------------ instance
@dataclass
class TripletMarginInstance:
    """One ``metric/triplet-margin`` instance (see the module docstring)."""

    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    F: np.ndarray          # training rows (scaled / PCA as the protocol says)
    y: np.ndarray
    U: np.ndarray          # impostor differences a_i - a_k (m x D)
    V: np.ndarray          # target differences a_i - a_j (m x D)
    triplets: np.ndarray   # (i, j, k) rows into F
    C: float
    loss: str
    h: float
    F_val: np.ndarray | None = None
    y_val: np.ndarray | None = None
    F_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    tol: dict[str, float] = field(default_factory=dict)
    kind: str = KIND
    sense: str = "max"
    #: variables a solution carries: ``X`` (D x D), optionally ``rho`` (ignored by the score)
    variables: ClassVar[tuple[str, ...]] = ("X", "rho")
    _euclid: dict[str, float] | None = field(default=None, repr=False)
    #: the record of ``C = "validate"`` (:func:`.validation.select_C`), None for a numeric ``C``
    selection: dict[str, Any] | None = None

    @property
    def n(self) -> int:
        """Matrix dimension D."""
        return self.F.shape[1]

    @property
    def D(self) -> int:
        return self.F.shape[1]

    def variable_shapes(self) -> dict[str, tuple[int, ...]]:
        """``X`` is D x D (checked by the harness before ``verify``: ``api.point_mismatch``)."""
        return {"X": (self.D, self.D)}

    @property
    def n_triplets(self) -> int:
        return self.U.shape[0]

    # ------------------------------------------------------------------ objective and gradient
    def margins(self, X: np.ndarray) -> np.ndarray:
        """``<A_r, X>`` for every triplet (row-wise quadratic forms)."""
        return losses.margins(self.U, self.V, X)

    def best_rho(self, X: np.ndarray) -> float:
        """``rho*(X)``, the exact maximizer of ``f(X, .)``."""
        return losses.best_rho(self.margins(X), self.C, self.loss, self.h)

    def f(self, X: np.ndarray, rho: float) -> float:
        """Objective (8) at ``(X, rho)``."""
        return losses.f_value(self.margins(X), rho, self.C, self.loss, self.h)

    def value(self, X: np.ndarray) -> float:
        """``g(X) = max_rho f(X, rho)``: the score."""
        m = self.margins(X)
        return losses.f_value(m, losses.best_rho(m, self.C, self.loss, self.h), self.C, self.loss, self.h)

    def value_and_grad(self, X: np.ndarray) -> tuple[float, np.ndarray, float]:
        """``(g(X), nabla_X f(X, rho*), rho*)``; the gradient is a supergradient of ``g``."""
        m = self.margins(X)
        rho = losses.best_rho(m, self.C, self.loss, self.h)
        G = losses.grad_X(self.U, self.V, m, rho, self.C, self.loss, self.h)
        return losses.f_value(m, rho, self.C, self.loss, self.h), G, rho

    def objective(self, solution: Solution) -> float:
        return self.value(self._X(solution))

    def _X(self, solution: Solution) -> np.ndarray:
        X = np.asarray(solution.variables["X"], float)
        if X.shape != (self.D, self.D):
            raise PsdbenchError(f"{self.problem}: X has shape {X.shape}, expected {(self.D, self.D)}")
        return X

    # ------------------------------------------------------------------------- verification
    def verify(self, solution: Solution) -> Feasibility:
        """Symmetric, ``lambda_min >= -psd_tol``, ``|tr X - 1| <= trace_tol``."""
        X = self._X(solution)
        asym = asymmetry(X)
        w = np.linalg.eigvalsh(0.5 * (X + X.T))
        tr_err = abs(float(np.trace(X)) - 1.0)
        psd_short = max(0.0, -float(w[0]))
        checks = [Check("asymmetry", asym, self.tol["sym"]),
                  Check("smallest eigenvalue of X", float(w[0]), -self.tol["psd"], ">="),
                  Check("|tr X - 1|", tr_err, self.tol["trace"])]
        return Feasibility(ok=all(c.ok for c in checks), min_eig=float(w[0]), max_residual=max(asym, tr_err, psd_short),
                           tolerances=dict(self.tol),
                           details={"asymmetry": asym, "lambda_min": float(w[0]), "trace_error": tr_err}, checks=checks)

    def repair(self, solution: Solution) -> Solution:
        """An exactly feasible point from an infeasible one (:func:`feasible_point`), for traced iterates."""
        return Solution(variables={"X": feasible_point(self._X(solution))})

    # --------------------------------------------------------------------------- evaluation
    def euclidean_errors(self) -> dict[str, float]:
        """3-NN test and validation errors with the Euclidean metric (the per-instance baseline)."""
        if self._euclid is None:
            out = {}
            if self.F_test is not None:
                out["euclidean_test_error"] = knn_error(self.F, self.y, self.F_test, self.y_test, None)
            if self.F_val is not None:
                out["euclidean_val_error"] = knn_error(self.F, self.y, self.F_val, self.y_val, None)
            self._euclid = out
        return dict(self._euclid)

    def evaluate(self, solution: Solution) -> dict[str, float]:
        """3-NN test error (Table II), validation error, the Euclidean baseline, rho*, the rank of X, C."""
        X = self._X(solution)
        w = np.linalg.eigvalsh(0.5 * (X + X.T))
        out = {"rho": self.best_rho(X), "rank": float(np.sum(w > 1e-8 * max(1.0, w.max()))),
               "n_triplets": float(self.n_triplets), "n_train": float(len(self.y))}
        if self.F_test is not None:
            out["test_error"] = knn_error(self.F, self.y, self.F_test, self.y_test, X)
        if self.F_val is not None:
            out["val_error"] = knn_error(self.F, self.y, self.F_val, self.y_val, X)
        out.update(self.euclidean_errors())
        out["C"], out["C_times_S"] = float(self.C), float(self.C) * self.n_triplets
        if self.selection is not None:
            out["C_selection_s"] = float(self.selection["selection_s"])
        return out

    # --------------------------------------------------------------------------- references
    def reference_formulation(self, variant: str | None = None) -> Formulation:
        """cvxpy form of (8) over ``X >= 0, tr X = 1``, rho free.

        hinge (4): ``C sum pos(rho - m)`` (LP + SDP); squared hinge (9): ``C sum pos(rho - m)^2``;
        Huber (10) through ``loss(z) = min_{w >= 0} w^2 / (4 h) + pos(h - z - w)`` (minimizer
        ``w = min(pos(h - z), 2 h)``: 0, ``(h - z)^2 / (4 h)``, ``-z`` on the three pieces of (10)).
        """
        import cvxpy as cp

        X = cp.Variable((self.D, self.D), PSD=True)
        rho = cp.Variable()
        m = cp.sum(cp.multiply(self.U @ X, self.U), axis=1) - cp.sum(cp.multiply(self.V @ X, self.V), axis=1)
        cons = [cp.trace(X) == 1]
        if self.loss == "hinge":
            penalty = cp.sum(cp.pos(rho - m))
        elif self.loss == "squared-hinge":
            penalty = cp.sum_squares(cp.pos(rho - m))
        elif self.loss == "huber":
            w = cp.Variable(self.n_triplets, nonneg=True)
            penalty = cp.sum_squares(w) / (4.0 * self.h) + cp.sum(cp.pos(self.h - m + rho - w))
        else:
            raise PsdbenchError(f"{self.problem}: unknown loss {self.loss!r}")
        prob = cp.Problem(cp.Maximize(rho - self.C * penalty), cons)

        def extract() -> dict[str, np.ndarray]:
            Xv = np.asarray(X.value, float)
            return {"X": 0.5 * (Xv + Xv.T), "rho": np.asarray(float(rho.value))}

        return Formulation(problem=prob, extract=extract)

    # ------------------------------------------------------------------- peers (solvers/metric_learn.py)
    def metric_training_data(self) -> tuple[np.ndarray, np.ndarray]:
        """``(F, y)``: the training split every method learns on (the validation split is not used)."""
        return self.F, self.y

    def metric_from_matrix(self, M: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """A peer's metric mapped onto the spectraplex: ``{"X": M / tr M}`` and ``{"scale": 1 / tr M}``.

        k-NN under ``M`` is invariant to a positive scale, so the test error is the peer's own; the
        objective (8) is then that of the rescaled metric.
        """
        M = 0.5 * (np.asarray(M, float) + np.asarray(M, float).T)
        tr = float(np.trace(M))
        if not np.isfinite(tr) or tr <= 0:
            raise ValueError(f"a learned metric with trace {tr:g} cannot be mapped to trace one")
        return {"X": M / tr}, {"scale": 1.0 / tr}

    def fw_bound(self, X: np.ndarray) -> float:
        """Upper bound ``g(X) + lambda_max(G) - <G, X>`` on ``g*`` from a feasible ``X`` (smooth losses)."""
        g, G, _ = self.value_and_grad(X)
        return g + float(np.linalg.eigvalsh(G)[-1]) - float(np.sum(G * X))

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
        """Clarabel on :meth:`reference_formulation`; value at an exactly feasible point, FW bound."""
        from importlib.metadata import version

        t0 = time.perf_counter()
        form = self.reference_formulation()
        # Tight settings first, Clarabel's defaults where they fail (raw features with an ID column);
        # either point is certified by the Frank-Wolfe bound.
        ok, status = solve_reference_clarabel(form.problem, time_limit_s)
        if not ok:
            return {"value": None, "lower": None, "status": "error", "solver": "clarabel", "message": status}
        X = feasible_point(form.extract()["X"])
        bound = None if self.loss == "hinge" else self.fw_bound(X)
        return {"value": self.value(X), "lower": bound, "status": "ok", "solver": "clarabel",
                "message": f"{status}; value at the feasible point, Frank-Wolfe bound",
                "solver_version": version("clarabel"),
                "solve_time_s": time.perf_counter() - t0}
