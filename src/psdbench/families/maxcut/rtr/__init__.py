"""``maxcut-rtr``: Riemannian trust regions with rank adaptation on the max-cut SDP.

solver   the method and the solver class (paper citations and equations at the lines)
kernels  the compiled row kernels: gradient, Hessian, retraction, truncated CG

Nothing is imported here: ``psdbench list`` imports a plugin's parent packages, never its modules.
"""
