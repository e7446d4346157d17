"""Imported once by the worker fork server (:func:`psdbench.harness.workers.process.start_server`).

Importing this module imports the harness worker and every registered plugin's modules (and the
modules plugins list in ``preload``), so a worker forked from the server starts with them loaded.
It finds the plugins itself, so the server can start before the process that runs the grid has
discovered them: both import in parallel.
"""

from __future__ import annotations

import importlib

from psdbench.harness.workers import worker# noqa: F401  (the worker's own imports)
from psdbench.registry import discover


def _import_plugins() -> None:
    for name in discover().preload_modules():
        try:
            importlib.import_module(name)
        except Exception:  # a broken plugin is reported by the runner's registry, never fatal here
            continue


_import_plugins()
