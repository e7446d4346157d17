"""``gc-mixing`` (the max-cut mixing kernel on the reduced SDP (8)) against the Clarabel optimum."""

import numpy as np
import pytest

from psdbench.api import Budget, Status
from psdbench.families.graph_classification.mixing import GcMixing, reduced_cost, reduced_dual

from .conftest import random_instance


@pytest.mark.parametrize("n,graph,seed", [(30, "knn", 0), (60, "knn", 1), (80, "complete", 2)])
def test_mixing_bound_is_below_and_near_the_conic_optimum(registry, wdbc, n, graph, seed):
    inst = random_instance(registry, wdbc, n=n, graph=graph, seed=seed)
    ref = inst.certified_reference()  # Clarabel's optimum of (8) with its certified interval
    sol = GcMixing().solve(inst, Budget(), rank=12, tol=1e-12)
    assert sol.status is Status.OK
    assert inst.verify(sol).ok
    ev = inst.evaluate(sol)
    scale = max(1.0, abs(ref["value"]))
    assert ev["lower_bound"] <= ref["value"] + 1e-7 * scale  # a certified bound never passes p*
    assert ev["lower_bound"] >= ref["value"] - 1e-5 * scale  # and the mixing point reaches it
    assert sol.info["sdp_primal"] >= ref["lower"] - 1e-7 * scale  # its factored point is feasible
    assert sol.info["sdp_primal"] == pytest.approx(ref["value"], rel=1e-5, abs=1e-6)
    assert ev["xLx"] >= ref["lower"] - 1e-7 * scale  # the rounded labels are a feasible point
    x = sol.variables["x"]
    assert np.array_equal(x[: inst.m], inst.xhat) and set(np.unique(x)) <= {-1.0, 1.0}


def test_dual_sign_convention_annihilates_the_point(registry, wdbc):
    """``(Q + diag y) V = 0`` at a converged mixing point (stationarity, the module docstring)."""
    from psdbench.families.maxcut.mixing import mixing

    inst = random_instance(registry, wdbc, n=40, seed=3)
    Q, _ = reduced_cost(inst)
    V, _, why = mixing(-Q, 10, 0, tol=1e-14, max_sweeps=20000)
    y = reduced_dual(Q, V)
    r = (Q @ V) + y[:, None] * V
    assert np.max(np.abs(r)) <= 1e-5 * max(1.0, float(abs(Q).sum(axis=1).max()))


def test_a_short_run_is_still_certified_below_the_optimum(registry, wdbc):
    """Two sweeps: far from stationary, the shift by the certified lambda_min keeps the bound valid."""
    inst = random_instance(registry, wdbc, n=50, seed=4)
    ref = inst.certified_reference()
    sol = GcMixing().solve(inst, Budget(max_iter=2), rank=4)
    assert sol.status is Status.MAX_ITER and sol.info["lambda_shift"] > 0
    assert inst.verify(sol).ok
    assert inst.evaluate(sol)["lower_bound"] <= ref["value"]


def test_sparse_instance_is_certified_by_ldlt_below_the_dense_optimum(registry, wdbc):
    """The same data as a sparse instance (``dense_n = 0``): the family certifies the returned ``y``
    by LDL^T (no scaling vector), and the bound is below the dense instance's Clarabel optimum."""
    prob = registry.problem("graph-classification")
    dense = prob.build(wdbc, {"n": 120, "graph": "knn", "k": 5}, 6)
    sparse = prob.build(wdbc, {"n": 120, "graph": "knn", "k": 5, "dense_n": 0}, 6)
    assert sparse.is_sparse and not dense.is_sparse
    ref = dense.certified_reference()
    sol = GcMixing().solve(sparse, Budget(), rank=12, tol=1e-12)
    assert sparse.verify(sol).ok
    ev = sparse.evaluate(sol)
    assert ev["certificate"] == "ldlt"
    scale = max(1.0, abs(ref["value"]))
    assert ref["value"] - 1e-5 * scale <= ev["lower_bound"] <= ref["value"] + 1e-7 * scale
