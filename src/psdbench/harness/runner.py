"""Run a grid: every cell under one deadline and a memory cap, in a worker process of its own or
in a long-lived worker that is replaced after any fault.

* One deadline: when the runner sends a cell to a worker it sets ``deadline = time.monotonic() +
  timeout`` (monotonic time is system-wide on Linux, so worker and runner agree); the worker's
  :class:`~psdbench.api.Budget` ends there (building the instance counts against the deadline
  of the cell that builds it) and the worker ends itself at ``deadline + grace``
  (:func:`grace_for`, :mod:`psdbench.harness.workers.child`); the runner kills it if it is still there
  ``grace`` s after it saw that instant pass.  A solver that stops at the deadline returns its point (status
  ``timeout``, verified as usual); a killed worker's last checkpoints (iterates its
  ``TraceRecorder`` kept, streamed over the pipe) are verified in a short second process and the
  best verified one is recorded with status ``timeout``.
* Local backend: ``jobs`` threads, each owning one long-lived worker process
  (:class:`~psdbench.harness.workers.process.CellWorker`, forkserver context, heavy modules preloaded)
  that runs whole instances' cells in turn, building each instance once (read-only,
  :mod:`psdbench.harness.workers.shared`).  A cell that is killed or crashes the worker is recorded
  (``timeout`` / ``crashed``) and the next cell gets a fresh worker; so does the cell after a
  ``MemoryError``, a thread left running or an address space grown past a quarter of the cap's
  headroom.
* Dask backend (:mod:`psdbench.harness.workers.cluster`): each reference and cell is a task of a
  ``distributed`` cluster, run in the long-lived worker the Dask worker thread keeps (a fresh
  interpreter: Dask's nanny workers are daemonic and may not fork multiprocessing children).
* Concurrent runs on one store: a cell (or reference) is claimed in the store just before it is
  dispatched (:mod:`psdbench.harness.store.claims`); one that another live run holds or has stored
  meanwhile is skipped and counted so.  Claims of dead runs are taken over.
* Ctrl-C: the running tasks' processes are killed at once, the cells they held are neither
  stored nor counted, the run's claims are released, and ``KeyboardInterrupt`` goes on up.
* Each finished cell is written to the store as a new history row, committed before it is
  counted done (cells that finish together share one transaction); cells already in the store
  are skipped unless ``force``.  References (one per instance, kept in the store) are decided
  after the cells: an instance whose cells' certified points (the ``certified_interval`` hook)
  prove an interval within the certification tolerance gets it as its reference, with no
  reference solve (:func:`psdbench.harness.reference.reference_from_cells`); the others are solved
  then, each in a fresh process under the same deadline mechanism (``reference_timeout`` is the
  whole task's deadline, its certificate included: the hook is given what is left of it).
  Reference and gap columns are filled by :func:`psdbench.harness.reference.finalize` once, at
  the end.  A certified reference is also kept in the reference cache shared by stores
  (:mod:`psdbench.harness.store.refcache`), and an instance whose reference is there is neither
  solved nor taken from cells again.
* Timing: the run's record (``runs.timing``) and summary hold the seconds of the cells' solves
  (``solve_s``, their ``wall_time_s``), of the reference solves (``reference_s``), of the run
  (``run_s``) and of the process that ran it (``process_s``): what the harness cost beside the
  solves.
* Code changes: a cell's key hashes its solver's and problem's code
  (:func:`psdbench.harness.store.keys.code_hash`), so an edited solver's cells are missing from the
  store and run again; the summary counts the cells whose stored row of the same description
  (``cell_id``) was computed by other code, by the solver or problem whose code changed.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
import sqlite3
import time
import uuid
from dataclasses import replace
from typing import Any, Callable, Iterator


from psdbench.harness import calibration
from psdbench.harness.fingerprint import cpu_model  # noqa: F401 (re-exported: the report's run details)
from psdbench.system.version import psdbench_version
from psdbench.api import PsdbenchError
from psdbench.harness.store import solutions
from psdbench.harness.grid.expand import Grid
from psdbench.harness.workers.local import run_local
from .progress import Progress
from psdbench.harness.workers.process import (BASE_PRELOAD, MAX_CHECKPOINTS, THREAD_VARS, CellWorker, Isolated,  # noqa: F401 (re-exported)
                      _context, grace_for, post_for, run_isolated)
from psdbench.harness.workers.tasks import run_cell_isolated, run_reference_isolated  # noqa: F401 (re-exported)
from psdbench.harness.store.refcache import ReferenceCache
from .reference import finalize, reference_from_cells, reference_key, reference_record
from psdbench.harness.store.results import CellResult, outcome
from psdbench.harness.store.db import DATASETS_META, EXPANSIONS_META, Store, now

from .limits import (MEMORY_SHARE, MachineError, harness_failure, is_harness_failure, plan_workers,  # noqa: F401
                     worker_need_mb)


def source_commit(root: Path) -> str:
    """The commit checked out at ``root`` (psdbench installed editable from a git checkout; ``""``
    otherwise), read from ``.git`` without running git; ``+dirty`` is not detected."""
    git = root / ".git"
    try:
        if git.is_file():  # a worktree: "gitdir: PATH"
            git = (root / git.read_text().split(":", 1)[1].strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if not head.startswith("ref: "):
            return head[:12]
        ref = head[5:]
        for base in (git, git.parent.parent if git.parent.name == "worktrees" else git):
            if (base / ref).is_file():
                return (base / ref).read_text().strip()[:12]
            packed = base / "packed-refs"
            if packed.is_file():
                for line in packed.read_text().splitlines():
                    if line.endswith(" " + ref):
                        return line.split()[0][:12]
    except (OSError, IndexError):
        return ""
    return ""


def machine_info(libraries: list[str], reported: dict[str, str] | None = None) -> tuple[dict, dict, dict]:
    """Machine, versions of ``libraries`` (distribution names) and BLAS thread pools.

    The machine holds its class's hash (``fingerprint``), its GPUs and the environment (every
    installed distribution and their list's hash); the pools each BLAS library's build
    (:mod:`psdbench.harness.fingerprint`).

    A library this environment does not have is recorded at the version its solver ``reported``
    (one installed in a folder of its own, as SDPA-GMP is), else as absent.
    """
    from threadpoolctl import threadpool_info

    from psdbench.harness.fingerprint import blas_builds, machine_record
    from psdbench.harness.workers.child import worker_blas_threads

    machine = machine_record()
    versions = {"psdbench": psdbench_version()}
    commit = source_commit(Path(__file__).resolve().parents[3])
    if commit:
        versions["commit"] = commit
    for pkg in libraries:
        try:
            from importlib.metadata import version

            versions[pkg] = version(pkg)
        except Exception:
            versions[pkg] = (reported or {}).get(pkg, "absent")
    threads = {"worker_blas_threads": worker_blas_threads(), "pools": blas_builds(threadpool_info())}
    return machine, versions, threads


def run_grid(
    grid: Grid,
    store: Store,
    jobs: int | None = None,
    backend: str = "local",
    timeout: float | None = None,
    force: bool = False,
    progress: bool = True,
    command: str = "",
    scheduler: Any = None,
    summary: dict[str, Any] | None = None,
    save_solutions: bool | None = None,
    ref_cache: str | os.PathLike | bool | None = True,
) -> str:
    """Run every missing cell of ``grid`` (all of them with ``force``) and fill in gaps.

    Returns the run id.  Failures are results: they are stored with status and traceback.
    ``summary``, if given, is filled with this run's counts (:meth:`Progress.summary
    <psdbench.harness.progress.Progress.summary>`): ``ran``, ``elsewhere`` (cells another run on
    the store held or stored meanwhile), ``status`` (cells per status), ``code_changed``
    (``{"solver NAME" | "problem NAME": cells}``: cells run again because that code changed,
    :func:`code_changes`), ``refs_reused`` / ``refs_rejected`` (references taken from the
    reference cache / cache entries not trusted), ``refs_from_cells`` (references made of the
    cells' certified points, no reference solved), ``timing`` (as stored in the run's record:
    ``solve_s`` the cells' solves, ``cells``, ``reference_s`` the reference solves,
    ``references_solved``, ``references_from_cells``, ``run_s`` this call, ``process_s`` the
    process, in seconds) and ``harness_failed`` (the first message when
    every cell run now failed for a harness reason, else "").  ``save_solutions`` (default: the grid's) keeps
    each cell's returned point beside the store (:mod:`psdbench.harness.store.solutions`).
    ``ref_cache``: the reference cache (:meth:`ReferenceCache.resolve
    <psdbench.harness.store.refcache.ReferenceCache.resolve>`: ``True`` the default folder, a folder,
    or ``False`` for none).  ``scheduler`` (Dask backend): a scheduler address, a cluster object
    (``LocalCluster``, dask-jobqueue's ``SLURMCluster``, ...) or a ``Client``; ``None`` starts a
    ``LocalCluster`` of ``jobs`` workers.  A lost scheduler, or workers that cannot run cells, raise
    :class:`~psdbench.harness.limits.MachineError`.
    """
    started = time.monotonic()
    timeout = float(timeout or grid.timeout)
    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"
    machine, versions, threads = machine_info(grid.libraries, grid.reported_versions)
    if calibration.enabled():  # about a second: this machine's speed and noise on pinned kernels
        machine["calibration"] = calibration.calibrate()
    store.start_run(run_id, command, machine, versions, threads)
    store.remember(DATASETS_META, grid.dataset_fingerprints)  # for the next run's expansion (harness/grid/expand.py)
    store.remember(EXPANSIONS_META, grid.param_expansions)
    last = store.last_seq()
    since = last if force else None
    keep = grid.save_solutions if save_solutions is None else save_solutions
    extra = {"solutions": solutions.target(store.path, run_id)} if keep else {}
    extra["logs"] = solutions.target(store.path, run_id)  # solvers' own logs (Solution.info["log"]), always

    stored = store.done_keys()  # without the harness's own failures (harness/limits.py)
    done = set() if force else stored
    todo = [c for c in grid.cells if c.cell_key not in done]
    redo = set() if force else {c.cell_key for c in todo} & store.stored_keys()  # stored, but to compute again
    changed = code_changes([c for c in todo if c.cell_key not in stored], store)
    refs: list[str] = []
    cache = ReferenceCache.resolve(ref_cache) if grid.reference else None
    ref_keys = {k: reference_key(grid.problem_codes.get(spec["problem"], "")) for k, spec in grid.instances.items()}
    reused: list[dict[str, Any]] = []
    if grid.reference:
        have = {} if force else {k: r for k, r in store.references(grid.instances).items()
                                 if not is_harness_failure(r.get("status"), r.get("message"))}
        refs = [k for k in grid.instances if k not in have]
        if cache is not None:
            for k in refs:
                rec = cache.get(k, ref_keys[k])
                if rec is not None:
                    msg = str(rec.get("message") or "")
                    reused.append({**rec, "message": "from the reference cache" + (f"; {msg}" if msg else "")})
            store.write_many([], reused)
            refs = [k for k in refs if k not in {r["instance_key"] for r in reused}]
    # never more workers than work items (each instance's cells go to one worker in turn; each
    # reference is one item, solved after the cells), so that the memory is split between the workers that start
    work = max(len(refs), len({c.instance_key for c in todo}) if backend == "local" else len(todo))
    jobs, memory_mb, _ = plan_workers(jobs, grid.memory_mb, work=work)  # the caller shows the notes
    prog = Progress(len(todo), len(refs), enabled=progress)
    harness: list[str] = []  # messages of the cells the harness failed
    senses = {k: grid.senses.get(spec["problem"], "min") for k, spec in grid.instances.items()}
    timing = {"solve_s": 0.0, "cells": 0, "reference_s": 0.0, "references_solved": 0, "references_from_cells": 0}

    def claim(what: str, obj: Any) -> str:
        return claim_all([(what, obj)])[0]

    def claim_all(items: list[tuple[str, Any]]) -> list[str]:
        """Claim references and cells in one transaction each for re-runs and new ones: "" or why not."""
        keys = [f"ref:{obj}" if what == "ref" else obj.cell_key for what, obj in items]
        refused: dict[str, str] = {}
        try:
            for part, seq in (([k for k in keys if k in redo], last), ([k for k in keys if k not in redo], since)):
                if part:
                    refused.update(store.claim(part, run_id, seq))
        except sqlite3.Error as exc:  # not computed now; a later resume does it
            return [f"claim failed ({exc})"] * len(keys)
        return [refused.get(k, "") for k in keys]

    def after_cells() -> list[str]:
        """Once this run's cells are stored: the references their certified points make (stored now),
        and the instances whose reference is still to be solved."""
        rows: dict[str, list[dict[str, Any]]] = {}
        for r in store.latest_rows(refs) if refs else []:
            rows.setdefault(r["instance_key"], []).append(r)
        made = [rec for k in refs if (rec := reference_from_cells(k, grid.instances[k], rows.get(k, ()), senses[k]))]
        whys = claim_all([("ref", rec["instance_key"]) for rec in made]) if made else []
        for rec, why in zip(made, whys):
            if why:  # another run holds this instance's reference
                prog.skip(why, "ref")
        kept = [rec for rec, why in zip(made, whys) if not why]
        store.write_many([], kept, release=run_id)  # committed before they count as done
        for rec in kept:
            if cache is not None:  # certified, as every reference made of cells is
                cache.put(rec["instance_key"], ref_keys[rec["instance_key"]], rec)
            prog.reference()
        timing["references_from_cells"] = len(kept)
        return [k for k in refs if k not in {rec["instance_key"] for rec in made}]

    try:
        if backend not in ("local", "dask"):
            raise PsdbenchError(f"unknown backend {backend!r} (local | dask)")
        finished = (_run_local(grid, run_id, todo, after_cells, jobs, timeout, memory_mb, claim, extra)
                    if backend == "local" else
                    _run_dask(grid, run_id, todo, refs, after_cells, jobs, timeout, scheduler, claim_all, extra))
        try:
            for batch in finished:
                cells = [replace(res, created_at=now()) for what, _, res in batch if what == "cell"]
                refs_done = [reference_record(key, grid.instances[key], res) for what, key, res in batch
                             if what == "ref"]
                store.write_many(cells, refs_done, release=run_id)  # committed before they count as done
                if cache is not None:
                    for rec in refs_done:  # only certified ones are kept
                        cache.put(rec["instance_key"], ref_keys[rec["instance_key"]], rec)
                _count(timing, batch)
                for what, obj, res in batch:
                    if what == "workers":  # a Dask run: each worker's machine, beside the client's
                        store.add_run_machine(run_id, {"workers": res})
                    elif what == "skipped":
                        prog.skip(res, "ref" if isinstance(obj, str) else "cell")
                    elif what == "ref":
                        prog.reference()
                    else:
                        prog.cell(outcome(res.status, res.message))  # the page's words
                        if is_harness_failure(res.status, res.message):
                            harness.append(str(res.message).splitlines()[0] if res.message else "")
        finally:
            finished.close()  # an interrupted run: running tasks killed, nothing more stored
    finally:
        prog.close()
        store.release_run(run_id)
        finalize(store, senses)
        timing.update(run_s=time.monotonic() - started, process_s=process_seconds())
        store.finish_run(run_id, timing)
        if summary is not None:
            ran = prog.summary()["ran"]
            summary.update(prog.summary(), code_changed=changed, refs_reused=len(reused),
                           refs_from_cells=timing["references_from_cells"], timing=dict(timing),
                           refs_rejected=cache.rejected if cache is not None else 0,
                           harness_failed=harness[0] if ran and len(harness) == ran else "")
    return run_id


def _count(timing: dict[str, Any], batch: list[tuple[str, Any, Any]]) -> None:
    """Add a batch's cells' solve seconds (``wall_time_s``) and reference solves' seconds to ``timing``."""
    for what, _, res in batch:
        secs = res.wall_time_s if what == "cell" else res.get("wall_time_s") if what == "ref" else None
        if what in ("cell", "ref"):
            timing["cells" if what == "cell" else "references_solved"] += 1
        if isinstance(secs, (int, float)) and math.isfinite(secs):
            timing["solve_s" if what == "cell" else "reference_s"] += float(secs)


def process_seconds() -> float:
    """Seconds since this process started (its interpreter's start-up, imports and grid included):
    on Linux from its start in clock ticks since boot (``/proc/self/stat``), else from psutil's
    start time (whose boot time is rounded to a second)."""
    try:
        with open("/proc/self/stat") as f:
            ticks = float(f.read().rsplit(")", 1)[1].split()[19])  # field 22, starttime
        return max(0.0, time.clock_gettime(time.CLOCK_BOOTTIME) - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError, AttributeError):
        import psutil

        try:
            return max(0.0, time.time() - psutil.Process().create_time())
        except psutil.Error:
            return math.nan


def code_changes(cells: list[Any], store: Store) -> dict[str, int]:
    """Cells to run whose latest stored row of the same description (``cell_id``) was computed by
    other code: ``{"solver NAME" | "problem NAME": cells}`` (the solver's code first, where both
    changed).  Rows of a store older than schema 4 carry no code hash and count as no change."""
    prior = store.latest_by_cell_id([c.cell_id for c in cells if c.cell_id])
    out: dict[str, int] = {}
    for c in cells:
        row = prior.get(c.cell_id)
        if row is None or row["cell_key"] == c.cell_key:
            continue
        if row["solver_code"] and row["solver_code"] != c.solver_code:
            why = f"solver {c.solver}"
        elif row["problem_code"] and row["problem_code"] != c.problem_code:
            why = f"problem {c.problem}"
        else:
            continue
        out[why] = out.get(why, 0) + 1
    return out


def _run_local(grid: Grid, run_id: str, todo: list[Any], after_cells: Callable[[], list[str]], jobs: int,
               timeout: float, memory_mb: int | None, claim: Callable[[str, Any], str],
               extra: dict[str, Any]) -> Iterator[list[tuple[str, Any, Any]]]:
    """The local backend (:func:`~psdbench.harness.workers.local.run_local`): the cells grouped by
    instance, in grid order, then the references ``after_cells()`` (called once the cells' batches
    are stored) leaves to solve; each claimed just before it is dispatched."""
    groups: dict[str, list[CellResult]] = {}
    for cell in todo:
        groups.setdefault(cell.instance_key, []).append(CellResult.for_cell(cell, run_id, timeout))

    def run(items: list[tuple]) -> Iterator[list[tuple[str, Any, Any]]]:
        return run_local(items, jobs,
                         lambda base, w: run_cell_isolated({"result": base, **extra}, timeout, memory_mb, w),
                         lambda task, stop: run_reference_isolated(task, grid.reference_timeout, memory_mb, stop),
                         memory_mb, claim, preload=grid.preload)

    yield from run([("cells", bases) for bases in groups.values()])
    yield from run([("ref", key, dict(grid.instances[key])) for key in after_cells()])


def _run_dask(grid: Grid, run_id: str, todo: list[Any], refs: list[str], after_cells: Callable[[], list[str]],
              jobs: int, timeout: float, scheduler: Any, claim: Callable[[list[tuple[str, Any]]], list[str]],
              extra: dict[str, Any]) -> Iterator[list[tuple[str, Any, Any]]]:
    """The Dask backend (:mod:`psdbench.harness.workers.cluster`): every cell, then every reference
    ``after_cells()`` (called once the cells' batches are stored) leaves to solve, a task of its
    own, run in the cell workers the Dask workers keep, claimed when it is submitted.  ``refs``:
    the references that may be solved (their problems' plugins are preloaded)."""
    try:
        from psdbench.harness.workers.cluster import Cluster, plugin_modules
    except ImportError:
        raise PsdbenchError("the dask backend needs 'distributed': pip install 'psdbench[dask]'") from None

    solve: list[str] | None = None
    if not todo:  # decided before a cluster starts: a fully resumed run starts none
        solve = after_cells()
        if not solve:
            return
    cluster = None
    interrupted = True
    try:
        preload = plugin_modules(sorted({c.problem for c in todo} | {grid.instances[k]["problem"] for k in refs}),
                                 sorted({c.solver for c in todo}))
        cluster = Cluster(scheduler, jobs, grid.memory_mb, preload)
        cluster.preflight()  # before any work: workers that cannot run cells, and why
        yield [("workers", None, cluster.fingerprints())]
        cluster.ship(sorted({spec["dataset"] for spec in grid.instances.values()}), _loader())
        cells = [("cell", CellResult.for_cell(c, run_id, timeout)) for c in todo]
        yield from cluster.wave(cells, grid.instances, grid.reference_timeout, timeout, claim, extra)
        refs_left = [("ref", key) for key in (after_cells() if solve is None else solve)]
        yield from cluster.wave(refs_left, grid.instances, grid.reference_timeout, timeout, claim, extra)
        interrupted = False
    except OSError as exc:  # the scheduler did not answer the client
        raise MachineError(f"the Dask scheduler {scheduler} cannot be reached: {exc}") from None
    finally:
        if cluster is not None:
            cluster.close(interrupted=interrupted)


def _loader() -> Callable[[str], Any]:
    """Load a dataset by name in this process (to ship it to the workers)."""
    from psdbench.registry import discover

    return discover().load_dataset
