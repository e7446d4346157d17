"""psdbench: a pluggable benchmark harness for optimization over the PSD cone in learning problems.

Python API (:mod:`psdbench.session`): ``psdbench.run(...)`` runs a grid and returns a pandas
DataFrame of its cells, ``psdbench.load(db)`` reads a results store (read-only), and
``psdbench.load_solution(db, row)`` a cell's saved point (``run(..., save_solutions=True)``).
"""

from typing import Any


def __getattr__(name: str) -> Any:
    """``__version__``, read from the installed metadata when first asked
    (:func:`psdbench.system.version.psdbench_version`)."""
    if name != "__version__":
        raise AttributeError(f"module 'psdbench' has no attribute {name!r}")
    from psdbench.system.version import psdbench_version

    return psdbench_version()


def run(*args: Any, **kwargs: Any) -> Any:
    """Run a grid and return its results as a DataFrame (see :func:`psdbench.session.run`)."""
    from psdbench.session import run as _run

    return _run(*args, **kwargs)


def load(db: Any = "psdbench-results.sqlite") -> Any:
    """A results store as a DataFrame, opened read-only (see :func:`psdbench.session.load`)."""
    from psdbench.session import load as _load

    return _load(db)


def load_solution(db: Any, row: Any) -> Any:
    """A cell's saved point as ``{variable: array}`` (see :func:`psdbench.harness.store.solutions.load_solution`)."""
    from psdbench.harness.store.solutions import load_solution as _load_solution

    return _load_solution(db, row)
