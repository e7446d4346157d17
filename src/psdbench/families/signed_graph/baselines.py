"""The BSGL paper's baselines: CLIME and GLASSO, each optionally followed by a balancing step.

BSGL paper, section VI-A1 (``shared/papers/balanced-signed-graph-learning-sparse-lp.txt``):
"a precision matrix estimation followed by a graph balancing step", with CLIME [28] or GLASSO
[24] and Min-cut, Max-cut or Greedy balancing (:mod:`psdbench.families.signed_graph.balancing`).

* ``clime``: the column LP (9) for every column with one ``rho`` (HiGHS,
  :class:`psdbench.families.signed_graph.clime_lp.ColumnLP`), symmetrized as ``(L + L') / 2`` (section III-E).
* ``glasso``: scikit-learn's :func:`sklearn.covariance.graphical_lasso` on the instance's sample
  covariance (off-diagonal l1 penalty ``alpha``).

The paper does not say how the baselines' regularization was chosen.  Here ``rho`` / ``alpha``
is a number, or chosen on a grid (rho ascending, alpha descending) by one of two criteria, each
computed on the estimate before balancing; the scan stops after 3 consecutive increases past a
finite value:

* ``"hqic"`` (default): the same HQIC the proposed method uses (K/2-weighted (17)).
* ``"cv"``: ``cv_folds``-fold cross-validation of the held-out Gaussian loss
  ``tr(C_test L) - log det L`` (``+inf`` when ``L`` is not positive definite), each fold's estimate
  fitted on the other folds' covariance; the tuning the baselines' own software offers
  (``cv.clime`` of the CLIME R package with its likelihood loss, scikit-learn's
  ``GraphicalLassoCV``).  The folds are contiguous blocks of the samples.  Balancing
removes the inconsistent edges; the result is not guaranteed positive definite, and the harness
records such outputs as infeasible (their metrics are still recorded).  With ``standardize``
(default, as for ``balanced-clime``) both estimators work on the correlation matrix and the
estimate is scaled back by ``D^-1/2 (.) D^-1/2``; the reported ``hqic_before_balancing`` is then
on the correlation scale (it differs from the original scale by a constant).
"""

from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from psdbench import api
from psdbench.api import Budget, Instance, Solution, Status
from psdbench.families.signed_graph.contract import SignedGraphKind
from psdbench.families.signed_graph.clime_lp import ColumnLP, ColumnLPError
from psdbench.families.signed_graph.balancing import balance_graph
from psdbench.families.signed_graph.problem import KIND, hqic, sample_covariance

RHO_GRID = tuple(np.round(np.linspace(0.02, 0.5, 25), 4))
ALPHA_GRID = tuple(np.round(np.geomspace(1.0, 1e-3, 25), 6))  # sparse to dense: the dense end is slow


def clime(C: np.ndarray, rho: float) -> np.ndarray:
    """CLIME (9) column by column, symmetrized ``(L + L') / 2``; raises :class:`ColumnLPError` if a column is infeasible."""
    n = C.shape[0]
    cols = [ColumnLP(C, i, None).solve(rho)[0] for i in range(n)]
    L = np.array(cols).T
    return 0.5 * (L + L.T)


def glasso(C: np.ndarray, alpha: float) -> np.ndarray:
    """GLASSO precision estimate for penalty ``alpha`` (scikit-learn, coordinate descent)."""
    from sklearn.covariance import graphical_lasso

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _, P = graphical_lasso(C, alpha=alpha, mode="cd", max_iter=500, tol=1e-6)
    return 0.5 * (P + P.T)


def _scan(score: Callable[[float], tuple[float | None, Any]], grid: tuple[float, ...],
          patience: int = 3, stop: Callable[[], bool] | None = None) -> tuple[float, float, Any]:
    """Scan ``grid`` in order for the value whose criterion (lower is better) is smallest.

    ``score(v)`` returns the criterion at ``v`` (``None`` if the fit failed) and a payload kept
    with the best value (the estimate, or ``None``).  The scan stops after ``patience`` consecutive
    increases of the criterion past a finite value, the rule ``balanced-clime``'s rho search uses
    (with patience 1 there), or once ``stop()`` is true and some value has an estimate (the
    solver's deadline).

    Returns
    -------
    tuple
        The chosen value, its criterion and its payload.
    """
    best: tuple[float, float, Any] | None = None
    last, worse = np.inf, 0
    for v in grid:
        h, payload = score(float(v))
        if h is None:
            continue
        if best is None or h < best[1]:
            best = (float(v), h, payload)
        if np.isfinite(last) and h > last:
            worse += 1
            if worse >= patience:
                break
        elif np.isfinite(h):
            worse = 0
        last = h if np.isfinite(h) else last
        if stop is not None and stop():
            break
    if best is None:
        raise ValueError("no value of the regularization grid gave an estimate")
    return best


def _fit_or_none(fit: Callable[[np.ndarray, float], np.ndarray], C: np.ndarray, v: float) -> np.ndarray | None:
    """``fit(C, v)``, or ``None`` if it failed or returned non-finite entries."""
    try:
        L = fit(C, v)
    except (ColumnLPError, FloatingPointError, ValueError, np.linalg.LinAlgError):
        return None
    return L if np.all(np.isfinite(L)) else None


def _select(fit: Callable[[np.ndarray, float], np.ndarray], grid: tuple[float, ...], C: np.ndarray, K: int,
            zero_tol: float, stop: Callable[[], bool] | None = None) -> tuple[np.ndarray, float, float]:
    """The estimate on the grid with the smallest HQIC (K/2-weighted (17)), its HQIC and value; see :func:`_scan`."""

    def score(v: float) -> tuple[float | None, np.ndarray | None]:
        L = _fit_or_none(fit, C, v)
        if L is None:
            return None, None
        return hqic(L, C, K, zero_tol * max(float(np.abs(np.diag(L)).max()), 1e-300), weight=K / 2.0), L

    value, h, L = _scan(score, grid, stop=stop)
    return L, h, value


def heldout_loss(L: np.ndarray, C_test: np.ndarray) -> float:
    """Held-out Gaussian loss ``tr(C_test L) - log det L`` (negative log-likelihood up to constants); ``inf`` unless PD."""
    try:
        c = np.linalg.cholesky(L)
    except np.linalg.LinAlgError:
        return float("inf")
    return float(np.sum(C_test * L) - 2.0 * np.sum(np.log(np.diag(c))))


def cv_loss(fit: Callable[[np.ndarray, float], np.ndarray], v: float, X: np.ndarray, folds: int,
            center: bool = False, standardize: bool = True) -> float:
    """Mean held-out loss of ``fit`` at ``v`` over ``folds`` contiguous folds of the samples (columns of ``X``).

    Each fold's estimate is fitted on the other folds' covariance (standardized with their own
    scale when ``standardize``, then scaled back) and scored by :func:`heldout_loss` on the fold's
    covariance.  ``inf`` if any fold's fit fails or is not positive definite.
    """
    K = X.shape[1]
    if not 2 <= folds <= K // 2:
        raise ValueError(f"cv_folds must be between 2 and K / 2 = {K // 2}, not {folds}")
    total = 0.0
    for test in np.array_split(np.arange(K), folds):
        train = np.setdiff1d(np.arange(K), test)
        C_train = sample_covariance(X[:, train], center)
        d = np.sqrt(np.diag(C_train)) if standardize else np.ones(len(C_train))
        L = _fit_or_none(fit, C_train / np.outer(d, d), v)
        if L is None:
            return float("inf")
        total += heldout_loss(L / np.outer(d, d), sample_covariance(X[:, test], center))
    return total / folds


def _select_cv(fit: Callable[[np.ndarray, float], np.ndarray], grid: tuple[float, ...], C: np.ndarray, X: np.ndarray,
               folds: int, center: bool, standardize: bool,
               stop: Callable[[], bool] | None = None) -> tuple[np.ndarray, float, float]:
    """The grid value with the smallest :func:`cv_loss`: the estimate on all samples (``C``) at it, the loss, the value."""
    value, loss, _ = _scan(lambda v: (cv_loss(fit, v, X, folds, center, standardize), None), grid, stop=stop)
    return fit(C, value), loss, value


def _two_step_params(param_name: str, what: str) -> dict[str, api.Param]:
    """Specs of a two-step baseline whose regularization parameter is ``param_name``."""
    return {
        param_name: api.either("hqic", "cv", api.number(low=0), default="hqic",
                               doc=f"{what}: a number, or chosen on the grid by HQIC or cross-validation"),
        "balance": api.choice("none", "min", "max", "greedy", doc="balancing step: none | min-cut | max-cut | greedy"),
        "zero_tol": api.number(low=0, default=1e-9, doc="entries at most zero_tol * max |L_ii| are not edges"),
        "standardize": api.Param(default=True, types=(bool,), doc="estimate on the correlation scale, then rescale"),
        "cv_folds": api.number(low=2, default=5, integer=True, doc='folds of the "cv" choice'),
    }


class _TwoStep:
    """Estimator + optional balancing (the paper's six baseline configurations)."""

    name = ""
    kinds = (KIND,)
    returns = "L (N, N): the estimated precision matrix; with balancing, polarity (N,) too (verified)"
    param_name = ""
    grid: tuple[float, ...] = ()
    params: dict[str, api.Param] = {}
    default_params: dict[str, Any] = {}

    def supports(self, instance: Instance) -> bool:
        return getattr(instance, "kind", None) == KIND

    def fit(self, C: np.ndarray, value: float) -> np.ndarray:
        raise NotImplementedError

    def solve(self, instance: SignedGraphKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        C, K = instance.C, instance.n_samples
        d = np.sqrt(np.diag(C)) if p["standardize"] else np.ones(len(C))
        C = C / np.outer(d, d)  # the correlation scale, as for balanced-clime; scaled back below
        reg = p[self.param_name]
        info: dict[str, Any] = {}
        if reg == "hqic":
            L, h, value = _select(self.fit, self.grid, C, K, float(p["zero_tol"]), stop=budget.expired)
        elif reg == "cv":
            L, info["cv_loss"], value = _select_cv(self.fit, self.grid, C, instance.X, int(p["cv_folds"]),
                                                   bool(instance.params.get("center", False)), bool(p["standardize"]),
                                                   stop=budget.expired)
            h = hqic(L, C, K, float(p["zero_tol"]) * float(np.abs(np.diag(L)).max()), weight=K / 2.0)
        else:
            value = float(reg)
            L = self.fit(C, value)
            h = hqic(L, C, K, float(p["zero_tol"]) * float(np.abs(np.diag(L)).max()), weight=K / 2.0)
        L = L / np.outer(d, d)
        info.update({self.param_name: value, "hqic_before_balancing": float(h)})
        variables = {"L": L}
        if p["balance"] != "none":
            tol = float(p["zero_tol"]) * float(np.abs(np.diag(L)).max())
            res = balance_graph(L, p["balance"], seed=int(instance.seed), tol=tol)
            variables = {"L": res.L, "polarity": res.polarity}
            info.update(n_removed=int(res.n_removed))
        # a scan cut short by the deadline returns the best value so far, as ``timeout``
        status = Status.TIMEOUT if budget.expired() else Status.OK
        return Solution(variables=variables, status=status, iterations=1, info=info)

    def library_versions(self) -> dict[str, str]:
        from importlib.metadata import version  # the installed distribution's, without importing it

        return {"scikit-learn": version("scikit-learn")}


class Clime(_TwoStep):
    """``clime``: CLIME (9) + optional balancing."""

    name = "clime"
    param_name = "rho"
    grid = RHO_GRID
    params = _two_step_params("rho", "CLIME's l-inf bound rho of (9)")
    default_params = api.default_params(params)

    def fit(self, C: np.ndarray, value: float) -> np.ndarray:
        return clime(C, value)


class Glasso(_TwoStep):
    """``glasso``: scikit-learn GraphicalLasso + optional balancing."""

    name = "glasso"
    param_name = "alpha"
    grid = ALPHA_GRID
    params = _two_step_params("alpha", "GLASSO's off-diagonal l1 penalty")
    default_params = api.default_params(params)

    def fit(self, C: np.ndarray, value: float) -> np.ndarray:
        return glasso(C, value)
