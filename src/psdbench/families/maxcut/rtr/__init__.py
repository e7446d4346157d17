"""``maxcut-rtr``: Riemannian trust regions with rank adaptation on the max-cut SDP.

solver   the method and the solver class (paper citations and equations at the lines)
kernels  the compiled row kernels: gradient, Hessian, retraction, truncated CG
"""

from .solver import MaxcutRtr, Point, Rows, negative_directions, solve_rtr, start_rank, tcg  # noqa: F401
