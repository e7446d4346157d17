"""General SDPs in the DIMACS primal-dual form: the SDPLIB test set and solvers judged on it.

Test set: SDPLIB 1.2 (B. Borchers, "SDPLIB 1.2, a library of semidefinite programming test
problems", Optim. Methods Softw. 11:683-690, 1999), read from SDPA sparse files.  Accuracy: the six
DIMACS error measures as used by H. D. Mittelmann ("An independent benchmarking of SDP and SOCP
solvers", Math. Prog. 95:407-430, 2003).  Certified lower bounds: the a-priori-bound form of
C. Jansen, D. Chaykin and C. Keil ("Rigorous error bounds for the optimal value in semidefinite
programming", SIAM J. Numer. Anal. 46:180-200, 2007; the VSDP package).

Modules
-------
sdpa_io       the SDPA sparse reader (``.dat-s``, gzipped too)
data          :class:`SdpData`: block-diagonal data, the sparse operators A(X) and A*(y)
errors        the six DIMACS errors and the infeasibility certificate checks
problem       the problem ``sdp/standard`` and its instance
generators    seeded max-cut, Lovasz-theta and infeasible generators (offline)
datasets      ``sdplib/<name>``, ``sdpa-dir/<name>`` and ``sdp-gen/<name>``
svec          svec conventions of SCS (lower triangle) and Clarabel (upper triangle)
reference     two interior-point solves and the certified lower bound
native        native adapters ``sdp-scs`` (dual form or (P)), ``sdp-clarabel``, ``sdp-cvxopt``
sdpa          ``sdp-sdpa`` (``sdpa-python``) and the SeDuMi input both SDPA backends share
sdpa_gmp      ``sdp-sdpa-gmp``: SDPA in multiple precision, in a child process (its own folder)
report        the Mittelmann-style section
"""

KIND = "sdp"
