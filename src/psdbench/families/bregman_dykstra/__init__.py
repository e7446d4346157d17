"""Bregman-projection metric learning on pair constraints with the stochastic Dykstra algorithm.

Paper: "Stochastic Dykstra algorithms for metric learning with positive definite covariance
descriptors" (``shared/papers/stochastic-dykstra-psd-metric-learning.txt``): minimize the Bregman
divergence ``BD((W, xi), (I, 1))`` subject to K half-spaces ``y_k <A_k, W> <= y_k b_k xi_k`` (2),
by Dykstra's algorithm with cyclic, random or per-epoch permuted order (Algorithm 1) and an
O(n^3) projection onto one half-space (section 4).

``divergence.py``  the slack seeds ISBD / L2BD / REBD (section 2.2)
``data.py``        the section 5.1 generator, dataset ``synthetic/dykstra-halfspaces``
``pairs.py``       section 5.2 instances from labelled data (``pairs = "labels"``: A_k = v v' + eps I
                   on scaled vectors; ``"covariance"``: log / sqrt / chol / id covariance descriptors
                   of scikit-learn's 8x8 digits), split, pair sampling, 3-NN against Eye
``textures.py``    ``images/textures``: section 5.2's Brodatz protocol on scikit-image's three bundled
                   textures (sub-images, random patches, covariance descriptors)
``problem.py``     the problem ``metric/bregman-pairs`` (kind ``bregman-pairs``)
``instance.py``    its instance: objective, verify, the cvxpy formulation, the certified
                   (Clarabel + Lagrange dual) reference
``contract.py``    what solvers may read of an instance (``BregmanPairsKind``)
``projection.py``  the projection onto one half-space: J_t (7), interval (8), update (6); the
                   rank-one (Sherman-Morrison) step for eps = 0; the pencil route for
                   ill-conditioned A_k
``dykstra.py``     ``dykstra``: Algorithm 1 with the section 4.1 gap bound as stopping rule
``report.py``      section ``bregman-dykstra``: Fig. 1, epochs to 1e-6, the bound check
``report_fig2.py`` section ``bregman-dykstra-classification``: Fig. 2 and its claim
"""
