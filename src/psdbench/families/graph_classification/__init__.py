"""Graph-based binary classification by its SDP relaxation.

Paper: "Projection-free Graph-based Classifier Learning using Gershgorin Disc Perfect Alignment"
(``shared/papers/gdpa-graph-classifier-sdp.txt``).

``problem.py``       the problem ``graph-classification`` and the paper's protocol (section 6.1)
``instance.py``      the SDP (8), its duals (12), (15)/(20), the reduced SDP and the certified reference
``contract.py``      what solvers may read of an instance (``GraphClassificationKind``)
``gdpa_lp.py``       ``gdpa-lp``: GDPA linearization of the modified dual (20) (section 5)
``gdpa_lp_elim.py``  ``gdpa-lp-elim``: GDPA on the split dual of the reduced SDP (psdbench's variant)
``reference.py``     cvxpy formulations and the certified conic reference (mixed into the instance)
``sparse.py``        sparse kNN Laplacian, reduced / split matrices, label propagation by CG,
                     the O(nnz) Gershgorin certificate (instances with N > ``dense_n``)
``sparse_elim.py``   ``gdpa-lp-elim`` on sparse instances (closed-form LP, preconditioned LOBPCG)
``sparse_gdpa_lp.py`` ``gdpa-lp`` on sparse instances (sparse LP rows (21) for HiGHS, LOBPCG)
``report.py``        the per-(dataset, graph, scaling, n) solver tables
``report_scaling.py`` the ``gdpa-scaling`` blocks: time and peak memory versus N, paper times beside
``suites/``          ``gdpa-wdbc``, ``gdpa-scaling``
"""
