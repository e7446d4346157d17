"""The SGML paper's numbers (``paper_values/*.csv``, sources in each file's header) and dataset names.

``objective.csv`` holds Tables 4-5 (converged objectives), ``accuracy.csv`` Tables 6-7 (k-NN
accuracy in %, with the paper's own ``avg.``).  The authors' result file
``$PSDBENCH_DATA/sgml_paper_results/sgml_objective_table.csv`` (``obj_arXiv_final.tgn``) is read by
:func:`load_authors_csv` when present.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import pandas as pd

#: The authors' objective table, relative to ``$PSDBENCH_DATA``.
OBJECTIVE_CSV = Path("sgml_paper_results") / "sgml_objective_table.csv"
#: A store dataset that is a copy of a paper dataset under another name: (paper name, column label).
DATASET_ALIASES: dict[str, tuple[str, str]] = {"sklearn/breast-cancer": ("WDBC", "WDBC (sklearn copy)")}


def _read(name: str) -> pd.DataFrame:
    path = resources.files("psdbench.families.mahalanobis") / "paper_values" / name
    with path.open("r", encoding="utf-8") as fh:
        return pd.read_csv(fh, comment="#", dtype={"objective": str, "optimizer": str, "dataset": str})


def norm(name: str) -> str:
    """A dataset name without dashes, underscores, spaces and case."""
    return re.sub(r"[-_\s]+", "", name).lower()


@dataclass(frozen=True)
class PaperValues:
    """The paper's tables as long frames (``objective, optimizer, dataset[, k_nn], value``)."""

    objective: pd.DataFrame
    accuracy: pd.DataFrame

    @property
    def datasets(self) -> tuple[str, ...]:
        """Datasets of Tables 4-5 in the paper's column order."""
        return tuple(dict.fromkeys(self.objective["dataset"]))

    @property
    def accuracy_datasets(self) -> tuple[str, ...]:
        """Datasets of Tables 6-7 (without ``avg.``)."""
        return tuple(d for d in dict.fromkeys(self.accuracy["dataset"]) if d != "avg.")

    @property
    def optimizers(self) -> tuple[str, ...]:
        """The paper's optimizers in its row order."""
        return tuple(dict.fromkeys(self.objective["optimizer"]))

    @property
    def objectives(self) -> tuple[str, ...]:
        """Objectives in the paper's row order."""
        return tuple(dict.fromkeys(self.objective["objective"]))

    @property
    def k_nn(self) -> tuple[int, ...]:
        """The k of the paper's k-NN accuracy tables."""
        return tuple(sorted({int(k) for k in self.accuracy["k_nn"]}))

    def objective_value(self, objective: str, optimizer: str, dataset: str | None) -> float:
        """Final objective (Tables 4-5); NaN if the paper has none."""
        o = self.objective
        v = o[(o["objective"] == objective.upper()) & (o["optimizer"] == optimizer) & (o["dataset"] == dataset)]
        return float(v["value"].iloc[0]) if len(v) else float("nan")

    def accuracy_value(self, objective: str, optimizer: str, dataset: str | None, k_nn: int | None = None) -> float:
        """k-NN accuracy in % (Tables 6-7; ``dataset="avg."``: the paper's average); NaN if none."""
        a = self.accuracy
        m = (a["objective"] == objective.upper()) & (a["optimizer"] == optimizer) & (a["dataset"] == dataset)
        if k_nn is not None:
            m &= a["k_nn"] == int(k_nn)
        return float(a.loc[m, "value"].iloc[0]) if m.any() else float("nan")

    def paper_dataset(self, dataset: str) -> str | None:
        """The paper's name of a store dataset (``uci/liver-disorders`` is ``Liverdisorders``), or None."""
        if dataset in DATASET_ALIASES:
            return DATASET_ALIASES[dataset][0]
        by_key = {norm(d): d for d in self.datasets}
        return by_key.get(norm(str(dataset).rsplit("/", 1)[-1]))

    def column_label(self, dataset: str) -> str:
        """A column header: the paper's name (``WDBC (sklearn copy)`` for an alias), else the store name."""
        if dataset in DATASET_ALIASES:
            return DATASET_ALIASES[dataset][1]
        return self.paper_dataset(dataset) or str(dataset)

    def order_datasets(self, datasets: Any) -> list[str]:
        """Store datasets in the paper's column order; aliases after the original, unknown ones last."""
        order = self.datasets

        def key(d: str) -> tuple[int, int, str]:
            p = self.paper_dataset(d)
            return (order.index(p) if p else len(order), int(d in DATASET_ALIASES), d)

        return sorted({str(d) for d in datasets}, key=key)


def load() -> PaperValues:
    """Read the packaged paper values."""
    return PaperValues(_read("objective.csv"), _read("accuracy.csv"))


def load_authors_csv(paper: PaperValues, data_dir: str | Path | None = None) -> dict[str, dict[str, dict[str, float]]] | None:
    """``{objective: {optimizer: {paper dataset: value}}}`` from the authors' CSV, or None if unavailable.

    ``data_dir`` defaults to ``$PSDBENCH_DATA``; a missing or unreadable file gives None.
    """
    base = data_dir if data_dir is not None else os.environ.get("PSDBENCH_DATA")
    if not base:
        return None
    by_key = {norm(d): d for d in paper.datasets}
    try:
        df = pd.read_csv(Path(base).expanduser() / OBJECTIVE_CSV)
        out: dict[str, dict[str, dict[str, float]]] = {}
        for r in df.itertuples(index=False):
            ds = by_key.get(norm(str(r.dataset)), str(r.dataset))
            out.setdefault(str(r.objective).upper(), {}).setdefault(str(r.optimizer), {})[ds] = float(r.final_objective)
        return out
    except (OSError, ValueError, AttributeError, pd.errors.ParserError):
        return None


def is_better(a: float, b: float, sense: str) -> bool:
    """Whether ``a`` is strictly better than ``b`` (lower for ``min``, higher for ``max``); False on NaN."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return a > b if sense == "max" else a < b
