"""What a solver of kind ``"maxcut"`` may read of an instance (the family's kind protocol).

:class:`~psdbench.families.maxcut.problem.MaxcutInstance` implements it.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

import scipy.sparse as sp

from psdbench.api import Instance


@runtime_checkable
class MaxcutKind(Instance, Protocol):
    """``max <C, X> s.t. diag(X) = 1, X psd`` on a sparse graph (kind ``"maxcut"``).

    Attributes
    ----------
    C : scipy.sparse.csr_matrix
        The cost, n x n symmetric (``L / 4`` of the graph, or the SDPA file's ``F_0``).
    W : scipy.sparse.csr_matrix
        The graph's weighted adjacency (zero diagonal).
    variables : tuple of str
        ``("R", "y")``: ``R`` (n x r, ``X = R R^T``) and the dual ``y`` (n,).
    """

    C: sp.csr_matrix
    W: sp.csr_matrix
    variables: ClassVar[tuple[str, ...]]
