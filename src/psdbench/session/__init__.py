"""The Python API: run a grid from a notebook and get a pandas DataFrame.

>>> import psdbench
>>> df = psdbench.run(solvers=["gdpa-lp"], datasets=["sklearn/wine"], db="wine.sqlite")  # doctest: +SKIP
>>> df = psdbench.load("wine.sqlite")                                                   # doctest: +SKIP

Both go through the same checks as the command line: bad input raises
:class:`~psdbench.api.PsdbenchError` before anything runs or any file is changed, and
:func:`load` opens the store read-only.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from psdbench.api import PsdbenchError

DEFAULT_DB = "psdbench-results.sqlite"


@dataclass
class Prepared:
    """A checked grid and store path, ready to run."""

    grid: Any
    db: Path
    registry: Any


def prepare(grid: str | Path | dict[str, Any] | None = None, suite: str | None = None,
            solvers: list[str] | None = None, datasets: list[str] | None = None,
            problems: list[str] | None = None, db: str | Path = DEFAULT_DB,
            save_solutions: bool | None = None, yes: bool = False) -> Prepared:
    """Read, narrow and check a grid and the store path (nothing is written).

    Parameters
    ----------
    grid : path or dict, optional
        A grid file, or a grid already parsed into a dict.  Default: ``suite``.
    suite : str, optional
        A registered suite (default ``"default"`` when neither is given).
    solvers, datasets, problems : list of str, optional
        Narrow the grid (:func:`psdbench.harness.grid.expand.restrict`).
    db : path
        The results store (checked with :func:`psdbench.harness.grid.inputs.check_store`).
    save_solutions : bool, optional
        Keep each cell's returned point (overrides the grid's ``[run] save_solutions``); the
        archive folder beside the store is checked too.
    yes : bool
        Accept a grid of more than :data:`~psdbench.harness.limits.MAX_CELLS` cells.
    """
    from dataclasses import replace

    from psdbench.harness.grid.expand import expand, parse_selector, read_grid_file, restrict
    from psdbench.harness.grid.inputs import check_solutions_folder, check_store
    from psdbench.harness.limits import MAX_CELLS, check_depth, check_memory_mb
    from psdbench.harness.store.db import DATASETS_META, EXPANSIONS_META, read_meta
    from psdbench.registry import discover

    if grid is not None and suite is not None:
        raise PsdbenchError("give a grid or a suite, not both")
    reg = discover(preload=False)  # the plugins' `preload` modules: imported by the run when it forks workers
    if isinstance(grid, dict):
        check_depth(grid, "grid")
        spec, name = grid, "grid"
    elif grid is not None:
        spec, name = read_grid_file(grid)
    else:
        name = suite or "default"
        spec = reg.read_suite(name)
    spec = restrict(spec, solvers=solvers, datasets=datasets, problems=problems)
    g = expand(spec, name, reg, narrowed=bool(solvers or datasets or problems), max_cells=None if yes else MAX_CELLS,
               known=(read_meta(db, DATASETS_META), read_meta(db, EXPANSIONS_META)),  # stamped data: not loaded
               named=[parse_selector(s)[0] for s in solvers or []])
    check_memory_mb(g.memory_mb, f"grid {name}: [run]")
    if save_solutions is not None:
        if not isinstance(save_solutions, bool):
            raise PsdbenchError(f"save_solutions must be True or False, not {save_solutions!r}")
        g = replace(g, save_solutions=save_solutions)
    path = check_store(db, write=True)
    if g.save_solutions:
        check_solutions_folder(path)
    return Prepared(grid=g, db=path, registry=reg)


def run(grid: str | Path | dict[str, Any] | None = None, *, suite: str | None = None,
        solvers: list[str] | None = None, datasets: list[str] | None = None, problems: list[str] | None = None,
        db: str | Path = DEFAULT_DB, jobs: int | None = None, timeout: float | None = None, force: bool = False,
        backend: str = "local", progress: bool = False, save_solutions: bool | None = None,
        ref_cache: str | Path | bool = True, yes: bool = False, scheduler: Any = None) -> pd.DataFrame:
    """Run a grid (resuming from ``db``) and return its cells' results.

    Parameters
    ----------
    grid, suite, solvers, datasets, problems, db
        As :func:`prepare`.
    jobs : int, optional
        Worker processes (>= 1; default: the cores).
    timeout : float, optional
        Seconds per cell (> 0), overriding the grid's.
    force : bool
        Re-run cells already stored.
    backend : {"local", "dask"}
    progress : bool
        Show the progress bar.
    save_solutions : bool, optional
        Keep each cell's returned point beside the store (default: the grid's); read one back
        with :func:`psdbench.load_solution`.
    ref_cache : path or bool
        The reference cache shared by stores (:mod:`psdbench.harness.store.refcache`): ``True`` its
        default folder (``$PSDBENCH_REF_CACHE``, else ``$XDG_CACHE_HOME/psdbench/references``), a
        folder, or ``False`` for none.
    yes : bool
        Run a grid of more than :data:`~psdbench.harness.limits.MAX_CELLS` cells.
    scheduler : str, cluster or Client, optional
        With ``backend="dask"``: a scheduler address (``"tcp://HOST:8786"``), a cluster object
        (dask-jobqueue's ``SLURMCluster``, a ``LocalCluster``, ...) or a ``distributed.Client``;
        default: a ``LocalCluster`` of ``jobs`` workers.  A cluster or client passed in is left
        running.

    Returns
    -------
    DataFrame
        The latest row of each cell of the grid (``Store.results_frame()`` columns: JSON columns
        decoded, metrics as ``metric_<name>``; plus ``below_certified``, ``gap_scale`` and
        ``gap_scaled`` from :func:`psdbench.harness.reference.annotate`).
    """
    import warnings

    from psdbench.harness.grid.inputs import positive_seconds
    from psdbench.harness.limits import plan_workers
    from psdbench.harness.runner import run_grid
    from psdbench.harness.store.db import Store

    if jobs is not None and (isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1):
        raise PsdbenchError(f"jobs must be an integer >= 1, not {jobs!r}")
    if timeout is not None:
        timeout = positive_seconds(timeout, "timeout")
    if backend not in ("local", "dask"):
        raise PsdbenchError(f"backend must be 'local' or 'dask', not {backend!r}")
    if scheduler is not None and backend != "dask":
        raise PsdbenchError("scheduler needs backend='dask' (the local backend has no scheduler)")
    if isinstance(scheduler, str):
        from psdbench.harness.limits import check_scheduler

        check_scheduler(scheduler)
    p = prepare(grid, suite=suite, solvers=solvers, datasets=datasets, problems=problems, db=db,
                save_solutions=save_solutions, yes=yes)
    jobs, _, notes = plan_workers(jobs, p.grid.memory_mb, work=len(p.grid.cells))
    for note in notes:  # jobs lowered to what the memory holds, more workers than cores
        warnings.warn(note, stacklevel=2)
    store = Store(p.db)
    try:
        run_grid(p.grid, store, jobs=jobs, backend=backend, timeout=timeout, force=force, progress=progress,
                 command="psdbench.run(...)", save_solutions=p.grid.save_solutions, ref_cache=ref_cache,
                 scheduler=scheduler)
        from psdbench.harness.reference import annotate

        df = annotate(store.results_frame(), store.references_frame())
    finally:
        store.close()
    return df[df["cell_key"].isin({c.cell_key for c in p.grid.cells})].reset_index(drop=True)


def load(db: str | Path = DEFAULT_DB) -> pd.DataFrame:
    """The results of a store as a DataFrame, read-only (the file is never modified).

    Parameters
    ----------
    db : path
        A psdbench results store.
    """
    from psdbench.harness.grid.inputs import ReadOnlyStore

    return ReadOnlyStore(db).results_frame()


def loads_grid(text: str) -> dict[str, Any]:
    """Parse grid TOML text (for :func:`run` from a notebook cell), one-line error if malformed."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PsdbenchError(f"malformed grid TOML: {exc}") from None
    except RecursionError:
        raise PsdbenchError("grid TOML: values nested too deep to read") from None
