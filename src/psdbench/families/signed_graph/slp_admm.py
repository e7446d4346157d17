"""The tailored ADMM of the BSGL paper, section V, for the balanced CLIME column LP (12).

BSGL paper: ``shared/papers/balanced-signed-graph-learning-sparse-lp.txt``.

Standard form (V-A).  Variables ``y = [x; q]`` with main variable ``x = [l~; l; r]`` and slack
``q >= 0`` (5N); the constraints of (12) become the aggregate equality ``A y = b`` of (45):

    C l - r            = e_i        (r = C l - e_i)
    r + q1             = rho 1      (r <= rho)
    -r + q2            = rho 1      (-r <= rho)
    l~ - l - q3        = 0          (l~ >= l)
    l~ + l - q4        = 0          (l~ >= -l)
    S^i l + q5         = 0          (S^i l <= 0, (11))

(the same rows as (45), some multiplied by -1), objective ``c'x = 1'l~`` (48).  In the K << N
case (V-C, (136)) the first row is replaced by the pair ``X phi / (K - 1) - r = e_i`` and
``phi - X' l = 0`` with ``phi`` in R^K, so that ``A`` has O(N K) non-zeros instead of N^2.

ADMM (V-B).  With ``q~`` the copy of ``q`` carrying the indicator ``g`` of (51) and the
multipliers ``mu = [mu1; mu2]`` of (66)-(72), one iteration is

* (89): ``(A'A + diag(0, I_5N)) y = A'b + [0; q~] - ([c; 0] + A'mu1 + [0; mu2]) / gamma``,
  solved by conjugate gradient warm-started at the previous ``y`` (the paper's choice), or by a
  Cholesky factor computed once per LP (``linear_solver = "cholesky"``).  (The printed (89)/(208)
  has ``-A'b``; differentiating (84) gives ``+A'b``, used here.)
* (105): ``q~ = max(0, q + mu2 / gamma)``.
* (111): ``mu += gamma (B [y; q~] - [b; 0])``.

The system matrix does not depend on rho (only ``b`` does) nor on gamma, so one factorization
serves a whole rho search, and gamma may be adapted by residual balancing (Boyd et al. 2011,
section 3.4.1; ``adapt_gamma``) at no cost.  Stopping uses the primal and dual residuals of the
ADMM splitting with absolute and relative tolerances.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla


@dataclass
class AdmmResult:
    """Outcome of one ADMM solve.

    Attributes
    ----------
    l : ndarray (N,)
        The column.
    objective : float
        ``||l||_1``.
    iterations : int
    converged : bool
    primal_residual, dual_residual : float
        Final ADMM residuals (absolute).
    cg_iterations : int
        Conjugate-gradient iterations in total (0 with the Cholesky solver).
    """

    l: np.ndarray
    objective: float
    iterations: int
    converged: bool
    primal_residual: float
    dual_residual: float
    cg_iterations: int = 0


@dataclass
class _State:
    y: np.ndarray
    qt: np.ndarray
    mu1: np.ndarray
    mu2: np.ndarray
    gamma: float


@dataclass
class ColumnADMM:
    """ADMM for LP (12) of one column and one polarity assignment, re-solvable for any rho.

    Parameters
    ----------
    C : ndarray (N, N) or None
        Sample covariance (dense form (45)).
    X : ndarray (N, K) or None
        Observations (sparse form (136), used when ``form = "sparse"``).
    i : int
        Column.
    signs : ndarray (N,)
        ``s_j = beta_i beta_j``; ``S^i = diag(s)`` with ``S^i_ii = 0`` (see :mod:`.clime_lp`).
    form : {"dense", "sparse"}
        (45) with the covariance, or (136) with ``X`` and ``X'`` (section V-C).
    linear_solver : {"cg", "cholesky"}
        How (89) is solved.
    gamma : float
        Initial penalty.
    """

    C: np.ndarray | None
    X: np.ndarray | None
    i: int
    signs: np.ndarray
    form: str = "dense"
    linear_solver: str = "cg"
    gamma: float = 10.0
    adapt_gamma: bool = False
    eps_abs: float = 1e-9
    eps_rel: float = 1e-8
    max_iter: int = 100000
    cg_tol: float = 1e-10
    state: _State | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.form not in ("dense", "sparse"):
            raise ValueError(f"form must be 'dense' or 'sparse', not {self.form!r}")
        if self.linear_solver not in ("cg", "cholesky"):
            raise ValueError(f"linear_solver must be 'cg' or 'cholesky', not {self.linear_solver!r}")
        self.A, self.layout = self._aggregate()
        m, n = self.A.shape
        self.n_slack = 5 * self.N
        self.n_main = n - self.n_slack
        self.c = np.zeros(self.n_main)
        self.c[: self.N] = 1.0  # objective 1'l~ (48)
        AtA = (self.A.T @ self.A).tocsc()
        self.Psi = (AtA + sp.diags(np.r_[np.zeros(self.n_main), np.ones(self.n_slack)])).tocsc()  # (89)
        # "cholesky": factor once per LP; the explicit inverse from the factor makes each solve one matvec
        self._inv = (sla.cho_solve(sla.cho_factor(self.Psi.toarray()), np.eye(n))
                     if self.linear_solver == "cholesky" else None)
        self.total_iterations = 0

    @property
    def N(self) -> int:
        return int((self.C if self.C is not None else self.X).shape[0])

    def _aggregate(self) -> tuple[sp.csr_matrix, dict[str, slice]]:
        """The aggregate matrix ``A`` of (45) (dense form) or (136) (sparse form)."""
        N, i = self.N, self.i
        I, Z = sp.identity(N, format="csr"), None
        s = np.asarray(self.signs, float).copy()
        s[i] = 0.0
        S = sp.diags(s)
        E = sp.identity(N, format="csr")
        if self.form == "dense":
            C = sp.csr_matrix(np.asarray(self.C, float))
            main = [  # columns: l~, l, r
                [Z, C, -I],
                [Z, Z, I],
                [Z, Z, -I],
                [I, -I, Z],
                [I, I, Z],
                [Z, S, Z],
            ]
            n_main = 3 * N
        else:
            X = np.asarray(self.X, float)
            K = X.shape[1]
            # (112) with the 1/(K-1) split evenly: phi = X' l / sqrt(K-1), r = X phi / sqrt(K-1) - e_i
            # (the same constraint; the balanced scaling keeps (89) well conditioned)
            Xs, XTs = sp.csr_matrix(X / np.sqrt(K - 1)), sp.csr_matrix(X.T / np.sqrt(K - 1))
            ZK = sp.csr_matrix((N, K))
            main = [  # columns: l~, l, r, phi
                [Z, Z, -I, Xs],
                [sp.csr_matrix((K, N)), -XTs, sp.csr_matrix((K, N)), sp.identity(K)],
                [Z, Z, I, ZK],
                [Z, Z, -I, ZK],
                [I, -I, Z, ZK],
                [I, I, Z, ZK],
                [Z, S, Z, ZK],
            ]
            n_main = 3 * N + K
        Amain = sp.bmat(main, format="csr")
        n_rows = Amain.shape[0]
        # slack columns: q1..q5 enter the last five row blocks with signs +, +, -, -, +
        slack = sp.lil_matrix((n_rows, 5 * N))
        first = n_rows - 5 * N
        for k, sign in enumerate((1.0, 1.0, -1.0, -1.0, 1.0)):
            slack[first + k * N: first + (k + 1) * N, k * N:(k + 1) * N] = sign * E
        A = sp.hstack([Amain, slack.tocsr()], format="csr")
        layout = {"lt": slice(0, N), "l": slice(N, 2 * N), "r": slice(2 * N, 3 * N), "main": slice(0, n_main)}
        return A, layout

    def rhs_b(self, rho: float) -> np.ndarray:
        """``b`` of (45)/(136) for this rho."""
        N = self.N
        e = np.zeros(N)
        e[self.i] = 1.0
        parts = [e]
        if self.form == "sparse":
            parts.append(np.zeros(self.X.shape[1]))
        parts += [np.full(N, rho), np.full(N, rho), np.zeros(N), np.zeros(N), np.zeros(N)]
        return np.concatenate(parts)

    def _solve_psi(self, rhs: np.ndarray, y0: np.ndarray) -> tuple[np.ndarray, int]:
        if self._inv is not None:
            return self._inv @ rhs, 0
        count = [0]

        def cb(_: Any) -> None:
            count[0] += 1

        y, _ = spla.cg(self.Psi, rhs, x0=y0, rtol=self.cg_tol, atol=0.0, maxiter=10 * rhs.size, callback=cb)
        return y, count[0]

    def warm_start(self, l: np.ndarray, rho: float) -> None:
        """Start from a column ``l`` (e.g. the previous solution): ``y`` set consistently, zero multipliers."""
        N = self.N
        y = np.zeros(self.A.shape[1])
        y[self.layout["lt"]] = np.abs(l)
        y[self.layout["l"]] = l
        r = (self.C @ l if self.C is not None else self.X @ (self.X.T @ l) / (self.X.shape[1] - 1))
        r[self.i] -= 1.0
        y[self.layout["r"]] = r
        if self.form == "sparse":
            y[3 * N: self.n_main] = self.X.T @ l / np.sqrt(self.X.shape[1] - 1)
        s = np.asarray(self.signs, float).copy()
        s[self.i] = 0.0
        q = np.concatenate([rho - r, rho + r, np.abs(l) - l, np.abs(l) + l, -s * l])
        y[self.n_main:] = np.maximum(q, 0.0)
        self.state = _State(y=y, qt=y[self.n_main:].copy(), mu1=np.zeros(self.A.shape[0]),
                            mu2=np.zeros(self.n_slack), gamma=self.gamma)

    def solve(self, rho: float) -> AdmmResult:
        """Run ADMM (89), (105), (111) for this rho from the current state (warm start)."""
        A, b = self.A, self.rhs_b(rho)
        m, n = A.shape
        if self.state is None:
            self.state = _State(y=np.zeros(n), qt=np.zeros(self.n_slack), mu1=np.zeros(m),
                                mu2=np.zeros(self.n_slack), gamma=self.gamma)
        st = self.state
        y, qt, mu1, mu2, gamma = st.y, st.qt, st.mu1, st.mu2, st.gamma
        cfull = np.r_[self.c, np.zeros(self.n_slack)]
        Atb = A.T @ b
        nm = self.n_main
        cg_total = 0
        converged = False
        rp = rd = np.inf
        it = 0
        for it in range(1, self.max_iter + 1):
            # (89): main variables x and slack q
            rhs = Atb + np.r_[np.zeros(nm), qt] - (cfull + A.T @ mu1 + np.r_[np.zeros(nm), mu2]) / gamma
            y, ncg = self._solve_psi(rhs, y)
            cg_total += ncg
            q = y[nm:]
            # (105): thresholding of the auxiliary copy
            qt_old = qt
            qt = np.maximum(q + mu2 / gamma, 0.0)
            # (111): multipliers
            Ay_b = A @ y - b
            mu1 = mu1 + gamma * Ay_b
            mu2 = mu2 + gamma * (q - qt)
            if it % 10 and it != self.max_iter:
                continue
            # residuals of the splitting [A 0; 0 I -I] [y; q~] = [b; 0], checked every 10 iterations
            rp = float(np.sqrt(Ay_b @ Ay_b + (q - qt) @ (q - qt)))
            rd = float(gamma * np.linalg.norm(qt - qt_old))
            eps_p = self.eps_abs * np.sqrt(m + self.n_slack) + self.eps_rel * max(np.linalg.norm(Ay_b + b), np.linalg.norm(b), np.linalg.norm(qt))
            eps_d = self.eps_abs * np.sqrt(n) + self.eps_rel * np.linalg.norm(A.T @ mu1 + np.r_[np.zeros(nm), mu2])
            if rp <= eps_p and rd <= eps_d:
                converged = True
                break
            if self.adapt_gamma:  # residual balancing (Boyd et al. 2011, 3.4.1)
                if rp > 10 * rd:
                    gamma *= 2.0
                elif rd > 10 * rp:
                    gamma /= 2.0
        self.state = _State(y=y, qt=qt, mu1=mu1, mu2=mu2, gamma=gamma)
        self.total_iterations += it
        l = y[self.layout["l"]].copy()
        return AdmmResult(l=l, objective=float(np.abs(l).sum()), iterations=it, converged=converged,
                          primal_residual=rp, dual_residual=rd, cg_iterations=cg_total)
