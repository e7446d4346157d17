"""Returned points kept beside the store (``psdbench run --save-solutions``).

With ``save_solutions`` on, the worker that runs a cell writes the point the solver returned (for
a cell killed at its deadline: the checkpoint the harness scored, see
:func:`~psdbench.harness.workers.worker.verify_checkpoints`) as a compressed NumPy archive, one array per
variable name of the problem's contract (``M``, ``W``, ``labels``, ...), and the row's
``solution`` column holds the archive's path relative to the store's folder::

    psdbench-results.sqlite
    psdbench-results.solutions/<run_id>/<cell_key>.npz
    psdbench-results.solutions/<run_id>/<cell_key>.log.gz   (a solver's own log, always: :func:`save_log`)

Archives are written once, to a temporary name and then renamed, so a killed run leaves either a
whole archive or none (an archive whose row was never stored is left behind, unreferenced).  A row
with no archive (not saved, no point returned, the cell crashed) has ``solution`` NULL.
:func:`load_solution` reads one back.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from psdbench.api import PsdbenchError

SUFFIX = ".solutions"


def folder_for(db: str | Path) -> Path:
    """The folder holding a store's archives: ``<store stem>.solutions`` beside the store."""
    p = Path(db)
    return p.parent / f"{p.stem}{SUFFIX}"


def target(db: str | Path, run_id: str) -> tuple[str, str]:
    """``(absolute folder, prefix relative to the store's folder)`` for the archives of one run."""
    base = folder_for(db)
    return str((base / run_id).resolve()), f"{base.name}/{run_id}"


def save(variables: Mapping[str, Any], where: tuple[str, str], cell_key: str) -> str:
    """Write ``variables`` to ``<folder>/<cell_key>.npz`` atomically; return the relative path.

    Parameters
    ----------
    variables : mapping of str to array-like
        The point, as the solver returned it.
    where : (str, str)
        :func:`target`'s folder and relative prefix.
    cell_key : str

    Raises
    ------
    OSError
        The archive could not be written (the caller records why in the row's message).
    """
    folder, prefix = where
    os.makedirs(folder, exist_ok=True)
    arrays = {str(k): np.asarray(v) for k, v in variables.items()}
    fd, tmp = tempfile.mkstemp(prefix=f".{cell_key}-", suffix=".npz.part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez_compressed(fh, **arrays)
        os.replace(tmp, os.path.join(folder, f"{cell_key}.npz"))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return f"{prefix}/{cell_key}.npz"


def save_log(text: str, where: tuple[str, str], cell_key: str) -> str:
    """Write a solver's own log (``Solution.info["log"]``) gzipped to ``<folder>/<cell_key>.log.gz``
    atomically; return its path relative to the store's folder (the cell's ``metric_solver_log``).

    Logs go into the folder of :func:`target` whether or not points are kept.
    """
    import gzip

    folder, prefix = where
    os.makedirs(folder, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{cell_key}-", suffix=".log.gz.part", dir=folder)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(gzip.compress(str(text).encode("utf-8", errors="replace")))
        os.replace(tmp, os.path.join(folder, f"{cell_key}.log.gz"))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return f"{prefix}/{cell_key}.log.gz"


def load_solution(db: str | Path, row: Mapping[str, Any] | str) -> dict[str, np.ndarray]:
    """The saved point of one cell, as ``{variable name: array}``.

    Parameters
    ----------
    db : path
        The results store the row comes from.
    row : mapping or str
        A row of :func:`psdbench.load` (its ``solution`` column is used), or the ``solution`` value.

    Raises
    ------
    PsdbenchError
        The row has no saved solution, or its archive is missing or unreadable.
    """
    rel = row if isinstance(row, str) else row.get("solution")
    if not isinstance(rel, str) or not rel:
        key = "" if isinstance(row, str) else f" of cell {row.get('cell_key', '?')}"
        raise PsdbenchError(f"no saved solution{key} (run with --save-solutions)")
    path = Path(db).parent / rel
    try:
        with np.load(path, allow_pickle=False) as npz:
            return {k: npz[k] for k in npz.files}
    except (OSError, ValueError) as exc:
        raise PsdbenchError(f"saved solution {path}: {exc}") from None
