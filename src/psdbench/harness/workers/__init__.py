"""Running one cell in a worker process: isolation, its lifetime, its meter, and the backends that
feed workers.

* :mod:`~psdbench.harness.workers.worker`: what runs inside the worker: build the instance, run the
  solver (or the reference), recompute the objective, verify, repair, keep the curve.
* :mod:`~psdbench.harness.workers.tasks`: one task (a cell or a reference) and what its end means.
* :mod:`~psdbench.harness.workers.process`, :mod:`~psdbench.harness.workers.spawned`,
  :mod:`~psdbench.harness.workers.child`, :mod:`~psdbench.harness.workers.preload`: worker processes
  (fork server or fresh interpreter) and their side of the messages.
* :mod:`~psdbench.harness.workers.lifetime`, :mod:`~psdbench.harness.workers.meter`: process groups,
  deadlines and the memory / CPU a cell used.
* :mod:`~psdbench.harness.workers.shared`: what a long-lived worker keeps between cells.
* :mod:`~psdbench.harness.workers.local`, :mod:`~psdbench.harness.workers.cluster`: the two backends
  (threads feeding local workers; tasks of a Dask cluster).
"""
