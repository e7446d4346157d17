"""``C = "validate"``: the loss weight of (8) chosen on the validation split (SDPMetric paper, section V).

The paper splits every set 70 / 15 / 15 into training, "cross validation" and test parts and does
not say what the validation part selects or from which grid.  psdbench uses it for ``C``, the one
free weight of (4) / (8):

* **grid** ``C = c / |S|`` for ``c`` in :data:`CBAR_GRID` = (2, 10, 100, 1000).  ``C |S|`` is the
  weight of the *mean* triplet loss against the margin rho, so the grid means the same on every set;
  it stays above ``C |S| = 1``, below which (8) is unbounded in rho for the hinge and Huber losses
  (for ``C |S| <= 1`` the gain of raising rho is never outweighed by the loss).
* **fit** for each grid value, ``sdpmetric`` (Algorithms 1 and 2) on the training triplets, stopped at
  a relative Frank-Wolfe gap of :data:`SELECT_TOL` (at most :data:`SELECT_MAX_ITER` iterations: a
  model-selection fit, not the benchmarked solve);
* **score** the 3-NN error on the validation split with the learned metric (training samples as the
  neighbours, as for the test error);
* **choice** the lowest validation error; ties go to the smallest ``C`` (the first in ascending grid
  order, as scikit-learn's ``GridSearchCV`` breaks ties by grid order).

The selection needs a differentiable loss (squared hinge or Huber); the hinge SDP (4) is for the
conic solvers and takes a numeric ``C``.  The selected ``C`` is fixed in the instance before any
solver runs, so every method of a cell (and the reference) sees the same problem; the cell key keeps
``C = "validate"``.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import Any

import numpy as np

from psdbench.api import Budget, PsdbenchError
from psdbench.families.sdpmetric.instance import TripletMarginInstance, knn_error

#: values of ``C |S|`` tried (ascending: ties go to the first)
CBAR_GRID: tuple[float, ...] = (2.0, 10.0, 100.0, 1000.0)
#: relative Frank-Wolfe gap at which a selection fit stops
SELECT_TOL = 1e-3
#: iteration cap of a selection fit
SELECT_MAX_ITER = 2000


def select_C(inst: TripletMarginInstance, time_limit_s: float | None = None, tol: float = SELECT_TOL,
             max_iter: int = SELECT_MAX_ITER) -> tuple[TripletMarginInstance, dict[str, Any]]:
    """Fit (8) for each ``C`` of the grid on ``inst``'s training triplets; keep the best on validation.

    Parameters
    ----------
    inst : TripletMarginInstance
        An instance with a smooth loss and a validation split; its own ``C`` is ignored.
    time_limit_s : float, optional
        Wall-clock budget of each selection fit.
    tol, max_iter : float, int
        Stopping rule of each selection fit (the problem uses :data:`SELECT_TOL`, :data:`SELECT_MAX_ITER`).

    Returns
    -------
    (TripletMarginInstance, dict)
        A copy of ``inst`` with the selected ``C``, and the selection record: ``C``, ``C_times_S``,
        ``val_errors`` (one per grid value, in grid order), ``selection_s``.
    """
    from psdbench.families.sdpmetric.sdpmetric import Sdpmetric

    if inst.loss == "hinge":
        raise PsdbenchError(f"{inst.problem}: C = 'validate' needs a smooth loss (huber or squared-hinge), not hinge")
    if inst.F_val is None or inst.y_val is None or len(inst.y_val) == 0:
        raise PsdbenchError(f"{inst.problem}: C = 'validate' needs a validation split")
    t0 = time.perf_counter()
    solver, S = Sdpmetric(), inst.n_triplets
    errors, statuses = [], []
    for cbar in CBAR_GRID:
        trial = replace(inst, C=cbar / S, _euclid=None)
        sol = solver.solve(trial, Budget.seconds(time_limit_s), tol=tol, max_iter=max_iter)
        X = np.asarray(sol.variables["X"], float)
        errors.append(knn_error(inst.F, inst.y, inst.F_val, inst.y_val, X))
        statuses.append(str(getattr(sol.status, "value", sol.status)))
    best = int(np.argmin(errors))  # first minimum: the smallest C among ties
    C = CBAR_GRID[best] / S
    record = {"C": C, "C_times_S": CBAR_GRID[best], "val_errors": errors, "fit_status": statuses,
              "selection_s": time.perf_counter() - t0}
    return replace(inst, C=C), record
