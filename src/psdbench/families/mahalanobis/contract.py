"""What a ``mahalanobis`` (metric-learning) solver may use of an instance.

:class:`MahalanobisKind` lists exactly what ``sgml``, ``pgml``, ``pd-cone`` and the generic conic
solvers read; :class:`~psdbench.families.mahalanobis.instance.MahalanobisInstance` implements it.
The feasible set is ``{M symmetric, M >= rho I, tr(M) <= C}`` (SGML paper, problem (26)); the
objective ``Q`` depends on ``M`` only through the pair distances ``D_ij = (f_i - f_j)' M (f_i - f_j)``
of the training rows ``F``, and :class:`PairObjectiveKind` is its interface on ``D``.
"""

from __future__ import annotations

from typing import Callable, ClassVar, Protocol, runtime_checkable

import numpy as np

from psdbench.api import Instance


@runtime_checkable
class PairObjectiveKind(Protocol):
    """The objective ``Q`` as a function of the pair-distance matrix ``D`` (n x n, zero diagonal).

    Optional hook ``exact_step(D0, E) -> float``: the exact minimizer over ``gamma in [0, 1]`` of
    ``Q(max(D0 + gamma E, 0))`` for piecewise-linear objectives (LMNN); solvers use it when present.
    """

    def value_D(self, D: np.ndarray) -> float:
        """``Q`` at pair distances ``D``."""

    def value_and_coef(self, D: np.ndarray) -> tuple[float, np.ndarray]:
        """``Q(D)`` and ``A = dQ/dD`` (a subgradient where ``Q`` has kinks)."""

    def slope_along(self, D0: np.ndarray, E: np.ndarray) -> Callable[[float], float]:
        """``gamma -> dQ/dgamma`` at ``max(D0 + gamma E, 0)`` (the step-size search's derivative)."""


@runtime_checkable
class MahalanobisKind(Instance, Protocol):
    """A metric-learning instance (kind ``"mahalanobis"``).

    Attributes
    ----------
    F : ndarray of shape (n, K)
        Training rows (normalized as the protocol says).
    y : ndarray of shape (n,)
        Training labels (+-1).
    C : float
        Trace bound.
    rho : float
        Lower bound on the eigenvalues of ``M``.
    obj : PairObjectiveKind
        The objective on pair distances (for solvers that work on ``D`` instead of ``M``).
    variables : tuple of str
        ``("M", "colours")``: the K x K metric, and optionally colours (+-1 per feature) when the
        solver claims ``M`` is the Laplacian of a balanced signed graph (then verified too).
    """

    F: np.ndarray
    y: np.ndarray
    C: float
    rho: float
    obj: PairObjectiveKind
    variables: ClassVar[tuple[str, ...]]

    @property
    def K(self) -> int:
        """Matrix dimension (number of features); equals ``n``."""

    @property
    def sense(self) -> str:
        """``"min"``, or ``"max"`` for DEML (solvers minimize ``-Q`` then)."""

    def value(self, M: np.ndarray) -> float:
        """``Q(M)``."""

    def value_and_grad(self, M: np.ndarray) -> tuple[float, np.ndarray]:
        """``Q(M)`` and its gradient (K x K, symmetric)."""

    def identity_start(self) -> np.ndarray:
        """``(C / K) I`` shrunk by ``1 - 1e-9``: a strictly feasible PD start."""

