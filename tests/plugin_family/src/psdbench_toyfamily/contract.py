"""What a ``toy-psd`` solver may use of an instance (the family's kind protocol).

:class:`~psdbench_toyfamily.problem.NearestPsdInstance` implements it; ``toy-altproj`` reads
nothing else.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

import numpy as np

from psdbench.api import Instance


@runtime_checkable
class NearestPsdKind(Instance, Protocol):
    """A nearest unit-diagonal PSD matrix instance (kind ``"toy-psd"``).

    Attributes
    ----------
    A : ndarray of shape (n, n)
        The symmetric matrix to approximate.
    variables : tuple of str
        ``("X",)``: a solution carries the approximation ``X``.
    """

    A: np.ndarray
    variables: ClassVar[tuple[str, ...]]
