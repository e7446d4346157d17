"""Large-margin triplet metric learning over the spectraplex (SDPMetric).

Paper: C. Shen, J. Kim, L. Wang, "Scalable Large-Margin Mahalanobis Distance Metric Learning"
(SDPMetric; ``shared/papers/sdpmetric-large-margin-metric-learning.txt``): maximize ``rho - C sum_r loss(<A_r, X> - rho)`` over ``X >= 0, tr X = 1`` (problems (4), (8)).

``problem.py``    the problem ``metric/triplet-margin`` (kind ``triplet-margin``): split, scaling,
                  PCA, triplets
``instance.py``   its instance: objective scored at the exact rho, verify, 3-NN evaluation, the
                  cvxpy formulation and the certified (Clarabel + Frank-Wolfe bound) reference
``losses.py``     losses (4), (9), (10), margins, gradient, the exact rho maximizer
``contract.py``   what solvers may read of an instance (``TripletMarginKind``)
``sdpmetric.py``  ``sdpmetric``: Algorithms 1 and 2 (rank-one Frank-Wolfe, backtracking line search)
``pg_spectraplex.py`` ``pg-spectraplex``: projected-gradient baseline (exact spectraplex projection)
``report.py``     ``sdpmetric-table2``: Table II layout beside ``paper_values/table2.csv``
``suites/``       ``sdpmetric-wine`` (small, offline)
"""
