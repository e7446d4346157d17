"""Progress of first-order solvers and the per-cell run table of the SDP section.

A hand-written ADMM (Wen, Goldfarb and Yin's alternating direction method on the dual, a solver a
new user might write) reports the DIMACS errors of its iterates in its trace; run through the
harness's worker and the report, its convergence shows in the section although its point does not
verify.  SCS's verbose log becomes progress points whose relative gap is exact."""

from __future__ import annotations

import gzip
import time

import numpy as np
import pytest

from psdbench.api import Budget, Dataset, Solution, Status
from psdbench.families.sdp.errors import dimacs_errors
from psdbench.families.sdp.solvers.native import SdpScs
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.section.progress import largest_error, scs_progress
from psdbench.harness.store import solutions
from psdbench.harness.store.results import CellResult
from psdbench.harness.workers.shared import WorkerCache
from psdbench.harness.store.db import Store
from psdbench.harness.workers.worker import run_cell
from psdbench.registry import discover
from psdbench.report import write_report


class TinyAdmm:
    """Dual ADMM (Z. Wen, D. Goldfarb, W. Yin, Math. Prog. Comp. 2:203-230, 2010, Algorithm 1), dense, mu fixed."""

    name = "tiny-admm"
    kinds = ("sdp",)
    params: dict = {}
    default_params: dict = {}

    def supports(self, instance) -> bool:
        return True

    def library_versions(self) -> dict:
        return {}

    def solve(self, instance, budget, iters: int = 40, mu: float = 1.0) -> Solution:
        d = instance.data
        A, b, c = d.A.toarray(), np.asarray(d.b, float), d.c_dense()
        AAT = A @ A.T
        X, Z = np.zeros(d.N), np.zeros(d.N)
        t0, trace = time.perf_counter(), []

        def psd(v):
            out = []
            for blk in d.split(v):
                if blk.ndim == 1:
                    out.append(np.maximum(blk, 0))
                else:
                    w, U = np.linalg.eigh((blk + blk.T) / 2)
                    out.append((U * np.maximum(w, 0)) @ U.T)
            return d.stack(out)

        for k in range(iters):
            y = -np.linalg.solve(AAT, mu * (A @ X - b) + A @ (Z - c))
            V = c - A.T @ y - mu * X
            Z = psd(V)
            X = (Z - V) / mu
            e = dimacs_errors(d, X, y, Z).err
            trace.append({"t": time.perf_counter() - t0, "iter": k + 1, **{f"err{j + 1}": float(abs(v)) for j, v in enumerate(e)}})
        return Solution(variables={"X": X, "y": y, "Z": Z}, status=Status.MAX_ITER, iterations=iters, trace=trace,
                        info={"status": "iteration limit", "log": "\n".join(str(p) for p in trace)})


def _inst(n=10):
    return SdpStandard().build(Dataset(name="sdp-gen/maxcut", payload={"generator": "maxcut"}),
                               {"n": n, "density": 0.4}, 0)


def test_the_admm_converges_by_its_own_report():
    """The test solver is a real method: its largest DIMACS error falls by orders of magnitude."""
    inst = _inst()
    sol = TinyAdmm().solve(inst, Budget(), iters=300)
    first, last = largest_error(sol.trace[0])[0], largest_error(sol.trace[-1])[0]
    assert last < 1e-3 * first
    want = inst.reference_formulation()
    want.problem.solve(solver="CLARABEL")
    assert inst.objective(sol) == pytest.approx(want.problem.value, rel=1e-4)


def test_progress_shows_before_the_point_verifies(tmp_path):
    reg = discover()
    reg.solvers["tiny-admm"] = TinyAdmm()
    cache = WorkerCache()
    cache._registry = reg
    db = tmp_path / "s.sqlite"
    store = Store(db)
    where = solutions.target(db, "r0")
    base = CellResult(run_id="r0", cell_key="k0", instance_key="i0", problem="sdp/standard", dataset="sdp-gen/maxcut",
                      instance_params={"n": 10, "density": 0.4}, seed=0, solver="tiny-admm",
                      solver_params={"iters": 25})
    out = run_cell({"result": base, "logs": where}, None, cache)
    assert out.status == Status.INFEASIBLE.value, out.message  # 25 iterations: rejected at 1e-6
    assert out.metrics["solver_status"] == "iteration limit"
    log = (db.parent / out.metrics["solver_log"]).read_bytes()
    assert gzip.decompress(log).decode().startswith("{'t'") and "log" not in out.metrics  # beside, not in the row
    errs = [largest_error(p)[0] for p in out.trace]
    assert len(errs) == 25 and errs[-1] < errs[0]
    store.write_result(out)
    paths = write_report(store, tmp_path / "rep", registry=reg)
    html = paths["html"].read_text()
    md = paths["markdown"].read_text()
    assert "Progress: the largest error each solver reported" in md
    assert "tiny-admm (iters=25) (DIMACS)" in html  # the chart's series of this solver configuration
    assert "iteration limit" in md and "[log](../s.solutions/r0/k0.log.gz)" in md


def test_scs_log_gives_progress_points_with_an_exact_relative_gap():
    text = ("     0| 2.23e+00  2.05e+00  1.93e+01  9.65e+00  1.00e-01  3.31e-02 \n"
            "   150| 4.93e-09  7.31e-10  3.85e-09  5.00e+00  1.00e-01  4.26e-02 \n")
    pts = scs_progress(text, t_offset=1.0, iter_offset=25)
    assert [p["iter"] for p in pts] == [25, 175] and pts[0]["t"] == pytest.approx(1.0331)
    # pobj, dobj = obj +- gap / 2: |pobj| + |dobj| = max(2 |obj|, gap)
    p, dd = 9.65 + 19.3 / 2, 9.65 - 19.3 / 2
    assert pts[0]["rel_gap"] == pytest.approx(19.3 / (1 + abs(p) + abs(dd)))
    inst = _inst(12)
    sol = SdpScs().solve(inst, Budget(), eps_abs=1e-7, eps_rel=1e-7, chunk_iters=50)
    kinds = {largest_error(p)[1] for p in sol.trace}
    assert kinds == {"DIMACS", "relative gap"} and "SCS" in sol.info["log"]
    dimacs = [p for p in sol.trace if largest_error(p)[1] == "DIMACS"]
    final = dimacs_errors(inst.data, sol.variables["X"], sol.variables["y"], sol.variables["Z"]).max_err
    assert largest_error(dimacs[-1])[0] == pytest.approx(final, rel=1e-9)


def test_log_links_are_relative_paths_never_external():
    from psdbench.report.fmt import inline_html

    assert inline_html("[log](../s.solutions/r0/k0.log.gz)") == '<a href="../s.solutions/r0/k0.log.gz">log</a>'
    for bad in ("[x](//example.org/a)", "[x](https://example.org/a)"):
        assert "<a " not in inline_html(bad)
