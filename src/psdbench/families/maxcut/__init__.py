"""Max-cut SDP relaxations of sparse graphs, solved on factors and judged by certified bounds.

Problem (Goemans and Williamson, J. ACM 42:1115-1145, 1995; the SDPLIB maxG files of S. Benson):
``max <C, X> s.t. diag(X) = 1, X psd`` with ``C = L / 4``, ``L`` the weighted Laplacian of a sparse
graph.  A point is a factor ``R`` (n x r, ``X = R R^T``) with a dual ``y``; nothing n x n is formed
(verification and objective in O(nnz r), the dual bound from the sparse ``C - Diag(y)`` with the
certified eigenvalue bound of :mod:`psdbench.linalg.certify`).

Modules
-------
graph      graphs: Laplacian cost, cut values, maxG (SDPA) files read back into graphs, and the seeded
           generators ``random`` and ``torus`` (2-D toroidal grid with +-1 weights)
bound      the dual bound ``1'y + n lambda_max(C - Diag y)`` with its kind
problem    the problem ``maxcut/sdp`` and its instance (verification, objective, reference)
contract   the kind protocol ``maxcut``
mixing     ``maxcut-mixing``: the mixing method (Wang, Chang and Kolter 2017), numba kernel
rtr        ``maxcut-rtr``: Riemannian trust regions (Absil, Baker, Gallivan 2007) on the product of spheres
           with rank adaptation (Journee, Bach, Absil, Sepulchre 2010); a folder: ``solver``, ``kernels``
boxqp      ``maxcut/boxqp`` (``diag(X) <= 1``; SDPLIB qpG files read as graphs) and ``boxqp-mixing``
rounding   Goemans-Williamson hyperplane rounding of a factor, best of k, one-flip local search
datasets   ``maxcut-gen/<generator>``
gset       ``gset-class/<name>``: seeded graphs of Gset's classes (random, toroidal, planar unions;
           weights 1 or +-1) at Gset's sizes and to 10^6 nodes, with an ``:sdp`` view for ``sdp/standard``
gset_files ``gset/<Gk>``: Gset's own files, when a user keeps them under ``$PSDBENCH_DATA/gset``
best_known best-known Gset cuts from the literature (``paper_values/gset_best_known.csv``)
report     scaling charts (time and memory against n, fitted exponents) and cuts beside bounds
"""

KIND = "maxcut"
