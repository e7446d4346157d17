"""The column LPs of CLIME and balanced CLIME, solved by HiGHS (highspy), warm-started across rho.

BSGL paper (``shared/papers/balanced-signed-graph-learning-sparse-lp.txt``):

* (9), CLIME:            ``min ||l||_1  s.t.  ||C l - e_i||_inf <= rho``.
* (12), balanced CLIME:  the same plus ``S^i l <= 0`` with ``S^i_jj = beta_i beta_j`` (11), i.e.
  every off-diagonal entry has the sign that makes its edge consistent with the polarities.
  (11) holds for ``j != i`` only; (12) as printed would also force ``l_i <= 0``, so ``S^i_ii = 0``
  here (the diagonal entry is free).
* (21), minimum feasibility: the smallest ``rho >= 0`` for which (12) is feasible.
* (24), previous-solution feasibility: ``rho = ||C l' - e_i||_inf``, a closed form.

With the signs fixed, ``|l_j| = -s_j l_j`` is linear, so (12) needs only one extra variable (the
negative part of ``l_i``) and ``N`` ranged rows ``e_i - rho <= C l <= e_i + rho``.  Changing
``rho`` only moves row bounds, so one HiGHS model per (column, polarity) is re-solved from its
previous basis for every rho of the HQIC search.
"""

from __future__ import annotations

import numpy as np
import highspy


class ColumnLPError(RuntimeError):
    """HiGHS did not return an optimal point."""


def residual_rho(C: np.ndarray, i: int, l: np.ndarray) -> float:
    """(24): the smallest rho for which ``l`` is feasible, ``||C l - e_i||_inf``."""
    r = C @ l
    r[i] -= 1.0
    return float(np.max(np.abs(r)))


def sign_bounds(signs: np.ndarray, i: int) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of ``l`` from (11): ``s_j l_j <= 0`` for ``j != i`` (``s_j = beta_i beta_j``); ``l_i >= 0`` part."""
    s = np.asarray(signs, float)
    lo = np.where(s > 0, -np.inf, 0.0)
    hi = np.where(s > 0, 0.0, np.inf)
    lo[i], hi[i] = 0.0, np.inf  # positive part of l_i; its negative part is an extra column
    return lo, hi


class ColumnLP:
    """LP (12) (``signs`` given) or (9) (``signs=None``) for column ``i``, re-solvable for any rho.

    Parameters
    ----------
    C : ndarray (N, N)
        Sample covariance.
    i : int
        Column.
    signs : ndarray (N,) or None
        ``s_j = beta_i beta_j``; ``None`` gives unrestricted CLIME (9).
    tol : float
        HiGHS primal and dual feasibility tolerance.
    """

    def __init__(self, C: np.ndarray, i: int, signs: np.ndarray | None = None, tol: float = 1e-9) -> None:
        C = np.asarray(C, float)
        n = C.shape[0]
        self.n, self.i, self.signs = n, i, signs
        if signs is None:  # l = u - w, u, w >= 0: cost 1'u + 1'w
            A = np.hstack([C, -C])
            cost = np.ones(2 * n)
            lo, hi = np.zeros(2 * n), np.full(2 * n, np.inf)
        else:  # l with sign bounds, plus w = negative part of l_i
            A = np.hstack([C, -C[:, [i]]])
            lo, hi = sign_bounds(signs, i)
            lo, hi = np.append(lo, 0.0), np.append(hi, np.inf)
            cost = np.append(-np.asarray(signs, float), 1.0)
            cost[i] = 1.0
        self.cost = cost
        h = highspy.Highs()
        h.setOptionValue("output_flag", False)
        h.setOptionValue("threads", 1)
        h.setOptionValue("primal_feasibility_tolerance", tol)
        h.setOptionValue("dual_feasibility_tolerance", tol)
        lp = highspy.HighsLp()
        lp.num_col_, lp.num_row_ = A.shape[1], n
        lp.col_cost_, lp.col_lower_, lp.col_upper_ = cost, lo, hi
        e = np.zeros(n)
        e[i] = 1.0
        self.e = e
        lp.row_lower_, lp.row_upper_ = e - 1.0, e + 1.0
        lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
        lp.a_matrix_.start_ = np.arange(0, A.size + 1, n, dtype=np.int32)
        lp.a_matrix_.index_ = np.tile(np.arange(n, dtype=np.int32), A.shape[1])
        lp.a_matrix_.value_ = A.T.ravel().copy()
        h.passModel(lp)
        self.h = h
        self._idx = np.arange(n, dtype=np.int32)
        self.n_solves = 0

    def _unpack(self, x: np.ndarray) -> np.ndarray:
        n = self.n
        if self.signs is None:
            return x[:n] - x[n:]
        l = x[:n].copy()
        l[self.i] -= x[n]
        return l

    def solve(self, rho: float) -> tuple[np.ndarray, float]:
        """Optimal column and its l1 norm for ``rho``; raises :class:`ColumnLPError` if infeasible."""
        self.h.changeRowsBounds(self.n, self._idx, self.e - rho, self.e + rho)
        self.h.run()
        self.n_solves += 1
        status = self.h.getModelStatus()
        if status != highspy.HighsModelStatus.kOptimal:
            raise ColumnLPError(f"column {self.i}, rho={rho:.6g}: HiGHS {self.h.modelStatusToString(status)}")
        x = np.asarray(self.h.getSolution().col_value)
        l = self._unpack(x)
        return l, float(np.abs(l).sum())


def min_feasible_rho(C: np.ndarray, i: int, signs: np.ndarray, tol: float = 1e-9) -> tuple[float, np.ndarray]:
    """LP (21): the smallest ``rho >= 0`` for which (12) has a feasible point, and that point.

    Variables ``[l (sign-bounded), w (negative part of l_i), rho]``; rows ``C l - rho 1 <= e_i`` and
    ``-C l - rho 1 <= -e_i``.
    """
    C = np.asarray(C, float)
    n = C.shape[0]
    A = np.hstack([C, -C[:, [i]]])
    e = np.zeros(n)
    e[i] = 1.0
    ones = np.ones((n, 1))
    A_ub = np.vstack([np.hstack([A, -ones]), np.hstack([-A, -ones])])
    b_ub = np.concatenate([e, -e])
    lo, hi = sign_bounds(signs, i)
    bounds = list(zip(np.append(lo, [0.0, 0.0]), np.append(hi, [np.inf, np.inf])))
    bounds = [(None if not np.isfinite(a) else a, None if not np.isfinite(b) else b) for a, b in bounds]
    cost = np.zeros(n + 2)
    cost[-1] = 1.0
    from scipy.optimize import linprog  # at first use: `psdbench info` does not pay SciPy's optimize

    res = linprog(cost, A_ub=A_ub, b_ub=b_ub, bounds=bounds, method="highs-ds",
                  options={"primal_feasibility_tolerance": tol, "dual_feasibility_tolerance": tol})
    if res.status != 0 or res.x is None:
        raise ColumnLPError(f"column {i}: minimum-feasibility LP (21) failed: {res.message}")
    l = res.x[:n].copy()
    l[i] -= res.x[n]
    return float(res.x[-1]), l
