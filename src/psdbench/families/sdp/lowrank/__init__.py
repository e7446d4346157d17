"""Factored points ``X_j = R_j R_j'`` and the low-rank methods that return them, with certified bounds.

* :mod:`~psdbench.families.sdp.lowrank.factored`: a factored point verified without forming ``X``.
* :mod:`~psdbench.families.sdp.lowrank.lowrank_bound`: its DIMACS errors and the lower bound from a dual ``y``.
* :mod:`~psdbench.families.sdp.lowrank.burer_monteiro`: ``sdp-burer-monteiro`` (SDPLR's augmented Lagrangian).
* :mod:`~psdbench.families.sdp.lowrank.bm_kernels`: its data layout (SDPLR's sparse and low-rank storage) and compiled inner loop.
* :mod:`~psdbench.families.sdp.lowrank.sketchycgal`: ``sdp-sketchycgal`` (trace-bounded SDPs, a Nystrom factor).
"""
