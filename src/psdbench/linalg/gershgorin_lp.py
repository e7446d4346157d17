"""The GDPA linearization as an LP, for any matrix affine in the LP variables.

A GDPA method writes its PSD matrix as ``H(x) = C + sum_t coef_t x_{k_t} (E_{i_t j_t} + E_{j_t i_t})``
with the sign of every off-diagonal entry known in advance (a balanced signed graph).  Given
magnitudes ``a = |v|`` of the first eigenvector of the current iterate, the Gershgorin rows of
``S H(x) S^-1`` with ``s_i = 1 / v_i`` (entry (i, j) = ``v_j H_ij / v_i``) are

    H_ii(x) - sum_{j != i} (a_j / a_i) sign_ij H_ij(x) >= rho,

linear in ``x`` (graph-classifier paper, eq. (21); SGML paper, eq. (41)).  This module builds those
rows once for every GDPA solver; the solvers only describe their matrix.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp


@dataclass
class AffineSignedMatrix:
    """``H(x) = C + sum_t coef[t] * x[var[t]]`` at entries ``(row[t], col[t])`` and their mirror.

    Attributes
    ----------
    C : ndarray (n, n)
        Symmetric constant part.
    row, col, var : ndarray of int
        One entry per term; ``row == col`` puts the term on the diagonal (added once).
    coef : ndarray of float
    sign : ndarray (n, n)
        Known sign (+1 / -1) of each off-diagonal entry, so ``|H_ij| = sign_ij H_ij``; 0 where the
        entry is always zero.
    n_vars : int
    """

    C: np.ndarray
    row: np.ndarray
    col: np.ndarray
    var: np.ndarray
    coef: np.ndarray
    sign: np.ndarray
    n_vars: int

    def evaluate(self, x: np.ndarray) -> np.ndarray:
        """The matrix ``H(x)``."""
        H = self.C.copy()
        vals = self.coef * np.asarray(x, float)[self.var]
        np.add.at(H, (self.row, self.col), vals)
        off = self.row != self.col
        np.add.at(H, (self.col[off], self.row[off]), vals[off])
        return H


def gershgorin_rows(H: AffineSignedMatrix, a: np.ndarray, rho: float = 0.0) -> tuple[sp.csr_matrix, np.ndarray]:
    """``A_ub, b_ub`` with ``A_ub x <= b_ub`` equivalent to every Gershgorin row of ``S H(x) S^-1`` >= rho."""
    n = H.C.shape[0]
    ratio = a[None, :] / a[:, None]  # ratio[i, j] = a_j / a_i
    weighted = H.sign * ratio
    np.fill_diagonal(weighted, 0.0)
    g0 = np.diag(H.C) - np.sum(weighted * H.C, axis=1)
    diag = H.row == H.col
    r, c, k, w = H.row, H.col, H.var, H.coef
    rows = np.concatenate([r[diag], r[~diag], c[~diag]])
    cols = np.concatenate([k[diag], k[~diag], k[~diag]])
    vals = np.concatenate([w[diag], -weighted[r[~diag], c[~diag]] * w[~diag], -weighted[c[~diag], r[~diag]] * w[~diag]])
    A = sp.csr_matrix((vals, (rows, cols)), shape=(n, H.n_vars))  # duplicates are summed
    return -A, g0 - rho


@dataclass
class DiagAffineMatrix:
    """``H(x) = C + diag(d(x))`` with ``C`` sparse and ``d_i(x) = sum_{t: row_t = i} coef_t x_{var_t}``.

    The sparse special case of :class:`AffineSignedMatrix` where every LP variable sits on the
    diagonal, so the off-diagonal signs are those of ``C`` and nothing is ever densified.
    """

    C: sp.csr_matrix
    row: np.ndarray
    var: np.ndarray
    coef: np.ndarray
    n_vars: int

    def diagonal(self, x: np.ndarray) -> np.ndarray:
        """The variable part ``d(x)`` of the diagonal."""
        return np.bincount(self.row, self.coef * np.asarray(x, float)[self.var], minlength=self.C.shape[0])

    def evaluate(self, x: np.ndarray) -> sp.csr_matrix:
        """The sparse matrix ``H(x)``."""
        return (self.C + sp.diags(self.diagonal(x))).tocsr()

    def rows(self, a: np.ndarray, rho: float = 0.0) -> tuple[sp.csr_matrix, np.ndarray]:
        """``A_ub, b_ub``: every Gershgorin row of ``S H(x) S^-1`` (``s = 1 / a``) >= rho, in O(nnz).

        Row i reads ``C_ii + d_i(x) - sum_{j != i} |C_ij| a_j / a_i >= rho`` (graph-classifier
        paper, eq. (21)), so ``-d_i(x) <= C_ii - R_i - rho``.
        """
        coo = self.C.tocoo()
        off = coo.row != coo.col
        r, c = coo.row[off], coo.col[off]
        radius = np.bincount(r, np.abs(coo.data[off]) * a[c] / a[r], minlength=self.C.shape[0])
        A = sp.csr_matrix((-self.coef, (self.row, self.var)), shape=(self.C.shape[0], self.n_vars))
        return A, self.C.diagonal() - radius - rho

    def tight_rows(self, a: np.ndarray, rho: float = 0.0) -> np.ndarray | None:
        """The LP ``min 1'x`` over :meth:`rows` in closed form, when each diagonal has its own variables.

        Holds for the split reduced dual (``y_i`` alone on row i, ``y_t`` and ``eps`` on the two
        halves of t with coefficients ``(1/2, -1)`` and ``(1/2, +1)``): every Gershgorin row is then
        tight at the optimum, ``y_i = R_i - C_ii + rho``, ``y_t = (R_+ - C_++) + (R_- - C_--) + 2 rho``,
        ``eps = ((R_- - C_--) - (R_+ - C_++)) / 2``.  Returns ``None`` for any other structure.
        """
        n = self.C.shape[0]
        need = -self.rows(a, rho)[1]  # d_i(x) >= R_i - C_ii + rho
        u = n - 2
        expected = (np.concatenate([np.arange(u), [u, u + 1, u, u + 1]]),
                    np.concatenate([np.arange(u), [u, u, u + 1, u + 1]]),
                    np.concatenate([np.ones(u), [0.5, 0.5, -1.0, 1.0]]))
        if self.n_vars != n or not all(np.array_equal(x, e) for x, e in zip((self.row, self.var, self.coef), expected)):
            return None
        return np.concatenate([need[:u], [need[u] + need[u + 1], 0.5 * (need[u + 1] - need[u])]])



@dataclass
class SparseAffineSignedMatrix:
    """:class:`AffineSignedMatrix` with a sparse ``C`` (nothing n x n): variable terms anywhere.

    The known sign of a constant off-diagonal entry is that of ``C``; a variable off-diagonal term
    carries its own ``sign`` (its position must be empty in ``C``).  ``sign`` is 0 for diagonal terms.
    """

    C: sp.csr_matrix
    row: np.ndarray
    col: np.ndarray
    var: np.ndarray
    coef: np.ndarray
    sign: np.ndarray
    n_vars: int

    def evaluate(self, x: np.ndarray) -> sp.csr_matrix:
        """The sparse matrix ``H(x)``."""
        vals = self.coef * np.asarray(x, float)[self.var]
        off = self.row != self.col
        T = sp.coo_matrix((np.concatenate([vals, vals[off]]),
                           (np.concatenate([self.row, self.col[off]]), np.concatenate([self.col, self.row[off]]))),
                          shape=self.C.shape)
        return (self.C + T.tocsr()).tocsr()

    def rows(self, a: np.ndarray, rho: float = 0.0) -> tuple[sp.csr_matrix, np.ndarray]:
        """``A_ub, b_ub`` of every Gershgorin row of ``S H(x) S^-1`` >= rho (as :func:`gershgorin_rows`), O(nnz)."""
        n = self.C.shape[0]
        coo = self.C.tocoo()
        o = coo.row != coo.col
        g0 = self.C.diagonal() - np.bincount(coo.row[o], np.abs(coo.data[o]) * a[coo.col[o]] / a[coo.row[o]], minlength=n)
        d = self.row == self.col
        r, c, k, w, s = self.row[~d], self.col[~d], self.var[~d], self.coef[~d], self.sign[~d]
        rows = np.concatenate([self.row[d], r, c])
        cols = np.concatenate([self.var[d], k, k])
        vals = np.concatenate([self.coef[d], -s * w * a[c] / a[r], -s * w * a[r] / a[c]])
        A = sp.csr_matrix((vals, (rows, cols)), shape=(n, self.n_vars))  # duplicates are summed
        return -A, g0 - rho
