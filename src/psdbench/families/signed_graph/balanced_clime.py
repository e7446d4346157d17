"""``balanced-clime``: balanced signed graph learning by column LPs (BSGL paper, sections IV-V).

Paper: Yokota, Higashi, Tanaka and Cheung, "Efficient Learning of Balanced Signed Graphs via
Sparse Linear Programming" (``shared/papers/balanced-signed-graph-learning-sparse-lp.txt``).

Algorithm (section IV-A):

1. Initialize the polarities from the VoC-weighted covariance, (13)-(15) and section IV-D
   (:func:`initial_polarity`).
2. For each column ``i``: for both polarities of node ``i`` (the current one first), choose
   ``rho_i`` -- the minimum-feasibility LP (21) on the first visit or for a flipped polarity, the
   previous-solution bound (24) afterwards -- then increase it by ``rho_step`` while HQIC (17)
   decreases (section IV-E); the column LP (12) with the sign constraints (11) gives ``l_i``.
   Keep the polarity whose l1 objective is smaller; the flip is taken only if strictly smaller
   (section IV-F).  Write ``l_i`` into row and column ``i`` (step 2(d)).
3. Sweep until no polarity changes and ``||L||_1`` decreases by less than ``tol`` relative, or
   ``max_sweeps``.

The column LP is solved by HiGHS (``lp_backend = "highs"``, warm-started across rho) or by the
tailored ADMM of section V (``lp_backend = "admm"``, :mod:`psdbench.families.signed_graph.slp_admm`, dense form
(45) or the K << N form (136) by ``admm_form``).  The LPs (21) are HiGHS in both cases.

Read where the paper is silent (all parameters):

* The matrix before the first sweep is ``diag(1 / C_ii)`` (positive definite and trivially
  balanced), so that HQIC, which needs the whole ``L``, is defined from the first column on.
* HQIC is ``+inf`` for a candidate ``L`` that is not positive definite (log det undefined); a
  column whose candidates are all ``+inf`` for both polarities is left as it was.  Hence the
  output is positive definite whenever the start is, and balanced because every entry was last
  written under the current polarities.
* ``rho_step`` (delta of IV-E) is absolute: ``C l - e_i`` is dimensionless, and ``rho >= 1``
  admits ``l = 0``, so the search runs over ``[rho_l, 1)``.
* ``standardize`` (default true): the LPs run on the correlation matrix ``D^-1/2 C D^-1/2``
  (``D = diag(C)``) and the result is scaled back, ``L = D^-1/2 L_s D^-1/2``, as the CLIME
  software does by default; the paper is silent.  The rescaling keeps signs, zeros and
  definiteness.  Measured on the section VI-A instances (N = 50, K = 500, 15 seeds), F-measure
  0.608 against 0.567 without it.  The trace's l1 values are on the standardized scale.
* ``sigma_v`` of (15): ``"median"`` sets ``sigma_v^2`` to the median off-diagonal VoC.
* HQIC weight: (17) as printed drops the ``K / 2`` of the Gaussian log-likelihood that (16)'s
  ``L_max`` carries; with it dropped the penalty ``2 k ln ln K`` outweighs any fit and the search
  returns an empty graph (measured on the section VI-A instances), so ``hqic_weight = "samples"``
  (``-K (log det L - tr(C L)) + 2 k ln ln K``) is the default and ``"paper"`` is kept.
* Polarity comparison (step 2(c)): with ``polarity_compare = "same_rho"`` the flipped polarity's
  LP is solved at the rho chosen for the current one, and the flip is taken if its l1 objective
  is strictly smaller and its HQIC finite.  ``"own_rho"`` gives the flipped polarity its own
  (21) + HQIC search; l1 norms at different rho are not comparable (a larger rho always gives a
  smaller norm), and this reading drifts to empty graphs (measured).
* ADMM cannot certify infeasibility: an ADMM column (small entries zeroed, wrong signs removed)
  that violates ``||C l - e_i||_inf <= rho`` by more than ``admm_feas_tol`` counts as infeasible,
  as HiGHS's verdict would (no flip, next rho).
* An ADMM column whose l1 norm exceeds the previous column's (possible only through ADMM's
  finite accuracy, since the previous column is feasible) is not accepted (``n_rejected``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import scipy.linalg as sla

from psdbench import api
from psdbench.api import Budget, Instance, Solution, Status, TraceRecorder
from psdbench.families.signed_graph.clime_lp import ColumnLP, ColumnLPError, min_feasible_rho, residual_rho
from psdbench.families.signed_graph.slp_admm import ColumnADMM
from psdbench.families.signed_graph.contract import SignedGraphKind
from psdbench.families.signed_graph.problem import KIND, n_nonzero_upper, sample_covariance

PARAMS: dict[str, api.Param] = {
    "lp_backend": api.choice("highs", "admm", doc="column LP (12) solver: HiGHS | the ADMM of section V"),
    "admm_form": api.choice("auto", "dense", "sparse", doc="auto (sparse when K < N) | dense (45) | sparse (136)"),
    "admm_linear_solver": api.choice("cholesky", "cg", doc="ADMM linear system: cholesky | cg (89)"),
    "admm_gamma": api.number(low=0, default=10.0, doc="ADMM penalty gamma"),
    "admm_max_iter": api.number(low=1, default=20000, integer=True, doc="ADMM iteration limit per LP"),
    "admm_feas_tol": api.number(low=0, default=1e-6,
                                doc='an ADMM column further than this outside (12) counts as "no solution"'),
    "rho_step": api.number(low=0, default=0.01, doc="delta of IV-E: absolute rho increment of the HQIC search"),
    "max_rho_steps": api.number(low=1, default=100, integer=True, doc="rho values tried per column search"),
    "hqic_patience": api.number(low=1, default=1, integer=True,
                                doc="increases of HQIC tolerated before the search stops (1: first local minimum)"),
    "sigma_v": api.either("median", api.number(low=0), default="median",
                          doc='sigma_v of (15); "median": sigma_v^2 is the median off-diagonal VoC'),
    "hqic_weight": api.choice("samples", "paper",
                              doc="samples: K/2 on the log-likelihood, as (16) | paper: (17) as printed"),
    "polarity_compare": api.choice("same_rho", "own_rho", doc="how a flipped polarity is compared (module docstring)"),
    "accept": api.choice("hqic", "always", doc="hqic: a revisited column is updated only if HQIC decreases | always"),
    "max_sweeps": api.number(low=1, default=10, integer=True, doc="sweeps over all columns"),
    "tol": api.number(low=0, default=1e-4, doc="stop when ||L||_1 decreases by at most tol relative (no flips)"),
    "zero_tol": api.number(low=0, default=1e-9, doc="entries at most this are zeros (HQIC's edge count)"),
    "admm_zero_tol": api.number(low=0, default=1e-6,
                                doc="ADMM entries below this times the largest are zeros (finite accuracy)"),
    "center": api.Param(default=None, types=(bool,), doc="subtract row means first; None: the instance's choice"),
    "standardize": api.Param(default=True, types=(bool,),
                             doc="learn on the correlation scale, then rescale (as CLIME software does)"),
}
DEFAULTS: dict[str, Any] = api.default_params(PARAMS)


def voc_weights(X: np.ndarray, C: np.ndarray, sigma_v: float | str = "median") -> np.ndarray:
    """``u_ij = exp(-V_ij / sigma_v^2)`` with the variance of covariance ``V`` of (14); (15)."""
    K = X.shape[1]
    V = np.zeros_like(C)
    for k in range(K):  # V_ij = sum_k (X_ik X_jk - C_ij)^2 / (K - 1), without an N x N x K array
        xk = X[:, k]
        V += (np.outer(xk, xk) - C) ** 2
    V /= K - 1
    if sigma_v == "median":
        off = V[~np.eye(len(V), dtype=bool)]
        s2 = float(np.median(off)) if off.size else 1.0
    else:
        s2 = float(sigma_v) ** 2
    return np.exp(-V / max(s2, 1e-300))


def initial_polarity(Cw: np.ndarray) -> np.ndarray:
    """Section IV-D on the weighted covariance ``C' = U (.) C``: seed pair, then greedy growth.

    The largest ``|C'_ij|`` (i != j) fixes ``beta_i = 1`` and ``beta_j = sign(C'_ij)``; then, repeatedly,
    the unassigned node ``k`` with the largest ``|C'_kp|`` to an assigned ``p`` gets
    ``beta_k = sign(C'_kp) beta_p`` (positive covariance: same polarity).
    """
    n = Cw.shape[0]
    A = np.abs(Cw).astype(float)
    np.fill_diagonal(A, -1.0)
    beta = np.zeros(n)
    i, j = np.unravel_index(int(np.argmax(A)), A.shape)
    beta[i] = 1.0
    if n == 1:
        return beta
    beta[j] = 1.0 if Cw[i, j] > 0 else -1.0
    assigned = np.zeros(n, bool)
    assigned[[i, j]] = True
    while not assigned.all():
        sub = np.where(assigned[:, None] & ~assigned[None, :], A, -1.0)  # rows assigned p, cols unassigned k
        p, k = np.unravel_index(int(np.argmax(sub)), sub.shape)
        beta[k] = (1.0 if Cw[p, k] >= 0 else -1.0) * beta[p]
        assigned[k] = True
    return beta


def _chol_logdet(L: np.ndarray) -> float | None:
    try:
        c, _ = sla.cho_factor(L, check_finite=False)
    except np.linalg.LinAlgError:
        return None
    return 2.0 * float(np.sum(np.log(np.diag(c))))


@dataclass
class _Search:
    """Best candidate of one (column, polarity) HQIC search."""

    l: np.ndarray | None = None
    objective: float = np.inf
    hqic: float = np.inf
    rho: float = np.nan
    rho_l: float = np.nan
    n_lp: int = 0


@dataclass
class BalancedClimeResult:
    """Output of :func:`balanced_clime`.

    Attributes
    ----------
    L : ndarray (N, N)
        Learned generalized Laplacian (symmetric, balanced, positive definite).
    polarity : ndarray (N,)
        Node polarities (+-1).
    trace : list of dict
        One row per column update: sweep, column, ``l1`` (``||L||_1`` after it), ``column_l1``,
        ``hqic``, ``rho``, ``flipped``, LP counts and times.
    sweeps : int
    converged : bool
    info : dict
    """

    L: np.ndarray
    polarity: np.ndarray
    trace: list[dict[str, float]]
    sweeps: int
    converged: bool
    info: dict[str, Any] = field(default_factory=dict)

    def edges(self, tol: float = 0.0) -> list[tuple[int, int, float]]:
        """``(i, j, w_ij)`` for every edge ``i < j`` (``w_ij = -L_ij``: positive edges join equal polarities)."""
        iu, ju = np.triu_indices(len(self.L), k=1)
        keep = np.abs(self.L[iu, ju]) > tol
        return [(int(a), int(b), float(-self.L[a, b])) for a, b in zip(iu[keep], ju[keep])]


def balanced_clime(X: np.ndarray, C: np.ndarray | None = None, budget: Budget | None = None,
                   on_sweep: Callable[[np.ndarray, np.ndarray], None] | None = None,
                   **params: Any) -> BalancedClimeResult:
    """Learn a balanced signed graph Laplacian from observations ``X`` (N nodes x K samples).

    Parameters
    ----------
    X : ndarray (N, K)
        Observations (rows are nodes).
    C : ndarray (N, N), optional
        Sample covariance; ``X X' / (K - 1)`` (13) by default.
    budget : Budget, optional
        Stop after the sweep that ends past ``budget.expired()`` (``converged`` is then False).
    on_sweep : callable, optional
        ``on_sweep(L, polarity)`` after every sweep, on the scale of ``X`` (the iterate; not to be
        modified).
    **params
        See ``DEFAULTS`` and the module docstring.

    Returns
    -------
    BalancedClimeResult
    """
    p = {**DEFAULTS, **params}
    unknown = set(params) - set(DEFAULTS)
    if unknown:
        raise ValueError(f"balanced-clime: unknown parameter(s) {', '.join(sorted(unknown))}")
    if p["lp_backend"] not in ("highs", "admm"):
        raise ValueError(f"lp_backend must be 'highs' or 'admm', not {p['lp_backend']!r}")
    X = np.asarray(X, float)
    N, K = X.shape
    if C is None:
        C = sample_covariance(X, bool(p["center"]))
    if p["standardize"]:  # L = D^-1/2 L_s D^-1/2 keeps signs, sparsity and definiteness
        d = np.sqrt(np.diag(C))
        scaled = None if on_sweep is None else (lambda L, b: on_sweep(L / np.outer(d, d), b))
        inner = balanced_clime(X / d[:, None], C=C / np.outer(d, d), budget=budget, on_sweep=scaled,
                               **{**params, "standardize": False})
        inner.L = inner.L / np.outer(d, d)
        inner.info["l1_norm"] = float(np.abs(inner.L).sum())
        return inner
    weight = 1.0 if p["hqic_weight"] == "paper" else K / 2.0
    pen = 2.0 * np.log(np.log(K)) if K > np.e else 0.0
    form = p["admm_form"] if p["admm_form"] != "auto" else ("sparse" if K < N else "dense")
    t_start = time.perf_counter()

    beta = initial_polarity(voc_weights(X, C, p["sigma_v"]) * C)  # IV-D, (13)-(15)
    L = np.diag(1.0 / np.diag(C))
    visited = np.zeros(N, bool)
    trace: list[dict[str, float]] = []
    counts = {"n_lp": 0, "n_lp21": 0, "n_rejected": 0, "n_kept": 0, "n_kept_hqic": 0, "n_flips": 0, "admm_iterations": 0,
              "admm_unconverged": 0}
    timers = {"lp_s": 0.0, "lp21_s": 0.0, "hqic_s": 0.0}

    def hqic_with(i: int, l: np.ndarray) -> float:
        """HQIC (17) of ``L`` with row and column ``i`` replaced by ``l``."""
        t0 = time.perf_counter()
        Lc = L.copy()
        Lc[:, i] = l
        Lc[i, :] = l
        logdet = _chol_logdet(Lc)
        timers["hqic_s"] += time.perf_counter() - t0
        if logdet is None:
            return np.inf
        return -2.0 * weight * (logdet - float(np.sum(C * Lc))) + pen * n_nonzero_upper(Lc, p["zero_tol"])

    def new_lp(i: int, signs: np.ndarray) -> Any:
        """LP (12) of column ``i`` for these signs: a HiGHS model or the section V ADMM."""
        if p["lp_backend"] == "highs":
            return ColumnLP(C, i, signs)
        return ColumnADMM(C=C, X=X, i=i, signs=signs, form=form, linear_solver=p["admm_linear_solver"],
                          gamma=float(p["admm_gamma"]), max_iter=int(p["admm_max_iter"]))

    def solve_lp(lp: Any, i: int, signs: np.ndarray, rho: float) -> tuple[np.ndarray, float]:
        """Column and l1 norm at ``rho``; ADMM output is cleaned of sub-tolerance entries and wrong signs."""
        t0 = time.perf_counter()
        try:
            if p["lp_backend"] == "highs":
                return lp.solve(rho)
            res = lp.solve(rho)
            counts["admm_iterations"] += res.iterations
            counts["admm_unconverged"] += int(not res.converged)
            l = np.where(np.abs(res.l) > p["admm_zero_tol"] * max(1.0, np.abs(res.l).max()), res.l, 0.0)
            l = _project_signs(l, signs, i)
            if residual_rho(C, i, l) > rho + float(p["admm_feas_tol"]):  # ADMM cannot certify infeasibility
                raise ColumnLPError(f"column {i}, rho={rho:.6g}: ADMM ended {residual_rho(C, i, l) - rho:.2e} outside (12)")
            return l, float(np.abs(l).sum())
        finally:
            timers["lp_s"] += time.perf_counter() - t0

    def search(i: int, pol: float, previous: np.ndarray | None) -> _Search:
        """Rho and column for node ``i`` at polarity ``pol`` (IV-E)."""
        signs = pol * beta  # s_j = beta_i beta_j of (11) with beta_i = pol
        t0 = time.perf_counter()
        if previous is not None:
            rho_l = residual_rho(C, i, previous)  # (24)
        else:
            try:
                rho_l, _ = min_feasible_rho(C, i, signs)  # (21)
            except ColumnLPError:
                return _Search()
            counts["n_lp21"] += 1
        timers["lp21_s"] += time.perf_counter() - t0
        lp = new_lp(i, signs)
        if previous is not None and p["lp_backend"] == "admm":
            lp.warm_start(previous, rho_l)
        best, last, worse = _Search(rho_l=rho_l), np.inf, 0
        for step in range(int(p["max_rho_steps"])):
            rho = rho_l * (1 + 1e-9) + 1e-12 + step * float(p["rho_step"])  # a hair above rho_l: feasible
            if rho >= 1.0:
                break
            try:
                l, obj = solve_lp(lp, i, signs, rho)
            except ColumnLPError:
                continue
            counts["n_lp"] += 1
            best.n_lp += 1
            h = hqic_with(i, l)
            if h < best.hqic:
                best.l, best.objective, best.hqic, best.rho = l, obj, h, rho
            if np.isfinite(last) and h > last:
                worse += 1
                if worse >= int(p["hqic_patience"]):
                    break  # past the first local minimum of HQIC (IV-E)
            elif np.isfinite(h):
                worse = 0
            last = h if np.isfinite(h) else last
        return best

    def flipped_at(i: int, rho: float) -> _Search:
        """Node ``i``'s other polarity at the rho chosen for its current one (``polarity_compare = same_rho``)."""
        signs = -beta[i] * beta
        out = _Search(rho_l=np.nan, rho=rho)
        try:
            l, obj = solve_lp(new_lp(i, signs), i, signs, rho)
        except ColumnLPError:
            return out  # infeasible at this rho: no flip
        counts["n_lp"] += 1
        out.n_lp = 1
        h = hqic_with(i, l)
        if np.isfinite(h):
            out.l, out.objective, out.hqic = l, obj, h
        return out

    sweeps, converged = 0, False
    l1_prev = float(np.abs(L).sum())
    for sweep in range(1, int(p["max_sweeps"]) + 1):
        sweeps = sweep
        flips = 0
        for i in range(N):
            previous = L[:, i].copy() if visited[i] else None
            same = search(i, beta[i], previous)
            if p["polarity_compare"] == "own_rho":
                other = search(i, -beta[i], None)
            else:
                other = flipped_at(i, same.rho) if same.l is not None else search(i, -beta[i], None)
            choice, flipped = same, False
            if other.l is not None and (same.l is None or other.objective < same.objective):
                choice, flipped = other, True  # IV-F: flip only when strictly smaller
            if choice.l is None:
                counts["n_kept"] += 1
            elif previous is not None and p["accept"] == "hqic" and choice.hqic >= hqic_with(i, previous):
                counts["n_kept_hqic"] += 1  # the update would not lower the whole-matrix HQIC
            elif previous is not None and not flipped and choice.objective > np.abs(previous).sum() * (1 + 1e-12):
                counts["n_rejected"] += 1  # inexact (ADMM) column worse than the feasible previous one
            else:
                L[:, i] = choice.l
                L[i, :] = choice.l
                if flipped:
                    beta[i] = -beta[i]
                    flips += 1
            visited[i] = True
            trace.append({"sweep": sweep, "column": i, "l1": float(np.abs(L).sum()),
                          "column_l1": float(np.abs(L[:, i]).sum()), "hqic": float(choice.hqic), "rho": float(choice.rho),
                          "rho_l": float(choice.rho_l), "flipped": float(flipped), "n_lp": same.n_lp + other.n_lp,
                          "time_s": time.perf_counter() - t_start})
        counts["n_flips"] += flips
        if on_sweep is not None:
            on_sweep(L, beta)
        l1 = float(np.abs(L).sum())
        if sweep > 1 and flips == 0 and l1_prev - l1 <= p["tol"] * max(l1_prev, 1e-300):
            converged = True
            break
        l1_prev = l1
        if budget is not None and budget.expired():
            break
    info = {**counts, **timers, "admm_form": form if p["lp_backend"] == "admm" else "", "l1_norm": float(np.abs(L).sum())}
    return BalancedClimeResult(L=L, polarity=beta.copy(), trace=trace, sweeps=sweeps, converged=converged, info=info)


def _project_signs(l: np.ndarray, signs: np.ndarray, i: int) -> np.ndarray:
    """Zero the entries of an inexact (ADMM) column whose sign violates (11) (``s_j l_j > 0``, ``j != i``)."""
    bad = signs * l > 0
    bad[i] = False
    return np.where(bad, 0.0, l)


class BalancedClime:
    """``balanced-clime``: balanced signed graph learning by column LPs (BSGL paper, sections IV-V).

    See the module docstring for the algorithm."""

    name = "balanced-clime"
    kinds = (KIND,)
    returns = "L (N, N): the balanced generalized Laplacian; polarity (N,): its claimed 2-colouring (verified)"
    params: dict[str, api.Param] = PARAMS
    default_params: dict[str, Any] = dict(DEFAULTS)

    def supports(self, instance: Instance) -> bool:
        return getattr(instance, "kind", None) == KIND

    def solve(self, instance: SignedGraphKind, budget: Budget, **params: Any) -> Solution:
        api.validate_params(self, params, self.name)
        p = {k: v for k, v in params.items()}
        if p.get("center") is None:
            p.pop("center", None)
            C = instance.C
        else:
            C = sample_covariance(instance.X, bool(p["center"]))
        rec = TraceRecorder(budget)  # samples the per-sweep iterates; the trace is the per-column one below
        res = balanced_clime(instance.X, C=C, budget=budget, **p,
                             on_sweep=lambda L, b: rec.add(l1=float(np.abs(L).sum()), variables={"L": L, "polarity": b}))
        status = Status.OK if res.converged else Status.TIMEOUT if budget.expired() else Status.MAX_ITER
        variables = {"L": res.L, "polarity": res.polarity}
        return Solution(variables=variables, status=status, iterations=res.sweeps, trace=res.trace,
                        info={**res.info, "sweeps": res.sweeps}, iterates=rec.finish(variables))

    def library_versions(self) -> dict[str, str]:
        from importlib.metadata import version

        return {"scipy": version("scipy"), "highspy": version("highspy")}
