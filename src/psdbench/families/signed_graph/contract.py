"""What a ``signed-graph`` solver may use of an instance.

:class:`SignedGraphKind` lists exactly what ``balanced-clime``, ``clime`` and ``glasso`` read;
:class:`~psdbench.families.signed_graph.problem.SignedGraphInstance` implements it.  The task
(BSGL paper): estimate the generalized Laplacian ``L`` (positive definite, balanced) of a signed
graph on ``N`` nodes from ``K`` observations.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from psdbench.api import Instance


@runtime_checkable
class SignedGraphKind(Instance, Protocol):
    """A signed-graph learning instance (kind ``"signed-graph"``).

    Attributes
    ----------
    X : ndarray of shape (N, K)
        Observations, one row per node, one column per sample.
    C : ndarray of shape (N, N)
        Sample covariance ``X X' / (K - 1)`` (rows centred first when ``params["center"]``, the
        one instance parameter solvers may read: cross-validated baselines recompute fold
        covariances the same way).
    variables : tuple of str
        ``("L", "polarity")``: the estimate, and optionally node polarities (+-1) when the solver
        claims ``L`` is balanced with them (then verified too).
    """

    X: np.ndarray
    C: np.ndarray
    variables: ClassVar[tuple[str, ...]]

    @property
    def n_samples(self) -> int:
        """``K``, the number of observations (HQIC's ``ln ln K`` and weight ``K / 2``)."""
