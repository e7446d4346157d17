"""Problem ``maxcut/sdp``: the max-cut SDP relaxation of a sparse graph, on factored points.

::

    (P)  p* = max <C, X>  s.t.  diag(X) = 1,  X psd          C = L / 4 = (Diag(W 1) - W) / 4
    (D)       min 1'y     s.t.  Diag(y) - C psd

Variables a solution carries:

* ``R`` (n x r): the factor, ``X = R R^T``; required.  The cone condition holds by construction.
* ``y`` (n,): a dual vector; optional (when absent, the bound uses ``y_i = ||g_i|| + c_ii`` with
  ``g_i = sum_{j != i} c_ij r_j``, the mixing method's dual of the point).

Objective ``<C, R R^T> = sum(R * (C R))``, O(nnz(C) r).  Verified when ``max_i |r_i^T r_i - 1| <= tol``.
Metrics: ``dual_bound`` ``1'y + n lambda_max(C - Diag y)`` rounded up (:mod:`.bound`) with
``dual_bound_certified`` (1: certified in floating point, 0: a Lanczos estimate, see the reason in the
cell's ``bound_reason``), ``bound_gap_rel = (dual_bound - objective) / max(1, |dual_bound|)``, the
Goemans-Williamson cut of the point (best of ``hyperplanes``, one-flip local search) ``cut`` and
``cut_over_bound``, and ``published`` (SDPLIB's value, beside, never the reference).

Hooks: ``certified_interval`` (a verified point's normalised objective and the certified bound of its
``y``, the certificate ``evaluate`` computed: the harness takes the reference from the cells where
these are tight) and ``certified_reference`` (the mixing method, then the certificate, within its time).

Datasets: ``payload["graph"]`` a scipy.sparse symmetric weighted adjacency (zero diagonal), or
``payload["sdp"]`` a max-cut SDP read from an SDPA file (SDPLIB ``maxG*``: ``C`` is the file's
``F_0``), or ``payload["generator"]`` (:mod:`.graph`, drawn with ``n``, ``density`` and the seed).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Check, DataError, Dataset, Feasibility, Formulation, Solution

from . import KIND
from .contract import MaxcutKind
from .graph import check_graph, generate, graph_from_sdp, laplacian_cost

#: Largest n a generic conic solver (a dense n x n PSD variable) is given.
CONIC_MAX_N = 400


@dataclass
class MaxcutInstance:
    """Implements :class:`~psdbench.families.maxcut.contract.MaxcutKind`."""

    variables: ClassVar[tuple[str, ...]] = ("R", "y")
    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    C: sp.csr_matrix
    W: sp.csr_matrix
    published: float | None = None
    kind: str = KIND
    sense: str = "max"
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return int(self.C.shape[0])

    @property
    def tol(self) -> float:
        return float(self.params.get("tol", 1e-8))

    def variable_shapes(self) -> dict[str, tuple[int | None, ...]]:
        return {"R": (self.n, None), "y": (self.n,)}

    def refuse_solver(self, solver: Any) -> str | None:
        """A generic conic solver (a dense n x n PSD variable) only up to :data:`CONIC_MAX_N` nodes."""
        if tuple(getattr(solver, "kinds", ())) == ("*",) and self.n > CONIC_MAX_N:
            return f"n = {self.n} > {CONIC_MAX_N}: a dense {self.n} x {self.n} conic model is not attempted"
        return None

    def _R(self, solution: Solution) -> np.ndarray | None:
        R = solution.variables.get("R")
        if R is None:
            return None
        R = np.asarray(R, dtype=float)
        return R.reshape(-1, 1) if R.ndim == 1 else R

    def objective(self, solution: Solution) -> float:
        """``<C, R R^T> = sum(R * (C R))`` (NaN without ``R``)."""
        R = self._R(solution)
        return float("nan") if R is None else float(np.sum(R * (self.C @ R)))

    def verify(self, solution: Solution) -> Feasibility:
        """``diag(R R^T) = 1`` to ``tol`` (max over rows); finite entries."""
        R = self._R(solution)
        tols = {"diag_residual": self.tol}
        if R is None or R.shape[0] != self.n:
            return Feasibility(ok=False, min_eig=float("nan"), max_residual=float("inf"), tolerances=tols,
                               checks=[Check("a factor R with n rows returned", 0.0, 1.0, ">=")])
        finite = bool(np.all(np.isfinite(R)))
        res = float(np.max(np.abs(np.einsum("ij,ij->i", R, R) - 1.0))) if finite else float("inf")
        checks = [Check("max_i |r_i' r_i - 1| (diag(X) = 1)", res, self.tol)]
        return Feasibility(ok=finite and res <= self.tol, min_eig=0.0, max_residual=res, tolerances=tols,
                           checks=checks, details={"diag_residual": res, "rank": float(R.shape[1])})

    def dual_of(self, solution: Solution) -> np.ndarray | None:
        """The solution's ``y``, else the point's own dual ``||g_i|| + c_ii``."""
        y = solution.variables.get("y")
        if y is not None:
            return np.asarray(y, dtype=float).ravel()
        R = self._R(solution)
        if R is None:
            return None
        from .mixing import dual_from_point

        return dual_from_point(self.C, R)

    def bound(self, y: np.ndarray):
        """The dual bound of ``y`` (:func:`.bound.dual_bound`), memoised on its bytes (the last ``y``
        only): ``evaluate`` and ``certified_interval`` of one point share one certificate."""
        from .bound import dual_bound

        key = np.asarray(y, dtype=float).tobytes()
        if self._memo.get("bound_key") != key:
            self._memo["bound"] = dual_bound(self.C, y)
            self._memo["bound_key"] = key
        return self._memo["bound"]

    def _bound_within(self, y: np.ndarray, seconds: float) -> tuple[Any, str]:
        """``(bound, "")`` of ``y`` computed in a child process killed after ``seconds``, memoised as
        :meth:`bound`'s; ``(None, why)`` when it did not finish.  (The factorization holds the GIL:
        a thread could not be stopped at a deadline, a process can.)"""
        import json
        import os
        import subprocess
        import sys
        import tempfile
        from pathlib import Path

        from psdbench.linalg.certify import EigBound

        from .bound import DualBound

        key = np.asarray(y, dtype=float).tobytes()
        if self._memo.get("bound_key") == key:
            return self._memo["bound"], ""
        C = sp.csr_matrix(self.C)
        with tempfile.TemporaryDirectory(prefix="psdbench-maxcut-bound-") as tmp:
            src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.json"
            np.savez(src, data=C.data, indices=C.indices, indptr=C.indptr, shape=np.array(C.shape),
                     y=np.asarray(y, dtype=float))
            env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}  # what this process imports
            try:
                proc = subprocess.run([sys.executable, "-c", _BOUND_CHILD, str(src), str(dst)], env=env, text=True,
                                      timeout=max(seconds, 0.0), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            except subprocess.TimeoutExpired:  # killed by subprocess.run
                return None, f"did not finish in the {seconds:.3g} s left and was stopped"
            if proc.returncode != 0 or not dst.is_file():
                last = (proc.stderr or "").strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
                return None, f"failed in its process: {last[0]}"
            out = json.loads(dst.read_text())
        b = DualBound(out["value"], out["kind"], out["reason"], out["sum_y"], EigBound(*out["eig"]))
        self._memo["bound"], self._memo["bound_key"] = b, key
        return b, ""

    def evaluate(self, solution: Solution) -> dict[str, float]:
        """The dual bound and its kind, the gap to it, the rounded cut and its ratio, the published value."""
        out: dict[str, float] = {"n_nodes": float(self.n), "edges": float(self.W.nnz // 2)}
        if self.published is not None:
            out["published"] = float(self.published)
        R = self._R(solution)
        y = self.dual_of(solution)
        if y is None or y.size != self.n or not np.all(np.isfinite(y)):
            return out
        b = self.bound(y)
        out["dual_bound"] = b.value
        out["dual_bound_certified"] = 1.0 if b.kind == "certified" else 0.0
        out["lambda_max_bound"] = b.eig.value
        obj = self.objective(solution)
        if R is not None and math.isfinite(b.value):
            out["bound_gap_rel"] = (b.value - obj) / max(1.0, abs(b.value))
        k = int(self.params.get("hyperplanes", 0))
        if R is not None and k > 0 and np.all(np.isfinite(R)):
            from .rounding import gw_round

            rd = gw_round(self.W, R, k=k, seed=int(self.seed))
            out["cut"] = rd.cut
            if math.isfinite(b.value) and b.value > 0:
                out["cut_over_bound"] = rd.cut / b.value
        return out

    def reference_formulation(self, variant: str | None = None) -> Formulation | None:
        """(P) in cvxpy with a dense PSD variable (small n only); ``R`` from X's eigenvectors, ``y`` from
        the dual of ``diag(X) = 1`` (cvxpy's sign for a maximization's equality: ``Diag(y) - C`` psd)."""
        import cvxpy as cp

        if variant not in (None, "primal") or self.n > CONIC_MAX_N:
            return None
        X = cp.Variable((self.n, self.n), PSD=True)
        cons = [cp.diag(X) == 1]
        prob = cp.Problem(cp.Maximize(cp.trace(self.C.toarray() @ X)), cons)

        def extract() -> dict[str, np.ndarray]:
            w, Q = np.linalg.eigh(0.5 * (X.value + X.value.T))
            R = Q * np.sqrt(np.clip(w, 0, None))
            R /= np.linalg.norm(R, axis=1, keepdims=True)  # diag(X) = 1 exactly up to rounding
            return {"R": R, "y": np.asarray(cons[0].dual_value, dtype=float).ravel()}

        return Formulation(problem=prob, extract=extract)

    def certified_interval(self, solution: Solution) -> dict[str, Any] | None:
        """The interval a verified point certifies: ``value`` the objective of its rows normalised
        (exactly feasible up to rounding), ``lower`` the certified dual bound of its ``y``
        (:meth:`dual_of`) from :meth:`bound`, memoised, so the certificate ``evaluate`` computed for the
        point is reused; ``None`` when that bound is not certified (or a row is zero)."""
        y = self.dual_of(solution)
        value = self._exact_value(solution)
        if value is None or y is None or y.size != self.n or not np.all(np.isfinite(y)):
            return None
        b = self.bound(y)
        if b.kind != "certified" or not math.isfinite(b.value):
            return None
        return {"value": value, "lower": b.value, "solver": "maxcut dual bound",
                "message": f"dual bound ({b.kind}): {b.reason}"}

    def _exact_value(self, solution: Solution) -> float | None:
        """The objective of the point's rows normalised (``None`` for a zero or non-finite row)."""
        R = self._R(solution)
        if R is None or R.shape[0] != self.n or not np.all(np.isfinite(R)):
            return None
        norms = np.linalg.norm(R, axis=1)
        if not np.all(norms > 0):
            return None
        Rn = R / norms[:, None]
        return float(np.sum(Rn * (self.C @ Rn)))

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
        """The mixing method to a tight tolerance, then the certified dual bound of its ``y``.

        With ``time_limit_s`` the whole of it ends within that time: the mixing method gets 60 % of
        it, the certificate what is left, in a child process stopped at the end (the point's value
        is then given without a bound, status ``timeout``, and the message says so).  ``value`` is
        the objective of the point's rows normalised, ``lower`` the certified upper bound
        (:meth:`certified_interval`); an estimated bound is never given as ``lower`` (the message
        says so).
        """
        import time

        from psdbench.api import Budget

        from .mixing import MaxcutMixing

        t0 = time.monotonic()
        budget = Budget.seconds(0.6 * time_limit_s if time_limit_s else 600.0)
        sol = MaxcutMixing().solve(self, budget, tol=1e-13)
        mixing_s = time.monotonic() - t0
        out = {"value": self._exact_value(sol), "lower": None, "solver": "maxcut-mixing",
               "solver_version": MaxcutMixing().library_versions().get("numba", ""),
               "status": sol.status.value if hasattr(sol.status, "value") else str(sol.status)}
        b, why = (self._bound_within(sol.variables["y"], time_limit_s - mixing_s) if time_limit_s
                  else (self.bound(sol.variables["y"]), ""))
        if b is None:
            return {**out, "status": "timeout", "wall_time_s": time.monotonic() - t0,
                    "message": f"dual bound not computed ({time_limit_s:.3g} s budget, the mixing method took "
                               f"{mixing_s:.3g} s): the certificate {why}"}
        iv = self.certified_interval(sol)  # the bound just computed, memoised
        if iv is not None:
            out.update(value=iv["value"], lower=iv["lower"])
        return {**out, "wall_time_s": time.monotonic() - t0, "message": f"dual bound ({b.kind}): {b.reason}"}


#: The child process of :meth:`MaxcutInstance._bound_within`: ``dual_bound`` of the arrays in
#: ``argv[1]`` (a ``.npz``), written to ``argv[2]`` as JSON (floats round-trip exactly).
_BOUND_CHILD = """
import json, sys
import numpy as np, scipy.sparse as sp
from psdbench.families.maxcut.bound import dual_bound
with np.load(sys.argv[1]) as z:
    C = sp.csr_matrix((z["data"], z["indices"], z["indptr"]), shape=tuple(int(v) for v in z["shape"]))
    b = dual_bound(C, z["y"])
e = b.eig
with open(sys.argv[2], "w") as f:
    json.dump({"value": b.value, "kind": b.kind, "reason": b.reason, "sum_y": b.sum_y,
               "eig": [e.value, e.kind, e.reason, e.shift, e.residual]}, f)
"""


DESCRIPTION = """\
Paper: Goemans and Williamson (J. ACM 42:1115-1145, 1995): the max-cut SDP relaxation of a sparse
weighted graph W, solved on factors X = R R^T and judged by a dual bound certified in floating point.

    maximize    <C, X>                   (P)         minimize   1'y                    (D)
    subject to  diag(X) = 1, X psd                   subject to Diag(y) - C psd

C = L / 4 = (Diag(W 1) - W) / 4 (SDPLIB maxG files: C = the file's F_0, the same matrix).

Variables a solution carries:
  R  (n, r)  the factor, X = R R^T (required; the cone holds by construction)
  y  (n,)    a dual vector (optional; default y_i = ||g_i|| + c_ii, g_i = sum_{j != i} c_ij r_j)

Verified when max_i |r_i' r_i - 1| <= tol.  Objective <C, R R^T> in O(nnz r).  Every y gives
p* <= 1'y + n lambda_max(C - Diag y); lambda_max is bounded by an LDL^T factorization of
t I - (C - Diag y) with its residual bounded rigorously (psdbench.linalg.certify), or estimated by
Lanczos where the factor does not fit (the metric dual_bound_certified says which).
Metrics: dual_bound, dual_bound_certified, bound_gap_rel, cut (Goemans-Williamson, best of
`hyperplanes`, one-flip local search), cut_over_bound, published (SDPLIB, beside).
Reference: the mixing method to a tight tolerance and the certified bound of its y (certified
when the interval is within 1e-5).
"""


#: the parameters of the ``generator`` datasets (``maxcut-gen``), shared by the family's problems
GENERATOR_PARAMS: dict[str, api.Param] = {
    "n": api.number(low=3, default=50, integer=True, doc="generators only: number of nodes"),
    "density": api.number(low=0.0, high=1.0, default=0.1, doc="generators only (random): edge probability"),
}


class MaxcutSdp:
    """``maxcut/sdp``: max <L/4, X> s.t. diag X = 1, X psd, on factored points."""

    name = "maxcut/sdp"
    kind = KIND
    family = KIND
    sense = "max"
    description = DESCRIPTION
    contract = MaxcutKind
    size_param = "n"
    params: dict[str, api.Param] = {
        **GENERATOR_PARAMS,
        "tol": api.number(low=0.0, default=1e-8, doc="verified when max_i |r_i' r_i - 1| <= tol"),
        "hyperplanes": api.number(low=0, default=50, integer=True,
                                  doc="Goemans-Williamson hyperplanes for the cut metric (0: none)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> MaxcutInstance:
        p = {**self.default_params, **params}
        pay = dict(dataset.payload)
        if "graph" in pay:
            W = check_graph(pay["graph"], dataset.name)
            C = laplacian_cost(W)
        elif "sdp" in pay:
            W, C = graph_from_sdp(pay["sdp"], dataset.name)
        elif "generator" in pay:
            W = generate(str(pay["generator"]), int(p["n"]), float(p["density"]), int(seed))
            C = laplacian_cost(W)
        else:
            raise DataError(f"{self.name}: dataset {dataset.name} has no graph (payload keys: graph, sdp or generator)")
        published = pay.get("published")
        return MaxcutInstance(problem=self.name, dataset=dataset.name, params=p, seed=int(seed), C=C, W=W,
                              published=None if published is None else float(published))
