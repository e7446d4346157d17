"""``gset/<Gk>``: the Gset graphs themselves, read from files a user keeps under ``$PSDBENCH_DATA/gset``.

Gset's files (Y. Ye's page, web.stanford.edu/~yyye/yyye/Gset/; rudy's output format) are not
shipped or downloaded: put ``G1`` (or ``G1.txt``) ... under ``$PSDBENCH_DATA/gset``.  Format: a first
line ``n m``, then ``m`` lines ``i j w`` (1-based nodes, weight 1 or -1).  A file whose node or edge
count differs from the published one (:mod:`.best_known`'s table) is a one-line ``DataError``, so a
best-known cut is only ever shown beside the graph it belongs to.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import scipy.sparse as sp

from psdbench.api import DataError, Dataset
from psdbench.datasets import data_dir

from .best_known import table


class GsetFileCollection:
    """``gset/<Gk>``: a Gset graph from ``$PSDBENCH_DATA/gset/<Gk>[.txt]``; ``payload["graph"]``."""

    def _dir(self) -> Path:
        return data_dir() / "gset"

    def names(self) -> list[str]:
        d = self._dir()
        if not d.is_dir():
            return []
        return sorted({p.name.removesuffix(".txt") for p in d.iterdir() if p.name.removesuffix(".txt") in table()},
                      key=lambda g: int(g[1:]))

    def path(self, name: str) -> Path:
        for p in (self._dir() / name, self._dir() / f"{name}.txt"):
            if p.is_file():
                return p
        raise DataError(f"missing Gset file {self._dir() / name}[.txt] for dataset gset/{name} "
                        "(Gset is not shipped: put the files there)")

    def check(self, name: str) -> None:
        self.path(name)

    def load(self, name: str) -> Dataset:
        path = self.path(name)
        try:
            with path.open() as fh:
                n, m = (int(t) for t in fh.readline().split()[:2])
                e = np.loadtxt(fh, ndmin=2)
        except (ValueError, OSError) as exc:
            raise DataError(f"dataset gset/{name}: cannot read {path} ({exc})") from None
        if e.shape != (m, 3):
            raise DataError(f"dataset gset/{name}: {path} announces {m} edges and holds {e.shape[0]} lines")
        row = table().get(name)
        if row is not None and (row.nodes, row.edges) != (n, m):
            raise DataError(f"dataset gset/{name}: {path} has {n} nodes and {m} edges, Gset's {name} "
                            f"{row.nodes} and {row.edges}")
        i, j = e[:, 0].astype(np.int64) - 1, e[:, 1].astype(np.int64) - 1
        if i.min() < 0 or max(i.max(), j.max()) >= n or np.any(i == j):
            raise DataError(f"dataset gset/{name}: {path} has a node outside 1..{n} or a loop")
        W = sp.csr_matrix((np.concatenate([e[:, 2], e[:, 2]]), (np.concatenate([i, j]), np.concatenate([j, i]))),
                          shape=(n, n))
        if W.nnz != 2 * m:
            raise DataError(f"dataset gset/{name}: {path} repeats an edge")
        W.sort_indices()
        return Dataset(name=f"gset/{name}", source=str(path), label_coding="",
                       meta={"n": n, "edges": m}, payload={"graph": W})
