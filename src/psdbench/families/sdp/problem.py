"""Problem ``sdp/standard``: a block-diagonal SDP in the DIMACS primal-dual form.

::

    (P)  min <C, X>  s.t.  A(X) = b,  X psd
    (D)  max b'y     s.t.  A*(y) + Z = C,  Z psd

From an SDPA file (:mod:`.sdpa_io`): ``C = -F_0``, ``A_i = F_i``, ``b = c``; the file's ``Y`` is
``X``, ``y = -x`` (the file's ``x``) and ``Z`` is the file's ``X``.  So our primal value is the
negative of the value SDPLIB publishes (SDPLIB states ``max <F_0, Y>``).

Variables a solution carries (stacked vectors in the layout of :mod:`.data`):

* ``X`` (length N) and ``y`` (length m): required for a point; ``Z`` (length N) optional (when
  absent, ``Z = C - A*(y)``);
* or a FACTORED point (:mod:`.factored`): ``R`` (n_psd, r), the PSD blocks' factors stacked by rows
  (``X_j = R_j R_j'``), ``x_lp`` (n_lp,) the LP entries, with ``y``: verified without forming ``X``;
  its metrics add ``dual_bound`` (a lower bound on the optimum from ``y``) and
  ``dual_bound_certified`` (1 certified, 0 an estimate; :mod:`.lowrank_bound`);
* ``y_ray``: a certificate that (P) is infeasible; ``X_ray``: a certificate that (D) is infeasible
  (checked in :mod:`.errors`; a certificate alone never verifies as a point).

Objective: ``<C, X>`` recomputed from ``X``.  Verification: the six DIMACS errors
(:mod:`.errors`), verified when the largest is at most ``tol`` (default 1e-6).  Metrics: ``err1``
... ``err6``, ``max_err``, ``flag_a`` / ``flag_f`` (Mittelmann's flags as 0 / 1), ``dual_obj``,
``published`` (the SDPLIB table's value in this sign convention, shown beside, never the
reference), the SCS page's relative KKT residuals ``scs_primal_res_rel``, ``scs_dual_res_rel``,
``scs_gap_rel`` and their largest ``kkt_worst_rel`` (:mod:`.kkt`) and, for a certificate,
``cert_primal_infeasible`` / ``cert_dual_infeasible`` (1 when the certificate holds from the
data) with its violation.

Datasets: ``payload["sdp"]`` (an :class:`.data.SdpData`), or ``payload["path"]`` of an SDPA file,
or ``payload["generator"]`` (:mod:`.generators`, drawn with the instance's ``n`` and seed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

import numpy as np

from psdbench import api
from psdbench.api import Check, DataError, Dataset, Feasibility, Formulation, Solution

from . import KIND
from .contract import SdpKind
from .data import SdpData
from .errors import dimacs_errors, dual_infeasibility_holds, primal_infeasibility_holds
from psdbench.families.sdp.lowrank.factored import Factored, is_factored
from psdbench.families.sdp.lowrank.lowrank_bound import dual_bound, factored_errors
from .kkt import scs_residuals


#: What each of the six DIMACS errors measures (:mod:`.errors`), as verification messages name them.
DIMACS_NAMES = ("err1 (primal residual ||A(X) - b||)", "err2 (primal cone: -lambda_min(X))",
                "err3 (dual residual ||A*(y) + Z - C||, summed over blocks)", "err4 (dual cone: -lambda_min(Z))",
                "err5 (relative duality gap)", "err6 (complementarity <X, Z>)")


@dataclass
class SdpInstance:
    """Implements :class:`~psdbench.families.sdp.contract.SdpKind`."""

    variables: ClassVar[tuple[str, ...]] = ("X", "y", "Z", "y_ray", "X_ray", "R", "x_lp")
    problem: str
    dataset: str
    params: dict[str, Any]
    seed: int
    data: SdpData
    published: float | None = None
    published_digits: int | None = None
    expected: str = "optimal"
    kind: str = KIND
    sense: str = "min"
    _memo: dict[str, Any] = field(default_factory=dict, repr=False)

    @property
    def n(self) -> int:
        return self.data.n

    @property
    def tol(self) -> float:
        return float(self.params.get("tol", 1e-6))

    def variable_shapes(self) -> dict[str, tuple[int, ...]]:
        """``X``, ``Z`` and ``X_ray`` stack the N entries of the blocks, ``y`` and ``y_ray`` have m
        (checked by the harness and the kit before ``verify``: ``api.point_mismatch``)."""
        N, m = self.data.N, self.data.m
        n_psd = sum(s for s in self.data.block_sizes if s > 0)
        n_lp = -sum(s for s in self.data.block_sizes if s < 0)
        return {"X": (N,), "y": (m,), "Z": (N,), "X_ray": (N,), "y_ray": (m,), "R": (n_psd, None), "x_lp": (n_lp,)}

    def _vec(self, solution: Solution, key: str) -> np.ndarray | None:
        v = solution.variables.get(key)
        return None if v is None else np.asarray(v, dtype=float).ravel()

    def objective(self, solution: Solution) -> float:
        """``<C, X>`` (NaN for a certificate without a point); ``<C, R R'>`` of a factored point (:mod:`.factored`)."""
        if is_factored(solution.variables):
            return Factored.of(self.data).objective(np.asarray(solution.variables["R"], dtype=float),
                                                    self._vec(solution, "x_lp"))
        x = self._vec(solution, "X")
        return float("nan") if x is None else float(self.data.c_dense() @ x)

    def _errors(self, solution: Solution):
        if is_factored(solution.variables) and "y" in solution.variables:
            return factored_errors(self.data, np.asarray(solution.variables["R"], dtype=float),
                                   self._vec(solution, "x_lp"), self._vec(solution, "y"))
        x, y, z = (self._vec(solution, k) for k in ("X", "y", "Z"))
        if x is None or y is None:
            return None
        if x.size != self.data.N or y.size != self.data.m or (z is not None and z.size != self.data.N):
            raise ValueError(f"solution sizes X {x.size}, y {y.size} do not match N = {self.data.N}, m = {self.data.m}")
        return dimacs_errors(self.data, x, y, z)

    def verify(self, solution: Solution) -> Feasibility:
        """The six DIMACS errors, one check each; verified when the largest is at most ``tol``.

        A solution without ``X`` and ``y`` (an infeasibility certificate alone) fails the check
        "a primal-dual point returned"; its certificates are reported in ``details`` and metrics.
        """
        e = self._errors(solution)
        tols = {"max_dimacs_error": self.tol}
        if e is None:
            details = {k: float(v) for k, v in self._certificates(solution).items()}
            return Feasibility(ok=False, min_eig=float("nan"), max_residual=float("inf"), tolerances=tols,
                               details={**details, "point": 0.0},
                               checks=[Check("a primal-dual point (X, y) returned", 0.0, 1.0, ">=")])
        # err6 is not defined when X or Z leaves the cone (err2 or err4 > 0, which their checks judge)
        checks = [Check(f"DIMACS {name}", float(abs(v)), self.tol) for name, v in zip(DIMACS_NAMES, e.err) if v == v]
        return Feasibility(ok=all(c.ok for c in checks), min_eig=min(e.min_eig_X, e.min_eig_Z),
                           max_residual=e.max_err, tolerances=tols, checks=checks,
                           details={f"err{k + 1}": float(v) for k, v in enumerate(e.err) if v == v})

    def _certificates(self, solution: Solution) -> dict[str, float]:
        out: dict[str, float] = {}
        yr, xr = self._vec(solution, "y_ray"), self._vec(solution, "X_ray")
        if yr is not None:
            ok, viol = primal_infeasibility_holds(self.data, yr)
            out.update(cert_primal_infeasible=float(ok), cert_primal_violation=viol)
        if xr is not None:
            ok, viol = dual_infeasibility_holds(self.data, xr)
            out.update(cert_dual_infeasible=float(ok), cert_dual_violation=viol)
        return out

    def evaluate(self, solution: Solution) -> dict[str, float]:
        """DIMACS errors and flags, the published value, and certificate checks."""
        out: dict[str, float] = {"m": float(self.data.m), "n_total": float(self.data.n),
                                 "blocks": float(len(self.data.block_sizes))}
        if self.published is not None:
            out["published"] = float(self.published)
            if self.published_digits:
                out["published_digits"] = float(self.published_digits)
        e = self._errors(solution)
        if e is not None and is_factored(solution.variables):
            # a factored point: the lower bound on the optimum from its y, from the sparse Z
            # (:mod:`.lowrank_bound`), with its kind; no dense KKT residuals
            bound = dual_bound(self.data, self._vec(solution, "y"))
            out.update(e.as_dict())
            out.update(factored=1.0, rank=float(np.shape(solution.variables["R"])[1]),
                       dual_bound=bound["bound"], dual_bound_certified=float(bound["kind"] == "certified"))
        elif e is not None:
            out.update(e.as_dict())
            x, y, z = (self._vec(solution, k) for k in ("X", "y", "Z"))
            out.update(scs_residuals(self.data, x, y, z))  # the SCS page's measures (:mod:`.kkt`)
        out.update(self._certificates(solution))
        return out

    def reference_formulation(self, variant: str | None = None) -> Formulation | None:
        """(P) in cvxpy: one PSD variable per block, nonnegative vectors for LP blocks.

        ``y`` is read from the equality constraint's dual (cvxpy's sign is the negative of ours);
        ``Z`` is left to ``C - A*(y)``.
        """
        import cvxpy as cp

        if variant not in (None, "primal"):
            return None
        d = self.data
        blocks = [cp.Variable((s, s), PSD=True) if s > 0 else cp.Variable(-s, nonneg=True) for s in d.block_sizes]
        parts = [cp.vec(B, order="C") if s > 0 else B for B, s in zip(blocks, d.block_sizes)]
        x = cp.hstack(parts) if len(parts) > 1 else parts[0]
        cons = [d.A @ x == d.b]
        prob = cp.Problem(cp.Minimize(d.c @ x), cons)

        def extract() -> dict[str, np.ndarray]:
            X = d.stack([np.asarray(B.value, dtype=float) for B in blocks])
            y = -np.asarray(cons[0].dual_value, dtype=float).ravel()
            return {"X": X, "y": y}

        return Formulation(problem=prob, extract=extract)

    def certified_reference(self, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
        """Two interior-point solves that must agree, certified where ``tr(X)`` is fixed (:mod:`.reference`)."""
        from .reference import certified_reference

        return certified_reference(self, time_limit_s=time_limit_s, rtol=rtol)


#: What ``psdbench info sdp/standard`` and docs/families/sdp.md print.
DESCRIPTION = """\
Paper: SDPLIB 1.2 (Borchers, Optim. Methods Softw. 11:683-690, 1999), judged by the six DIMACS
errors (Mittelmann, Math. Prog. 95:407-430, 2003): a general SDP in standard form with
block-diagonal data (PSD blocks and diagonal / LP blocks, SDPA's negative block sizes).

    minimize    <C, X>                      (P)        maximize    b'y                    (D)
    subject to  A(X) = b, X psd                        subject to  A*(y) + Z = C, Z psd

A(X) = (<A_1, X>, ..., <A_m, X>), A*(y) = sum_i y_i A_i.  From an SDPA file: C = -F0, A_i = F_i,
b = c (the file's), X = the file's Y, y = -x, Z = the file's X; so the objective is minus SDPLIB's
published value.  The data are one sparse m x N matrix A over the stacked blocks (row i: the vec of
A_i, row-major per PSD block, the diagonal of an LP block), b (m,) and the stacked C (N,).

Variables a solution carries (stacked vectors in that layout):
  X      (N,)  the primal matrix, block by block (required unless a certificate is returned)
  y      (m,)  the dual multipliers (required with X)
  Z      (N,)  optional dual slack; default C - A*(y)
  y_ray  (m,)  optional certificate that (P) is infeasible: A*(y) nsd and b'y > 0
  X_ray  (N,)  optional certificate that (D) is infeasible: X psd, A(X) = 0, <C, X> < 0
  R      (n_psd, r)  instead of X: a factored point, the PSD blocks' factors stacked by rows,
               X_j = R_j R_j' (verified without forming X, in O(nnz(A) r) time and O(nnz + n r) memory)
  x_lp   (n_lp,)  with R: the LP blocks' entries (required when the data have LP blocks)
A factored point's metrics add dual_bound (b'y + T min(0, lambda_min(C - A*(y))), a lower bound on
the optimum where tr X <= T) and dual_bound_certified (1: certified, 0: a Lanczos estimate).

Verified when the largest of the six DIMACS errors (relative residuals of A(X) = b, X psd,
A*(y) + Z = C, Z psd, the duality gap and <X, Z>; the 7th DIMACS challenge's norms: err3 sums the
blocks' Frobenius norms, err6 only for X and Z in the cone) is at most tol; metrics flag_a
(> 1e-4) and flag_f (> 1e-2, failed), each error, the SCS page's relative KKT residuals and the
published value beside.
Reference: interior-point solves that must agree (else the most accurate decides); where the data
bound tr(X) <= T (rounded up), a certified lower bound b'y + T min(0, lambda_min(Z)), and where
A(I) is proportional to b an upper bound from a corrected feasible X (certified interval); else
best_verified.
"""


class SdpStandard:
    """``sdp/standard``: min <C, X> s.t. A(X) = b, X psd (block diagonal), with its dual."""

    name = "sdp/standard"
    kind = KIND
    family = KIND
    sense = "min"
    description = DESCRIPTION
    contract = SdpKind
    size_param = "n"
    params: dict[str, api.Param] = {
        "n": api.number(low=3, default=30, integer=True,
                        doc="generators only: graph order (files ignore it)"),
        "density": api.number(low=0.0, high=1.0, default=0.3, doc="generators only: edge probability"),
        "tol": api.number(low=0.0, default=1e-6, doc="verified when the largest DIMACS error is at most tol"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def build(self, dataset: Dataset, params: Mapping[str, Any], seed: int) -> SdpInstance:
        p = {**self.default_params, **params}
        pay = dict(dataset.payload)
        if "sdp" in pay:
            data = pay["sdp"]
        elif "path" in pay:
            from .sdpa_io import read_sdpa

            data = read_sdpa(pay["path"], name=dataset.name)
        elif "generator" in pay:
            from .generators import generate

            data = generate(str(pay["generator"]), int(p["n"]), float(p["density"]), int(seed))
        else:
            raise DataError(f"{self.name}: dataset {dataset.name} has no SDP (payload keys: sdp, path or generator)")
        published = pay.get("published")
        return SdpInstance(problem=self.name, dataset=dataset.name, params=p, seed=int(seed), data=data,
                           published=None if published is None else -float(published),
                           published_digits=pay.get("published_digits"),
                           expected=str(pay.get("expected", "optimal")))
