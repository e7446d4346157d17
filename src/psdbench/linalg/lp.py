"""LP helper: HiGHS through :func:`scipy.optimize.linprog`, deterministic (dual simplex, one thread)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


class LPError(RuntimeError):
    """HiGHS did not return an optimal point."""


@dataclass
class LPResult:
    x: np.ndarray
    fun: float
    iterations: int


def solve_lp(
    c: np.ndarray,
    A_ub: sp.spmatrix | np.ndarray,
    b_ub: np.ndarray,
    bounds: list[tuple[float | None, float | None]] | tuple,
    tol: float = 1e-7,
) -> LPResult:
    """Minimize ``c @ x`` s.t. ``A_ub @ x <= b_ub`` and ``bounds``, with HiGHS dual simplex.

    The simplex returns a vertex, and the same input always gives the same vertex, which keeps
    methods whose LPs have an optimal face (GDPA-LP on (20)) deterministic.
    """
    from scipy.optimize import linprog  # here, not at import: `psdbench info` of its solvers stays fast

    res = linprog(
        c,
        A_ub=A_ub,
        b_ub=b_ub,
        bounds=bounds,
        method="highs-ds",
        options={"primal_feasibility_tolerance": tol, "dual_feasibility_tolerance": tol},
    )
    if res.status != 0 or res.x is None:
        raise LPError(f"HiGHS: {res.message}")
    return LPResult(x=np.asarray(res.x), fun=float(res.fun), iterations=int(getattr(res, "nit", 0)))
