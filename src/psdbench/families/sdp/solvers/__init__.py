"""The SDP solvers through their own APIs, on ``sdp/standard`` instances.

* :mod:`~psdbench.families.sdp.solvers.native`: SCS, Clarabel and CVXOPT through their Python APIs (no cvxpy).
* :mod:`~psdbench.families.sdp.solvers.sdpa`, :mod:`~psdbench.families.sdp.solvers.sdpa_gmp`
  (with its child, :mod:`~psdbench.families.sdp.solvers.sdpa_gmp_child`): SDPA and SDPA-GMP.
* :mod:`~psdbench.families.sdp.solvers.binaries`: the CSDP and DSDP programs on an SDPA file, run
  under the budget by :mod:`~psdbench.families.sdp.solvers.child`.
* :mod:`~psdbench.families.sdp.solvers.lowrank_peers`: the LoRADS and SDPLR programs the same way, their
  solution files read back as factored or dense points, their own claimed accuracies kept beside.
* :mod:`~psdbench.families.sdp.solvers.copt_solver`, :mod:`~psdbench.families.sdp.solvers.qics_solver`: COPT and QICS.
* :mod:`~psdbench.families.sdp.solvers.svec`: the packed triangles SCS and Clarabel use for PSD cones.
"""
