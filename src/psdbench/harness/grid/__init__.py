"""A grid: a TOML file or a built-in suite expanded to cells, its datasets, and the checks of what the user asked for.

* :mod:`~psdbench.harness.grid.expand`: grids expanded to cells (:func:`~psdbench.harness.grid.expand.expand`).
* :mod:`~psdbench.harness.grid.data`: a grid's datasets, resolved, loaded once, checked and fingerprinted.
* :mod:`~psdbench.harness.grid.selection`: a grid narrowed from the command line (``run -s / -d / -p``).
* :mod:`~psdbench.harness.grid.inputs`: checks of user input made before any work starts.
"""
