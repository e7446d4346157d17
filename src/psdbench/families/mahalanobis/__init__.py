"""Mahalanobis metric learning on balanced signed graphs.

Paper: "Signed Graph Metric Learning via Gershgorin Disc Perfect Alignment"
(``shared/papers/sgml-signed-graph-metric-learning-gdpa.txt``).  Problem names stay
``metric/<objective>``; the kind is ``mahalanobis`` ("metric" alone means a task metric here).

``problem.py``        the problems ``metric/{mcml,deml,lsml,lmnn,glr}`` and both protocols (sections
                      6.2, 6.3)
``instance.py``       an instance of problem (26): objective, verification, evaluation and the
                      certified reference (Frank-Wolfe bound)
``objectives.py``     the five objectives of Table 2 with analytic gradients
``contract.py``       what solvers may read of an instance (``MahalanobisKind``)
``sgml.py``           ``sgml`` / ``pgml``: Algorithm 1; ``sgml_kernels.py`` its initialization (4.2.1),
                      step size (35)-(38), LP (41) and the other pieces of a block step (5.2)
``pd_cone.py``        ``pd-cone``: the projected-gradient baseline of section 6
``report.py``, ``paper_values.py``, ``paper_values/``  Tables 4-7 with the paper's values
``suites/``           ``sgml-objective[-wdbc]``, ``sgml-classification[-wdbc]``
"""
