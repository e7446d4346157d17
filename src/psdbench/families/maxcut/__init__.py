"""Max-cut at Gset scale and beyond (issue 41).

``gset.py``: seeded generators of Gset's graph classes (dataset collection ``gset-class``);
``best_known.py``: best-known cuts of the Gset graphs from the literature, with their source.
"""
