"""The BSGL paper's Table II (``paper_values/table2.csv``; source in the file's header)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources

import pandas as pd


@dataclass(frozen=True)
class Table2:
    """Table II as a long frame: ``n_nodes, n_samples, edge_prob, metric, method, noise_sd, value, runs``."""

    frame: pd.DataFrame

    @property
    def methods(self) -> tuple[str, ...]:
        """The paper's methods in its column order (``Proposed``, ``GLASSO Min``, ...)."""
        return tuple(dict.fromkeys(self.frame["method"]))

    @property
    def settings(self) -> tuple[tuple[int, int], ...]:
        """The paper's ``(N, K)`` settings in its order."""
        return tuple(dict.fromkeys(zip(self.frame["n_nodes"].astype(int), self.frame["n_samples"].astype(int))))

    def applies(self, n_nodes: int, n_samples: int, edge_probs: set[float]) -> bool:
        """Whether a setting with these edge probabilities is one of the paper's."""
        f = self.frame[(self.frame["n_nodes"] == n_nodes) & (self.frame["n_samples"] == n_samples)]
        return len(f) > 0 and {float(e) for e in edge_probs} == {float(e) for e in f["edge_prob"].unique()}

    def runs(self, n_nodes: int, n_samples: int) -> int:
        """Runs the paper averaged over in a setting (0 if not a setting of the paper)."""
        f = self.frame[(self.frame["n_nodes"] == n_nodes) & (self.frame["n_samples"] == n_samples)]
        return int(f["runs"].iloc[0]) if len(f) else 0

    def value(self, n_nodes: int, n_samples: int, method: str, metric: str, noise_sd: float) -> float:
        """The paper's value, or NaN when it has none (it reports RE for N=50 and AE for N=100 only)."""
        f = self.frame
        m = ((f["n_nodes"] == int(n_nodes)) & (f["n_samples"] == int(n_samples)) & (f["method"] == method)
             & (f["metric"] == metric))
        hit = f[m & f["noise_sd"].map(lambda s: math.isclose(float(s), float(noise_sd), abs_tol=1e-12))]
        return float(hit["value"].iloc[0]) if len(hit) else float("nan")


def load() -> Table2:
    """Read the packaged Table II."""
    path = resources.files("psdbench.families.signed_graph") / "paper_values" / "table2.csv"
    with path.open("r", encoding="utf-8") as fh:
        return Table2(pd.read_csv(fh, comment="#"))
