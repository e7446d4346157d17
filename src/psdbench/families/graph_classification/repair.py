"""Exactly feasible points of SDP (8) near a returned one: the repair the reference's value and every
verified cell's repair allowance use.

Paper: "Projection-free Graph-based Classifier Learning using Gershgorin Disc Perfect Alignment"
(../shared/papers/gdpa-graph-classifier-sdp.txt), SDP (8), through the reduced SDP of
:meth:`~.instance.GraphClassificationInstance.reduced_sdp` (its proof: a feasible ``M`` is the lift
of a PSD ``Z`` with unit diagonal over the unlabelled nodes and the homogenizing node).

Why a repair and not the tolerances: a point whose label entries ``M[i, N]`` are off by ``r`` (or
whose smallest eigenvalue is ``-r``) can sit about ``sqrt(r)`` below the optimum, not ``r``; the
objective of the repaired point, which cannot be below the optimum, measures how far it can.
Mixed into the instance.
"""

from __future__ import annotations

import numpy as np

from psdbench.api import Solution
from psdbench.linalg.psd import nearest_psd


def unit_diagonal_psd(Z: np.ndarray) -> np.ndarray:
    """The symmetric part of ``Z`` projected on the PSD cone, then scaled to a unit diagonal
    (``D^-1/2 Zp D^-1/2``): PSD with ``diag = 1`` to rounding."""
    Zp = nearest_psd(np.asarray(Z, float))
    d = np.sqrt(np.clip(np.diag(Zp), 1e-300, None))
    return Zp / np.outer(d, d)


class Repair:
    """The ``repair`` hook of :class:`~.instance.GraphClassificationInstance` (``api.repair``)."""

    def repair(self, solution: Solution) -> Solution | None:
        """An exactly feasible point of (8) from the solution's primal variables, or ``None`` without one.

        ``M``: its principal submatrix on the unlabelled nodes and the homogenizing node, made PSD
        with unit diagonal (:func:`unit_diagonal_psd`), then lifted (``lift``: every labelled row
        ``xhat_i`` times the homogenizing node's), so the labels hold exactly.  ``x``: its signs
        (0 counts as +1) with the labelled entries set to ``xhat``.  Dense instances only for ``M``
        (a sparse instance verifies no ``M``).
        """
        v = solution.variables
        out: dict[str, np.ndarray] = {}
        if "M" in v and not self.is_sparse:
            N, m = self.n, self.m
            keep = np.r_[np.arange(m, N), N]
            out["M"] = self.lift(unit_diagonal_psd(np.asarray(v["M"], float)[np.ix_(keep, keep)]))
        if "x" in v:
            x = np.where(np.asarray(v["x"], float) < 0, -1.0, 1.0)
            x[: self.m] = self.xhat
            out["x"] = x
        return Solution(variables=out) if out else None
