"""Example psdbench solver plugin: harmonic-function label propagation.

Registered as solver ``example-harmonic`` through the ``psdbench.solvers`` entry-point group (see
this package's ``pyproject.toml``).  It solves no SDP: it predicts the unlabelled nodes of a
``graph-classification`` instance with the harmonic function of Zhu, Ghahramani and Lafferty
(2003),

    f_U = -L_UU^{-1} L_UL xhat,    x_U = sign(f_U)  (ties -> +1),

and keeps the known labels, ``x_L = xhat``.  The returned labels ``x`` are a feasible rank-one
point of the SDP (8), so psdbench verifies them and reports ``x' L x`` as the objective (an
upper bound on p*) and the error rate on the unlabelled nodes.
"""

from __future__ import annotations

from importlib.metadata import version
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Instance, Solution
from psdbench.families.graph_classification.contract import GraphClassificationKind

__all__ = ["HarmonicSolver"]
__version__ = "0.1.0"


class HarmonicSolver:
    """Solver ``example-harmonic``: harmonic-function label propagation (one linear solve)."""

    name = "example-harmonic"
    kinds = ("graph-classification",)
    # Declarative specs: psdbench checks grid values against them when the grid is loaded (a bad
    # value is exit 2 before any cell runs) and lists the docs.
    params: dict[str, api.Param] = {
        "ridge": api.number(low=0, default=1e-10,
                            doc="ridge on L_UU so that components without a labelled node stay solvable"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        return {"numpy": version("numpy"), "psdbench-example-plugin": __version__}

    def supports(self, instance: Instance) -> bool:
        return getattr(instance, "kind", None) in self.kinds

    def warm_up(self, instance: GraphClassificationKind) -> None:
        """Untimed, once per worker before its first timed solve: the hot path itself (one solve of
        this instance, milliseconds), so LAPACK's and the allocator's first-call costs are paid here."""
        self.solve(instance, Budget())

    def solve(self, instance: GraphClassificationKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        L = np.asarray(instance.L, dtype=float)
        m = int(instance.m)
        xhat = np.asarray(instance.xhat, dtype=float)
        L_UU, L_UL = L[m:, m:], L[m:, :m]
        f = np.linalg.solve(L_UU + float(p["ridge"]) * np.eye(L_UU.shape[0]), -L_UL @ xhat)
        x = np.empty(L.shape[0])
        x[:m] = xhat
        x[m:] = np.where(f >= 0, 1.0, -1.0)  # ties -> +1
        return Solution(variables={"x": x}, iterations=1, info={"min_abs_f": float(np.min(np.abs(f), initial=np.inf))})
