"""The results store: an embedded SQLite database of cells, references and runs, and what sits beside it.

* :mod:`~psdbench.harness.store.db`: :class:`~psdbench.harness.store.db.Store`, the one writer and reader.
* :mod:`~psdbench.harness.store.schema`: its tables and views, and the migration of an older store.
* :mod:`~psdbench.harness.store.results`: one cell's result, typed: the single definition of the results columns.
* :mod:`~psdbench.harness.store.keys`: what identifies an instance and a cell (``instance_key``, ``cell_key``, ``cell_id``, the code hash).
* :mod:`~psdbench.harness.store.claims`: which run is computing which cell.
* :mod:`~psdbench.harness.store.refcache`: certified references shared by stores (the user cache).
* :mod:`~psdbench.harness.store.solutions`: returned points kept beside the store.
"""
