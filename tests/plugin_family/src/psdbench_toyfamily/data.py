"""``toy/noisy-corr``: a generator dataset (no samples, no labels).

The payload holds the generator's settings; the problem draws a noisy symmetric matrix from them
with the instance's size and seed, so one dataset entry serves every size.
"""

from __future__ import annotations

import numpy as np

from psdbench.api import Dataset

GENERATOR = "noisy-correlation"


def draw(n: int, rank: int, noise: float, seed: int) -> np.ndarray:
    """A correlation matrix of rank ``min(rank, n)`` plus symmetric Gaussian noise (unit diagonal kept)."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n, min(rank, n)))
    F /= np.linalg.norm(F, axis=1, keepdims=True)
    E = rng.standard_normal((n, n)) * noise
    A = F @ F.T + (E + E.T) / 2
    np.fill_diagonal(A, 1.0)
    return A


def noisy_corr() -> Dataset:
    """The ``toy/noisy-corr`` entry: settings only, the matrix is drawn per instance."""
    return Dataset(
        name="toy/noisy-corr",
        source="psdbench_toyfamily.data:draw",
        meta={"generator": GENERATOR},
        payload={"generator": GENERATOR, "rank": 3, "noise": 0.3},
    )
