"""What a ``triplet-margin`` solver may use of an instance.

:class:`TripletMarginKind` lists exactly what ``sdpmetric`` and the generic conic solvers read;
:class:`~psdbench.families.sdpmetric.instance.TripletMarginInstance` implements it.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from psdbench.api import Instance


@runtime_checkable
class TripletMarginKind(Instance, Protocol):
    """A triplet large-margin instance (kind ``"triplet-margin"``): maximize (8) over the spectraplex.

    Attributes
    ----------
    U, V : ndarray of shape (m, D)
        Impostor differences ``a_i - a_k`` and target differences ``a_i - a_j``:
        ``A_r = u_r u_r' - v_r v_r'`` (5).
    C : float
        Loss weight.
    loss : str
        ``"hinge"``, ``"squared-hinge"`` or ``"huber"``.
    h : float
        Huber parameter of (10).
    variables : tuple of str
        ``("X", "rho")``: the D x D metric (PSD, trace 1) and, optionally, the margin.
    """

    U: np.ndarray
    V: np.ndarray
    C: float
    loss: str
    h: float
    variables: ClassVar[tuple[str, ...]]

    @property
    def D(self) -> int:
        """Matrix dimension (number of features after PCA)."""

    def margins(self, X: np.ndarray) -> np.ndarray:
        """``<A_r, X>`` for every triplet."""

    def best_rho(self, X: np.ndarray) -> float:
        """The exact maximizer over rho of ``f(X, rho)``."""

    def f(self, X: np.ndarray, rho: float) -> float:
        """Objective (8)."""

    def value_and_grad(self, X: np.ndarray) -> tuple[float, np.ndarray, float]:
        """``(max_rho f(X, rho), nabla_X f(X, rho*), rho*)``."""
