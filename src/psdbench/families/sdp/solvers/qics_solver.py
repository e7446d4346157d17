"""``sdp-qics``: QICS (K. He, J. Saunderson and H. Fawzi, "QICS: Quantum Information Conic Solver",
2024; PyPI ``qics``, an optional extra), a primal-dual interior-point method for conic programs, on (P).

QICS's standard form is ``min c'x s.t. b - A x = 0, h - G x in K`` with dual ``max -b'y - h'z s.t.
c + A'y + G'z = 0, z in K*``.  It represents a symmetric matrix by its full (row-major) vector, the
layout of :mod:`.data`, so (P) goes in as it is: ``x`` our stacked ``X``, ``A``, ``b``, ``c`` as
they are, ``G = -I`` and ``h = 0`` (QICS's defaults: ``x in K``), ``K`` the blocks in order
(``NonNegOrthant`` for an LP block, ``PosSemidefinite`` for a PSD block).  Then ``z = c + A'y_q``
is our ``Z`` and ``y = -y_q``.  Its per-iteration log (``verbose = 2``) gives the trace's primal and
dual objectives (:mod:`.progress`).  Numba compiles its kernels on first use: ``warm_up`` solves a
tiny problem first.
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Solution, Status

from psdbench.families.sdp.solvers.child import captured_stdout
from psdbench.families.sdp.solvers.native import _budget_s, _Native, memory_failure, returned_status

#: one iteration line of QICS's log: k, mu, tau/kappa | p_obj d_obj gap | p_feas d_feas | time
_LINE = re.compile(r"^\s*(\d+)\s+\S+\s+\S+\s+\|\s+(\S+)\s+(\S+)\s+(\S+)\s+\|\s+\S+\s+\S+\s+\|\s+(\S+)\s*$")


def qics_progress(text: str) -> list[dict[str, float]]:
    """Trace points ``{"t", "iter", "objective", "dual_objective", "solver_gap"}`` from QICS's log.

    ``solver_gap`` is QICS's printed gap (its own relative definition, ``min(<s, z>, |p - d|)`` over
    ``max(tau, min(|p|, |d|))``): the objectives are printed to 4 digits, too few for a relative gap
    below 1e-4.
    """
    out = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            try:
                k, p, d, g, t = (float(v) for v in m.groups())
            except ValueError:
                continue
            out.append({"t": t, "iter": k, "objective": p, "dual_objective": d, "solver_gap": g})
    return out


class SdpQics(_Native):
    """QICS (primal-dual interior point for conic programs, Python with Numba) on (P)."""

    name = "sdp-qics"
    module = "qics"
    package = "qics"
    extra = "qics"
    params: dict[str, api.Param] = {
        "tol_gap": api.number(low=0, default=1e-8, doc="QICS's relative gap tolerance"),
        "tol_feas": api.number(low=0, default=1e-8, doc="QICS's relative feasibility tolerance"),
        "max_iter": api.number(low=1, default=100, integer=True, doc="iteration limit"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def warm_up(self, instance: Any) -> None:
        """Compile QICS's Numba kernels (untimed): a tiny SDP with a PSD and an LP block, then one iteration
        on the cell's instance (Numba compiles for the structure it meets)."""
        from types import SimpleNamespace

        from psdbench.families.sdp.data import from_blocks

        E = [np.diag(np.eye(3)[i]) for i in range(3)]
        d = from_blocks((3, -2), [np.ones((3, 3)) - 2 * np.eye(3), np.ones(2)],
                        [[E[i], np.zeros(2)] for i in range(3)] + [[np.zeros((3, 3)), np.ones(2)]], [1.0, 1.0, 1.0, 1.0])
        self.solve(SimpleNamespace(data=d), Budget.seconds(60))
        if instance is not None and getattr(instance, "data", None) is not None:
            self.solve(instance, Budget.seconds(60, max_iter=1))  # the kernels this instance's structure needs

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        import qics

        p = {**self.default_params, **params}
        d = instance.data
        cones = [qics.cones.PosSemidefinite(s) if s > 0 else qics.cones.NonNegOrthant(-s) for s in d.block_sizes]
        left = budget.remaining()
        info_b = {"budget_s": _budget_s(budget)}
        try:
            with captured_stdout() as out:
                model = qics.Model(c=d.c_dense().reshape(-1, 1), A=d.A.tocsr(),
                                   b=np.asarray(d.b, dtype=float).reshape(-1, 1), cones=cones)
                res = qics.Solver(model, max_iter=int(budget.max_iter or p["max_iter"]),
                                  max_time=max(left, 1e-3) if left is not None else 3600.0,
                                  tol_gap=float(p["tol_gap"]), tol_feas=float(p["tol_feas"]), verbose=2).solve()
        except MemoryError as exc:
            return memory_failure(f"QICS: MemoryError {exc}".strip(), info=info_b)
        word = f"{res['sol_status']} ({res['exit_status']})"
        info = {**info_b, "status": word, "log": out.text, "solve_time_s": float(res.get("solve_time", np.nan))}
        iters = int(res.get("num_iter", 0) or 0)
        x = np.asarray(res["x_opt"], dtype=float).ravel()
        y = np.asarray(res["y_opt"], dtype=float).ravel()
        z = np.asarray(res["z_opt"].vec, dtype=float).ravel()
        status = str(res["sol_status"])
        trace = qics_progress(out.text)
        if status in ("pinfeas", "near_pinfeas"):  # (P) infeasible: A'y_q = z psd, -b'y_q > 0
            return Solution(variables={"y_ray": -y}, status=Status.INFEASIBLE, iterations=iters, info=info,
                            trace=trace, message=f"QICS: {word}")
        if status in ("dinfeas", "near_dinfeas"):  # (D) infeasible: x in K, A x = 0, c'x < 0
            return Solution(variables={"X_ray": x}, status=Status.INFEASIBLE, iterations=iters, info=info,
                            trace=trace, message=f"QICS: {word}")
        st = Status.TIMEOUT if res["exit_status"] == "max_time" else returned_status(budget)
        return Solution(variables={"X": x, "y": -y, "Z": z}, status=st, iterations=iters, info=info,
                        trace=trace, message="" if status == "optimal" else f"QICS: {word}")
