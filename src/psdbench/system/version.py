"""psdbench's installed version, read from the package metadata when first asked.

``importlib.metadata`` takes a tenth of a second to import, so nothing reads it at import time: the
command line's first instants stay free of it (:mod:`psdbench.cli.commands`).  ``psdbench.__version__``
is this value.
"""

from __future__ import annotations

import functools


@functools.lru_cache(maxsize=1)
def psdbench_version() -> str:
    """The installed distribution's version (``0.0.0+unknown`` when running from an uninstalled tree).

    Returns
    -------
    str
    """
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("psdbench")
    except PackageNotFoundError:  # running from a source tree without installation
        return "0.0.0+unknown"
