"""psdbench: a pluggable benchmark harness for optimization over the PSD cone in learning problems.

Python API (:mod:`psdbench.session`): ``psdbench.run(...)`` runs a grid and returns a pandas
DataFrame of its cells, ``psdbench.load(db)`` reads a results store (read-only), and
``psdbench.load_solution(db, row)`` a cell's saved point (``run(..., save_solutions=True)``).
"""

from typing import Any


def __getattr__(name: str) -> Any:
    """``__version__``, read from the installed metadata when first asked (``importlib.metadata``
    takes a tenth of a second to import: the command line's first instants stay free of it, so that
    a Ctrl-C then ends as anywhere else, :mod:`psdbench.cli`)."""
    if name != "__version__":
        raise AttributeError(f"module 'psdbench' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("psdbench")
    except PackageNotFoundError:  # running from a source tree without installation
        value = "0.0.0+unknown"
    globals()["__version__"] = value
    return value


def run(*args: Any, **kwargs: Any) -> Any:
    """Run a grid and return its results as a DataFrame (see :func:`psdbench.session.run`)."""
    from .session import run as _run

    return _run(*args, **kwargs)


def load(db: Any = "psdbench-results.sqlite") -> Any:
    """A results store as a DataFrame, opened read-only (see :func:`psdbench.session.load`)."""
    from .session import load as _load

    return _load(db)


def load_solution(db: Any, row: Any) -> Any:
    """A cell's saved point as ``{variable: array}`` (see :func:`psdbench.harness.solutions.load_solution`)."""
    from .harness.solutions import load_solution as _load_solution

    return _load_solution(db, row)
