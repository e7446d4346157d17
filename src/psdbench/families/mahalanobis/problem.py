"""Mahalanobis metric learning over the PD cone with a trace bound (SGML paper, problem (26)).

    min (or max, DEML) Q(M)   s.t.   M symmetric,  M >= rho I,  tr(M) <= C

with ``Q`` one of the five objectives of the paper's Table 2 (:mod:`.metric_objectives`),
``C = K`` (the number of features) and ``rho = 1e-5`` by default (reference settings).

Protocols (``protocol`` parameter):

``objective``       section 6.2: the dataset is split (seed 0) into ``T = round(N / 4)`` stratified
                    folds and each fold (about 4 samples) is one training set; ``fold`` picks it
                    (``"all"`` expands to every fold, ``max_folds`` keeps the first ones: the paper
                    uses the first 10 on madelon and colon-cancer).  1e-12 Gaussian noise (seeded)
                    is added, then every feature is z-scored and every row scaled to unit length
                    on the fold itself.
``classification``  section 6.3: a stratified split with seed ``seed`` (``test_size`` 0.1 as the
                    paper's text says; the authors' code used 0.4), z-score with training
                    statistics, unit-length rows; ``Q`` is built on the training part and the
                    metric is evaluated by k-NN (``k_nn``; paper 10, code 3) and nearest-class-mean
                    accuracy on the test part.

Variables a solution carries: ``M`` (K x K) and, optionally, ``colours`` (+-1 per feature) when the
solver claims a balanced signed graph (SGML); the claim is then verified too.

Reference optimum (:meth:`MahalanobisInstance.certified_reference`): the objective depends on ``M`` only
through distances of differences ``f_i - f_j``, which span an ``r``-dimensional subspace
``U`` (``r <= n - 1``).  Writing ``M = rho I + N``, replacing ``N`` by ``U U' N U U'`` keeps every
distance and does not increase the trace, so the problem is equivalent to one over
``M = rho I + U X U'`` with ``X >= 0`` (r x r) and ``tr X <= C - K rho``: tiny on the objective
protocol even for K = 2000.  It is solved with Clarabel and certified by the Frank-Wolfe bound,
valid for any feasible ``M`` of a convex ``Q``:

    Q* >= Q(M) + min_{S feasible} <G, S - M>,   min_S <G, S> = rho tr G + (C - K rho) min(0, lambda_min(G))

(the max for DEML, which maximizes a concave function).  LSML is not convex: its reference is the
best verified value of the cells, marked so.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Mapping

import numpy as np

from psdbench import api
from psdbench.api import Check, Dataset, Feasibility, PsdbenchError, Solution
from psdbench.datasets import binary_samples
from psdbench.linalg.balance import sign_violation, two_colouring
from psdbench.linalg.psd import asymmetry, project_spectraplex, scale_to_trace_floor
from psdbench.families.mahalanobis.contract import MahalanobisKind
from psdbench.families.mahalanobis.objectives import OBJECTIVES, PairObjective, make_objective
from psdbench.solvers.metric_learn import MetricPeerInstance

KIND = "mahalanobis"  # the kind; problem names stay metric/<objective>
#: Clarabel settings of the reference solve
CLARABEL_TIGHT = {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12, "tol_ktratio": 1e-10, "max_iter": 500}


# ------------------------------------------------------------------------------------- protocols
def normalize(F: np.ndarray, mean: np.ndarray | None = None, sd: np.ndarray | None = None) -> np.ndarray:
    """z-score (with the given or own statistics), then unit-length rows (the paper's [49] scheme)."""
    mean = F.mean(axis=0) if mean is None else mean
    sd = F.std(axis=0) if sd is None else sd
    G = (F - mean) / np.where(sd > 0, sd, 1.0)
    norms = np.linalg.norm(G, axis=1, keepdims=True)
    return G / np.where(norms > 0, norms, 1.0)


def n_objective_folds(n_samples: int) -> int:
    """``T = round(N / 4)`` (section 6.2), at least 2."""
    return max(2, int(round(n_samples / 4)))


def objective_fold(y: np.ndarray, fold: int, n_folds: int | None = None) -> np.ndarray:
    """Indices of fold ``fold`` of the section 6.2 split (stratified, shuffled with seed 0)."""
    T = n_folds or n_objective_folds(len(y))
    if not 0 <= fold < T:
        raise PsdbenchError(f"metric: fold {fold} outside [0, {T})")
    from sklearn.model_selection import StratifiedKFold  # imported here: `psdbench info` needs no scikit-learn

    skf = StratifiedKFold(n_splits=T, shuffle=True, random_state=0)
    return list(skf.split(np.zeros(len(y)), y))[fold][1]


# -------------------------------------------------------------------------------------- instance
@dataclass
class MahalanobisInstance:
    """One metric-learning instance: training data, objective, constraint set, optional test data."""

    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    F: np.ndarray
    y: np.ndarray
    obj: PairObjective
    C: float
    rho: float
    F_test: np.ndarray | None = None
    y_test: np.ndarray | None = None
    kind: str = KIND
    tol: dict[str, float] = field(default_factory=dict)
    #: the variables a solution may carry: ``M``, and ``colours`` with a balanced-graph claim
    variables: ClassVar[tuple[str, ...]] = ("M", "colours")
    _U: np.ndarray | None = field(default=None, repr=False)  # subspace(), computed once

    @property
    def n(self) -> int:
        """Matrix dimension K (number of features)."""
        return self.F.shape[1]

    @property
    def K(self) -> int:
        return self.F.shape[1]

    def variable_shapes(self) -> dict[str, tuple[int, ...]]:
        """``M`` is K x K (checked by the harness before ``verify``: ``api.point_mismatch``)."""
        return {"M": (self.K, self.K)}

    @property
    def sense(self) -> str:
        return self.obj.sense

    # ------------------------------------------------------------------ objective and gradient
    def value(self, M: np.ndarray) -> float:
        return self.obj.value(M)

    def value_and_grad(self, M: np.ndarray) -> tuple[float, np.ndarray]:
        return self.obj.value_and_grad(M)

    def objective(self, solution: Solution) -> float:
        return self.obj.value(np.asarray(solution.variables["M"], float))

    # ------------------------------------------------------------------------- verification
    def verify(self, solution: Solution) -> Feasibility:
        M = np.asarray(solution.variables["M"], float)
        if M.shape != (self.K, self.K):
            raise PsdbenchError(f"metric: M has shape {M.shape}, expected {(self.K, self.K)}")
        S = 0.5 * (M + M.T)
        w = np.linalg.eigvalsh(S)
        scale = max(1.0, float(np.abs(w).max()))
        asym = asymmetry(M)
        trace_excess = max(0.0, float(np.trace(M)) - self.C)
        psd_short = max(0.0, self.rho - float(w[0]))
        col = two_colouring(S, tol=self.tol["zero"] * scale)
        details = {"asymmetry": asym, "lambda_min": float(w[0]), "trace": float(np.trace(M)),
                   "trace_excess": trace_excess, "balanced": float(col.balanced),
                   "n_components": float(col.n_components)}
        checks = [Check("asymmetry", asym, self.tol["sym"] * scale),
                  Check("rho - smallest eigenvalue of M", psd_short, self.tol["psd"] * scale),
                  Check("tr M - C", trace_excess, self.tol["trace"] * max(1.0, self.C))]
        if "colours" in solution.variables:  # a claimed balanced signed graph is checked as claimed
            viol = sign_violation(S, np.asarray(solution.variables["colours"], float))
            details["sign_violation"] = viol
            checks += [Check("sign violation of the claimed colours", viol, self.tol["zero"] * scale),
                       Check("balanced (sign-consistent two-colouring)", float(col.balanced), 1.0, "==")]
        return Feasibility(ok=all(c.ok for c in checks), min_eig=float(w[0]),
                           max_residual=max(asym, trace_excess, psd_short),
                           tolerances=dict(self.tol), details=details, checks=checks)

    # --------------------------------------------------------------------------- evaluation
    def evaluate(self, solution: Solution) -> dict[str, float]:
        M = np.asarray(solution.variables["M"], float)
        M = 0.5 * (M + M.T)
        off = M - np.diag(np.diag(M))
        out: dict[str, float] = {"trace": float(np.trace(M)), "n_train": float(len(self.y)),
                                 "offdiag_nnz": float(np.count_nonzero(np.abs(off) > 1e-10) // 2)}
        if self.F_test is not None and self.y_test is not None and len(self.y_test):
            out.update(classify(self.F, self.y, self.F_test, self.y_test, M, int(self.params["k_nn"])))
        return out

    # --------------------------------------------------------------------------- references
    def subspace(self) -> np.ndarray:
        """Orthonormal basis ``U`` (K x r) of the span of the training differences ``f_i - f_j``."""
        if self._U is None:
            Fc = self.F - self.F.mean(axis=0)
            _, s, Vt = np.linalg.svd(Fc, full_matrices=False)
            r = int(np.sum(s > 1e-10 * max(1.0, s.max(initial=0.0))))
            self._U = Vt[:r].T
        return self._U

    def reference_formulation(self, formulation: str = "full"):
        """cvxpy problem with the same optimum: ``full`` (M is K x K) or ``reduced`` (M = rho I + U X U')."""
        import cvxpy as cp

        from psdbench.api import Formulation

        expr_fn = self.obj.cvxpy_expression
        iu, ju = np.triu_indices(len(self.y), 1)
        Delta = self.F[iu] - self.F[ju]
        if formulation == "full":
            M = cp.Variable((self.K, self.K), symmetric=True)
            d = cp.sum(cp.multiply(Delta @ M, Delta), axis=1)
            cons = [M >> self.rho * np.eye(self.K), cp.trace(M) <= self.C]

            def extract() -> dict[str, np.ndarray]:
                return {"M": np.asarray(M.value, float)}

        elif formulation == "reduced":
            U = self.subspace()
            r = U.shape[1]
            X = cp.Variable((r, r), symmetric=True)
            P = Delta @ U
            d = self.rho * np.sum(Delta**2, axis=1) + cp.sum(cp.multiply(P @ X, P), axis=1)
            cons = [X >> 0, cp.trace(X) <= self.C - self.K * self.rho]

            def extract() -> dict[str, np.ndarray]:
                Xv = np.asarray(X.value, float)
                return {"M": self.rho * np.eye(self.K) + U @ (0.5 * (Xv + Xv.T)) @ U.T}

        else:
            raise PsdbenchError(f"metric: unknown formulation {formulation!r} (full | reduced)")
        expr = expr_fn(d, (iu, ju))
        if expr is None:
            return None
        goal = cp.Maximize(expr) if self.sense == "max" else cp.Minimize(expr)
        return Formulation(problem=cp.Problem(goal, cons), extract=extract)

    def fw_bound(self, M: np.ndarray) -> float:
        """Frank-Wolfe bound on the optimum from a feasible ``M`` (lower for min, upper for max)."""
        q, G = self.value_and_grad(M)
        U = self.subspace()
        wG = np.linalg.eigvalsh(U.T @ G @ U) if U.shape[1] < self.K else np.linalg.eigvalsh(G)
        if U.shape[1] < self.K:  # G = F_c' (.) F_c vanishes outside span(U)
            wG = np.append(wG, 0.0)
        slack = self.C - self.K * self.rho
        base = self.rho * float(np.trace(G)) - float(np.sum(G * M))
        if self.sense == "max":
            return q + base + slack * max(0.0, float(wG.max()))
        return q + base + slack * min(0.0, float(wG.min()))

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
        """Solve the reduced formulation with Clarabel; certify with the Frank-Wolfe bound."""
        import cvxpy as cp

        form = self.reference_formulation("reduced")
        if form is None:
            return {"value": None, "lower": None, "status": "none",
                    "message": f"{self.obj.name} is not convex: the reference is the best verified value"}
        t0 = time.perf_counter()
        r = self.subspace().shape[1]
        solver = "CLARABEL" if r <= 60 else "SCS"
        opts: dict[str, Any] = {}
        if solver == "SCS":
            opts = {"eps_abs": 1e-8, "eps_rel": 1e-8, "max_iters": 200000}
            if time_limit_s:
                opts["time_limit_secs"] = float(time_limit_s)
        else:  # Clarabel's defaults (1e-8) leave Frank-Wolfe gaps of 1e-4 on MCML; these close them
            opts = dict(CLARABEL_TIGHT)
            if time_limit_s:
                opts["time_limit"] = float(time_limit_s)
        form.problem.solve(solver=solver, **opts)
        if form.problem.status not in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
            return {"value": None, "lower": None, "status": str(form.problem.status), "solver": solver}
        M = project_spectraplex(form.extract()["M"], self.rho, self.C)  # exactly feasible
        from importlib.metadata import version

        return {"value": self.value(M), "lower": self.fw_bound(M), "status": "ok", "solver": solver.lower(),
                "solver_version": version(solver.lower()), "solve_time_s": time.perf_counter() - t0}

    # ------------------------------------------------------------------ metric-learning peers
    def metric_training_data(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(F, y)`` on the classification protocol (peers learn there); ``None`` otherwise."""
        return (self.F, self.y) if self.params.get("protocol") == "classification" else None

    def metric_from_matrix(self, M: np.ndarray) -> tuple[dict[str, np.ndarray], dict[str, float]]:
        """A peer's metric as ``{"M": a M + b I}`` with ``tr = C``, ``>= rho I`` (k-NN is scale-invariant;
        ``b > 0`` only if scaling alone misses ``rho``: :func:`scale_to_trace_floor`), and ``{scale, shift}``."""
        Mm, a, b = scale_to_trace_floor(np.asarray(M, float), self.C, self.rho)
        return {"M": Mm}, {"scale": a, "shift": b}

    # ------------------------------------------------------------------------- start points
    def identity_start(self) -> np.ndarray:
        """``(C / K) I`` shrunk by ``(1 - 1e-9)``: strictly feasible and PD."""
        return (self.C / self.K) * (1 - 1e-9) * np.eye(self.K)


def classify(F: np.ndarray, y: np.ndarray, Ft: np.ndarray, yt: np.ndarray, M: np.ndarray, k: int) -> dict[str, float]:
    """k-NN and nearest-class-mean accuracy under the metric ``M`` (features mapped by ``M^{1/2}``)."""
    from sklearn.neighbors import KNeighborsClassifier

    w, V = np.linalg.eigh(M)
    R = V * np.sqrt(np.clip(w, 0.0, None))  # d_M(a, b) = ||R'(a - b)||^2
    Z, Zt = F @ R, Ft @ R
    knn = KNeighborsClassifier(n_neighbors=min(k, len(y))).fit(Z, y)
    acc = float(np.mean(knn.predict(Zt) == yt))
    classes = np.unique(y)
    means = np.stack([Z[y == c].mean(axis=0) for c in classes])
    dist = ((Zt[:, None, :] - means[None, :, :]) ** 2).sum(axis=2)
    ncm = float(np.mean(classes[np.argmin(dist, axis=1)] == yt))
    return {"accuracy": acc, "ncm_accuracy": ncm}


# --------------------------------------------------------------------------------------- problem
def _open_unit(value: Any) -> str | None:
    """``test_size`` check: a fraction strictly between 0 and 1."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        return f"must be a number in (0, 1), not {value!r}"
    return None


#: The part of ``psdbench info metric/<objective>`` (and docs/families/mahalanobis.md) that the five
#: objectives share (``{sense}``: minimize, or maximize for DEML); each problem appends its objective.
DESCRIPTION = """\
Paper: "Signed Graph Metric Learning via Gershgorin Disc Perfect Alignment"
(sgml-signed-graph-metric-learning-gdpa), problem (26) with the objectives of its Table 2.

Data of an instance: n training rows f_i (rows of F, n x K, z-scored and scaled to unit length),
labels y_i = +-1; the pair distances D_ij = (f_i - f_j)' M (f_i - f_j) (25).  Defaults: C = K,
rho = 1e-5.

    {sense}  Q(M)                                       over M (K x K)
    subject to  M symmetric,  M - rho I is PSD,  tr(M) <= C                            (26)

Variables a solution carries:
  M        (K, K)  the metric (verified: symmetric, lambda_min(M) >= rho - psd_tol max(1, ||M||),
                   tr(M) <= C + trace_tol max(1, C)).  Objective Q(M).
  colours  (K,)    optional +-1 per feature: a claim that M is the Laplacian of a balanced signed
                   graph (SGML); the sign pattern is then verified too.

Protocols: "objective" (section 6.2: one stratified fold of about 4 samples is the training set)
or "classification" (section 6.3: Q on the training split, k-NN and nearest-class-mean accuracy on
the test split as metrics).
Reference: Q depends on M only through differences f_i - f_j, which span an r-dimensional
subspace (r <= n - 1): the problem reduced to that subspace is solved by Clarabel (value, made
exactly feasible) and bounded by the Frank-Wolfe bound of that point (lower).  LSML is not convex:
its reference is the best verified value.

Objective Q:
"""


class MahalanobisProblem:
    """Problem family ``metric/<objective>``; subclasses fix ``objective``."""

    objective = ""
    kind = KIND
    preload = ("sklearn.model_selection",)  # imported by the fork server, not at import
    #: what a solver may read: the kind protocol, and the two hooks of the metric-learning peers
    contract = (MahalanobisKind, MetricPeerInstance)
    kind_aliases = ("metric",)  # the kind's name before the family folder was named mahalanobis
    params: dict[str, api.Param] = {
        "protocol": api.choice("objective", "classification",
                               doc="objective (section 6.2) | classification (section 6.3)"),
        "fold": api.either(api.number(low=0, integer=True), "all", default=0,
                           doc='objective protocol: fold index, or "all" (expanded to every fold)'),
        "max_folds": api.number(low=1, default=None, integer=True,
                                doc='with fold = "all": keep the first max_folds folds (paper: 10 on madelon, colon-cancer)'),
        "test_size": api.Param(default=0.1, check=_open_unit,
                               doc="classification protocol: test fraction; paper text 0.1 (90/10), authors' code 0.4"),
        "noise": api.number(low=0, default=None,
                            doc="Gaussian noise sd added before normalization; None = 1e-12 (objective), 0 (classification)"),
        "C": api.number(low=0, default=None, doc="trace bound; None = K"),
        "rho": api.number(low=0, default=1e-5, doc="M >= rho I"),
        "k_nn": api.number(low=1, default=10, integer=True,
                           doc="evaluation: k of the k-NN classifier (paper's tables 10, authors' code 3)"),
        "mu": api.number(low=0, high=1, default=0.5, doc="LMNN: weight of the push term against the pull term"),
        "k_target": api.number(low=1, default=3, integer=True, doc="LMNN target neighbours"),
        "psd_tol": api.number(low=0, default=1e-7, doc="lambda_min >= rho - psd_tol * max(1, ||M||)"),
        "trace_tol": api.number(low=0, default=1e-7, doc="tr(M) <= C + trace_tol * max(1, C)"),
        "sym_tol": api.number(low=0, default=1e-9, doc="asymmetry <= sym_tol * max(1, ||M||)"),
        "zero_tol": api.number(low=0, default=1e-9,
                               doc="entries below zero_tol * ||M|| are not edges (balance check)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    @property
    def name(self) -> str:
        return f"metric/{self.objective}"

    @property
    def sense(self) -> str:
        return OBJECTIVES[self.objective][1]

    def expand_params(self, load: Callable[[], Dataset], params: Mapping[str, Any]) -> list[dict[str, Any]]:
        """``fold = "all"`` becomes one parameter set per fold (the first ``max_folds`` if set).

        ``load`` returns the dataset; it is called only when a fold count is needed.
        """
        if params.get("fold") != "all":
            return [dict(params)]
        T = n_objective_folds(len(load().y))
        keep = T if params.get("max_folds") is None else min(T, int(params["max_folds"]))
        return [{**params, "fold": f} for f in range(keep)]

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> MahalanobisInstance:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **params}
        _, y_all = binary_samples(dataset, self.name)
        X = dataset.X.astype(float)
        rng = np.random.default_rng(seed)
        Ft = yt = None
        if p["protocol"] == "objective":
            if p["fold"] == "all":
                raise PsdbenchError(f"{self.name}: fold='all' is expanded by the grid; build one fold at a time")
            idx = objective_fold(y_all, int(p["fold"]))
            noise = 1e-12 if p["noise"] is None else float(p["noise"])
            Fr = X[idx] + noise * rng.standard_normal((len(idx), X.shape[1]))
            F, y = normalize(Fr), y_all[idx]
        elif p["protocol"] == "classification":
            from sklearn.model_selection import train_test_split

            tr, te = train_test_split(np.arange(len(y_all)), test_size=float(p["test_size"]), stratify=y_all,
                                      random_state=seed)
            noise = 0.0 if p["noise"] is None else float(p["noise"])
            Xn = X + noise * rng.standard_normal(X.shape) if noise else X
            mu, sd = Xn[tr].mean(axis=0), Xn[tr].std(axis=0)
            F, y = normalize(Xn[tr], mu, sd), y_all[tr]
            Ft, yt = normalize(Xn[te], mu, sd), y_all[te]
        else:
            raise PsdbenchError(f"{self.name}: unknown protocol {p['protocol']!r} (objective | classification)")
        K = F.shape[1]
        C = float(K if p["C"] is None else p["C"])
        rho = float(p["rho"])
        if K * rho >= C:
            raise PsdbenchError(f"{self.name}: K rho = {K * rho:g} must be below C = {C:g}")
        obj = make_objective(self.objective, F, y, {"mu": p["mu"], "k_target": p["k_target"]})
        tol = {"psd": float(p["psd_tol"]), "trace": float(p["trace_tol"]), "sym": float(p["sym_tol"]),
               "zero": float(p["zero_tol"])}
        return MahalanobisInstance(problem=self.name, dataset=dataset.name, params=p, seed=seed, F=F, y=y, obj=obj,
                              C=C, rho=rho, F_test=Ft, y_test=yt, tol=tol)


class Mcml(MahalanobisProblem):
    """Problem ``metric/mcml``: MCML (Globerson and Roweis): sum of KL(P_i || softmax(-D_i.)), minimized."""

    objective = "mcml"
    description = DESCRIPTION.replace("{sense}", "minimize") + """\
  MCML (Globerson and Roweis), minimized: sum_i KL(P_i || softmax_{k != i}(-D_ik)) with
  P_ij = 1 / (n_c(i) - 1) for same-class j != i (Table 2 up to the constant sum P log P, kept so
  the value is a KL divergence >= 0).
"""


class Deml(MahalanobisProblem):
    """Problem ``metric/deml``: DEML (Xing et al.): sum of dissimilar-pair distances, maximized."""

    objective = "deml"
    description = DESCRIPTION.replace("{sense}", "maximize") + """\
  DEML (Xing et al.), MAXIMIZED: sum over different-class pairs i < j of sqrt(D_ij) (the
  similar-pair constraint relaxed, as section 6.2 says).  Sense "max".
"""


class Lsml(MahalanobisProblem):
    """Problem ``metric/lsml``: LSML (Liu et al.): squared residuals of relative comparisons, minimized (not convex)."""

    objective = "lsml"
    unsupported = ("reference_formulation",)  # not convex: no cvxpy form (conic solvers skip)
    description = DESCRIPTION.replace("{sense}", "minimize") + """\
  LSML (Liu et al.), minimized: sum over similar pairs s and dissimilar pairs d of
  max(0, sqrt(D_s) - sqrt(D_d))^2 (unit weights, no prior).  Not convex: no certified reference.
"""


class Lmnn(MahalanobisProblem):
    """Problem ``metric/lmnn``: LMNN (Weinberger and Saul): pull plus hinge push, minimized."""

    objective = "lmnn"
    description = DESCRIPTION.replace("{sense}", "minimize") + """\
  LMNN (Weinberger and Saul), minimized: (1 - mu) sum_{i, j ~> i} D_ij
  + mu sum_{i, j ~> i} sum_{l: y_l != y_i} [1 + D_ij - D_il]_+ with mu = 0.5 and the k_target = 3
  nearest same-class samples as targets j ~> i.
"""


class Glr(MahalanobisProblem):
    """Problem ``metric/glr``: GLR: graph Laplacian regularizer y' L y with w_ij = exp(-D_ij), minimized."""

    objective = "glr"
    description = DESCRIPTION.replace("{sense}", "minimize") + """\
  GLR (42), minimized: sum_{i<j} exp(-D_ij) (y_i - y_j)^2 = y' L y, the graph Laplacian
  regularizer with w_ij = exp(-D_ij).
"""
