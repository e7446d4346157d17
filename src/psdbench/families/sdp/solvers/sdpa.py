"""SDPA through ``sdpa-python`` (``sdp-sdpa``), and what its multiple-precision twin shares with it.

SDPA (``sdpap``, SeDuMi input) gets (P) directly: LP entries first, then each PSD block's vec
(:func:`sedumi_problem`); the free cone ``J`` holds the equality constraints.  It returns ``x`` (our
``X``) and ``y``; ``Z = C - A*(y)``.  SDPA's own threads (``numThreads``) follow the harness's BLAS
pin.  No time limit of its own: the harness kills it at the deadline.  :mod:`.sdpa_gmp` runs the
same input through SDPA-GMP in a child process.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, Solution, Status

from psdbench.families.sdp.solvers.native import _budget_s, _Native

#: what both SDPA backends return (sdpap gives no Z)
SDPA_RETURNS = ("X (N,), y (m,): the primal-dual point, stacked block by block (Z = C - A*(y)); X_ray (N,) and "
                "y_ray (m,) where SDPA reports infeasibility (both directions: the instance checks each)")


#: SDPA's own version as its compiled library prints it in its banner ("SDPA7 (Margaret/...) has been
#: developed by SDPA Project." followed by the version string)
_SDPA_BANNER = re.compile(rb"SDPA\d* \(Margaret[^\x00]*\x00+(\d+\.\d+\.\d+)\x00")


@functools.lru_cache(maxsize=1)
def sdpa_library_version() -> str:
    """The SDPA library's own version (``7.3.20``), read from the compiled module ``sdpa-python``
    ships (its banner string), not the wrapper's version; ``"absent"`` without ``sdpa-python``,
    ``"unknown"`` where it cannot be read."""
    import importlib.util

    if importlib.util.find_spec("sdpap") is None:  # a submodule's find_spec raises without its package
        return "absent"
    try:
        spec = importlib.util.find_spec("sdpap.sdpacall.sdpa")
    except ImportError:
        return "unknown"
    if spec is None or not spec.origin:
        return "unknown"
    try:
        m = _SDPA_BANNER.search(Path(spec.origin).read_bytes())
    except OSError:
        return "unknown"
    return m.group(1).decode() if m else "unknown"


class SdpSdpa(_Native):
    """SDPA (primal-dual interior point, ``sdpa-python``; GPL, an optional extra) on (P) in SeDuMi form.

    No time limit of its own: the harness kills it at the deadline.
    """

    name = "sdp-sdpa"
    module = "sdpap"
    package = "sdpa-python"
    extra = "sdpa"
    returns = SDPA_RETURNS
    params: dict[str, api.Param] = {
        "epsilonStar": api.number(low=0, default=1e-7, doc="SDPA's relative gap / feasibility tolerance"),
        "epsilonDash": api.number(low=0, default=1e-7, doc="SDPA's feasibility tolerance"),
        "maxIteration": api.number(low=1, default=100, integer=True, doc="iteration limit"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        """The wrapper's version and SDPA's own (:func:`sdpa_library_version`)."""
        return {self.package: super().library_versions()[self.package], "SDPA": sdpa_library_version()}

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        import sdpap

        p = {**self.default_params, **params}
        d = instance.data
        A, b, c, perm, n_lp, psd = sedumi_problem(d)
        K, J = sdpa_cones(n_lp, psd, d.m)
        opt = sdpa_options(p, budget)
        x, y, info, timeinfo, sdpainfo = sdpap.solve(A, b.reshape(-1, 1), sp.csc_matrix(c.reshape(-1, 1)), K, J, opt)
        x = np.asarray(x.todense() if sp.issparse(x) else x, dtype=float).ravel()
        y = np.asarray(y.todense() if sp.issparse(y) else y, dtype=float).ravel()
        phase = str(sdpainfo.get("phasevalue", info.get("phasevalue", "")))
        return sdpa_solution(d, perm, x, y, phase, int(sdpainfo.get("iteration", 0)),
                             {"budget_s": _budget_s(budget), "solve_time_s": float(timeinfo.get("sdpa", 0.0)),
                              "library": f"SDPA {sdpa_library_version()}"})


def blas_threads() -> int:
    """The thread count the harness pinned (``OMP_NUM_THREADS``), else the machine's CPUs."""
    import os

    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "")))
    except ValueError:
        return os.cpu_count() or 1


def sdpa_options(p: dict[str, Any], budget: Budget) -> dict[str, Any]:
    """``sdpap`` options from the adapter's parameters; SDPA's own threads follow the BLAS pin."""
    opt = {"print": "no", "epsilonStar": float(p["epsilonStar"]), "epsilonDash": float(p["epsilonDash"]),
           "maxIteration": int(budget.max_iter or p["maxIteration"]), "numThreads": blas_threads()}
    if "mpfPrecision" in p:
        opt["mpfPrecision"] = int(p["mpfPrecision"])
    return opt


def sedumi_problem(d: Any) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray, np.ndarray, int, list[int]]:
    """(P) in SeDuMi form for ``sdpap``: ``(A, b, c, perm, n_lp, psd)``, LP entries first."""
    perm, n_lp, psd = _sedumi_order(d)
    return d.A[:, perm].tocsc(), np.asarray(d.b, dtype=float), d.c_dense()[perm], perm, n_lp, psd


def sdpa_cones(n_lp: int, psd: list[int], m: int) -> tuple[Any, Any]:
    """``sdpap``'s cones ``K`` (the variable) and ``J`` (free: the equality constraints)."""
    from sdpap.symcone import SymCone

    return (SymCone(l=n_lp, s=tuple(psd)) if n_lp else SymCone(s=tuple(psd))), SymCone(f=m)


def sdpa_solution(d: Any, perm: np.ndarray, x: np.ndarray, y: np.ndarray, phase: str, iters: int,
                  info: dict[str, Any]) -> Solution:
    """The :class:`Solution` of an SDPA run (either backend) from its SeDuMi-ordered ``x`` and ``y``."""
    X = np.empty(d.N)
    X[perm] = x
    msg = f"SDPA phase {phase}"
    if "INF" in phase or "UNBD" in phase:  # sdpap's phase names refer to SDPA's internal pair:
        # return both directions; the instance checks each certificate from the data
        return Solution(variables={"X_ray": X, "y_ray": y}, status=Status.INFEASIBLE, iterations=iters,
                        info={**info, "status": phase}, message=msg)
    # judged by its point, whatever the phase (pdFEAS, pFEAS, noINFO): the phase is kept beside
    return Solution(variables={"X": X, "y": y}, status=Status.OK, iterations=iters,
                    info={**info, "status": phase, "sdpa_phase": phase}, message="" if phase == "pdOPT" else msg)


def _sedumi_order(d: Any) -> tuple[np.ndarray, int, list[int]]:
    """Column permutation putting LP entries first, then each PSD block's vec (SeDuMi's order)."""
    off = d.offsets
    lp = [np.arange(off[j], off[j + 1]) for j, s in enumerate(d.block_sizes) if s < 0]
    ps = [np.arange(off[j], off[j + 1]) for j, s in enumerate(d.block_sizes) if s > 0]
    perm = np.concatenate(lp + ps).astype(np.int64)
    return perm, int(sum(-s for s in d.block_sizes if s < 0)), [s for s in d.block_sizes if s > 0]
