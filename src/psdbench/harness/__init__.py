"""The harness: a grid's cells run in isolated workers, every point verified, stored, and gapped
against a certified reference.

Rooms, bottom up (``tests/test_structure.py`` keeps the order; ``docs/harness.md`` explains them):

* :mod:`~psdbench.harness.floor` (what "certified" means and the floor below a reference),
  :mod:`~psdbench.harness.limits` (the machine's limits, checked first),
  :mod:`~psdbench.harness.progress` (the progress bar and counts);
* :mod:`psdbench.harness.store` (the SQLite store, the result columns, keys, claims, the
  reference cache, saved points) and :mod:`~psdbench.harness.asvspec` (a suite's asv settings);
* :mod:`~psdbench.harness.reference` (which reference each instance gets, and the gaps);
* :mod:`psdbench.harness.grid` (a grid expanded and checked) and :mod:`psdbench.harness.workers`
  (a cell run in a worker process, the local and Dask backends);
* :mod:`~psdbench.harness.runner` (:func:`~psdbench.harness.runner.run_grid`: the whole run).

It names no family: problems, solvers and datasets reach it only through the registry.
"""
