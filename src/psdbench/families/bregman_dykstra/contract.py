"""What a ``bregman-pairs`` solver may use of an instance.

:class:`BregmanPairsKind` lists what ``dykstra`` and the generic conic solvers read;
:class:`~psdbench.families.bregman_dykstra.instance.BregmanPairsInstance` implements it.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from psdbench.api import Instance


@runtime_checkable
class BregmanPairsKind(Instance, Protocol):
    """Problem (2) (kind ``"bregman-pairs"``): minimize ``BD((W, xi), (I, 1))`` over K half-spaces.

    Attributes
    ----------
    A : ndarray of shape (K, n, n)
        The symmetric PSD constraint matrices ``A_k``.
    y : ndarray of shape (K,)
        Constraint signs in ``{-1, +1}``.
    b, c : ndarray of shape (K,)
        Bounds ``b_k > 0`` and slack weights ``c_k > 0``.
    divergence : str
        ``"is"``, ``"l2"`` or ``"re"`` (section 2.2).
    variables : tuple of str
        ``("W", "xi")``: the n x n PD matrix and the K slacks (optional: without it the instance
        scores ``W`` at its best feasible slack).
    """

    A: np.ndarray
    y: np.ndarray
    b: np.ndarray
    c: np.ndarray
    divergence: str
    variables: ClassVar[tuple[str, ...]]

    @property
    def K(self) -> int:
        """Number of half-spaces."""

    def inner(self, W: np.ndarray) -> np.ndarray:
        """``<A_k, W>`` for every k."""

    def value(self, W: np.ndarray, xi: np.ndarray) -> float:
        """Objective (2) at ``(W, xi)``."""
