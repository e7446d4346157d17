"""What runs inside a worker process: build the instance, run one solver (or the reference), verify.

The harness trusts no solver: the objective is recomputed by the instance, the returned point is
verified (PSD-ness, residuals), NaN/inf is ``diverged``, exceptions are ``error`` with traceback.
Timing (wall and CPU around ``solve`` only) and the memory ``solve`` used are measured here, not by
the solver, its child processes included (:mod:`psdbench.harness.workers.meter`).

Every function here takes ``(task, emit, cache=None)``: ``task`` carries the cell (a :class:`CellResult` with
its identity filled in) and the deadline set by the runner (``deadline``, a ``time.monotonic()``
instant; ``timeout``, the seconds it is after the worker started; ``grace``); ``emit(message)``
sends a message to the runner over the worker's pipe (``None`` outside a worker process):

``("checkpoint", t, variables)``
    an iterate the solver's :class:`~psdbench.api.TraceRecorder` kept (``budget.checkpoint``),
    its :class:`~psdbench.api.Deferred` entries unevaluated (computed when it is scored);
``("solved", t, variables)``
    the point ``solve`` returned, before it is verified.  From then on the runner allows ``post``
    seconds (``task["post"]``) for verifying it and re-scoring the iterates; re-scoring stops
    half-way through that allowance.

The runner verifies the last of these with :func:`verify_checkpoints` if it has to kill the worker.

With ``task["solutions"]`` (:func:`psdbench.harness.store.solutions.target`'s folder and prefix), the
returned point (or the kept checkpoint) is written there after the cell is measured, outside the
timed interval, and the row's ``solution`` names the archive.

``cache`` is the :class:`~psdbench.harness.workers.shared.WorkerCache` of a long-lived worker (registry,
datasets and instances kept between cells, read-only); without it everything is built afresh,
and made read-only all the same.
"""

from __future__ import annotations

import math
import time
import traceback
from dataclasses import replace
from typing import Any, Callable, Mapping

import numpy as np

from psdbench.api import (REJECTED, SOLVER_INFEASIBLE, Budget, PsdbenchError, Solution, Status, certified_interval,
                   certified_reference, objective_allowance, point_mismatch, problem_sense, repair, resolve_iterate,
                   skip_reason, unreadable_point, warm_up)
from psdbench.api.tracing import thin
from psdbench.harness.floor import CERTIFIED_RTOL
from psdbench.harness.workers.meter import CellMeter
from psdbench.harness.store.results import OUT_OF_MEMORY_NOTE, CellResult, jsonable
from psdbench.harness.workers.shared import WorkerCache, freeze
from psdbench.harness.store.solutions import save as save_solution, save_log

Emit = Callable[[tuple], None]


def _finite(variables: Mapping[str, Any]) -> bool:
    return all(np.all(np.isfinite(np.asarray(v, dtype=float))) for v in variables.values())


def _build(cell: CellResult | Mapping[str, Any], cache: WorkerCache | None = None,
           dataset: Any = None) -> tuple[Any, Any, Any]:
    """``(registry, problem, instance)`` of a cell or an instance spec; the instance is read-only.

    With a ``cache``, the registry, dataset and instance (by ``instance_key``) are reused.
    ``dataset``: the dataset itself, shipped by the client (the Dask backend), used instead of
    loading it here.
    """
    get = cell.get if isinstance(cell, Mapping) else (lambda k: getattr(cell, k))
    if cache is None:
        from psdbench.registry import discover

        reg = discover()
        problem = reg.problem(get("problem"))
        ds = dataset if dataset is not None else reg.load_dataset(get("dataset"))
        return reg, problem, freeze(problem.build(ds, get("instance_params"), get("seed")))
    reg = cache.registry()
    problem = reg.problem(get("problem"))
    key = get("instance_key") if not isinstance(cell, Mapping) else None
    build = (lambda: problem.build(cache.dataset(get("dataset"), dataset), get("instance_params"), get("seed")))
    return reg, problem, (cache.instance(key, build) if key else freeze(build()))


def _thin(trace: Any) -> Any:
    """A solver's trace thinned to the points a curve can show (:func:`psdbench.api.tracing.thin`), for
    every solver, whether or not it used a :class:`~psdbench.api.TraceRecorder`; a trace that is not
    a list of points is stored as it came."""
    try:
        return thin(list(trace))
    except (TypeError, ValueError):
        return trace


def _budget(task: Mapping[str, Any], emit: Emit | None) -> Budget:
    """The cell's budget: the runner's deadline, and a checkpoint sink to the runner."""
    sink = None if emit is None else (lambda t, v: emit(("checkpoint", t, v)))
    return Budget(time_limit_s=task.get("timeout"), deadline=task.get("deadline"), grace_s=float(task.get("grace", 0.0)),
                  checkpoint=sink)


def score(instance: Any, variables: Mapping[str, Any], try_repair: bool = True) -> dict[str, Any] | None:
    """Objective and verification of one point, repaired (``api.repair``) if it fails.

    The point's :class:`~psdbench.api.Deferred` entries are computed first (``api.resolve_iterate``).
    Returns ``{"objective", "feasible", "repaired", "feas"}`` (``feas`` the :class:`Feasibility` of
    the scored point), or ``None`` for a point with NaN/inf or one the instance cannot score.
    """
    try:
        variables = resolve_iterate(instance, variables)
        if not _finite(variables):
            return None
        sol = Solution(variables=dict(variables))
        feas = instance.verify(sol)
        repaired = 0
        if not feas.ok and try_repair:
            fixed = repair(instance, sol)
            if fixed is not None and _finite(fixed.variables):
                sol, feas, repaired = fixed, instance.verify(fixed), 1
        obj = float(instance.objective(sol))
    except Exception:  # an iterate the instance cannot read is left out of the curve
        return None
    if not math.isfinite(obj):
        return None
    return {"objective": obj, "feasible": int(feas.ok), "repaired": repaired, "feas": feas}


def rescore(instance: Any, iterates: list[tuple[float, Mapping[str, Any]]], final: dict[str, Any] | None,
            final_variables: Mapping[str, Any] | None = None, until: float | None = None) -> list[dict[str, Any]]:
    """The ``curve`` column: sampled iterates re-scored by the instance, sorted by ``t``, ``final`` last.

    An iterate equal to the returned point (``final_variables``) is the ``final`` entry, not a
    second one.  Iterates are scored in time order until ``time.monotonic()`` passes ``until``
    (the later ones are then left out: every point shown is still re-scored).  Their
    :class:`~psdbench.api.Deferred` entries are computed here, after the timed interval.
    """
    pts = sorted(iterates, key=lambda p: p[0])
    if final is not None and pts and final_variables is not None:
        try:
            last = resolve_iterate(instance, pts[-1][1])
        except Exception:  # scored (and left out) below
            last = None
        if last is not None and _same(last, final_variables):
            pts = pts[:-1]
        elif last is not None:
            pts[-1] = (pts[-1][0], last)
    curve = []
    for t, v in pts:
        if until is not None and time.monotonic() > until:
            break
        s = score(instance, v)
        if s is not None:
            curve.append({"t": float(t), "objective": s["objective"], "feasible": s["feasible"],
                          "repaired": s["repaired"]})
    curve.sort(key=lambda p: p["t"])
    if final is not None:
        curve.append(final)
    return curve


def _keep(task: Mapping[str, Any], out: CellResult, variables: Mapping[str, Any] | None) -> CellResult:
    """``out`` with the point saved when the run keeps solutions (a failed write noted in the message)."""
    where = task.get("solutions")
    if not where or not variables:
        return out
    try:
        return replace(out, solution=save_solution(variables, tuple(where), out.cell_key))
    except (OSError, ValueError, TypeError) as exc:
        note = f"solution not saved: {type(exc).__name__}: {exc}"
        return replace(out, message=f"{out.message}; {note}" if out.message else note)


def _keep_log(task: Mapping[str, Any], out: CellResult, log: Any) -> CellResult:
    """``out`` with the solver's own log (``Solution.info["log"]``) written gzipped beside the store
    (``task["logs"]``) and its relative path in ``metrics["solver_log"]`` (a failed write noted)."""
    where = task.get("logs")
    if not where or not isinstance(log, str) or not log:
        return out
    try:
        return replace(out, metrics={**(out.metrics or {}), "solver_log": save_log(log, tuple(where), out.cell_key)})
    except OSError as exc:
        note = f"log not saved: {type(exc).__name__}: {exc}"
        return replace(out, message=f"{out.message}; {note}" if out.message else note)


def _same(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    return set(a) == set(b) and all(np.array_equal(np.asarray(a[k]), np.asarray(b[k])) for k in a)


def _measure(instance: Any, solution: Solution, out: CellResult, sense: str = "min") -> CellResult:
    """Verify, score and evaluate the returned point (status, objective, feasibility, metrics)."""
    status = Status(solution.status)
    metrics: dict[str, Any] = {f"solver_{k}": v for k, v in solution.info.items() if isinstance(v, (int, float, str))}
    if status is Status.SKIPPED or not solution.variables:
        if status in (Status.OK, Status.MAX_ITER):  # claims a point it did not return
            return replace(out, status=Status.ERROR.value, metrics=metrics,
                           message=f"solver returned status {status.value!r} with no variables: nothing to verify"
                                   + (f" ({solution.message})" if solution.message else ""))
        message = solution.message
        if status is Status.INFEASIBLE and not message.startswith(SOLVER_INFEASIBLE):  # its own word, no point
            message = SOLVER_INFEASIBLE + (f": {message}" if message else "")
        return replace(out, status=status.value, message=message, metrics=metrics)
    mismatch = point_mismatch(instance, solution.variables)  # names and shapes, as the kit checks them
    if mismatch is None and not _finite(solution.variables):
        return replace(out, status=Status.DIVERGED.value, message="returned point contains NaN or inf", metrics=metrics)
    if mismatch is None:
        try:
            feas = instance.verify(solution)
            metrics.update(instance.evaluate(solution))
            value = instance.objective(solution)
        except (ValueError, IndexError, KeyError, TypeError, PsdbenchError) as exc:  # a point it cannot read
            mismatch = unreadable_point(exc)
    if mismatch is not None:  # rejected with one line, as a point that fails a check
        return _rejected(out, status, solution, mismatch, metrics)
    message = solution.message
    if status is Status.INFEASIBLE and not message.startswith(SOLVER_INFEASIBLE):  # the solver's own word
        message = SOLVER_INFEASIBLE + (f": {message}" if message else "")
    if not feas.ok:
        metrics["verify_failed"] = feas.reason()
        status, message = _reject(status, solution, feas.reason())
    else:
        metrics.update(_allowance(instance, solution, value, sense), **interval_metrics(instance, solution))
    return replace(out, status=status.value, message=message, objective=value,
                   feasible=int(feas.ok), min_eig=feas.min_eig, max_residual=feas.max_residual,
                   metrics={**metrics, **{f"verify_{k}": v for k, v in feas.details.items()},
                            "tolerances": feas.tolerances})


def _allowance(instance: Any, solution: Solution, value: float, sense: str) -> dict[str, Any]:
    """``{"objective_allowance": a}``: how far the verified point may lie beyond the optimum, by its
    repair (:func:`psdbench.api.objective_allowance`); ``{}`` without one, and a repair that raises
    is recorded (``objective_allowance_failed``), never the cell's failure."""
    try:
        a = objective_allowance(instance, solution, float(value), sense)
    except Exception as exc:  # the point verified; its repair is the family's, and may not read it
        return {"objective_allowance_failed": f"{type(exc).__name__}: {exc}"}
    return {} if a is None else {"objective_allowance": a}


def interval_metrics(instance: Any, solution: Solution) -> dict[str, Any]:
    """The interval a verified point certifies (:func:`psdbench.api.certified_interval`) as metrics:
    ``certified_value``, ``certified_lower`` and ``certified_by`` (the hook's solver and message),
    read by :func:`psdbench.harness.reference.reference_from_cells`; ``{}`` without one, and a hook
    that raises is recorded (``certified_interval_failed``), never the cell's failure."""
    try:
        iv = certified_interval(instance, solution)
    except Exception as exc:  # the point verified; its certificate is the family's
        return {"certified_interval_failed": f"{type(exc).__name__}: {exc}"[:300]}
    if iv is None:
        return {}
    by = ": ".join(str(iv.get(k) or "") for k in ("solver", "message")).strip(": ")
    return {"certified_value": iv["value"], "certified_lower": iv["lower"], "certified_by": by[:500]}


def _reject(status: Status, solution: Solution, why: str) -> tuple[Status, str]:
    """The status and message of a returned point that fails a check: ``ok`` / ``max_iter`` become
    ``infeasible`` (:data:`REJECTED` and the check); any other status (``timeout``) says why it
    stopped, and its message that the point does not verify."""
    if status in (Status.OK, Status.MAX_ITER):
        return Status.INFEASIBLE, f"{REJECTED}: {why}" + (f" (solver: {solution.message})" if solution.message else "")
    return status, (solution.message + "; " if solution.message else "") + f"point {REJECTED}: {why}"


def _rejected(out: CellResult, status: Status, solution: Solution, why: str, metrics: dict[str, Any]) -> CellResult:
    """A returned point the instance cannot score (names or shapes not its own): rejected by
    :func:`_reject` with the one-line check, no objective."""
    status, message = _reject(status, solution, why)
    return replace(out, status=status.value, message=message, feasible=0, metrics={**metrics, "verify_failed": why})


def cell_costs(solve: CellMeter, whole: CellMeter, evaluate_s: float) -> dict[str, float]:
    """What a cell cost beyond its solve, as metrics: ``harness_evaluate_s`` (seconds of verification,
    evaluation and its certificates, and the curve's re-scoring, after the solve), ``harness_cpu_s``
    (CPU seconds of the whole cell), ``solve_peak_rss_mb`` (the solve's own peak, what the row's
    ``peak_rss_mb``, the whole cell's, was before) and ``process_peak_rss_mb`` (the worker's resident
    set at its peak in the cell plus its children's: what the operating system reports for the process)."""
    return {"harness_evaluate_s": float(evaluate_s), "harness_cpu_s": float(whole.cpu_time_s),
            "solve_peak_rss_mb": float(solve.peak_rss_mb), "process_peak_rss_mb": float(whole.base_mb + whole.peak_rss_mb)}


def run_cell(task: Mapping[str, Any], emit: Emit | None = None, cache: WorkerCache | None = None) -> CellResult:
    """Run one solver cell; always returns a :class:`CellResult` (exceptions become ``error``).

    Building the instance counts against the deadline of the cell that builds it (with a
    ``cache``, the first cell of the instance in this worker; the cells that reuse it do not pay
    it); wall and CPU time are those of ``solve``; ``peak_rss_mb`` is what the whole cell (the solve,
    then its verification, evaluation and certificates, and the curve's re-scoring) added to the
    worker's resident set plus its child processes' peak (:class:`~psdbench.harness.workers.meter.CellMeter`;
    CPU time includes the children's too), and :func:`cell_costs` records the rest apart.  A ``MemoryError`` (the worker's memory cap) is
    ``out_of_memory``.  Before a process's first timed solve of a
    solver, the solver warms up untimed (:func:`psdbench.api.warm_up`; its time counts against the
    deadline, like the build).  The curve is re-scored after the timed interval.
    """
    out: CellResult = task["result"]
    try:
        reg, problem, instance = _build(out, cache, task.get("dataset_data"))
        solver = reg.solver(out.solver)
        why = skip_reason(solver, instance, out.solver_params)
        if why is not None:
            return replace(out, status=Status.SKIPPED.value, message=why)
        freeze(instance)  # again: arrays an earlier cell's calls cached on the instance are shared too
        if cache is None or not cache.warmed(out.solver):  # untimed, once per process and solver
            try:
                warm_up(solver, instance)
            except Exception as exc:  # every cell of the solver in this process fails alike
                return replace(out, status=Status.ERROR.value, message=f"warm_up failed: {type(exc).__name__}: "
                                                                       f"{exc}\n{traceback.format_exc()}")
            if cache is not None:
                cache.mark_warmed(out.solver)
            freeze(instance)
        budget = _budget(task, emit)
        # the whole cell (solve, verification, evaluation with its certificates, the curve's re-scoring)
        # and, inside it, the solve alone: CPU and memory of the worker and its child processes
        with CellMeter() as whole:
            with CellMeter() as meter:
                t0 = time.perf_counter()
                try:
                    solution = solver.solve(instance, budget, **out.solver_params)
                finally:
                    wall = time.perf_counter() - t0
            log = solution.info.get("log") if isinstance(solution.info, dict) else None
            if log is not None:  # kept beside the store (_keep_log), not in the row's metrics
                solution = replace(solution, info={k: v for k, v in solution.info.items() if k != "log"})
            solved_at = time.monotonic()
            t_final = wall  # curve times are the solve's (TraceRecorder starts with the solver)
            if emit is not None and solution.variables:
                emit(("solved", t_final, solution.variables))
            out = replace(out, wall_time_s=wall, cpu_time_s=meter.cpu_time_s,
                          iterations=int(solution.iterations), trace=jsonable(_thin(solution.trace)))
            out = _measure(instance, solution, out, problem_sense(problem))
            final = None
            if out.objective is not None and math.isfinite(out.objective):
                final = {"t": t_final, "objective": float(out.objective), "feasible": int(out.feasible or 0), "repaired": 0}
            if solution.iterates or final is not None:
                until = solved_at + 0.5 * float(task.get("post", math.inf))  # well before the runner's kill
                out = replace(out, curve=rescore(instance, solution.iterates, final, solution.variables, until))
            evaluate_s = time.monotonic() - solved_at
        out = replace(out, peak_rss_mb=whole.peak_rss_mb, metrics={**out.metrics, **cell_costs(meter, whole, evaluate_s)})
        out = _keep(task, out, solution.variables)
        out = _keep_log(task, out, log)
    except MemoryError as exc:  # the cell's memory cap (RLIMIT_AS) reached: Mittelmann's "m", not a crash
        out = replace(out, status=Status.OUT_OF_MEMORY.value,
                      message=f"{OUT_OF_MEMORY_NOTE}: MemoryError: {exc}\n{traceback.format_exc()}")
    except Exception as exc:  # recorded, never raised: failures are results
        out = replace(out, status=Status.ERROR.value, message=f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}")
    return out


def verify_checkpoints(task: Mapping[str, Any], emit: Emit | None = None,
                       cache: WorkerCache | None = None) -> CellResult:
    """A killed cell: rebuild the instance, score its checkpoints, keep the best verified one.

    ``task["checkpoints"]`` holds ``(t, variables)``.  The result has status ``timeout``, the best
    verified checkpoint's objective, feasibility and metrics (the last checkpoint's, unverified,
    if none verifies) and the curve of all of them.
    """
    out: CellResult = task["result"]
    try:
        _, problem, instance = _build(out, cache, task.get("dataset_data"))
        maximize = problem_sense(problem) == "max"
        scored = []
        for t, v in task["checkpoints"]:
            try:
                v = resolve_iterate(instance, v)  # deferred entries (api.Deferred), computed once
            except Exception:  # a checkpoint the instance cannot complete is not scored
                continue
            s = score(instance, v, try_repair=False)
            if s is not None:
                scored.append((float(t), v, s))
        if not scored:
            return replace(out, message=out.message + "; no checkpoint could be scored")
        scored.sort(key=lambda x: x[0])
        ok = [x for x in scored if x[2]["feasible"]]
        t, v, s = ((max if maximize else min)(ok, key=lambda x: x[2]["objective"]) if ok else scored[-1])
        feas = s["feas"]
        metrics = dict(instance.evaluate(Solution(variables=dict(v))))
        curve = []
        for ct, cv, cs in scored:  # the curve shows repaired points, as for a returned cell
            cs = cs if cs["feasible"] else (score(instance, cv) or cs)
            curve.append({"t": ct, "objective": cs["objective"], "feasible": cs["feasible"], "repaired": cs["repaired"]})
        out = _keep(task, out, v)
        point = Solution(variables=dict(v))
        failed = {**_allowance(instance, point, s["objective"], "max" if maximize else "min"),
                  **interval_metrics(instance, point)} if ok else {"verify_failed": feas.reason()}
        return replace(out, objective=s["objective"], feasible=s["feasible"], min_eig=feas.min_eig,
                       max_residual=feas.max_residual, curve=curve,
                       metrics={**metrics, **{f"verify_{k}": val for k, val in feas.details.items()},
                                "tolerances": feas.tolerances, "checkpoint_t": t, **failed},
                       message=out.message + f"; {'best verified' if ok else 'last (unverified)'} checkpoint "
                                             f"at t = {t:.3g} s of {len(scored)}"
                                             + ("" if ok else f", {REJECTED}: {feas.reason()}"))
    except Exception as exc:
        return replace(out, message=out.message + f"; checkpoint verification failed: {type(exc).__name__}: {exc}")


def run_reference(task: Mapping[str, Any], emit: Emit | None = None,
                  cache: WorkerCache | None = None) -> dict[str, Any]:
    """Compute the certified reference of one instance, within the task's deadline."""
    try:
        _, _, instance = _build(task, cache, task.get("dataset_data"))
        budget = _budget(task, None)
        t0 = time.perf_counter()
        left = budget.remaining()
        ref = certified_reference(instance, None if left is None else max(left, 1e-3), CERTIFIED_RTOL)
        if ref is None:
            return {"status": "none", "message": "instance offers no certified reference"}
        ref["wall_time_s"] = time.perf_counter() - t0
        ref["status"] = str(ref.get("status", "ok"))
        return ref
    except Exception as exc:
        return {"status": "error", "message": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}
