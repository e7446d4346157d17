"""The section 5.1 generator and its parameter-free dataset ``synthetic/dykstra-halfspaces``.

Section 5.1: ``K`` matrices ``F_k`` (n x n) with U[-0.5, 0.5] entries, ``A_k = F_k F_k'``, ``y_k = +-1``
with equal probability, ``b = 1``, ``c = 1 / (lambda K)``.  The dataset carries only
``payload = {"generator": "dykstra-halfspaces"}``; the problem ``metric/bregman-pairs`` draws the
matrices from its parameters ``n``, ``K``, ``lambda`` and the instance seed (as
``synthetic/balanced-gmrf`` does for ``signed-graph``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from psdbench.api import Dataset, DataError

GENERATOR = "dykstra-halfspaces"


@dataclass
class Halfspaces:
    """``A`` (K, n, n), ``y`` (K,), ``b`` (K,), ``c`` (K,) of problem (2)."""

    A: np.ndarray
    y: np.ndarray
    b: np.ndarray
    c: np.ndarray


def dykstra_halfspaces(n: int, K: int, lam: float, seed: int) -> Halfspaces:
    """Draw one section 5.1 instance (``A_k`` full rank with probability one)."""
    if n < 1 or K < 1 or not lam > 0:
        raise DataError(f"{GENERATOR} needs n >= 1, K >= 1, lambda > 0 (got n={n}, K={K}, lambda={lam})")
    rng = np.random.default_rng([seed, 51])
    F = rng.uniform(-0.5, 0.5, size=(K, n, n))
    A = F @ np.transpose(F, (0, 2, 1))
    A = 0.5 * (A + np.transpose(A, (0, 2, 1)))
    y = rng.choice(np.array([-1.0, 1.0]), size=K)
    return Halfspaces(A=A, y=y, b=np.ones(K), c=np.full(K, 1.0 / (lam * K)))


def dykstra_halfspaces_dataset() -> Dataset:
    """The ``synthetic/dykstra-halfspaces`` entry: no arrays, only the generator's name."""
    return Dataset(
        name="synthetic/dykstra-halfspaces",
        source="psdbench.families.bregman_dykstra.data:dykstra_halfspaces",
        label_coding="no labels: y_k = +-1 are constraint signs drawn per instance",
        payload={"generator": GENERATOR},
    )
