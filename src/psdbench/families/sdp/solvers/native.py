"""Native adapters: SCS, Clarabel and CVXOPT through their own Python APIs, no cvxpy (SDPA: :mod:`.sdpa`).

SCS and Clarabel get the dual form ``min -b'y s.t. svec(C) - sum_i y_i svec(A_i) in K`` (``K``:
the nonnegative orthant of the LP blocks, then one PSD triangle cone per PSD block, in each
solver's svec convention, :mod:`.svec`).  Their cone multiplier is ``svec(X)``, the slack
``svec(Z)``; ``sdp-scs`` takes (P) too (``form = "primal"``).  CVXOPT (``solvers.sdp``) gets the
dual form with full column-major matrices.

Budget: SCS (``time_limit_secs``) and Clarabel (``time_limit`` and a termination callback checking
the deadline every iteration) stop at the budget; CVXOPT has no time limit and is killed by the
harness at its deadline.  SCS's curve: its Python API has no per-iteration callback, so with
``chunk_iters > 0`` SCS runs in chunks of that many iterations, warm-started from the previous
chunk (the factorization is kept), and each chunk's point is recorded; with ``chunk_iters = 0``
(default, one uninterrupted run) only the final point is recorded.  Clarabel records its own
per-iteration primal and dual costs in ``trace`` (its callback sees no iterate, so the curve is the
final point).

Infeasibility: a solver that reports its problem infeasible returns the certificate it found:
``y_ray`` (P infeasible) or ``X_ray`` (D infeasible), which the instance checks from the data.
"""

from __future__ import annotations

import time
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench import api
from psdbench.api import Budget, Solution, Status, TraceRecorder

from psdbench.families.sdp import KIND
from psdbench.families.sdp.solvers.child import captured_stdout
from psdbench.families.sdp.errors import dimacs_errors
from psdbench.families.sdp.section.progress import scs_progress
from psdbench.families.sdp.solvers.svec import stacked_svec


def _version(pkg: str) -> str:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return "absent"


class _Native:
    """Common parts: kind, availability, library versions."""

    name = ""
    module = ""
    package = ""
    kinds: tuple[str, ...] = (KIND,)
    returns = ("X (N,), y (m,), Z (N,): the primal-dual point, stacked block by block; "
               "y_ray (m,) or X_ray (N,): an infeasibility certificate where the solver reports one")
    params: dict[str, api.Param] = {}
    default_params: dict[str, Any] = {}

    def library_versions(self) -> dict[str, str]:
        return {self.package: _version(self.package)}

    extra = ""  # the optional extra that installs the package ("": a core dependency)

    def skip_reason(self, instance: Any) -> str | None:
        """Why the solver does not run: its package is not installed."""
        import importlib.util

        if importlib.util.find_spec(self.module) is not None:
            return None
        return api.missing_extra(self.package, self.extra) if self.extra else f"{self.package} is not installed"

    def supports(self, instance: Any) -> bool:
        return self.skip_reason(instance) is None


def _budget_s(budget: Budget) -> float:
    """Seconds the cell was given (``budget.time_limit_s``), for the report's time limit; NaN if unknown."""
    v = getattr(budget, "time_limit_s", None)
    return float(v) if isinstance(v, (int, float)) else float("nan")


def returned_status(budget: Budget) -> Status:
    """The status of a returned point: ``timeout`` past the deadline, else ``ok``, whatever the solver's stop.

    A point is judged by its DIMACS errors (the harness's verification), not by the phase or status
    the solver ended in (Mittelmann's rule); the solver's own word goes into ``info["status"]`` and
    the message.
    """
    return Status.TIMEOUT if budget.expired() else Status.OK


#: Message prefix of a solve that ran out of memory (status ``error``, one line, no traceback).
OUT_OF_MEMORY = "out of memory"


def memory_failure(said: str, iterations: int = 0, info: dict[str, Any] | None = None) -> Solution:
    """A memory failure, recorded as one: status ``error``, message ``"out of memory: <said>"`` (one line)."""
    line = (str(said).strip().splitlines() or [""])[0]
    return Solution(variables={}, status=Status.ERROR, iterations=iterations,
                    info={**(info or {}), "status": OUT_OF_MEMORY}, message=f"{OUT_OF_MEMORY}: {line}")


def dual_form(data: Any, order: str) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray, sp.csr_matrix, int, list[int]]:
    """``(G, h, q, T, n_lp, psd)``: ``s = h - G y in K`` with ``G = T A'``, ``h = T c``, ``q = -b``."""
    T, n_lp, psd = stacked_svec(data.block_sizes, order)
    G = (T @ data.A.T).tocsc()
    h = np.asarray(T @ data.c_dense()).ravel()
    return G, h, -np.asarray(data.b, dtype=float), T, n_lp, psd


def scs_primal_form(data: Any) -> tuple[sp.csc_matrix, np.ndarray, np.ndarray, sp.csr_matrix, int, list[int]]:
    """(P) for SCS: ``x = svec(X)``, ``[G'; -I] x + s = [b; 0]``, ``s`` in ``{0}^m x K``, cost ``h``.

    ``G``, ``h`` as in :func:`dual_form`.  SCS's dual variable ``[y1; y2]`` gives ``y = -y1`` and
    ``svec(Z) = y2 = h + G y1`` (SCS's dual ``A'y + c = 0``).
    """
    G, h, _, T, n_lp, psd = dual_form(data, "scs")
    D = G.shape[0]
    A = sp.vstack([G.T, -sp.identity(D, format="csr")], format="csc")
    return A, np.concatenate([np.asarray(data.b, dtype=float), np.zeros(D)]), h, T, n_lp, psd


class SdpScs(_Native):
    """SCS 3 (ADMM on the homogeneous self-dual embedding) on the dual form (or (P)); stops at the budget."""

    name = "sdp-scs"
    module = "scs"
    package = "scs"
    params: dict[str, api.Param] = {
        "eps_abs": api.number(low=0, default=1e-4, doc="SCS eps_abs"),
        "eps_rel": api.number(low=0, default=1e-4, doc="SCS eps_rel"),
        "max_iters": api.number(low=1, default=100000, integer=True, doc="ADMM iteration limit"),
        "chunk_iters": api.number(low=0, default=0, integer=True,
                                  doc="record a point every chunk_iters iterations (warm-started chunks); 0: final point only"),
        "form": api.choice("dual", "primal", default="dual",
                           doc="what SCS is given: the dual form (variables y, slack svec(Z)) or (P) "
                               "(variables svec(X), as cvxpy hands it over)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        import scs

        p = {**self.default_params, **params}
        d = instance.data
        primal = p["form"] == "primal"
        if primal:
            A, b, c, T, n_lp, psd = scs_primal_form(d)
            cones = {"z": d.m, "l": n_lp, "s": psd}
        else:
            A, b, q, T, n_lp, psd = dual_form(d, "scs")
            c, cones = q, {"l": n_lp, "s": psd}
        total = int(budget.max_iter or p["max_iters"])
        chunk = int(p["chunk_iters"]) or total
        left = budget.remaining()
        settings = dict(eps_abs=float(p["eps_abs"]), eps_rel=float(p["eps_rel"]), max_iters=min(chunk, total),
                        verbose=True, time_limit_secs=max(left, 1e-3) if left is not None else 0.0)
        with captured_stdout() as head:  # SCS prints its log's header as it sets up
            solver = scs.SCS({"A": A, "b": b, "c": c}, cones, **settings)

        def point(sol: dict[str, Any]) -> dict[str, np.ndarray]:
            if primal:
                return {"X": T.T @ sol["x"], "y": -np.array(sol["y"][:d.m]), "Z": T.T @ sol["y"][d.m:]}
            return {"X": T.T @ sol["y"], "y": np.array(sol["x"]), "Z": T.T @ sol["s"]}

        rec = TraceRecorder(budget)
        done, sol, logs, progress = 0, None, [head.text], []
        while done < total:
            start = rec.elapsed()
            with captured_stdout() as out:  # SCS's verbose log: its progress every few hundred iterations
                sol = solver.solve(warm_start=sol is not None)
            logs.append(out.text)
            progress += scs_progress(out.text, start, done)
            info = sol["info"]
            done += int(info["iter"])
            code = int(info["status_val"])  # 1 solved, 2 inaccurate (a limit reached), <0 infeasible / failed
            if chunk < total and sol["x"] is not None:
                pt = point(sol)
                errs = dimacs_errors(d, pt["X"], pt["y"], pt["Z"]).err  # the chunk's point, for the progress chart
                rec.add(objective=float(d.c_dense() @ pt["X"]), variables=pt, iter=done,
                        **{f"err{k + 1}": float(abs(e)) for k, e in enumerate(errs)})
            if code != 2 or budget.expired() or int(info["iter"]) < chunk:
                break
        info = sol["info"]
        status, code = str(info["status"]), int(info["status_val"])
        trace = sorted(rec.points + progress, key=lambda q: q["t"])  # its progress, whatever the stop
        out_info = {"budget_s": _budget_s(budget), "status": status, "log": "".join(logs), "scs_status": status, "setup_time_s": info["setup_time"] / 1e3,
                    "solve_time_s": info["solve_time"] / 1e3, "form": p["form"]}
        # SCS's "primal infeasible" (-2, -7) is of the form it was given: on the dual form it is our
        # (D), whose certificate is an X; on (P) it is ours, certified by -y1
        if code in (-2, -7):
            ray = {"y_ray": -np.array(sol["y"][:d.m])} if primal else {"X_ray": T.T @ sol["y"]}
            return Solution(variables=ray, status=Status.INFEASIBLE, iterations=done, info=out_info, trace=trace,
                            message=f"SCS: {status}")
        if code in (-1, -6):
            ray = {"X_ray": T.T @ sol["x"]} if primal else {"y_ray": np.array(sol["x"])}
            return Solution(variables=ray, status=Status.INFEASIBLE, iterations=done, info=out_info, trace=trace,
                            message=f"SCS: {status}")
        variables = point(sol)
        return Solution(variables=variables, status=returned_status(budget), iterations=done, info=out_info,
                        trace=trace, iterates=rec.finish(variables),
                        message="" if code == 1 else f"SCS: {status}")


class SdpClarabel(_Native):
    """Clarabel (primal-dual interior point) on the dual form; chordal decomposition on (its default)."""

    name = "sdp-clarabel"
    module = "clarabel"
    package = "clarabel"
    params: dict[str, api.Param] = {
        "tol_gap_abs": api.number(low=0, default=1e-8, doc="Clarabel tol_gap_abs"),
        "tol_gap_rel": api.number(low=0, default=1e-8, doc="Clarabel tol_gap_rel"),
        "tol_feas": api.number(low=0, default=1e-8, doc="Clarabel tol_feas"),
        "max_iter": api.number(low=1, default=200, integer=True, doc="iteration limit"),
        "chordal": api.Param(default=True, types=(bool,),
                             doc="Clarabel's chordal decomposition (its default: on)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        import clarabel

        p = {**self.default_params, **params}
        d = instance.data
        G, h, q, T, n_lp, psd = dual_form(d, "clarabel")
        cones = ([clarabel.NonnegativeConeT(n_lp)] if n_lp else []) + [clarabel.PSDTriangleConeT(s) for s in psd]
        st = clarabel.DefaultSettings()
        st.verbose = False
        for k in ("tol_gap_abs", "tol_gap_rel", "tol_feas"):
            setattr(st, k, float(p[k]))
        st.max_iter = int(budget.max_iter or p["max_iter"])
        st.chordal_decomposition_enable = bool(p["chordal"])
        left = budget.remaining()
        if left is not None:
            st.time_limit = max(left, 1e-3)
        P = sp.csc_matrix((d.m, d.m))
        solver = clarabel.DefaultSolver(P, q, G, h, cones, st)
        t0, trace = time.perf_counter(), []

        def callback(info: Any) -> bool:
            trace.append({"t": time.perf_counter() - t0, "objective": -float(info.cost_primal),
                          "dual_objective": -float(info.cost_dual)})
            return bool(budget.expired())

        solver.set_termination_callback(callback)
        sol = solver.solve()
        status = str(sol.status)
        info = {"budget_s": _budget_s(budget), "status": status, "clarabel_status": status, "solve_time_s": float(sol.solve_time)}
        x, z, s = np.array(sol.x), np.array(sol.z), np.array(sol.s)
        if status in ("PrimalInfeasible", "AlmostPrimalInfeasible"):  # Clarabel's primal is our (D)
            return Solution(variables={"X_ray": T.T @ z}, status=Status.INFEASIBLE, iterations=int(sol.iterations),
                            info=info, message=f"Clarabel: {status}")
        if status in ("DualInfeasible", "AlmostDualInfeasible"):
            return Solution(variables={"y_ray": x}, status=Status.INFEASIBLE, iterations=int(sol.iterations),
                            info=info, message=f"Clarabel: {status}")
        variables = {"X": T.T @ z, "y": x, "Z": T.T @ s}
        out = Status.TIMEOUT if status in ("MaxTime", "CallbackTerminated") else returned_status(budget)
        return Solution(variables=variables, status=out, iterations=int(sol.iterations), trace=trace, info=info,
                        message="" if status == "Solved" else f"Clarabel: {status}")


class SdpCvxopt(_Native):
    """CVXOPT's ``solvers.sdp`` (primal-dual interior point; GPL, an optional extra) on the dual form.

    No time limit of its own: the harness kills it at the deadline.
    """

    name = "sdp-cvxopt"
    module = "cvxopt"
    package = "cvxopt"
    extra = "cvxopt"
    params: dict[str, api.Param] = {
        "abstol": api.number(low=0, default=1e-8, doc="CVXOPT abstol"),
        "reltol": api.number(low=0, default=1e-8, doc="CVXOPT reltol"),
        "feastol": api.number(low=0, default=1e-8, doc="CVXOPT feastol"),
        "maxiters": api.number(low=1, default=100, integer=True, doc="iteration limit"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        from cvxopt import matrix, solvers, spmatrix

        p = {**self.default_params, **params}
        d = instance.data
        off = d.offsets
        AT = d.A.T.tocsr()
        c_full = d.c_dense()

        def spm(M: sp.spmatrix) -> Any:
            M = M.tocoo()
            return spmatrix(M.data.tolist(), M.row.tolist(), M.col.tolist(), M.shape)

        lp_rows = [AT[off[j]:off[j + 1]] for j, s in enumerate(d.block_sizes) if s < 0]
        lp_h = [c_full[off[j]:off[j + 1]] for j, s in enumerate(d.block_sizes) if s < 0]
        Gs, hs = [], []
        for j, s in enumerate(d.block_sizes):
            if s > 0:  # row-major vec of a symmetric block is its column-major vec
                Gs.append(spm(AT[off[j]:off[j + 1]]))
                hs.append(matrix(c_full[off[j]:off[j + 1]].reshape(s, s)))
        kw: dict[str, Any] = {}
        if lp_rows:
            kw["Gl"] = spm(sp.vstack(lp_rows))
            kw["hl"] = matrix(np.concatenate(lp_h))
        opts = {"show_progress": False, "abstol": float(p["abstol"]), "reltol": float(p["reltol"]),
                "feastol": float(p["feastol"]), "maxiters": int(budget.max_iter or p["maxiters"])}
        try:
            res = solvers.sdp(matrix(-np.asarray(d.b, dtype=float)), Gs=Gs, hs=hs, options=opts, **kw)
        except MemoryError as exc:
            return memory_failure(f"CVXOPT: MemoryError {exc}".strip(), info={"budget_s": _budget_s(budget)})
        except OverflowError as exc:  # its dense matrices: "number of elements exceeds INT_MAX"
            if "exceeds" not in str(exc):
                raise
            return memory_failure(f"CVXOPT: OverflowError: {exc}", info={"budget_s": _budget_s(budget)})
        status = str(res["status"])
        zl = iter(np.asarray(res["zl"]).ravel() if res.get("zl") is not None else [])
        zs = iter(res.get("zs") or [])
        sl = iter(np.asarray(res["sl"]).ravel() if res.get("sl") is not None else [])
        ss = iter(res.get("ss") or [])

        def assemble(lp_it: Any, psd_it: Any) -> np.ndarray | None:
            lp_all = np.asarray(list(lp_it))
            parts, k = [], 0
            for s in d.block_sizes:
                if s < 0:
                    parts.append(lp_all[k:k - s])
                    k -= s
                else:
                    M = next(psd_it, None)
                    if M is None:
                        return None
                    M = np.array(M)
                    parts.append(((M + M.T) / 2).ravel())
            return np.concatenate(parts)

        X = assemble(zl, zs)
        iters = int(res.get("iterations", 0) or 0)
        info = {"budget_s": _budget_s(budget), "status": status, "cvxopt_status": status}
        if status == "primal infeasible":  # CVXOPT's primal is our (D): z is a ray of (P)
            return Solution(variables={"X_ray": X}, status=Status.INFEASIBLE, iterations=iters, info=info,
                            message=f"CVXOPT: {status}")
        if status == "dual infeasible":
            return Solution(variables={"y_ray": np.asarray(res["x"]).ravel()}, status=Status.INFEASIBLE,
                            iterations=iters, info=info, message=f"CVXOPT: {status}")
        if res.get("x") is None or X is None:
            return Solution(variables={}, status=Status.ERROR, iterations=iters, info=info, message=f"CVXOPT: {status}")
        Z = assemble(sl, ss)
        variables = {"X": X, "y": np.asarray(res["x"]).ravel()}
        if Z is not None:
            variables["Z"] = Z
        return Solution(variables=variables, status=returned_status(budget), iterations=iters, info=info,
                        message="" if status == "optimal" else f"CVXOPT: {status}")
