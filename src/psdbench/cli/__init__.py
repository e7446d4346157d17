"""The command line: ``psdbench run | list | info | results | report | compare | asv ...``.

* :mod:`~psdbench.cli.commands`: the commands and their exit codes (the console script's
  ``psdbench.cli:main``).
* :mod:`~psdbench.cli.parser`: the grammar and its value checks (one-line usage errors, exit 2).
* :mod:`~psdbench.cli.describe`: ``psdbench info NAME`` and ``psdbench list``.

The top layer: it may import any package below it; nothing imports it.
"""

from psdbench.cli.commands import main

__all__ = ["main"]
