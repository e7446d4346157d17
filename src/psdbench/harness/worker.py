"""What runs inside a worker process: build the instance, run one solver (or the reference), verify.

The harness trusts no solver: the objective is recomputed by the instance, the returned point is
verified (PSD-ness, residuals), NaN/inf is ``diverged``, exceptions are ``error`` with traceback.
Timing (wall and CPU around ``solve`` only) and peak RSS are measured here, not by the solver.
"""

from __future__ import annotations

import resource
import time
import traceback
from typing import Any

import numpy as np

from ..api import Budget, Solution, Status

#: A reference interval [lower, upper] narrower than this, relative to max(1, |upper|), is certified.
CERTIFIED_RTOL = 1e-5


def _finite(solution: Solution) -> bool:
    return all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in solution.variables.values())


def _build(task: dict[str, Any]):
    from ..registry import discover

    reg = discover()
    problem = reg.problem(task["problem"])
    dataset = reg.load_dataset(task["dataset"])
    return reg, problem.build(dataset, task["instance_params"], task["seed"])


def run_cell(task: dict[str, Any]) -> dict[str, Any]:
    """Run one solver cell; always returns a result dict (exceptions become ``error``)."""
    out: dict[str, Any] = {"status": Status.ERROR.value, "message": ""}
    try:
        reg, instance = _build(task)
        solver = reg.solver(task["solver"])
        if not solver.supports(instance):
            return {"status": Status.SKIPPED.value, "message": f"{task['solver']} does not support this instance"}
        budget = Budget(time_limit_s=task.get("timeout"))
        r0 = resource.getrusage(resource.RUSAGE_SELF)
        t0 = time.perf_counter()
        solution = solver.solve(instance, budget, **task["solver_params"])
        wall = time.perf_counter() - t0
        r1 = resource.getrusage(resource.RUSAGE_SELF)
        out.update(
            wall_time_s=wall,
            cpu_time_s=(r1.ru_utime + r1.ru_stime) - (r0.ru_utime + r0.ru_stime),
            peak_rss_mb=r1.ru_maxrss / 1024.0,
            iterations=int(solution.iterations),
            trace=solution.trace,
        )
        status = Status(solution.status)
        metrics: dict[str, Any] = {f"solver_{k}": v for k, v in solution.info.items() if isinstance(v, (int, float, str))}
        if status is Status.SKIPPED or not solution.variables:
            out.update(status=status.value, message=solution.message, metrics=metrics)
            return out
        if not _finite(solution):
            out.update(status=Status.DIVERGED.value, message="returned point contains NaN or inf", metrics=metrics)
            return out
        feas = instance.verify(solution)
        metrics.update(instance.evaluate(solution))
        out.update(
            objective=instance.objective(solution),
            feasible=int(feas.ok),
            min_eig=feas.min_eig,
            max_residual=feas.max_residual,
            metrics={**metrics, **{f"verify_{k}": v for k, v in feas.details.items()}, "tolerances": feas.tolerances},
            message=solution.message,
        )
        if not feas.ok and status in (Status.OK, Status.MAX_ITER):
            status = Status.INFEASIBLE
            out["message"] = (solution.message + "; " if solution.message else "") + f"verification failed: {feas.details}"
        out["status"] = status.value
    except Exception as exc:  # recorded, never raised: failures are results
        out.update(status=Status.ERROR.value, message=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    return out


def run_reference(task: dict[str, Any]) -> dict[str, Any]:
    """Compute the certified reference of one instance (``certified_reference`` of the instance)."""
    try:
        _, instance = _build(task)
        if not hasattr(instance, "certified_reference"):
            return {"status": "none", "message": "instance offers no certified reference"}
        t0 = time.perf_counter()
        ref = instance.certified_reference(time_limit_s=task.get("timeout"), rtol=CERTIFIED_RTOL)
        ref["wall_time_s"] = time.perf_counter() - t0
        ref["status"] = str(ref.get("status", "ok"))
        return ref
    except Exception as exc:
        return {"status": "error", "message": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}
