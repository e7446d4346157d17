"""Run one ``solve`` under a deadline with a watchdog, for :mod:`psdbench.testing`.

Both runners return ``{}`` when the solver has not returned by the budget's deadline plus grace,
else ``{"solution": Solution}`` or ``{"error": (type name, message)}``, with ``"returned"`` (the
:func:`time.monotonic` instant ``solve`` returned) and, for the process runner, ``"started"`` /
``"deadline"`` of the child's own budget.
"""

from __future__ import annotations

import multiprocessing
import threading
import time
from collections.abc import Mapping
from typing import Any

from psdbench.api import Budget


def solve_in_thread(solver: Any, instance: Any, params: Mapping[str, Any], budget: Budget) -> dict[str, Any]:
    """``solve`` in a daemon thread, waited for until the deadline plus grace (it cannot be killed)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["solution"] = solver.solve(instance, budget, **params)
        except BaseException as exc:  # reported in the caller's thread
            box["error"] = (type(exc).__name__, str(exc))
        box["returned"] = time.monotonic()

    worker = threading.Thread(target=run, name=f"psdbench-check-{getattr(solver, 'name', 'solver')}", daemon=True)
    worker.start()
    worker.join(timeout=max(0.0, float(budget.deadline) + budget.grace_s - time.monotonic()))
    return box if not worker.is_alive() else {}


def _run_child(send: Any, solver: Any, instance: Any, params: Mapping[str, Any], deadline_s: float,
               grace_s: float) -> None:
    """Body of the spawned child: the budget starts once imports are done; the outcome is sent back
    (exceptions as text: they need not pickle)."""
    budget = Budget.seconds(deadline_s, grace_s=grace_s)
    send.send({"deadline": budget.deadline})
    try:
        out: dict[str, Any] = {"solution": solver.solve(instance, budget, **params)}
    except BaseException as exc:
        out = {"error": (type(exc).__name__, str(exc))}
    out["returned"] = time.monotonic()
    send.send(out)


def solve_in_process(solver: Any, instance: Any, params: Mapping[str, Any], budget: Budget,
                      startup_s: float = 120.0) -> dict[str, Any]:
    """``solve`` in a spawned child, killed at the deadline plus grace (needs picklable arguments).

    The child's budget starts after its imports (at most ``startup_s``), so they do not count.
    """
    ctx = multiprocessing.get_context("spawn")  # not fork: forked thread pools (BLAS, Rust) can deadlock
    recv, send = ctx.Pipe(duplex=False)
    deadline_s = float(budget.time_limit_s or 0.0)
    child = ctx.Process(target=_run_child, args=(send, solver, instance, dict(params), deadline_s, budget.grace_s),
                        name=f"psdbench-check-{getattr(solver, 'name', 'solver')}")
    child.start()
    send.close()
    try:
        if not recv.poll(startup_s):
            raise RuntimeError(f"the process checking solver {getattr(solver, 'name', solver)!r} did not start "
                               f"in {startup_s:g} s")
        deadline = float(recv.recv()["deadline"])
        if not recv.poll(max(0.0, deadline + budget.grace_s - time.monotonic())):
            return {}
        out = recv.recv()
        out["started"] = deadline - deadline_s
        out["deadline"] = deadline
        return out
    except EOFError:  # the child died without sending (killed, os._exit, segfault)
        child.join(5)
        return {"error": ("ProcessDied", f"the solving process ended with exit code {child.exitcode}"),
                "returned": time.monotonic()}
    finally:
        if child.is_alive():
            child.kill()
        child.join()
        recv.close()
