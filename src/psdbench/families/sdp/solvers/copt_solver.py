"""``sdp-copt``: COPT (Cardinal Optimizer 8, its interior-point SDP solver; PyPI ``coptpy``, optional
and proprietary) on (P) through its Python API.

(P) is built as COPT models it: one PSD variable per PSD block, nonnegative columns for the LP
entries, one constraint per ``A_i`` (``sum_j <A_ij, X_j> + a_i' x = b_i``), symmetric matrices
given by their lower triangle (``addSparseMat``); a 1 x 1 block, which COPT refuses as a PSD variable, is a nonnegative column
like an LP entry.  COPT returns each PSD variable's value and
reduced cost packed by columns of the lower triangle, and the constraints' duals: ``X``, ``Z`` and
``y`` in our signs (``Z = C - A*(y)``, checked by the DIMACS errors in the tests).

Without a license file COPT runs "with size limitations for non-commercial use"; a problem past
that limit is ``skipped`` with COPT's own reason (found by building the model, before any solve).
The time limit is COPT's ``TimeLimit``; its threads follow the harness's BLAS pin.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Solution, Status

from psdbench.families.sdp.solvers.child import captured_stdout
from psdbench.families.sdp.solvers.native import _budget_s, _Native, memory_failure, returned_status
from psdbench.families.sdp.solvers.sdpa import blas_threads

#: COPT's model status codes (its reference manual) and their words
STATUS = {0: "unstarted", 1: "optimal", 2: "infeasible", 3: "unbounded", 4: "infeasible or unbounded",
          5: "numerical", 6: "node limit", 7: "imprecise", 8: "timeout", 9: "unfinished", 10: "interrupted"}


#: COPT's size limit without a license, as its log states it ("limited to 2000 variables and 2000 constraints")
SIZE_LIMIT = 2000


def _size_limited(exc: Exception) -> bool:
    text = str(exc).lower()
    return "size" in text and "limit" in text or "license" in text


def _lower_packed(vals: list[float], s: int) -> np.ndarray:
    """The full row-major ``vec`` of a symmetric ``s x s`` matrix from its lower triangle packed by columns."""
    M = np.zeros((s, s))
    r, c = np.tril_indices(s)
    order = np.lexsort((r, c))  # by column, then row
    M[r[order], c[order]] = vals
    return (M + np.tril(M, -1).T).ravel()


class SdpCopt(_Native):
    """COPT 8 (primal-dual interior point for SDP; proprietary, size-limited without a license) on (P)."""

    name = "sdp-copt"
    module = "coptpy"
    package = "coptpy"
    extra = "copt"
    params: dict[str, api.Param] = {
        "tol": api.number(low=0, default=1e-8, doc="COPT's RelGap, FeasTol and DualTol"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def _model(self, d: Any, p: dict[str, Any], budget: Budget | None) -> tuple[Any, Any, list[Any], Any, list[Any]]:
        """``(env, model, psd variables, lp variables, constraints)`` of (P)."""
        import coptpy as cp
        from coptpy import COPT

        with captured_stdout():
            env = cp.Envr()
            m = env.createModel(d.name or "sdp")
        m.setParam("Logging", 1)
        m.setParam("LogToConsole", 1)
        m.setParam("Threads", blas_threads())
        for k in ("RelGap", "FeasTol", "DualTol"):
            m.setParam(k, float(p["tol"]))
        left = budget.remaining() if budget is not None else None
        if left is not None:
            m.setParam("TimeLimit", max(left, 1e-3))
        off, c = d.offsets, d.c_dense()
        A = d.A.tocsc()
        psd = [(j, s) for j, s in enumerate(d.block_sizes) if s > 1]  # COPT refuses 1 x 1 PSD variables:
        lp_idx = np.concatenate([np.arange(off[j], off[j + 1]) for j, s in enumerate(d.block_sizes) if s < 2] or
                                [np.zeros(0, dtype=np.int64)])
        X = [m.addPsdVars(s) for _, s in psd]  # (a 1 x 1 block is a nonnegative column, as an LP entry)
        x = m.addVars(len(lp_idx), lb=0.0) if len(lp_idx) else None
        xs = [x[k] for k in range(len(lp_idx))] if x is not None else []

        def mat(vec: np.ndarray, s: int) -> Any:
            M = vec.reshape(s, s)
            r, q = np.nonzero(np.tril(M))
            return m.addSparseMat(s, r.tolist(), q.tolist(), M[r, q].tolist())

        obj = cp.PsdExpr()
        for (j, s), V in zip(psd, X):
            if c[off[j]:off[j + 1]].any():
                obj += mat(c[off[j]:off[j + 1]], s) * V
        for k, col in enumerate(lp_idx):
            if c[col]:
                obj += float(c[col]) * xs[k]
        m.setObjective(obj, COPT.MINIMIZE)
        rows = d.A.tocsr()
        cons = []
        for i in range(d.m):
            e = cp.PsdExpr()
            row = np.asarray(rows[i].todense()).ravel()
            for (j, s), V in zip(psd, X):
                blk = row[off[j]:off[j + 1]]
                if blk.any():
                    e += mat(blk, s) * V
            for k, col in enumerate(lp_idx):
                if row[col]:
                    e += float(row[col]) * xs[k]
            cons.append(m.addConstr(e == float(d.b[i])))
        del A
        return env, m, X, xs, cons

    def licensed(self) -> bool:
        """Whether COPT found a license (its start-up log does not say "No license found")."""
        if "_licensed" not in self.__dict__:
            import coptpy as cp

            with captured_stdout() as out:
                cp.Envr()
            self.__dict__["_licensed"] = "no license found" not in out.text.lower()
        return bool(self.__dict__["_licensed"])

    def skip_reason(self, instance: Any) -> str | None:
        why = super().skip_reason(instance)
        if why is not None:
            return why
        d = instance.data
        cols = sum(1 for s in d.block_sizes if s > 1) + sum(abs(s) for s in d.block_sizes if s < 2)
        if not self.licensed() and (d.m > SIZE_LIMIT or cols > SIZE_LIMIT):
            return (f"COPT without a license is limited to {SIZE_LIMIT} variables and {SIZE_LIMIT} constraints "
                    f"(its log); this problem has {d.m} constraints and {cols} variables (PSD blocks and scalars)")
        return None

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        import coptpy as cp

        p = {**self.default_params, **params}
        d = instance.data
        info: dict[str, Any] = {"budget_s": _budget_s(budget)}
        try:
            with captured_stdout() as out:
                env, m, X, xs, cons = self._model(d, p, budget)
                m.solve()
        except MemoryError as exc:
            return memory_failure(f"COPT: MemoryError {exc}".strip(), info=info)
        except cp.CoptError as exc:
            if _size_limited(exc):
                return Solution(variables={}, status=Status.SKIPPED, info={**info, "status": "size limit"},
                                message=f"COPT without a license: {str(exc).strip().splitlines()[0]}")
            raise
        code = int(m.status)
        word = STATUS.get(code, f"status {code}")
        info.update(status=word, log=out.text, solve_time_s=float(m.getAttr("SolvingTime")))
        iters = int(m.getAttr("BarrierIter"))
        if code in (2, 3, 4):
            return Solution(variables={}, status=Status.INFEASIBLE, iterations=iters, info=info,
                            message=f"COPT: {word}")
        if code in (0, 10) or not X and not xs:
            return Solution(variables={}, status=Status.ERROR, iterations=iters, info=info, message=f"COPT: {word}")
        vals, red = m.getPsdValues(), m.getPsdRedcosts()
        lpv, lpr = (m.getValues(), m.getRedcosts()) if xs else ([], [])
        Xv, Zv = np.zeros(d.N), np.zeros(d.N)
        off, k, q = d.offsets, 0, 0
        for j, s in enumerate(d.block_sizes):
            if s > 1:
                t = s * (s + 1) // 2
                Xv[off[j]:off[j + 1]] = _lower_packed(vals[k:k + t], s)
                Zv[off[j]:off[j + 1]] = _lower_packed(red[k:k + t], s)
                k += t
            else:
                w = abs(s)
                Xv[off[j]:off[j + 1]] = lpv[q:q + w]
                Zv[off[j]:off[j + 1]] = lpr[q:q + w]
                q += w
        y = np.array([con.getInfo("Dual") for con in cons], dtype=float)
        st = Status.TIMEOUT if code == 8 else returned_status(budget)
        # measured: without a license, COPT returns all-zero duals on mcp500 (its X and Z are right); the
        # point is returned as given and its err3 shows it
        note = "; no constraint duals returned (all zero)" if not y.any() and np.any(d.b) else ""
        return Solution(variables={"X": Xv, "y": y, "Z": Zv}, status=st, iterations=iters, info=info,
                        message=("" if code == 1 else f"COPT: {word}") + note)
