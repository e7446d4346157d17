"""A renamed problem kind keeps pairing with plugins that name the old one, with a deprecation warning."""

from __future__ import annotations

import pytest

from psdbench.harness.grid.expand import expand
from psdbench.registry import discover


class OldKindSolver:
    """A plugin written when the metric-learning kind was called ``metric``."""

    name = "old-kind"
    kinds = ("metric",)
    default_params: dict = {}

    def supports(self, instance):
        return True

    def solve(self, instance, budget, **params):  # pragma: no cover - never run here
        raise NotImplementedError

    def library_versions(self):
        return {}


def test_solver_naming_the_old_kind_still_pairs_and_is_warned():
    reg = discover()
    reg.solvers["old-kind"] = OldKindSolver()
    spec = {"problems": [{"name": "metric/mcml", "datasets": ["sklearn/breast-cancer"], "params": {"fold": 0}},
                         {"name": "graph-classification", "datasets": ["sklearn/breast-cancer"], "params": {"n": 20}}],
            "solvers": [{"name": "old-kind"}]}
    with pytest.warns(DeprecationWarning, match="'metric', now 'mahalanobis'"):
        grid = expand(spec, "alias", reg)
    assert [c.problem for c in grid.cells] == ["metric/mcml"]  # and not graph classification
