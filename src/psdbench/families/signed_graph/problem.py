"""``signed-graph``: estimate a sparse generalized Laplacian of a balanced signed graph from data.

BSGL paper: Yokota, Higashi, Tanaka and Cheung, "Efficient Learning of Balanced Signed Graphs via
Sparse Linear Programming" (``shared/papers/balanced-signed-graph-learning-sparse-lp.txt``).

An instance holds observations ``X`` (N nodes x K samples), the sample covariance
``C = X X' / (K - 1)`` (section III-E, zero mean assumed; ``center = true`` subtracts row means
first), and for synthetic data the ground-truth Laplacian.  A solution is ``variables["L"]``
(and optionally ``variables["polarity"]``, the solver's claimed node polarities, which are then
checked).

Verification: symmetric, positive definite, and balanced (Cartwright-Harary, Theorem 1: a
consistent 2-colouring of the edge signs exists, found by breadth-first search).
Objective: the Hannan-Quinn criterion, ``-2 w (log det L - tr(C L)) + 2 k ln ln K`` with ``k``
the non-zeros of the upper triangle; it is finite only for positive definite ``L``.  With
``hqic_weight = "samples"`` (default) ``w = K / 2``: the first term is the Gaussian log-likelihood
of the K samples, as in the general definition (16), and this is the criterion every solver here
selects with, so it is comparable across solvers.  ``hqic_weight = "paper"`` is (17) as printed
(``w = 1``); it drops the K / 2, and then the diagonal (edgeless) matrix ``diag(1 / C_ii)`` scores
better than the true Laplacian (measured on the section VI-A instances), so a gap against it
rewards empty graphs.  The other weighting is always recorded too (``hqic_printed`` /
``hqic_samples``).
Metrics: F-measure (147), relative error (148), adjacency error (149), HQIC, the l1 norm (the
objective (8) that CLIME-type methods minimize), edge count and density.  There is no certified
reference (the balanced problem is combinatorial); the harness uses the best verified HQIC.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from psdbench import api
from psdbench.api import Check, Dataset, DataError, Feasibility, Solution
from psdbench.families.signed_graph.contract import SignedGraphKind
from psdbench.families.signed_graph.data import GENERATOR, balanced_gmrf
from psdbench.linalg.balance import two_colouring

KIND = "signed-graph"


def sample_covariance(X: np.ndarray, center: bool = False) -> np.ndarray:
    """``C = X X' / (K - 1)`` (13); rows of ``X`` are nodes."""
    X = np.asarray(X, float)
    if center:
        X = X - X.mean(axis=1, keepdims=True)
    return X @ X.T / (X.shape[1] - 1)


def edge_mask(L: np.ndarray, tol: float) -> np.ndarray:
    """Boolean upper-triangle mask of the edges (off-diagonal ``|L_ij| > tol``)."""
    return np.triu(np.abs(L) > tol, k=1)


def n_nonzero_upper(L: np.ndarray, tol: float) -> int:
    """``k`` of (17): non-zero entries of the upper triangle, diagonal included."""
    return int(np.count_nonzero(np.triu(np.abs(L) > tol)))


def hqic(L: np.ndarray, C: np.ndarray, n_samples: int, tol: float = 0.0, weight: float = 1.0) -> float:
    """Hannan-Quinn criterion (17): ``-2 w (log det L - tr(C L)) + 2 k ln ln K``; ``inf`` unless ``L`` is PD.

    ``weight = 1`` is (17) as printed; ``weight = K / 2`` makes the first term the Gaussian
    log-likelihood of K samples, as in the general definition (16).
    """
    try:  # Cholesky, not the sign of det: an even number of negative eigenvalues has det > 0
        logdet = 2.0 * float(np.sum(np.log(np.diag(np.linalg.cholesky(L)))))
    except np.linalg.LinAlgError:
        return float("inf")
    return float(-2.0 * weight * (logdet - np.sum(C * L)) + 2.0 * n_nonzero_upper(L, tol) * np.log(np.log(n_samples)))


def f_measure(L_hat: np.ndarray, L_true: np.ndarray, tol: float, tol_true: float = 0.0) -> float:
    """F-measure (147) of the estimated edge set against the true one: ``2 tp / (2 tp + fn + fp)``."""
    est, true = edge_mask(L_hat, tol), edge_mask(L_true, tol_true)
    tp = int(np.count_nonzero(est & true))
    fp = int(np.count_nonzero(est & ~true))
    fn = int(np.count_nonzero(~est & true))
    return 2.0 * tp / (2.0 * tp + fn + fp) if (tp + fn + fp) else 1.0


def relative_error(L_hat: np.ndarray, L_true: np.ndarray) -> float:
    """RE (148): ``||L_hat - L*||_F / ||L*||_F``."""
    return float(np.linalg.norm(L_hat - L_true) / np.linalg.norm(L_true))


def adjacency(L: np.ndarray) -> np.ndarray:
    """``W = diag(L) - L`` as in (149): the off-diagonal weights, zero diagonal."""
    return np.diag(np.diag(L)) - L


def adjacency_error(L_hat: np.ndarray, L_true: np.ndarray) -> float:
    """AE (149): ``||W_hat - W*||_F / ||W*||_F``."""
    return float(np.linalg.norm(adjacency(L_hat) - adjacency(L_true)) / np.linalg.norm(adjacency(L_true)))


@dataclass
class SignedGraphInstance:
    """One graph-learning instance (see the module docstring)."""

    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    X: np.ndarray
    C: np.ndarray
    L_true: np.ndarray | None = None
    polarity_true: np.ndarray | None = None
    kind: str = KIND
    meta: dict[str, Any] = field(default_factory=dict)
    #: the variables a solution may carry: ``L``, and ``polarity`` with a balanced-graph claim
    variables: ClassVar[tuple[str, ...]] = ("L", "polarity")

    @property
    def n(self) -> int:
        return int(self.X.shape[0])

    def variable_shapes(self) -> dict[str, tuple[int, ...]]:
        """``L`` is n x n (checked by the harness before ``verify``: ``api.point_mismatch``)."""
        return {"L": (self.n, self.n)}

    @property
    def n_samples(self) -> int:
        return int(self.X.shape[1])

    @property
    def sense(self) -> str:
        return "min"

    def edge_tol(self, L: np.ndarray) -> float:
        """Entries at most ``edge_tol`` times the largest diagonal entry are not edges."""
        return float(self.params.get("edge_tol", 1e-6)) * max(float(np.max(np.abs(np.diag(L)))), 1e-300)

    @property
    def hqic_weight(self) -> float:
        """``w`` of the objective: ``K / 2`` (``hqic_weight = "samples"``) or 1 (``"paper"``, (17) as printed)."""
        return 1.0 if self.params.get("hqic_weight", "samples") == "paper" else self.n_samples / 2.0

    def objective(self, solution: Solution) -> float:
        L = np.asarray(solution.variables["L"], float)
        value = hqic(0.5 * (L + L.T), self.C, self.n_samples, self.edge_tol(L), weight=self.hqic_weight)
        return value if np.isfinite(value) else float("nan")

    def verify(self, solution: Solution) -> Feasibility:
        L = np.asarray(solution.variables["L"], float)
        scale = max(float(np.max(np.abs(L))), 1e-300)
        asym = float(np.max(np.abs(L - L.T))) / scale
        Ls = 0.5 * (L + L.T)
        lam_min = float(np.linalg.eigvalsh(Ls)[0])
        tol = self.edge_tol(Ls)
        col = two_colouring(Ls, tol=tol)
        details: dict[str, float] = {"asymmetry": asym, "lambda_min": lam_min, "balanced": float(col.balanced),
                                     "n_components": float(col.n_components)}
        claim_violation = 0.0
        if "polarity" in solution.variables:
            beta = np.sign(np.asarray(solution.variables["polarity"], float))
            if beta.shape != (self.n,) or np.any(beta == 0):
                claim_violation = float("inf")
            else:
                off = Ls - np.diag(np.diag(Ls))
                viol = np.outer(beta, beta) * off  # consistent: beta_i beta_j L_ij <= 0 (11)
                claim_violation = float(np.max(np.where(np.abs(off) > tol, viol, 0.0), initial=0.0)) / scale
            details["polarity_violation"] = claim_violation
        pd_tol = float(self.params.get("pd_tol", 1e-10)) * scale
        sym_tol = float(self.params.get("sym_tol", 1e-9))
        checks = [Check("asymmetry (relative)", asym, sym_tol), Check("smallest eigenvalue of L", lam_min, pd_tol, ">"),
                  Check("balanced (sign-consistent two-colouring)", float(col.balanced), 1.0, "==")]
        if "polarity" in solution.variables:
            checks.append(Check("violation of the claimed polarity (11), relative", claim_violation, sym_tol))
        return Feasibility(ok=all(c.ok for c in checks), min_eig=lam_min, max_residual=max(asym, claim_violation),
                           tolerances={"asymmetry": sym_tol, "lambda_min_gt": pd_tol, "edge_tol": tol}, details=details,
                           checks=checks)

    def evaluate(self, solution: Solution) -> dict[str, float]:
        L = np.asarray(solution.variables["L"], float)
        L = 0.5 * (L + L.T)
        tol = self.edge_tol(L)
        n_edges = int(np.count_nonzero(edge_mask(L, tol)))
        printed = hqic(L, self.C, self.n_samples, tol)
        samples = hqic(L, self.C, self.n_samples, tol, weight=self.n_samples / 2.0)
        out: dict[str, float] = {
            "hqic": printed if self.hqic_weight == 1.0 else samples,  # the objective's weighting
            "hqic_printed": printed,
            "hqic_samples": samples,
            "l1_norm": float(np.abs(L).sum()),
            "n_edges": float(n_edges),
            "density": n_edges / (self.n * (self.n - 1) / 2),
        }
        if self.L_true is not None:
            out["f_measure"] = f_measure(L, self.L_true, tol)
            out["relative_error"] = relative_error(L, self.L_true)
            out["adjacency_error"] = adjacency_error(L, self.L_true)
            out["true_edges"] = float(np.count_nonzero(edge_mask(self.L_true, 0.0)))
        return {k: (v if np.isfinite(v) else float("nan")) for k, v in out.items()}

    def reference_formulation(self) -> None:
        return None  # balance is combinatorial: no conic form with the same optimum


#: What ``psdbench info signed-graph`` and docs/families/signed_graph.md print.
DESCRIPTION = """\
Paper: Yokota, Higashi, Tanaka and Cheung, "Efficient Learning of Balanced Signed Graphs via
Sparse Linear Programming" (balanced-signed-graph-learning-sparse-lp): learn a sparse generalized
Laplacian of a BALANCED signed graph from observations.

Data of an instance: X (N nodes x K samples), the sample covariance C = X X' / (K - 1) (zero mean
assumed; center = true subtracts row means first); on synthetic data the true Laplacian too.

    minimize    HQIC(L) = -2 w (log det L - tr(C L)) + 2 k ln ln K        over L (N x N)
    subject to  L symmetric positive definite, and the signed graph of its off-diagonal entries
                balanced (Cartwright-Harary, Theorem 1: a 2-colouring of the nodes exists with
                positive edges inside and negative edges across the colours)

k is the number of non-zeros of L's upper triangle (entries within edge_tol of zero are not edges);
w = K / 2 (hqic_weight = "samples", the Gaussian log-likelihood of (16)) or w = 1 ("paper", (17) as
printed).  The solvers (CLIME (9) and its balanced variant BSGL, graphical lasso) minimize their own
convex surrogates and select a model by this criterion; the problem is combinatorial.

Variables a solution carries:
  L         (N, N)  the estimated precision matrix / generalized Laplacian (verified: symmetric,
                    positive definite, balanced).  Objective HQIC(L), finite only for PD L.
  polarity  (N,)    optional +-1 per node: the solver's claimed 2-colouring, checked against L.

Metrics: F-measure (147), relative error (148), adjacency error (149) against the true Laplacian,
both HQIC weightings, the l1 norm (objective (8) of the CLIME-type methods), edges and density.
Reference: none certified (balance is combinatorial): the best verified HQIC of the cells.
"""


class SignedGraph:
    """``signed-graph``: a sparse generalized Laplacian of a balanced signed graph, estimated from data (BSGL paper).

    See the module docstring for the problem written out."""

    name = "signed-graph"
    kind = KIND
    description = DESCRIPTION
    contract = SignedGraphKind
    unsupported = ("reference_formulation",)  # balance is combinatorial: no conic form (conic solvers skip)
    params: dict[str, api.Param] = {
        "n_nodes": api.number(low=2, default=50, integer=True, doc="nodes N (synthetic/balanced-gmrf only)"),
        "n_samples": api.number(low=2, default=500, integer=True, doc="observations K (synthetic/balanced-gmrf only)"),
        "edge_prob": api.number(low=0, high=1, default=0.2,
                                doc="Erdos-Renyi edge probability (synthetic/balanced-gmrf only)"),
        "noise_sd": api.number(low=0, default=0.0, doc="white observation noise sd (synthetic/balanced-gmrf only)"),
        "center": api.Param(default=False, types=(bool,), doc="subtract row means before the sample covariance"),
        "hqic_weight": api.choice("samples", "paper",
                                  doc="samples: K/2 on the log-likelihood, as (16) | paper: (17) as printed"),
        "edge_tol": api.number(low=0, default=1e-6, doc="entries up to edge_tol * max |L_ii| are not edges"),
        "pd_tol": api.number(low=0, default=1e-10, doc="verification: lambda_min(L) > pd_tol * max |L_ij|"),
        "sym_tol": api.number(low=0, default=1e-9, doc="verification: relative asymmetry and polarity-claim tolerance"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    @property
    def sense(self) -> str:
        return "min"

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> SignedGraphInstance:
        api.validate_params(self, params, self.name)
        p = {**self.default_params, **dict(params)}
        L_true = pol = None
        if dataset.payload.get("generator") == GENERATOR:
            sample = balanced_gmrf(int(p["n_nodes"]), int(p["n_samples"]), float(p["edge_prob"]),
                                   float(p["noise_sd"]), seed)
            X, L_true, pol = sample.X, sample.L, sample.polarity
        elif dataset.meta.get("observations"):
            X = np.asarray(dataset.X, float)
        else:
            raise DataError(f"signed-graph needs observations (obs/<file.csv>) or synthetic/balanced-gmrf, not {dataset.name}")
        if not np.all(np.isfinite(X)):
            raise DataError(f"{dataset.name}: observations contain NaN or inf")
        C = sample_covariance(X, bool(p["center"]))
        return SignedGraphInstance(problem=self.name, dataset=dataset.name, params=p, seed=seed, X=X, C=C,
                                   L_true=L_true, polarity_true=pol)
