"""Problem families, one folder each, held beside its paper (see ``docs/architecture.md``).

``graph_classification``  the SDP relaxation of graph-based binary classification (GDPA classifier paper)
``mahalanobis``           Mahalanobis metric learning on balanced signed graphs (SGML paper)
``signed_graph``          balanced signed graph Laplacian learning by sparse LPs (BSGL paper)

The harness and the generic report code import nothing from here: every family reaches them
through entry points only.
"""
