"""SGML: signed graph metric learning by GDPA and Frank-Wolfe (Algorithm 1 of the SGML paper).

Paper: "Signed Graph Metric Learning via Gershgorin Disc Perfect Alignment"
(../shared/papers/sgml-signed-graph-metric-learning-gdpa.txt).  Settings the paper leaves open
follow ../shared/notes/reference-settings.md (SGML section) and Table 3.

``M`` stays the generalized Laplacian of a balanced signed graph: every node has a colour
``c_i = +-1`` and an off-diagonal entry must be ``M_ij <= 0`` between equal colours and
``M_ij >= 0`` between different colours (section 5.2).  With ``a = |v|`` from the first eigenvector
``v`` of the current ``M`` (GDPA scalars ``s_i = 1 / v_i``, Theorem 3), positive-definiteness is
replaced by the Gershgorin rows of ``S M S^-1`` (eq. (30)),

    M_ii - sum_{k != i} (a_k / a_i) |M_ik| >= rho,

which are linear because every ``|M_ik|`` has a known sign.  Each subproblem is solved by
Frank-Wolfe (section 4.4): the direction is the LP (41), the step ``gamma in [0, 1]`` minimizes
``Q`` along it by safeguarded Newton-Raphson on ``Q'(gamma)`` (eqs. (35)-(38)).  Every Gershgorin
row has its own diagonal, so once each diagonal is written as its row's bound plus a slack the
trace is the only coupling constraint and the LP's optimal vertex has a closed form
(:func:`knapsack_lp`, ``lp_backend = "closed-form"``); ``lp_backend = "highs"`` solves LP (41) as
written with HiGHS, and the tests check that both reach the same optimum.

Algorithm 1:

* lines 3-11, block coordinate descent over nodes ``j``: variables are the off-diagonals of
  column ``j`` and all diagonals.  The block is solved twice, with ``j`` keeping its colour
  (Frank-Wolfe from the current ``M``) and with ``j`` flipped (from ``M`` with column ``j``
  zeroed, which satisfies both colourings' constraints); the lower objective is kept, so a colour
  changes only when that lowers ``Q``.  Off-diagonal entries below ``zero_below`` are set to 0
  and the scalars are recomputed by warm-started LOBPCG (section 4.3.2) after every block.
* lines 13-16: Frank-Wolfe over the whole matrix with colours fixed, scalars updated after each
  LP.
* Disconnected sub-graphs (section 5.3): :func:`psdbench.linalg.gdpa.first_eigvec` gives every
  connected component its own first eigenvector.

By Lemma 2 the current ``M`` stays feasible when the scalars change, so ``Q`` never increases
across scalar updates; every Frank-Wolfe iterate is a convex combination of points of the
polytope and is PD by the Gershgorin circle theorem.

``graph = "positive"`` restricts every colour to +1 (all ``M_ij <= 0``, no colour trials): that is
PGML, the authors' earlier positive-graph method (the paper's reference [10]), registered as
solver ``pgml``.

Initialization (``init``): ``tree`` is section 4.2.1 (diagonals ``C/K``; a maximum-``|E_ij|``
spanning tree of the empirical covariance ``E`` with entries ``sign(E_ij) C / K^2``, grown from a
random node); ``near-identity`` is the authors' experiment code's start (``(C/K) I`` with
``0.1 C/K`` on the first off-diagonals).  Colours are read off the initial graph by 2-colouring.

DEML is maximized: the method minimizes ``-Q``.  The trace records the objective after every block
and the cumulative LOBPCG, LP and step-size times (``lobpcg_s``, ``lp_s``, ``step_s``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, NamedTuple

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, Instance, Solution, Status, TraceRecorder
from psdbench.families.mahalanobis.contract import MahalanobisKind
from psdbench.linalg.balance import two_colouring
from psdbench.linalg.gdpa import first_eigvec, magnitudes
from psdbench.families.mahalanobis.objectives import pair_distances
from psdbench.families.mahalanobis.sgml_kernels import (BlockRows, block_dir_distances, block_gradient, block_rows,
                                                        block_vertex, column_distances, dir_distances, full_vertex,
                                                        near_identity_start, scaled_radii, set_block, step_size,
                                                        tree_start, with_block, zero_small, zero_small_offdiag)


@dataclass
class _State:
    M: np.ndarray
    colours: np.ndarray
    v: np.ndarray
    f: float  # sign * Q(M)
    D: np.ndarray | None = None  # pair distances of M
    coef: tuple[float, np.ndarray] | None = None  # value_and_coef(D), kept while D stays
    a: np.ndarray | None = None  # magnitudes(v), the GDPA scalars' inverses
    T: np.ndarray | None = None  # |offdiag(M)| a, cached for the LP rows
    clean: bool = False  # every off-diagonal of M has been through _zero_small since it changed
    eig_cache: dict = field(default_factory=dict)  # small components' eigenpairs (first_eigvec)
    timers: dict[str, float] = field(default_factory=lambda: {"lobpcg_s": 0.0, "lp_s": 0.0, "step_s": 0.0})
    n_lp: int = 0
    n_fw: int = 0
    min_lambda_margin: float = np.inf  # min over checked iterates of lambda_min - rho


class _BlockFw(NamedTuple):
    """Per-solve constants of the block Frank-Wolfe loop (read from the parameters once per solve)."""

    nr_tol: float
    block_tol: float
    max_fw: int
    closed_form: bool
    check: bool


class Sgml:
    """Solver ``sgml``: Algorithm 1 of the SGML paper (GDPA linear constraints, Frank-Wolfe, LOBPCG)."""

    name = "sgml"
    kinds = ("mahalanobis",)
    returns = "M (K, K): the metric; colours (K,): the balanced signed graph's 2-colouring it claims (verified)"
    params: dict[str, api.Param] = {
        "graph": api.choice("signed", "positive", doc="signed (SGML) | positive (PGML: every M_ij <= 0)"),
        "init": api.choice("tree", "near-identity", doc="tree (section 4.2.1) | near-identity (experiment code)"),
        "tol": api.number(low=0, default=1e-5,
                          doc="main loop: objective change per sweep <= tol * max(1, |Q|) (Table 3 main tol.)"),
        "max_sweeps": api.number(low=1, default=1000, integer=True, doc="Table 3 max main iter."),
        "block_tol": api.number(low=0, default=1e-3, doc="Frank-Wolfe per block (Table 3 dia/offdia tol.)"),
        "full_tol": api.number(low=0, default=1e-5, doc="Frank-Wolfe on the whole matrix (notes: 1e-5)"),
        "max_fw": api.number(low=1, default=1000, integer=True, doc="Table 3 max FW iter."),
        "full_phase": api.Param(default=True, types=(bool,), doc="run Algorithm 1 lines 13-16 (whole-matrix FW)"),
        "lobpcg_tol": api.number(low=0, default=1e-4, doc="LOBPCG tolerance of the warm-started scalars"),
        "lobpcg_maxiter": api.number(low=1, default=200, integer=True, doc="LOBPCG iteration limit"),
        "zero_below": api.number(low=0, default=1e-5, doc="off-diagonal entries below this are set to 0 after each block"),
        "nr_tol": api.number(low=0, default=1e-3, doc="Newton-Raphson tolerance on |Q'(gamma)| relative to |Q'(0)|"),
        "lp_tol": api.number(low=0, default=1e-7, doc="HiGHS feasibility tolerance (lp_backend = highs)"),
        "lp_backend": api.choice("closed-form", "highs",
                                 doc="closed-form (exact, see knapsack_lp) | highs (HiGHS through scipy)"),
        "check_iterates": api.Param(default=False, types=(bool,),
                                    doc="record min lambda_min(M) - rho over every Frank-Wolfe iterate (tests)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        import scipy

        return {"numpy": np.__version__, "scipy": scipy.__version__}

    def supports(self, instance: Instance) -> bool:
        return getattr(instance, "kind", None) == "mahalanobis"

    # ------------------------------------------------------------------------------- helpers
    def _scalars(self, st: _State, p: dict[str, Any], cold: bool = False) -> None:
        t0 = time.perf_counter()
        if len(st.eig_cache) > 20000:
            st.eig_cache.clear()
        eig = first_eigvec(st.M, None if cold else st.v, 0.0 if cold else float(p["lobpcg_tol"]),
                           int(p["lobpcg_maxiter"]), cache=st.eig_cache)
        st.v = eig.v
        st.a = magnitudes(eig.v)
        st.T = None
        st.timers["lobpcg_s"] += time.perf_counter() - t0

    def _lp(self, c: np.ndarray, A: sp.csr_matrix, b: np.ndarray, bounds: list, st: _State, p: dict[str, Any]) -> np.ndarray | None:
        t0 = time.perf_counter()
        tol = float(p["lp_tol"])
        from scipy.optimize import linprog  # at first use: `psdbench info` does not pay SciPy's optimize

        res = linprog(c, A_ub=A, b_ub=b, bounds=bounds, method="highs",
                      options={"primal_feasibility_tolerance": tol, "dual_feasibility_tolerance": tol})
        st.timers["lp_s"] += time.perf_counter() - t0
        st.n_lp += 1
        return np.asarray(res.x) if res.status == 0 and res.x is not None else None

    def _check(self, st: _State, M: np.ndarray, rho: float, p: dict[str, Any]) -> None:
        if p["check_iterates"]:
            st.min_lambda_margin = min(st.min_lambda_margin, float(np.linalg.eigvalsh(M)[0]) - rho)

    # -------------------------------------------------------------- one block: LP (41) and FW
    @staticmethod
    def _block_terms(st: _State, j: int, colours: np.ndarray, a: np.ndarray, rho: float) -> BlockRows:
        """The rows of LP (41) for column ``j`` (:func:`block_rows`); ``st.T = |offdiag(M)| a`` is
        cached until ``M`` or the scalars change."""
        if st.T is None:
            st.T = scaled_radii(st.M, a)  # eq. (30)
        return block_rows(st.M, st.T, a, colours, j, rho)

    def _block_lp_highs(self, terms: BlockRows, gd: np.ndarray, go: np.ndarray, C: float, rho: float, st: _State,
                        p: dict[str, Any]) -> tuple[np.ndarray, np.ndarray] | None:
        """LP (41) as written, by HiGHS (``lp_backend = "highs"``): the Frank-Wolfe vertex for objective
        ``gd' diag + go' M[others, j]``, as ``(diag, column)``; :func:`block_vertex` is its closed form."""
        j, others, sigma, low, alpha, beta, _, _ = terms  # variables [diag (K), M_ij for i != j (K-1)]
        K = len(gd)
        rows = np.concatenate([others, np.full(K - 1, j), np.arange(K), np.full(K, K)])
        cols = np.concatenate([K + np.arange(K - 1), K + np.arange(K - 1), np.arange(K), np.arange(K)])
        vals = np.concatenate([alpha * sigma, beta * sigma, -np.ones(K), np.ones(K)])
        A = sp.csr_matrix((vals, (rows, cols)), shape=(K + 1, 2 * K - 1))
        b = np.concatenate([-low, [C]])
        bounds = [(rho, None)] * K + [(0.0, None) if s > 0 else (None, 0.0) for s in sigma]
        x = self._lp(np.concatenate([gd, go]), A, b, bounds, st, p)
        return None if x is None else (x[:K], x[K:])

    def _frank_wolfe(self, inst: MahalanobisKind, sign: float, st: _State, M: np.ndarray, direction: Callable,
                     tol: float, p: dict[str, Any], after_step: Callable | None = None) -> tuple[np.ndarray, float]:
        """Frank-Wolfe from feasible ``M`` (section 4.4): LP vertex, Newton-Raphson step, repeat."""
        q, G = inst.value_and_grad(M)
        f = sign * q
        for _ in range(int(p["max_fw"])):
            S = direction(M, sign * G)
            if S is None:
                break
            t0 = time.perf_counter()
            Dir = S - M
            if -float(np.sum(sign * G * Dir)) <= 0:  # Frank-Wolfe gap: no descent left
                st.timers["step_s"] += time.perf_counter() - t0
                break
            gamma = step_size(inst.obj, pair_distances(inst.F, M), dir_distances(inst.F, Dir), sign,
                              float(p["nr_tol"]), float(np.sum(sign * G * Dir)))
            st.timers["step_s"] += time.perf_counter() - t0
            if gamma <= 0:
                break
            M_new = M + gamma * Dir  # eq. (34)
            q_new, G_new = inst.value_and_grad(M_new)
            st.n_fw += 1
            if sign * q_new > f:  # the step search is exact up to tolerance; never accept an increase
                break
            self._check(st, M_new, inst.rho, p)
            change = f - sign * q_new
            M, G, f = M_new, G_new, sign * q_new
            if after_step is not None:  # may zero small entries: re-evaluate
                M = after_step(M, f)
                q, G = inst.value_and_grad(M)
                f = sign * q
            if change <= tol * max(1.0, abs(f)):
                break
        return M, f

    def _fw_block(self, inst: MahalanobisKind, sign: float, st: _State, diag: np.ndarray, col: np.ndarray, D: np.ndarray,
                  coef: tuple[float, np.ndarray] | None, terms: BlockRows, F_others: np.ndarray | None, c: _BlockFw,
                  p: dict[str, Any], infeasible: bool = False, grad: tuple[np.ndarray, np.ndarray] | None = None,
                  flipped: bool = False) -> tuple[np.ndarray, np.ndarray, np.ndarray, float, tuple[float, np.ndarray]]:
        """Frank-Wolfe on block ``j = terms.j`` (section 4.4) with the scalars fixed.

        The block's variables are the diagonal ``diag`` and the off-diagonals ``col`` of column
        ``j`` (rows ``terms.others``, ``F_others = F[:, others]``); everything else is the current
        ``st.M``.  Only these move, so the gradient entries the LP needs and the pair distances
        ``D`` of a direction cost O(n^2 K).  ``coef`` is ``value_and_coef(D)`` if known;
        ``infeasible`` says that the rows' bounds alone exceed the trace bound (the closed-form
        LP's test, known before any gradient): LP (41) has no vertex, the block stays and
        ``F_others`` may be None.  ``grad`` is :func:`block_gradient` at ``coef`` if known; ``c``
        holds the solver's per-solve constants; ``flipped``: node ``j`` takes the other colour
        (line 7).  Returns the new ``diag``, ``col``, ``D``, ``sign * Q`` and ``value_and_coef``
        at the new ``D``.
        """
        q, A = coef if coef is not None else inst.obj.value_and_coef(D)
        f = sign * q
        if infeasible:  # LP (41) has no vertex whatever the gradient
            st.n_lp += 1
            return diag, col, D, f, (q, A)
        F, j, obj = inst.F, terms.j, inst.obj
        lp_s = step_s = 0.0
        for it in range(c.max_fw):
            # eq. (32) and column j of the gradient
            gd, go = grad if it == 0 and grad is not None else block_gradient(F, A, j, F_others, sign)
            t0 = time.perf_counter()
            if c.closed_form:  # LP (41) by its closed form
                vert = block_vertex(terms, gd, go, inst.C, flipped)
                st.n_lp += 1
                t1 = time.perf_counter()
                lp_s += t1 - t0
            else:  # HiGHS (times itself)
                vert = self._block_lp_highs(terms._replace(sigma=-terms.sigma) if flipped else terms, gd, go, inst.C,
                                            inst.rho, st, p)
                t1 = time.perf_counter()
            if vert is None:
                break
            delta, dcol = vert[0] - diag, vert[1] - col
            slope0 = float(gd @ delta) + float(go @ dcol)  # sign * Q'(0) along the direction, eq. (37)
            if -slope0 <= 0:  # Frank-Wolfe gap: no descent left
                step_s += time.perf_counter() - t1
                break
            E = block_dir_distances(F, j, F_others, delta, dcol)  # D moves by gamma E (eq. (25))
            gamma = step_size(obj, D, E, sign, c.nr_tol, slope0)  # eqs. (35)-(38)
            step_s += time.perf_counter() - t1
            if gamma <= 0:
                break
            D_new = np.maximum(D + gamma * E, 0.0)
            q_new, A_new = obj.value_and_coef(D_new)
            st.n_fw += 1
            if sign * q_new > f:  # the step search is exact up to tolerance; never accept an increase
                break
            diag, col = diag + gamma * delta, col + gamma * dcol  # eq. (34)
            if c.check:
                self._check(st, with_block(st.M, j, terms.others, diag, col), inst.rho, p)
            change = f - sign * q_new
            D, q, A, f = D_new, q_new, A_new, sign * q_new
            if change <= c.block_tol * max(1.0, abs(f)):
                break
        st.timers["lp_s"] += lp_s
        st.timers["step_s"] += step_s
        return diag, col, D, f, (q, A)

    # ------------------------------------------------------------------- whole-matrix FW phase
    def _full_direction(self, M: np.ndarray, colours: np.ndarray, a: np.ndarray, G: np.ndarray, rho: float,
                        C: float, st: _State, p: dict[str, Any]) -> np.ndarray | None:
        """Frank-Wolfe vertex over the whole matrix with colours fixed (Algorithm 1, line 14)."""
        t0 = time.perf_counter()
        if p["lp_backend"] == "closed-form":
            S = full_vertex(G, colours, a, rho, C)
            st.timers["lp_s"] += time.perf_counter() - t0
            st.n_lp += 1
            return S
        if p["lp_backend"] != "highs":
            raise ValueError(f"{self.name}: lp_backend must be 'closed-form' or 'highs', not {p['lp_backend']!r}")
        K = len(colours)  # variables [diag (K), M_ij for i < j]: the LP as written
        iu, ju = np.triu_indices(K, 1)
        sigma = -colours[iu] * colours[ju]
        ai, aj = a[ju] / a[iu], a[iu] / a[ju]  # coefficient of |M_ij| in row i and in row j
        m = len(iu)
        rows = np.concatenate([iu, ju, np.arange(K), np.full(K, K)])
        cols = np.concatenate([K + np.arange(m), K + np.arange(m), np.arange(K), np.arange(K)])
        vals = np.concatenate([ai * sigma, aj * sigma, -np.ones(K), np.ones(K)])
        A = sp.csr_matrix((vals, (rows, cols)), shape=(K + 1, K + m))
        b = np.concatenate([np.full(K, -rho), [C]])
        lb = np.concatenate([np.full(K, rho), np.where(sigma > 0, 0.0, -np.inf)])
        ub = np.concatenate([np.full(K, np.inf), np.where(sigma > 0, np.inf, 0.0)])
        x = self._lp(np.concatenate([np.diag(G), 2.0 * G[iu, ju]]), A, b, np.column_stack([lb, ub]), st, p)
        if x is None:
            return None
        S = np.diag(x[:K])
        S[iu, ju] = S[ju, iu] = x[K:]
        return S

    def _fw_full(self, inst: MahalanobisKind, sign: float, st: _State, p: dict[str, Any], rec: TraceRecorder) -> None:
        def direction(Mc: np.ndarray, G: np.ndarray) -> np.ndarray | None:
            return self._full_direction(Mc, st.colours, magnitudes(st.v), G, inst.rho, inst.C, st, p)

        def after_step(M: np.ndarray, f: float) -> np.ndarray:
            st.M, st.f = M, f
            if self._zero_small(st, p):
                st.f = sign * inst.value(st.M)
            self._scalars(st, p)  # Algorithm 1, line 15
            rec.add(objective=sign * st.f, phase=2, **st.timers, variables={"M": st.M, "colours": st.colours})
            return st.M

        st.M, st.f = self._frank_wolfe(inst, sign, st, st.M, direction, float(p["full_tol"]), p, after_step)

    @staticmethod
    def _zero_small(st: _State, p: dict[str, Any]) -> bool:
        """Set off-diagonal entries of ``M`` below ``zero_below`` (but nonzero) to 0; True if any changed.

        Scans the whole matrix; after a block update only column ``j`` needs it once every other
        entry has been through a scan (``st.clean``), and the sweep zeroes that column as it writes it.
        """
        st.clean = True
        return zero_small_offdiag(st.M, float(p["zero_below"]))

    # ------------------------------------------------------------------------------------ solve
    def solve(self, instance: MahalanobisKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        positive = p["graph"] == "positive"
        closed_form = p["lp_backend"] == "closed-form"
        sign = -1.0 if instance.sense == "max" else 1.0
        K, C = instance.K, instance.C
        rng = np.random.default_rng(instance.seed)
        if p["init"] == "tree":
            M0 = tree_start(instance.F, C, rng, positive)
        else:  # near-identity
            M0 = near_identity_start(K, C, positive)
        M0 *= 1 - 1e-9  # strictly inside tr(M) <= C
        colours = np.ones(K) if positive else two_colouring(M0).colours
        st = _State(M=M0, colours=colours, v=np.ones(K), f=sign * instance.value(M0))
        rec = TraceRecorder(budget)
        self._scalars(st, p, cold=True)  # Algorithm 1, line 1 (cold start)
        rec.add(objective=sign * st.f, phase=0, **st.timers, variables={"M": st.M, "colours": st.colours})
        self._check(st, st.M, instance.rho, p)
        status = Status.MAX_ITER
        sweeps = 0
        out_of_time = False
        F, obj, rho, zero_below = instance.F, instance.obj, instance.rho, float(p["zero_below"])
        consts = _BlockFw(float(p["nr_tol"]), float(p["block_tol"]), int(p["max_fw"]), closed_form,
                          bool(p["check_iterates"]))
        for sweeps in range(1, int(budget.max_iter or p["max_sweeps"]) + 1):  # Algorithm 1, line 2
            f_start = st.f
            st.D, st.coef = pair_distances(F, st.M), None  # exact again once per sweep
            F_rest = np.asfortranarray(F[:, 1:])  # F[:, others] of block j (its layout), one column moved per block
            for j in range(K):  # line 3
                if j:
                    F_rest[:, j - 1] = F[:, j - 1]
                terms = self._block_terms(st, j, st.colours, st.a, rho)
                others = terms.others
                if st.coef is None:
                    st.coef = obj.value_and_coef(st.D)
                diag0, col0 = st.M.diagonal().copy(), st.M[others, j]
                # LP (41) infeasible for both colours (the rows' bounds alone exceed C): block_vertex's test
                infeasible = closed_form and C - terms.low_sum < 0
                F_others = None if infeasible else F_rest
                # the gradient at M: the first step of both colours when column j is zero (the flipped start is M)
                grad = None if infeasible else block_gradient(F, st.coef[1], j, F_others, sign)
                # lines 4-5: j keeps its colour, FW from the current M
                best = (*self._fw_block(instance, sign, st, diag0, col0, st.D, st.coef, terms, F_others, consts, p,
                                        infeasible, grad), st.colours)
                if not positive:  # lines 6-7: j flipped, FW from M with column j zeroed (feasible for both)
                    D0, coef0 = st.D, st.coef
                    if col0.any():
                        full = np.zeros(K)
                        full[others] = col0
                        D0, coef0 = np.maximum(st.D - column_distances(F, j, full), 0.0), None
                    # the same rows (their radii exclude column j), every sign of column j reversed
                    flip = self._fw_block(instance, sign, st, diag0, np.zeros(K - 1), D0, coef0, terms, F_others,
                                          consts, p, infeasible, grad if coef0 is st.coef else None, flipped=True)
                    if flip[3] < best[3]:  # line 8: keep the better; a colour changes only if Q drops
                        flipped = st.colours.copy()
                        flipped[j] = -flipped[j]
                        best = (*flip, flipped)
                if best[3] < st.f:  # line 9; an unchanged M keeps its scalars
                    col, small = best[1], False
                    if st.clean:  # every other entry has been scanned: zero column j's small entries as written
                        col, small = zero_small(col, zero_below)
                    set_block(st.M, j, others, best[0], col)  # in place (the recorder copies what it keeps)
                    st.D, st.f, st.coef, st.colours = best[2], best[3], best[4], best[5]
                    if small or (not st.clean and self._zero_small(st, p)):
                        st.D, st.coef = pair_distances(F, st.M), None
                        st.f = sign * obj.value_D(st.D)
                    self._scalars(st, p)  # line 10
                if budget.expired():
                    out_of_time = True
                    break
            rec.add(objective=sign * st.f, phase=1, sweep=sweeps, **st.timers,
                    variables={"M": st.M, "colours": st.colours})
            if out_of_time or f_start - st.f <= float(p["tol"]) * max(1.0, abs(st.f)):
                status = Status.OK if not out_of_time else Status.TIMEOUT
                break
        if p["full_phase"] and not out_of_time:  # lines 13-16
            self._fw_full(instance, sign, st, p, rec)
        st.M = 0.5 * (st.M + st.M.T)
        info = {"sweeps": sweeps, "lp_count": st.n_lp, "fw_iterations": st.n_fw, **st.timers}
        if p["check_iterates"]:
            info["min_lambda_margin"] = st.min_lambda_margin
        variables = {"M": st.M, "colours": st.colours.copy()}
        return Solution(variables=variables, status=status, iterations=st.n_fw, trace=rec.points, info=info,
                        iterates=rec.finish(variables))


class Pgml(Sgml):
    """Solver ``pgml``: the positive-graph restriction of SGML (all ``M_ij <= 0``; the paper's [10])."""

    name = "pgml"
    params: dict[str, api.Param] = {
        **Sgml.params, "graph": api.choice("positive", "signed", doc="positive (PGML) | signed (SGML)")}
    default_params: dict[str, Any] = api.default_params(params)
