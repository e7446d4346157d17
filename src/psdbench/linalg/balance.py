"""Structural balance of a signed graph given by a symmetric matrix (Cartwright-Harary).

A generalized graph Laplacian ``M`` defines a signed graph: ``M_ij < 0`` is a positive edge
(``w_ij = -M_ij > 0``) and ``M_ij > 0`` a negative one.  The graph is balanced exactly when its
nodes can be 2-coloured so that positive edges join equal colours and negative edges join different
colours (Cartwright and Harary, 1956; SGML paper section 3.3).  :func:`two_colouring` finds such a
colouring by breadth-first search or reports the first conflicting edge.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np


@dataclass
class Colouring:
    """Result of :func:`two_colouring`.

    Attributes
    ----------
    balanced : bool
    colours : ndarray of +-1
        A consistent colouring when ``balanced`` (one per connected component, first node +1).
    n_components : int
    conflict : tuple of int or None
        An edge ``(i, j)`` that closes an unbalanced cycle.
    """

    balanced: bool
    colours: np.ndarray
    n_components: int
    conflict: tuple[int, int] | None = None


def two_colouring(M: np.ndarray, tol: float = 0.0) -> Colouring:
    """2-colour the signed graph of symmetric ``M`` (off-diagonal entries with ``|M_ij| > tol`` are edges)."""
    n = M.shape[0]
    S = np.where(np.abs(M) > tol, np.sign(M), 0.0)
    np.fill_diagonal(S, 0.0)
    colours = np.zeros(n)
    n_comp = 0
    conflict = None
    for start in range(n):
        if colours[start]:
            continue
        n_comp += 1
        colours[start] = 1.0
        queue = deque([start])
        while queue:
            i = queue.popleft()
            for j in np.flatnonzero(S[i]):
                want = colours[i] * (-S[i, j])  # M_ij < 0 (positive edge): same colour
                if colours[j] == 0:
                    colours[j] = want
                    queue.append(j)
                elif colours[j] != want and conflict is None:
                    conflict = (int(i), int(j))
    return Colouring(balanced=conflict is None, colours=colours, n_components=n_comp, conflict=conflict)


def sign_violation(M: np.ndarray, colours: np.ndarray) -> float:
    """Largest entry of ``M`` with the wrong sign for ``colours``.

    Same colour requires ``M_ij <= 0``, different colour ``M_ij >= 0`` (SGML paper, eq. (41)).
    """
    want = -np.outer(colours, colours)  # +1 where M_ij must be >= 0
    bad = np.maximum(-want * M, 0.0)
    np.fill_diagonal(bad, 0.0)
    return float(bad.max()) if bad.size else 0.0
