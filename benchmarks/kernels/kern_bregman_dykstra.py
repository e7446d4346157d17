"""Stochastic Dykstra (Bregman projections on half-spaces, Algorithm 1): the kernels of ``dykstra``.

Instances: the section 5.1 half-spaces (``synthetic/dykstra-halfspaces``, K = 20, ISBD,
lambda = 1e-3; ``benchmarks/instances.py``) at matrix size n.  Kernels, timed on the inputs
``dykstra`` itself gave them in its second epoch (recorded in an untimed run): one Bregman
projection (section 4: one eigendecomposition of ``A^{-1/2} W^{-1} A^{-1/2}`` and the root of J,
(7)-(8)), the update of W by (6), and the per-epoch repaired point with its section 4.1 bound.
Whole epochs of each order (rand, perm, cyclic; section 3) are capped solves.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import cached, in_place, iteration_calls, per_iteration_calls, run_calls, run_solve

from psdbench.api import Budget
from psdbench.families.bregman_dykstra import dykstra, projection
from psdbench.families.bregman_dykstra.dykstra import Dykstra, repaired_point
from psdbench.families.bregman_dykstra.projection import project, slack_at

SIZES = [10, 20, 50, 100]
FAMILY = "dykstra"
K = 20
EPOCHS = (1, 3)  # the iteration is one epoch (epochs 2 and 3 measured) (K projections and the section 4.1 bound)
DENSE3 = {"expected": "O(n^3)", "expected_slope": 3.0, "sparse": False}


def _inst(cache: dict, n: int):
    from benchmarks.instances import bregman_pairs

    return cached(cache, ("dykstra", n), lambda: bregman_pairs(n, K))


def _solve(inst, epochs: int, order: str = "rand"):
    return Dykstra().solve(inst, Budget(max_iter=epochs), order=order, gap_tol=0.0)


def _calls(cache: dict, n: int, owner, attr: str) -> list:
    """Sampled inputs of dykstra's calls to ``owner.attr`` in epochs 2-3 (order rand; the measured epochs)."""
    inst = _inst(cache, n)
    return cached(cache, ("dykstra-calls", n, attr),
                  lambda: iteration_calls(lambda k: _solve(inst, k), EPOCHS, owner, attr))


def test_projection(benchmark, cache, size):
    calls = _calls(cache, size, dykstra, "project")
    st = run_calls(benchmark, project, calls, family=FAMILY, kernel="projection", size=size, **DENSE3)[0]
    (Winv, A_isqrt, xi0, b, c, div), _ = calls[0]
    # closed form of J = 0 (section 4): the new point is on the half-space's boundary, <A, W> = b xi
    A = np.linalg.inv(A_isqrt @ A_isqrt)
    lhs, rhs = float(np.sum(A * st.W())), b * slack_at(st.u, xi0, b, c, div)
    assert abs(lhs - rhs) <= 1e-7 * max(1.0, abs(rhs))
    assert st.lo < st.u < st.hi  # interval (8)


def test_w_update(benchmark, cache, size):
    """W = Y(delta) of (6) from the projection's eigen-data."""
    calls = _calls(cache, size, projection.Step, "W")
    W = run_calls(benchmark, projection.Step.W, calls, rounds=20, family=FAMILY, kernel="w_update", size=size,
                  **DENSE3)[0]
    (st, u), _ = calls[0]
    # (6) inverted by a dense solve: W^{-1} = B^{-T} diag(d + u) B^{-1}
    Binv = np.linalg.inv(st.B)
    np.testing.assert_allclose(W @ (Binv.T @ np.diag(st.d + u) @ Binv), np.eye(size), atol=1e-6)
    # (4): W^{-1} = W0^{-1} + u A at the projection's own root (from its recorded input)
    (Winv, A_isqrt, xi0, b, c, div), _ = _calls(cache, size, dykstra, "project")[0]
    s0 = project(Winv, A_isqrt, xi0, b, c, div)
    A = np.linalg.inv(A_isqrt @ A_isqrt)
    np.testing.assert_allclose(s0.W() @ (Winv + s0.u * A), np.eye(size), atol=1e-6)


def test_repaired_point(benchmark, cache, size):
    """Per epoch: the repaired feasible point and the section 4.1 bound."""
    inst = _inst(cache, size)
    calls = _calls(cache, size, dykstra, "repaired_point")
    xibar, obj, bound = run_calls(benchmark, repaired_point, calls, rounds=20, family=FAMILY, kernel="repaired_point",
                                  size=size, expected="O(K n^2 + n^3)", expected_slope=3.0, sparse=False)[0]
    W = calls[0][0][1]
    m = np.einsum("kij,ij->k", inst.A, W)  # every half-space holds at the repaired slack
    assert np.all(inst.y * (m - inst.b * xibar) <= 1e-9 * np.maximum(1.0, np.abs(m)))
    assert abs(obj - inst.value(W, xibar)) <= 1e-12 * max(1.0, abs(obj))


@pytest.mark.parametrize("cap", EPOCHS)
@pytest.mark.parametrize("order", ["rand", "perm", "cyclic"])
def test_epoch(benchmark, cache, size, order, cap):
    """``dykstra`` capped at ``cap`` epochs for each order of section 3."""
    inst = _inst(cache, size)
    targets = {"projection": (dykstra, "project"), "w_update": (projection.Step, "W"),
               "repaired_point": (dykstra, "repaired_point")}
    solve = lambda k: _solve(inst, k, order)  # noqa: E731
    calls = per_iteration_calls(solve, targets, *EPOCHS) if cap == EPOCHS[-1] else {}
    name = "dykstra" if order == "rand" else f"dykstra-{order}"
    extra = in_place(benchmark, solve, targets, *EPOCHS) if calls else {}
    sol = run_solve(benchmark, lambda: solve(cap), rounds=3, measured=cap - EPOCHS[0] if calls else 0, family=FAMILY,
                    role="solve", solver=name, size=size, iterations=cap,
                    calls={f"{FAMILY}:{k}": v for k, v in calls.items()}, **extra)
    assert sol.iterations == cap
    assert inst.verify(sol).ok
