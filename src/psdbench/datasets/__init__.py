"""Dataset loaders: scikit-learn's bundled sets, the CSV collection under ``PSDBENCH_DATA``, synthetic generators."""

import os
from pathlib import Path

from ..api import DataError

DATA_ENV = "PSDBENCH_DATA"


def data_dir() -> Path:
    """The data directory given by ``PSDBENCH_DATA``; a one-line :class:`DataError` if unset or missing."""
    value = os.environ.get(DATA_ENV)
    if not value:
        raise DataError(f"{DATA_ENV} is not set: point it at the datasets directory (e.g. ../shared/datasets)")
    path = Path(value).expanduser()
    if not path.is_dir():
        raise DataError(f"{DATA_ENV}={value} is not a directory: point it at the datasets directory")
    return path
