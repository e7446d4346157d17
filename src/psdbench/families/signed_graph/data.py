"""Signed-graph data: the balanced GMRF generator of the BSGL paper and a loader for observation CSVs.

BSGL paper: Yokota, Higashi, Tanaka and Cheung, "Efficient Learning of Balanced Signed Graphs via
Sparse Linear Programming" (``shared/papers/balanced-signed-graph-learning-sparse-lp.txt``).

* ``synthetic/balanced-gmrf`` (section VI-A1): an Erdos-Renyi graph with edge probability ``p``,
  weight magnitudes U[0.01, 1], random node polarities with equal probability, edge signs
  consistent with the polarities (a balanced graph), self-loops ``w_ii = 2.5 sum_j [-w_ij]_+``
  and the generalized Laplacian ``L = D - W + diag(W)`` of section III-A (``D_ii = sum_j W_ij``).
  K GMRF samples ``x ~ N(0, L^-1)``, optionally plus white noise of standard deviation ``noise_sd``.
  The dataset entry carries no data: the graph depends on the instance parameters and seed, so
  the ``signed-graph`` problem calls :func:`balanced_gmrf` when it builds an instance.
* ``obs/<path>``: a user's observation matrix, N nodes (rows) x K observations (columns), as CSV
  (comma, semicolon, tab or whitespace separated; a header row is skipped if it is not numeric).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from psdbench.api import Dataset, DataError

GENERATOR = "balanced-gmrf"


@dataclass(frozen=True)
class SignedGraphSample:
    """A ground-truth balanced graph and observations drawn from its GMRF.

    Attributes
    ----------
    X : ndarray of shape (N, K)
        Observations, one column per sample (the paper's ``X = [x_1, ..., x_K]``).
    L : ndarray of shape (N, N)
        Ground-truth generalized Laplacian (precision matrix), symmetric positive definite.
    polarity : ndarray of shape (N,)
        Ground-truth node polarities (+-1).
    """

    X: np.ndarray
    L: np.ndarray
    polarity: np.ndarray


def generalized_laplacian(W: np.ndarray) -> np.ndarray:
    """``L = D - W + diag(W)`` with ``D_ii = sum_j W_ij`` (section III-A); ``W`` symmetric, self-loops on its diagonal."""
    W = np.asarray(W, float)
    return np.diag(W.sum(axis=1)) - W + np.diag(np.diag(W))


def balanced_graph(n: int, p: float, rng: np.random.Generator, loop_factor: float = 2.5) -> tuple[np.ndarray, np.ndarray]:
    """Adjacency ``W`` (self-loops on the diagonal) and polarities of a random balanced graph (section VI-A1)."""
    polarity = rng.choice(np.array([-1.0, 1.0]), size=n)
    upper = np.triu(rng.random((n, n)) < p, k=1)
    mag = rng.uniform(0.01, 1.0, size=(n, n))
    W = np.where(upper, mag, 0.0) * np.outer(polarity, polarity)  # consistent signs: Definition 1
    W = W + W.T
    W[np.diag_indices(n)] = loop_factor * np.clip(-W, 0.0, None).sum(axis=1)  # w_ii = 2.5 sum_j [-w_ij]_+
    return W, polarity


def balanced_gmrf(n: int, k: int, p: float = 0.2, noise_sd: float = 0.0, seed: int = 0,
                  max_tries: int = 100) -> SignedGraphSample:
    """Draw the section VI-A synthetic instance.

    A graph whose Laplacian is singular (a connected component without negative edges has no
    self-loop, e.g. an isolated node) is redrawn from the same stream; with p = 0.2 this is rare.

    Parameters
    ----------
    n, k : int
        Nodes and observations.
    p : float
        Erdos-Renyi edge probability (0.2 in the paper).
    noise_sd : float
        Standard deviation of the additive white Gaussian noise (0 or 0.25 in the paper).
    seed : int
        Seed of everything drawn.

    Returns
    -------
    SignedGraphSample
    """
    if n < 2 or k < 2:
        raise DataError(f"balanced-gmrf needs n >= 2 and k >= 2 (got n={n}, k={k})")
    rng = np.random.default_rng(seed)
    for _ in range(max_tries):
        W, polarity = balanced_graph(n, p, rng)
        L = generalized_laplacian(W)
        if np.linalg.eigvalsh(L)[0] > 1e-8 * max(1.0, np.abs(L).max()):
            break
    else:
        raise DataError(f"balanced-gmrf: no positive definite Laplacian in {max_tries} draws (n={n}, p={p})")
    chol = np.linalg.cholesky(L)  # L = R R': x = R'^-1 z has covariance L^-1
    X = np.linalg.solve(chol.T, rng.standard_normal((n, k)))
    if noise_sd > 0:
        X = X + noise_sd * rng.standard_normal((n, k))
    return SignedGraphSample(X=X, L=L, polarity=polarity)


def balanced_gmrf_dataset() -> Dataset:
    """The ``synthetic/balanced-gmrf`` entry: no arrays, ``payload = {"generator": "balanced-gmrf"}``.

    The ``signed-graph`` problem draws the graph and its samples with :func:`balanced_gmrf` from
    the instance parameters and seed (see the module docstring).
    """
    return Dataset(
        name="synthetic/balanced-gmrf",
        source="psdbench.families.signed_graph.data:balanced_gmrf",
        label_coding="no labels (graph learning); the ground-truth Laplacian is drawn per instance",
        payload={"generator": GENERATOR},
    )


def read_observations(path: str | Path) -> np.ndarray:
    """Read an N x K observation matrix (nodes as rows) from a delimited text file."""
    path = Path(os.path.expanduser(str(path)))
    if not path.is_file():
        raise DataError(f"observation file not found: {path}")
    text = path.read_text().strip().splitlines()
    if not text:
        raise DataError(f"observation file is empty: {path}")
    delim = next((d for d in (",", ";", "\t") if d in text[0]), None)

    def parse(line: str) -> list[float]:
        return [float(v) for v in (line.split(delim) if delim else line.split())]

    try:
        parse(text[0])
        start = 0
    except ValueError:
        start = 1  # header row
    try:
        X = np.array([parse(line) for line in text[start:] if line.strip()], dtype=float)
    except ValueError as exc:
        raise DataError(f"{path}: not a numeric matrix ({exc})") from None
    if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 2:
        raise DataError(f"{path}: need at least 2 nodes (rows) and 2 observations (columns), got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise DataError(f"{path}: {int((~np.isfinite(X)).sum())} NaN or infinite entries")
    return X


class ObservationCollection:
    """``obs/<path>``: a user's N x K observation CSV (relative paths from the working directory)."""

    def names(self) -> list[str]:
        return []

    def check(self, name: str) -> None:
        if not Path(os.path.expanduser(name)).is_file():
            raise DataError(f"observation file not found: {name} (dataset 'obs/{name}')")

    def load(self, name: str) -> Dataset:
        X = read_observations(name)
        return Dataset(
            name=f"obs/{name}",
            X=X,
            y=np.zeros(X.shape[0]),
            source=str(Path(os.path.expanduser(name)).resolve()),
            label_coding="no labels; rows are graph nodes, columns observations",
            meta={"observations": True},
        )
