"""Balanced signed graph Laplacian learning by sparse linear programming.

Paper: "Efficient Learning of Balanced Signed Graphs via Sparse Linear Programming"
(``shared/papers/balanced-signed-graph-learning-sparse-lp.txt``).

``problem.py``         the problem ``signed-graph``: verification, HQIC objective, F-measure, RE, AE
``data.py``            the section VI-A generator (``synthetic/balanced-gmrf``) and ``obs/<file.csv>``
``contract.py``        what solvers may read of an instance (``SignedGraphKind``)
``balanced_clime.py``  ``balanced-clime``: sections IV-V; ``clime_lp.py`` the column LPs (9), (12);
                       ``slp_admm.py`` the ADMM of section V-B
``baselines.py``       ``clime`` and ``glasso`` with ``balancing.py``'s Min / Max / Greedy balancing
``report.py``, ``paper_values.py``, ``paper_values/``  Table II with the paper's values
``suites/``            ``signed-graph-synthetic``
"""
