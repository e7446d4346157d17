"""What a ``graph-classification`` solver may use of an instance.

:class:`GraphClassificationKind` lists exactly the attributes and methods the family's solvers
(``gdpa-lp``, ``gdpa-lp-elim``, the example plugin ``example-harmonic``) and the generic conic
solvers read.  :class:`~psdbench.families.graph_classification.instance.GraphClassificationInstance`
implements it; anything else on that class is the problem's own business and may change.

Notation of the graph-classifier paper (section 4): ``N`` nodes, the first ``m`` labelled with
``xhat``, graph Laplacian ``L``; ``H`` of (12) is the dual matrix, ``H-bar`` of (15)/(20) its
node-split version.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from psdbench.api import Instance


@runtime_checkable
class GraphClassificationKind(Instance, Protocol):
    """A transductive graph-classification instance (kind ``"graph-classification"``).

    Attributes
    ----------
    L : ndarray of shape (N, N)
        Graph Laplacian ``D - W`` (symmetric, zero row sums, non-positive off-diagonals).
    m : int
        Number of labelled nodes; they are the first ``m`` (the instance's node order).
    variables : tuple of str
        Names a solution may carry: ``M``, ``x``, ``y``, ``z``, ``eps``, ``y_reduced``,
        ``eps_reduced`` (see the problem module's docstring for their meaning and shapes).
    """

    L: np.ndarray
    m: int
    variables: ClassVar[tuple[str, ...]]

    @property
    def xhat(self) -> np.ndarray:
        """Known labels (+-1) of the first ``m`` nodes, eq. (6)."""

    def dual_matrix(self, y: np.ndarray, z: np.ndarray) -> np.ndarray:
        """``H`` of (12): ``diag(y) + offdiag(z) + [[L, 0], [0, 0]]``, size N+1."""

    def split_dual_matrix(self, y: np.ndarray, z: np.ndarray, eps: float) -> np.ndarray:
        """``H-bar`` of (15)/(20), size N+2 (the homogenizing node split by label sign)."""

    def reduced_sdp(self) -> tuple[np.ndarray, float]:
        """``(Q, const)`` of the equivalent SDP over the unlabelled nodes plus one homogenizing node:
        ``min tr(Q Z) + const`` over ``Z`` PSD with unit diagonal (a copy of ``Q``)."""
