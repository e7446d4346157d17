"""The graph-classification instance: the SDP (8), its duals and the certified reference.

Paper: "Projection-free Graph-based Classifier Learning using Gershgorin Disc Perfect Alignment"
(../shared/papers/gdpa-graph-classifier-sdp.txt), sections 4.1-4.3; the problem and its protocol are
in :mod:`.problem`.

Variables a solution may carry (any subset; each present one is verified):

``M``   (N+1, N+1) primal matrix of the SDP (8): ``[[X, x], [x', 1]]``.
``x``   (N,) labels in {-1, +1}; the rank-one point ``[x; 1][x; 1]'`` is feasible for (8) when
        ``x`` agrees with the known labels, so its objective ``x' L x`` is an upper bound on p*.
``y``, ``z``  dual variables of (12) (``y`` of length N+1, ``z`` of length M), with the sign
        convention of the reference notes: ``H = diag(y) + offdiag(z) + [[L, 0], [0, 0]]``.
``eps`` the node-splitting parameter of (15)/(20); with it, ``H-bar`` of (20) is verified too.
``y_reduced``, ``eps_reduced``  dual of the reduced SDP (:meth:`~GraphClassificationInstance.reduced_sdp`,
        ``Q + diag(y_reduced)`` PSD) and the split parameter of its ``H-bar``
        (:meth:`~GraphClassificationInstance.reduced_split_matrix`), verified likewise.
``s_reduced``  positive scaling vector of that ``H-bar`` (GDPA's ``s_i = 1 / v_i`` of the last
        LP): the Gershgorin discs of ``S H-bar S^-1`` certify ``lambda_min(H-bar)`` in O(nnz).
``s``   positive scaling vector of ``H-bar`` of (15) (``gdpa-lp`` on sparse instances), certified likewise.

Sparse instances (kNN graphs with N > ``dense_n``): ``L`` is a ``scipy.sparse`` matrix and no
array of N x N entries is formed.  A dual point (reduced, or ``y, z, eps`` of (12)/(15)) is then
verified by the Gershgorin certificate of its scaling (``s_reduced`` / ``s``; metric
``certificate`` = ``"gershgorin"``), or where that fails by a LOBPCG estimate with its residual
(``"lobpcg"``, not a proof); dense instances use ``eigh`` (``"eigh"``).  ``M`` and the conic
reference need dense matrices.

The dual bound ``-(1'y + b'z)``, ``b = 2 xhat`` (eq. (11)), is a lower bound on p* whenever H is
PSD; :meth:`GraphClassificationInstance.dual_bound` shifts it by ``(N+1) max(0, -lambda_min(H))``
so that it is certified for any returned (y, z).
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import scipy.sparse as sp

from psdbench.api import Check, Feasibility, PsdbenchError, Solution
from psdbench.families.graph_classification import sparse as gsp
from psdbench.families.graph_classification.reference import ConicReference
from psdbench.families.graph_classification.repair import Repair
from psdbench.linalg.psd import asymmetry, gershgorin_left_end, min_eig

KIND = "graph-classification"
# The reverse Cuthill-McKee envelope a reduced dual's LDL^T certificate may have before factoring
# (the factor itself stays within certify's 60M nonzeros): the envelope overstates the
# minimum-degree fill about 50x on cod-rna's kNN graphs (81,429 nodes: 1.59e9 against 3.1e7).
LDLT_MAX_ENVELOPE = 2_000_000_000


# ----------------------------------------------------------------------------- the instance
@dataclass
class SparseCertificate(gsp.Certificate):
    """:class:`~.sparse.Certificate` of H-bar with the lower bound on p* it gives and the PSD scale."""

    lower: float = float("nan")
    scale: float = 1.0


@dataclass
class GraphClassificationInstance(ConicReference, Repair):
    """One transductive instance: Laplacian ``L`` and the first ``m`` labels known."""

    dataset: str
    params: dict[str, Any]
    seed: int
    L: np.ndarray
    x_true: np.ndarray
    m: int
    problem: str = KIND
    kind: str = KIND
    _cache: dict[str, Any] = field(default_factory=dict, repr=False)
    #: the variables a solution may carry (module docstring); each one present is verified
    variables: ClassVar[tuple[str, ...]] = ("M", "x", "y", "z", "eps", "y_reduced", "eps_reduced", "s_reduced", "s")

    # ---- basic data
    @property
    def n(self) -> int:
        return int(self.L.shape[0])

    @property
    def is_sparse(self) -> bool:
        """Whether ``L`` is a ``scipy.sparse`` matrix (kNN graph above ``dense_n``)."""
        return sp.issparse(self.L)

    def _dense_only(self, what: str) -> None:
        if self.is_sparse:
            raise PsdbenchError(f"graph-classification: {what} needs dense (N+1) x (N+1) matrices; "
                                f"N = {self.n} > dense_n = {self.params.get('dense_n')}")

    def refuse_solver(self, solver: Any) -> str | None:
        """Why ``solver`` is skipped here: conic solvers beyond ``conic_max_n``, ``gdpa-lp`` on sparse."""
        limit = self.params.get("conic_max_n")
        if getattr(solver, "backend", None) and limit is not None and self.n > int(limit):
            side = self.n - self.m + 1
            return (f"{solver.name}: N = {self.n} > conic_max_n = {int(limit)} (reduced SDP of size {side}, "
                    f"{side * side * 8 / 1e9:.2g} GB per dense matrix)")
        return None

    @property
    def xhat(self) -> np.ndarray:
        """Known labels (eq. (6)): the first ``m`` entries of the ground truth."""
        return self.x_true[: self.m]

    @property
    def b(self) -> np.ndarray:
        """Eq. (11): ``b_i = 2 xhat_i``."""
        return 2.0 * self.xhat

    def fingerprint(self) -> str:
        """Hash of the instance data (used to check that a cached reference matches)."""
        h = hashlib.sha256()
        if self.is_sparse:
            L = sp.csr_matrix(self.L)
            for part in (L.data, L.indices, L.indptr):
                h.update(np.ascontiguousarray(part).tobytes())
        else:
            h.update(np.ascontiguousarray(self.L).tobytes())
        h.update(self.x_true.tobytes())
        h.update(json.dumps([self.m, self.params], sort_keys=True, default=str).encode())
        return h.hexdigest()[:16]

    # ---- matrices of the formulation
    def dual_matrix(self, y: np.ndarray, z: np.ndarray) -> np.ndarray:
        """H of (12)/(14): ``diag(y) + offdiag(z) + [[L, 0], [0, 0]]``, size N+1."""
        N, m = self.n, self.m
        if self.is_sparse:
            col = sp.csr_matrix((z, (np.arange(m), np.zeros(m, int))), shape=(N, 1))
            return (sp.bmat([[self.L, col], [col.T, None]], format="csr") + sp.diags(y)).tocsr()
        H = np.zeros((N + 1, N + 1))
        H[:N, :N] = self.L
        H[np.diag_indices(N + 1)] += y
        H[:m, N] = z
        H[N, :m] = z
        return H

    def split_dual_matrix(self, y: np.ndarray, z: np.ndarray, eps: float) -> np.ndarray:
        """H-bar of (15)/(20), size N+2.

        Node N+1 (index N) carries the edges ``z_i`` of labelled ``xhat_i = +1`` (``z_i <= 0``,
        positive edges), node N+2 (index N+1) those of ``xhat_i = -1`` (negative edges); their
        self-loops are ``u_{N+1}/2 -+ eps`` (section 4.3, step 3), so the diagonal entries are
        ``(y_{N+1} -+ (sum_{g1} z - sum_{g2} z))/2 -+ eps`` (kappa of (20)).
        """
        N, m = self.n, self.m
        g1 = self.xhat > 0
        idx = np.arange(m)
        if self.is_sparse:
            from psdbench.families.graph_classification.sparse_gdpa_lp import split_affine

            x = np.concatenate([y, z])
            return split_affine(self.L, self.xhat, float(eps), False).evaluate(x)
        Hb = np.zeros((N + 2, N + 2))
        Hb[:N, :N] = self.L
        Hb[np.diag_indices(N)] += y[:N]
        Hb[idx[g1], N] = Hb[N, idx[g1]] = z[g1]
        Hb[idx[~g1], N + 1] = Hb[N + 1, idx[~g1]] = z[~g1]
        s = z[g1].sum() - z[~g1].sum()
        Hb[N, N] = 0.5 * (y[N] - s) - eps
        Hb[N + 1, N + 1] = 0.5 * (y[N] + s) + eps
        return Hb

    def dual_bound(self, y: np.ndarray, z: np.ndarray) -> tuple[float, float]:
        """Certified lower bound on p* from any (y, z), and lambda_min(H).

        Weak duality: for H PSD and any feasible M of (8), ``tr(H M) >= 0`` gives
        ``tr(L X) >= -(1'y + b'z)``.  If ``lambda_min(H) < 0``, adding ``delta = -lambda_min`` to
        every ``y_i`` makes H PSD and costs ``(N+1) delta``.
        """
        lam = min_eig(self.dual_matrix(y, z))
        value = -(float(np.sum(y)) + float(self.b @ z)) - (self.n + 1) * max(0.0, -lam)
        return value, lam

    # ---- the contract
    def _labels(self, solution: Solution) -> np.ndarray | None:
        """Labels of a solution: ``x`` if given, else the sign of the x-column of ``M`` (known labels kept)."""
        v = solution.variables
        if "x" in v:
            x = np.asarray(v["x"], float)
        elif "M" in v:
            x = np.asarray(v["M"], float)[: self.n, self.n]
        else:
            return None
        x = np.where(x >= 0, 1.0, -1.0)
        x[: self.m] = self.xhat
        return x

    def objective(self, solution: Solution) -> float:
        """Primal objective of (8): ``tr(L X)`` of ``M``, or ``x' L x`` of the rank-one label point."""
        v = solution.variables
        if "M" in v:
            M = np.asarray(v["M"], float)
            sym = 0.5 * (M[: self.n, : self.n] + M[: self.n, : self.n].T)
            return float(self.L.multiply(sym).sum()) if self.is_sparse else float(np.sum(self.L * sym))
        if "x" in v:
            x = np.asarray(v["x"], float)
            return float(x @ (self.L @ x)) if self.is_sparse else float(x @ self.L @ x)
        raise PsdbenchError("graph-classification: a solution needs 'M' or 'x'")

    def verify(self, solution: Solution) -> Feasibility:
        """Verify every point the solution carries (primal ``M``, labels ``x``, dual ``y, z[, eps]``)."""
        v = solution.variables
        ftol, ptol = float(self.params["feas_tol"]), float(self.params["psd_tol"])
        N, m = self.n, self.m
        eigs: list[float] = []
        res: list[float] = []
        checks: list[Check] = []
        details: dict[str, float] = {}
        if "M" in v:
            self._dense_only("verifying M")
            M = np.asarray(v["M"], float)
            if M.shape != (N + 1, N + 1):
                raise PsdbenchError(f"M has shape {M.shape}, expected {(N + 1, N + 1)}")
            lam = min_eig(M)
            scale = max(1.0, float(np.linalg.norm(M, 2)))
            r = max(asymmetry(M), float(np.max(np.abs(np.diag(M) - 1.0))), float(np.max(np.abs(M[:m, N] - self.xhat))), abs(M[N, N] - 1.0))
            details.update(min_eig_M=lam, residual_M=r)
            checks += [Check("smallest eigenvalue of M", lam, -ptol * scale, ">="),
                       Check("residual of M (symmetry, unit diagonal, labels)", r, ftol)]
            eigs.append(lam / scale)
            res.append(r)
        if "x" in v:
            x = np.asarray(v["x"], float)
            r = max(float(np.max(np.abs(np.abs(x) - 1.0))), float(np.max(np.abs(x[:m] - self.xhat))))
            details.update(residual_x=r)
            checks.append(Check("residual of x (|x_i| = 1, labels)", r, ftol))
            res.append(r)
        def psd(name: str, A: np.ndarray, scale: float) -> None:
            """Check one dual matrix PSD to psd_tol relative to ``scale`` (its largest row sum)."""
            lam = min_eig(A)
            details[f"min_eig_{name}"] = lam
            checks.append(Check(f"smallest eigenvalue of {name}", lam, -ptol * scale, ">="))
            eigs.append(lam / scale)

        if "y" in v and "z" in v and self.is_sparse:
            cert = self._sparse_certificate(v)
            details.update(certificate_bound=cert.bound, gershgorin_left_end=cert.gershgorin)
            checks.append(Check("certified lower bound on the dual matrix's smallest eigenvalue", cert.bound,
                                -ptol * cert.scale, ">="))
            eigs.append(cert.bound / cert.scale)
        elif "y" in v and "z" in v:
            y, z = np.asarray(v["y"], float), np.asarray(v["z"], float)
            H = self.dual_matrix(y, z)
            scale = max(1.0, float(np.abs(H).sum(axis=1).max()))
            psd("H", H, scale)
            if "eps" in v:
                psd("Hbar", self.split_dual_matrix(y, z, float(np.asarray(v["eps"]))), scale)
        if "y_reduced" in v and self.is_sparse:
            cert = self._sparse_certificate(v)
            details.update(certificate_bound=cert.bound, gershgorin_left_end=cert.gershgorin)
            checks.append(Check("certified lower bound on the dual matrix's smallest eigenvalue", cert.bound,
                                -ptol * cert.scale, ">="))
            eigs.append(cert.bound / cert.scale)
        elif "y_reduced" in v:
            yr = np.asarray(v["y_reduced"], float)
            D = self.reduced_dual_matrix(yr)
            scale = max(1.0, float(np.abs(D).sum(axis=1).max()))
            psd("reduced", D, scale)
            if "eps_reduced" in v:
                psd("Hbar", self.reduced_split_matrix(yr, float(np.asarray(v["eps_reduced"]))), scale)
        if not eigs and not res:
            raise PsdbenchError("graph-classification: the solution carries no verifiable variable")
        return Feasibility(
            ok=all(c.ok for c in checks),
            min_eig=float(min(eigs)) if eigs else float("nan"),
            max_residual=float(max(res)) if res else 0.0,
            tolerances={"feas_tol": ftol, "psd_tol_rel": ptol},
            details=details,
            checks=checks,
        )

    def harmonic(self) -> gsp.Harmonic:
        """Label propagation on a sparse instance (sparse CG; cached with its solve time)."""
        if "harmonic" not in self._cache:
            self._cache["harmonic"] = gsp.harmonic(self.L, self.m, self.xhat)
        return self._cache["harmonic"]

    def baselines(self) -> dict[str, float]:
        """Majority-class and label-propagation (harmonic function) error rates on the unlabelled nodes."""
        if "baselines" not in self._cache:
            m, U = self.m, slice(self.m, None)
            truth = self.x_true[U]
            majority = 1.0 if self.xhat.sum() >= 0 else -1.0
            extra: dict[str, float] = {}
            if self.is_sparse:
                h = self.harmonic()
                f = h.f
                extra = {"labelprop_time_s": h.seconds, "labelprop_cg_iterations": float(h.iterations),
                         "labelprop_residual": h.residual}
            else:
                t0 = time.perf_counter()
                L_UU, L_UL = self.L[U, U], self.L[U, :m]
                # Harmonic solution f_U = -L_UU^-1 L_UL xhat (tiny ridge for components without labels).
                f = np.linalg.solve(L_UU + 1e-10 * np.eye(L_UU.shape[0]), -L_UL @ self.xhat)
                extra = {"labelprop_time_s": time.perf_counter() - t0}  # the dense solve, as the sparse CG's
            pred = np.where(f > 0, 1.0, np.where(f < 0, -1.0, majority))
            self._cache["baselines"] = {
                "majority_error": float(np.mean(truth != majority)),
                "labelprop_error": float(np.mean(pred != truth)),
                **extra,
            }
        return dict(self._cache["baselines"])

    def evaluate(self, solution: Solution) -> dict[str, float]:
        """Error rate on the unlabelled nodes, x'Lx of the predicted labels, baselines, dual bound."""
        out = {**self.baselines(), "n_nodes": float(self.n)}
        x = self._labels(solution)
        if x is not None:
            out["error_rate"] = float(np.mean(x[self.m :] != self.x_true[self.m :]))
            out["xLx"] = float(x @ (self.L @ x)) if self.is_sparse else float(x @ self.L @ x)
        v = solution.variables
        if ("y_reduced" in v or ("y" in v and "z" in v)) and self.is_sparse:
            cert = self._sparse_certificate(v)
            dual = np.sum(v["y_reduced"]) if "y_reduced" in v else np.sum(v["y"]) + self.b @ np.asarray(v["z"], float)
            out.update(lower_bound=cert.lower, certificate=cert.kind, certificate_bound_Hbar=cert.bound,
                       gershgorin_left_end=cert.gershgorin, dual_objective=float(dual))
            if cert.kind not in ("gershgorin", "ldlt"):
                out["lobpcg_residual"] = cert.residual
            return out
        if "y" in v and "z" in v:
            y, z = np.asarray(v["y"], float), np.asarray(v["z"], float)
            out["lower_bound"], out["lambda_min_H"] = self.dual_bound(y, z)
            out["dual_objective"] = float(np.sum(y) + self.b @ z)
            if "eps" in v:
                out["lambda_min_Hbar"] = min_eig(self.split_dual_matrix(y, z, float(np.asarray(v["eps"]))))
        if "y_reduced" in v:
            yr = np.asarray(v["y_reduced"], float)
            out["lower_bound"], out["lambda_min_H"] = self.reduced_dual_bound(yr)
            out["dual_objective"] = float(np.sum(yr))
            out["certificate"] = "eigh"
            if "eps_reduced" in v:
                Hb = self.reduced_split_matrix(yr, float(np.asarray(v["eps_reduced"])))
                out["lambda_min_Hbar"] = min_eig(Hb)
                if "s_reduced" in v:  # the O(nnz) certificate beside the dense one (never above it)
                    out["gershgorin_left_end"] = gershgorin_left_end(Hb, np.asarray(v["s_reduced"], float))
        return out

    def _sparse_certificate(self, v: Any) -> "SparseCertificate":
        """Certified bound of a sparse instance's dual point, reduced (``y_reduced``) or of (12) (``y, z``), cached."""
        red = "y_reduced" in v
        y = np.asarray(v["y_reduced" if red else "y"], float)
        z = np.zeros(0) if red else np.asarray(v["z"], float)
        eps = float(np.asarray(v.get("eps_reduced" if red else "eps", 0.0)))
        s = v.get("s_reduced" if red else "s")
        s = None if s is None else np.asarray(s, float)
        key = ("cert", hashlib.sha1(y.tobytes() + z.tobytes() + np.float64(eps).tobytes()
                                    + (b"" if s is None else s.tobytes())).hexdigest())
        if key not in self._cache and red and s is None:  # no scaling: LDL^T of Q + diag(y) itself
            self._cache = {k: c for k, c in self._cache.items() if not (isinstance(k, tuple) and k[0] == "cert")}
            self._cache[key] = self._ldlt_certificate(y)
        if key not in self._cache:
            if red:
                Q, const = self.reduced_sdp()
                Hbar, size, value = self.reduced_split_matrix(y, eps), Q.shape[0], const - float(np.sum(y))
            else:
                Q, size, value = self.dual_matrix(y, z), self.n + 1, -(float(np.sum(y)) + float(self.b @ z))
                Hbar = self.split_dual_matrix(y, z, eps)
            cert = gsp.certify(Hbar, s, float(self.params["psd_tol"]))
            lam = min(cert.bound, 2.0 * cert.bound)  # lambda_min of the unsplit matrix >= this (Lemma 1, |a|^2 <= 2|w|^2)
            scale = max(1.0, float(np.max(abs(Q).sum(axis=1).A.ravel() + (np.abs(y) if red else 0.0))))
            lower = value - size * max(0.0, -lam)
            self._cache = {k: c for k, c in self._cache.items() if not (isinstance(k, tuple) and k[0] == "cert")}
            self._cache[key] = SparseCertificate(cert.bound, cert.kind, cert.gershgorin, cert.residual, lower, scale)
        return self._cache[key]

    def _ldlt_certificate(self, y: np.ndarray) -> "SparseCertificate":
        """Certificate of a reduced dual ``y`` without a scaling: ``lambda_min(Q + diag y) >= -t`` proven by
        an LDL^T of ``t I + Q + diag y`` with its rigorous residual (:func:`psdbench.linalg.certify.lambda_max_upper`,
        started at the estimate 0: a nearly optimal dual is nearly singular); kind ``"ldlt"``, or
        ``"lanczos"`` (an estimate, not a proof) where the factor does not fit."""
        from psdbench.linalg.certify import lambda_max_upper

        Q, const = self.reduced_sdp()
        D = (Q + sp.diags(y)).tocsr()
        b = lambda_max_upper(-D, estimate=0.0, max_envelope=LDLT_MAX_ENVELOPE)
        lam = -b.value
        scale = max(1.0, float(np.max(abs(Q).sum(axis=1).A.ravel() + np.abs(y))))
        lower = const - float(np.sum(y)) - Q.shape[0] * max(0.0, -lam)
        return SparseCertificate(lam, "ldlt" if b.certified else "lanczos", float("nan"),
                                 b.residual if b.certified else float("nan"), lower, scale)

    def reduced_sdp(self) -> tuple[np.ndarray, float]:
        """The equivalent SDP over the unlabelled nodes plus one homogenizing node.

        (8) is equivalent to ``min tr(Q Z) + const`` over ``Z`` PSD with ``diag(Z) = 1``, where
        ``Q = [[L_UU, c], [c', 0]]``, ``c = L_UL xhat``, ``const = xhat' L_LL xhat``.

        Proof.  Write a feasible ``M`` of (8) as a Gram matrix of unit vectors ``u_1..u_N, u_t``
        (``X_ii = 1`` and ``M_{N+1,N+1} = 1``).  ``M_{i,t} = u_i'u_t = xhat_i`` = +-1 for two unit
        vectors forces ``u_i = xhat_i u_t`` for every labelled ``i``.  Substituting, ``tr(L X) =
        sum_{U,U} L_ij u_i'u_j + 2 sum_{i in U, j in L} L_ij xhat_j u_i'u_t + sum_{L,L} L_ij xhat_i
        xhat_j = tr(Q Z) + const`` with ``Z`` the Gram matrix of ``(u_U, u_t)``, which is PSD with
        unit diagonal.  Conversely any such ``Z`` gives back a feasible ``M`` by setting
        ``u_i = xhat_i u_t`` on the labelled nodes.  The objectives agree, so the optima do.
        Its dual is ``max -1'w`` s.t. ``Q + diag(w)`` PSD.
        """
        if "reduced" in self._cache:
            Q, const = self._cache["reduced"]
            return Q.copy(), const
        if self.is_sparse:
            self._cache["reduced"] = gsp.reduced_sdp(self.L, self.m, self.xhat)
            return self.reduced_sdp()
        m = self.m
        L_UU = self.L[m:, m:]
        c = self.L[m:, :m] @ self.xhat
        const = float(self.xhat @ self.L[:m, :m] @ self.xhat)
        k = L_UU.shape[0]
        Q = np.zeros((k + 1, k + 1))
        Q[:k, :k] = L_UU
        Q[:k, k] = Q[k, :k] = c
        self._cache["reduced"] = (Q, const)
        return Q.copy(), const

    def reduced_dual_matrix(self, y: np.ndarray) -> np.ndarray:
        """``Q + diag(y)``: the dual matrix of the reduced SDP (dual: min 1'y s.t. this PSD)."""
        Q, _ = self.reduced_sdp()
        return (Q + sp.diags(y)).tocsr() if self.is_sparse else Q + np.diag(y)

    def reduced_dual_bound(self, y: np.ndarray) -> tuple[float, float]:
        """Certified lower bound on p* from any ``y``: ``const - 1'y - k max(0, -lambda_min(Q + diag y))``.

        Weak duality for the reduced SDP: ``tr(Q Z) >= -1'y`` for Z feasible and Q + diag(y) PSD.
        """
        self._dense_only("the dense reduced bound (use the Gershgorin certificate)")
        Q, const = self.reduced_sdp()
        lam = min_eig(Q + np.diag(y))
        return const - float(np.sum(y)) - Q.shape[0] * max(0.0, -lam), lam

    def reduced_split_matrix(self, y: np.ndarray, eps: float) -> np.ndarray:
        """H-bar of the reduced dual with the homogenizing node t split in two (size |U|+2).

        t+ (index |U|) keeps the edges of t with ``c_i < 0`` (positive edges), t- (index |U|+1)
        those with ``c_i > 0`` (negative edges); their diagonals are ``y_t/2 - eps`` and
        ``y_t/2 + eps``.  It is the Laplacian of a balanced graph (colour t- apart), and for any w,
        ``w'(Q + diag y)w = a' H-bar a`` with ``a = [w_U; w_t; w_t]`` (the argument of Lemma 1), so
        H-bar PSD implies Q + diag(y) PSD.
        """
        Q, _ = self.reduced_sdp()
        if self.is_sparse:
            return gsp.split_matrix(Q, np.asarray(y, float), float(eps))
        u = Q.shape[0] - 1
        c = Q[:u, u]
        H = np.zeros((u + 2, u + 2))
        H[:u, :u] = Q[:u, :u] + np.diag(y[:u])
        H[:u, u] = H[u, :u] = np.where(c < 0, c, 0.0)
        H[:u, u + 1] = H[u + 1, :u] = np.where(c > 0, c, 0.0)
        H[u, u] = 0.5 * y[u] - eps
        H[u + 1, u + 1] = 0.5 * y[u] + eps
        return H
