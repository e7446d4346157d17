"""Problem ``metric/bregman-pairs``: problem (2) of the stochastic Dykstra paper (section 2.2).

Datasets: ``synthetic/dykstra-halfspaces`` (section 5.1, :mod:`.data`): the dataset's ``payload``
key ``"generator"`` names the generator; the instance draws ``A_k = F_k F_k'`` (``F_k`` n x n,
U[-0.5, 0.5]), ``y_k = +-1``, ``b = 1``, ``c = 1 / (lambda K)`` from the parameters ``n``, ``K``,
``lambda`` and its seed.  (Pairs from labelled data, section 5.2, are not built yet.)
"""

from __future__ import annotations

from typing import Any, Mapping

from psdbench import api
from psdbench.api import Dataset, PsdbenchError
from psdbench.families.bregman_dykstra.data import GENERATOR, dykstra_halfspaces
from psdbench.families.bregman_dykstra.divergence import DIVERGENCES
from psdbench.families.bregman_dykstra.instance import KIND, BregmanPairsInstance


class BregmanPairs:
    """``metric/bregman-pairs``: minimize ``BD((W, xi), (I, 1))`` over the K half-spaces of (2)."""

    name = "metric/bregman-pairs"
    kind = KIND
    family = "bregman-dykstra"
    sense = "min"
    size_param = "n"
    params: dict[str, api.Param] = {
        "divergence": api.choice(*DIVERGENCES, doc="slack seed of section 2.2: is (ISBD) | l2 (L2BD) | re (REBD)"),
        "n": api.number(low=1, default=10, integer=True, doc="matrix size (section 5.1: 10, 50, 100)"),
        "K": api.number(low=1, default=50, integer=True, doc="number of half-spaces (section 5.1: 50)"),
        "lambda": api.number(low=1e-300, default=1e-3, doc="c_k = 1 / (lambda K) (section 5.1: 1e-2, 1e-3, 1e-4)"),
        "pd_tol": api.number(low=0, default=0.0, doc="verify: lambda_min(W) > pd_tol"),
        "constraint_tol": api.number(low=0, default=1e-7,
                                     doc="verify: y_k (<A_k, W> - b_k xi_k) <= tol (1 + |<A_k, W>|)"),
        "sym_tol": api.number(low=0, default=1e-9, doc="verify: asymmetry of W <= sym_tol"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> BregmanPairsInstance:
        """Draw the section 5.1 half-spaces from the parameters and the seed."""
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        gen = dataset.payload.get("generator") if dataset.payload else None
        if gen != GENERATOR:
            raise PsdbenchError(f"{dataset.name}: {self.name} reads payload['generator'] == {GENERATOR!r} "
                                "(synthetic/dykstra-halfspaces); labelled pairs (section 5.2) are not built yet")
        h = dykstra_halfspaces(int(p["n"]), int(p["K"]), float(p["lambda"]), seed)
        tol = {"pd": float(p["pd_tol"]), "constraint": float(p["constraint_tol"]), "sym": float(p["sym_tol"])}
        return BregmanPairsInstance(problem=self.name, dataset=dataset.name, params=p, seed=seed, A=h.A, y=h.y,
                                    b=h.b, c=h.c, divergence=str(p["divergence"]), tol=tol)
