"""metric-learn's LMNN and ITML, and the Euclidean metric, as peer solvers for metric problems.

``ml-lmnn`` (``metric_learn.LMNN``), ``ml-itml`` (``metric_learn.ITML_Supervised``, or
``metric_learn.ITML`` on an instance's own pairs where it offers ``metric_pairs()``) and
``euclidean`` (the identity metric) learn a Mahalanobis matrix from an instance's labelled
training samples and hand it to the instance, which maps it into its own feasible set.  They are
generic: they run on any problem kind whose instances offer the two hooks of
:class:`MetricPeerInstance`, and name no family.

* Peers train on exactly the samples ``metric_training_data()`` returns (the instance's training
  split; a validation split, where an instance has one, is the instance's to include or not).
  Labels are passed as codes ``0..c-1``: metric-learn's ``Constraints`` (ITML_Supervised's pair
  sampler) treats a negative label as *unlabelled*, so +-1 labels would silently drop a class.
* ``metric_from_matrix(M)`` returns the solution variables and the mapping it applied (e.g.
  ``{"scale": a, "shift": b}``); the solution's ``info["mapping"]`` records it.  Objective,
  verification and metrics are the instance's, on the mapped point, as for any solver.
* The settings are metric-learn 0.7.0's defaults, declared as :class:`~psdbench.api.Param` specs
  (so they enter the cell key) and recorded in ``info["settings"]``; ITML's thresholds are its
  default 5th / 95th percentiles of the training distances, the values used go to
  ``info["bounds"]``.  ``random_state`` is the instance's seed.  ``budget.max_iter``, when set,
  replaces ``max_iter``.
* **Deadline**: metric-learn's ``fit`` cannot be interrupted, so these solvers do not stop at
  ``budget.expired()``; they rely on the harness's hard kill at the deadline plus grace (no
  iterate is streamed before the fit returns, so a killed cell has no point).
* metric-learn 0.7 needs a keyword translation on scikit-learn >= 1.8: every fit runs inside
  :func:`psdbench.solvers.sklearn_compat.sklearn_validation_compat` (the reason is there).
* ``ok`` when metric-learn's own convergence test stopped the fit, ``max_iter`` when it ran out of
  iterations (``n_iter_ >= max_iter - 1``: the last-iteration convergence cannot be told apart).

Without metric-learn the two peers are ``skipped`` with :data:`NOT_INSTALLED`; ``euclidean`` needs
no library.
"""

from __future__ import annotations

import warnings
from importlib.metadata import PackageNotFoundError, version
from types import ModuleType
from typing import Any, Protocol, runtime_checkable

import numpy as np

from psdbench import api
from psdbench.api import Budget, Solution, Status
from psdbench.solvers.sklearn_compat import sklearn_validation_compat

NOT_INSTALLED = api.missing_extra("metric-learn", "peers")


@runtime_checkable
class MetricPeerInstance(Protocol):
    """What the peer solvers use of an instance (besides ``seed``).

    ``metric_training_data() -> (X, y) | None``
        Training samples ``X`` (n x D, the features the metric acts on, preprocessed as the problem
        does) and labels ``y`` (n,); ``None`` when the instance has no training set a peer should
        learn from (the solvers then skip).
    ``metric_from_matrix(M) -> (variables, mapping)``
        Map a learned D x D PSD Mahalanobis matrix to the instance's solution variables (rescaled or
        shifted into its feasible set as the problem sees fit) and a dict of floats saying how.
    """

    seed: int

    def metric_training_data(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Labelled training samples, or ``None``."""

    def metric_from_matrix(self, M: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """Solution variables for the metric ``M`` and the mapping applied."""


def _version(pkg: str) -> str:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return "absent"


def import_metric_learn() -> ModuleType | None:
    """``metric_learn``, or ``None`` when it cannot be imported."""
    try:
        import metric_learn
    except ImportError:
        return None
    return metric_learn


def hooks_missing(instance: Any) -> str | None:
    """Why ``instance`` offers no training data for a peer, or ``None``."""
    names = [h for h in ("metric_training_data", "metric_from_matrix") if not callable(getattr(instance, h, None))]
    if names:
        return f"{getattr(instance, 'problem', 'this problem')} offers no {' / '.join(names)} hook"
    if instance.metric_training_data() is None:
        return f"{getattr(instance, 'problem', 'this problem')} offers no training set for metric learners here"
    return None


def mapped_solution(instance: Any, M: np.ndarray, status: Status, iterations: int, info: dict[str, Any],
                    message: str = "") -> Solution:
    """The instance's variables for ``M``, the mapping in ``info``, the point as the only iterate."""
    rec = api.TraceRecorder()
    variables, mapping = instance.metric_from_matrix(np.asarray(M, float))
    info = {**info, "mapping": {k: float(v) for k, v in mapping.items()}, "trace_learned": float(np.trace(M))}
    return Solution(variables=variables, status=status, iterations=iterations, info=info, message=message,
                    iterates=rec.finish(variables))


class Euclidean:
    """``euclidean``: the identity metric, mapped by the instance (the k-NN baseline)."""

    name = "euclidean"
    kinds: tuple[str, ...] = ("*",)
    requires = ("metric_training_data", "metric_from_matrix")  # MetricPeerInstance
    returns = "the instance's variables for the learned metric (metric_from_matrix), the mapping in info"
    params: dict[str, api.Param] = {}
    default_params: dict[str, Any] = {}

    def library_versions(self) -> dict[str, str]:
        return {}

    def skip_reason(self, instance: Any) -> str | None:
        return hooks_missing(instance)

    def supports(self, instance: Any) -> bool:
        return self.skip_reason(instance) is None

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        X, _ = instance.metric_training_data()
        return mapped_solution(instance, np.eye(X.shape[1]), Status.OK, 0, {"settings": {}})


class MetricLearnPeer:
    """Base class: fit one metric-learn estimator on the instance's training data."""

    name = "metric-learn"
    kinds: tuple[str, ...] = ("*",)
    requires = ("metric_training_data", "metric_from_matrix")  # MetricPeerInstance
    returns = "the instance's variables for the learned metric (metric_from_matrix), the mapping in info"
    params: dict[str, api.Param] = {}
    default_params: dict[str, Any] = {}
    preload: tuple[str, ...] = ("metric_learn",)

    def library_versions(self) -> dict[str, str]:
        return {"metric-learn": _version("metric-learn"), "scikit-learn": _version("scikit-learn")}

    def skip_reason(self, instance: Any) -> str | None:
        if import_metric_learn() is None:
            return NOT_INSTALLED
        return hooks_missing(instance)

    def supports(self, instance: Any) -> bool:
        return self.skip_reason(instance) is None

    def estimator(self, ml: ModuleType, settings: dict[str, Any], seed: int) -> Any:
        """The unfitted estimator."""
        raise NotImplementedError

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        ml = import_metric_learn()
        if ml is None:
            return Solution(variables={}, status=Status.SKIPPED, message=NOT_INSTALLED)
        api.validate_params(self, params, self.name)
        settings = {**self.default_params, **params}
        if budget.max_iter is not None:
            settings["max_iter"] = int(budget.max_iter)
        X, y = instance.metric_training_data()
        # metric-learn's constraint generators read labels < 0 as "unlabelled": pass codes 0..c-1
        y_codes = np.unique(np.asarray(y), return_inverse=True)[1].ravel()
        est = self.estimator(ml, settings, int(instance.seed))
        with sklearn_validation_compat("metric_learn") as patched, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(np.asarray(X, float), y_codes)
        n_iter = int(getattr(est, "n_iter_", 0))
        status = Status.MAX_ITER if n_iter >= int(settings["max_iter"]) - 1 else Status.OK
        info: dict[str, Any] = {"settings": settings, "random_state": int(instance.seed), "n_iter": n_iter,
                                "sklearn_compat": [f"{m}.{n}" for m, n in patched],
                                "warnings": sorted({str(w.message).splitlines()[0][:200] for w in caught})}
        info.update(self.fitted_info(est))
        message = "" if status is Status.OK else f"stopped at max_iter = {settings['max_iter']}"
        return mapped_solution(instance, est.get_mahalanobis_matrix(), status, n_iter, info, message)

    def fitted_info(self, est: Any) -> dict[str, Any]:
        """Values the fit chose that the record should keep."""
        return {}


class MlLmnn(MetricLearnPeer):
    """``ml-lmnn``: ``metric_learn.LMNN`` (Weinberger and Saul), metric-learn 0.7.0's defaults."""

    name = "ml-lmnn"
    params: dict[str, api.Param] = {
        "n_neighbors": api.number(low=1, default=3, integer=True, doc="target neighbours k"),
        "max_iter": api.number(low=2, default=1000, integer=True, doc="gradient iterations"),
        "min_iter": api.number(low=0, default=50, integer=True, doc="iterations before the convergence test"),
        "learn_rate": api.number(low=0, default=1e-7, doc="initial step size (adapted by LMNN)"),
        "regularization": api.number(low=0, high=1, default=0.5, doc="weight of the push term"),
        "convergence_tol": api.number(low=0, default=1e-3, doc="stop when |objective change| is below"),
        "init": api.choice("auto", "pca", "lda", "identity", "random", doc="initial linear map"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def estimator(self, ml: ModuleType, settings: dict[str, Any], seed: int) -> Any:
        return ml.LMNN(random_state=seed, **settings)


class MlItml(MetricLearnPeer):
    """``ml-itml``: metric-learn's ITML (Davis et al.), metric-learn 0.7.0's defaults.

    Constraints (``constraints = "auto"``): where the instance offers its own pairs through the
    optional hook ``metric_pairs()`` (``metric/bregman-pairs`` with ``pairs = "labels"``), ITML is
    fitted on exactly those pairs (``metric_learn.ITML`` with ``y`` in {+1, -1}) with the instance's
    bounds ``(u, l) = (b_ub, b_lb)`` and ``gamma = c_k`` (unless ``gamma`` is set explicitly), prior
    identity: ITML then solves the instance's problem (ISBD, ``eps = 0``, uniform ``c``) by cyclic
    Bregman projections; ``info["itml_mapping"]`` and the message say whether the mapping is exact
    and, if not, why.  With the exact mapping an ITML sweep is ``dykstra``'s cyclic epoch (similar
    pairs first): the iterates agree to ~1e-13 after the same number of sweeps
    (``tests/test_bregman_dykstra_pairs.py::test_itml_is_cyclic_dykstra``).  Otherwise (``"supervised"``, or an instance without the hook)
    ``ITML_Supervised``: ``n_constraints`` random similar / dissimilar pairs (``None``: 20 x
    classes^2), drawn with the instance's seed; thresholds: the 5th / 95th percentiles of the
    training pair distances (metric-learn's default), recorded in ``info["bounds"]``.
    """

    name = "ml-itml"
    params: dict[str, api.Param] = {
        "gamma": api.number(low=0, default=1.0, doc="slack trade-off (instance pairs: default c_k of the instance)"),
        "max_iter": api.number(low=1, default=1000, integer=True, doc="Bregman projection sweeps"),
        "tol": api.number(low=0, default=1e-3, doc="convergence threshold on the dual variables"),
        "n_constraints": api.number(low=1, default=None, integer=True, doc="pairs; None = 20 x classes^2"),
        "prior": api.choice("identity", "covariance", "random", doc="prior metric M0"),
        "constraints": api.choice("auto", "supervised",
                                  doc="auto: the instance's own pairs and bounds where it offers metric_pairs() | "
                                      "supervised: ITML_Supervised's own sampling"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def estimator(self, ml: ModuleType, settings: dict[str, Any], seed: int) -> Any:
        s = {k: v for k, v in settings.items() if k != "constraints"}
        return ml.ITML_Supervised(random_state=seed, **s)

    def fitted_info(self, est: Any) -> dict[str, Any]:
        return {"bounds": [float(b) for b in np.ravel(getattr(est, "bounds_", []))]}

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        hook = getattr(instance, "metric_pairs", None)
        pairs = hook() if callable(hook) and params.get("constraints", "auto") == "auto" else None
        ml = import_metric_learn()
        if pairs is None or ml is None:
            return super().solve(instance, budget, **params)
        api.validate_params(self, params, self.name)
        settings = {**self.default_params, **params}
        if budget.max_iter is not None:
            settings["max_iter"] = int(budget.max_iter)
        why = [pairs["why"]] if pairs["why"] else []
        gamma = float(pairs["gamma"])
        if "gamma" in params:
            gamma = float(params["gamma"])
            if gamma != float(pairs["gamma"]):
                why.append(f"gamma = {gamma:g} set explicitly, c_k = {pairs['gamma']:g}")
        if settings["prior"] != "identity":
            why.append(f"prior {settings['prior']!r}: problem (2) is centred at I")
        settings["gamma"] = gamma
        u, l = (float(b) for b in pairs["bounds"])
        est = ml.ITML(gamma=gamma, max_iter=int(settings["max_iter"]), tol=float(settings["tol"]),
                      prior=settings["prior"], random_state=int(instance.seed))
        with sklearn_validation_compat("metric_learn") as patched, warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            est.fit(np.asarray(pairs["pairs"], float), np.asarray(pairs["y"], int), bounds=(u, l))
        n_iter = int(getattr(est, "n_iter_", 0))
        status = Status.MAX_ITER if n_iter >= int(settings["max_iter"]) - 1 else Status.OK
        exact = not why
        mapping = {"constraints": "instance pairs (metric_learn.ITML)", "K": int(len(pairs["y"])),
                   "bounds_u_l": [u, l], "gamma": gamma, "exact": exact, "why_not_exact": "; ".join(why)}
        info: dict[str, Any] = {"settings": settings, "random_state": int(instance.seed), "n_iter": n_iter,
                                "sklearn_compat": [f"{m}.{n}" for m, n in patched],
                                "warnings": sorted({str(w.message).splitlines()[0][:200] for w in caught}),
                                "bounds": [u, l], "itml_mapping": mapping}
        message = (f"ITML on the instance's {len(pairs['y'])} pairs, bounds (u, l) = (b_ub, b_lb) = ({u:g}, {l:g}), "
                   f"gamma = {gamma:g}, prior {settings['prior']}: mapping to (2) "
                   + ("exact (ISBD, eps = 0, c_k = gamma)" if exact else "NOT exact: " + "; ".join(why)))
        if status is not Status.OK:
            message += f"; stopped at max_iter = {settings['max_iter']}"
        return mapped_solution(instance, est.get_mahalanobis_matrix(), status, n_iter, info, message)
