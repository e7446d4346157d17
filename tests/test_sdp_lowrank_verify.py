"""Factored points of sdp/standard: the factored verification equals the dense one on the same
point (X formed on small instances), and the lower bound from y lies below the interior-point optimum."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.api import Budget, Dataset, Solution
from psdbench.families.sdp.data import from_blocks
from psdbench.families.sdp.errors import dimacs_errors
from psdbench.families.sdp.lowrank.factored import Factored
from psdbench.families.sdp.lowrank.lowrank_bound import dual_bound, factored_errors
from psdbench.families.sdp.solvers.native import SdpClarabel
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.reference import lower_bound, trace_upper
from psdbench.api.hooks import point_mismatch


def _inst(gen: str, n: int, seed: int, density: float = 0.4):
    return SdpStandard().build(Dataset(name=f"sdp-gen/{gen}", payload={"generator": gen}),
                               {"n": n, "density": density}, seed)


def two_block_lp() -> object:
    """Two PSD blocks (3, 2) and an LP block of 2, with asymmetric stored entries folded by the pattern."""
    rng = np.random.default_rng(5)

    def sym(k):
        M = rng.standard_normal((k, k))
        return M + M.T

    A = [[sym(3), sym(2), rng.standard_normal(2)] for _ in range(4)]
    A.append([np.eye(3), np.eye(2), np.ones(2)])  # fixes the trace
    return from_blocks((3, 2, -2), [sym(3), sym(2), np.array([1.0, 2.0])], A, [0.3, -0.2, 0.1, 0.5, 4.0])


@pytest.mark.parametrize("case", ["theta", "maxcut", "blocks"])
def test_factored_errors_equal_dense_errors(case):
    if case == "blocks":
        inst = SdpStandard().build(Dataset(name="t/blocks", payload={"sdp": two_block_lp()}), {}, 0)
    else:
        inst = _inst(case, 14, 3)
    d = inst.data
    F = Factored.of(d)
    rng = np.random.default_rng(1)
    R = rng.standard_normal((F.n_psd, 3))
    x_lp = rng.random(F.n_lp) if F.n_lp else None
    y = rng.standard_normal(d.m)
    X = F.to_dense(R, x_lp)
    # the operators against the stacked dense ones
    assert np.allclose(F.A_op(R, x_lp), d.A_op(X), rtol=1e-12, atol=1e-11)
    assert F.objective(R, x_lp) == pytest.approx(float(d.c_dense() @ X), rel=1e-12, abs=1e-11)
    mats, z_lp = F.slack(y)
    Zd = d.split(d.c_dense() - d.At_op(y))
    for Zj, Dj in zip(mats, [B for B, s in zip(Zd, d.block_sizes) if s > 0]):
        assert np.allclose(Zj.toarray(), (Dj + Dj.T) / 2, atol=1e-12)
    # the DIMACS errors through the instance, factored against dense
    ef = inst.evaluate(Solution(variables={"R": R, "y": y, **({"x_lp": x_lp} if F.n_lp else {})}))
    ed = dimacs_errors(d, X, y)
    for k in (1, 3, 4, 5):
        assert ef[f"err{k}"] == pytest.approx(ed.err[k - 1], rel=1e-9, abs=1e-12), k
    assert ef["err2"] == 0.0 and ed.err[1] <= 1e-12  # the dense path sees rounding of R R'
    assert ef["factored"] == 1.0 and ef["rank"] == 3.0


def test_factored_point_at_an_optimum_verifies_like_the_dense_one():
    """Clarabel's optimum factored by its eigen-decomposition: both paths agree, err6 included."""
    inst = _inst("theta", 12, 4)
    d = inst.data
    sol = SdpClarabel().solve(inst, Budget())
    X = d.split(sol.variables["X"])[0]
    w, V = np.linalg.eigh(X)
    R = V * np.sqrt(np.maximum(w, 0))
    y = sol.variables["y"]
    fac = Solution(variables={"R": R, "y": y})
    dense = Solution(variables={"X": Factored.of(d).to_dense(R), "y": y})
    assert point_mismatch(inst, fac.variables) is None
    ef, ed = inst.evaluate(fac), inst.evaluate(dense)
    for k in (1, 4, 5):
        assert ef[f"err{k}"] == pytest.approx(ed[f"err{k}"], rel=1e-6, abs=1e-13)
    e = factored_errors(d, R, None, y)
    if e.err[3] == 0.0:  # Z in the cone: err6 defined on the factored path, <X, Z> = tr(R' Z R)
        assert e.err[5] == pytest.approx(float(Factored.of(d).to_dense(R) @ (d.c_dense() - d.At_op(y)))
                                         / (1 + abs(e.primal_obj) + abs(e.dual_obj)), rel=1e-8, abs=1e-14)
    assert inst.objective(fac) == pytest.approx(inst.objective(sol), rel=1e-9)
    assert inst.verify(fac).ok == inst.verify(sol).ok


@pytest.mark.parametrize("gen", ["theta", "maxcut"])
def test_sparse_bound_is_below_the_optimum_and_equals_the_dense_bound(gen):
    inst = _inst(gen, 16, 2)
    d = inst.data
    opt = SdpClarabel().solve(inst, Budget())
    value = inst.objective(opt)
    rng = np.random.default_rng(0)
    for y in (opt.variables["y"], opt.variables["y"] + 1e-3 * rng.standard_normal(d.m), rng.standard_normal(d.m)):
        b = dual_bound(d, y)
        assert b["kind"] == "certified"
        assert b["bound"] <= value + 1e-7 * (1 + abs(value))
        # the dense reference's bound (reference.lower_bound) from the same y, to rounding
        assert b["bound"] == pytest.approx(lower_bound(d, y, trace_upper(d)), rel=1e-12, abs=1e-12)
    assert dual_bound(d, opt.variables["y"])["bound"] >= value - 1e-5 * (1 + abs(value))  # tight at the optimum


def test_bound_kind_none_without_a_trace_bound():
    d = from_blocks((2,), [np.array([[1.0, 0.0], [0.0, 0.0]])], [[np.array([[0.0, 1.0], [1.0, 0.0]])]], [0.5])
    assert dual_bound(d, np.zeros(1))["kind"] == "none"


def test_shapes_and_missing_lp_part_are_rejected():
    inst = SdpStandard().build(Dataset(name="t/blocks", payload={"sdp": two_block_lp()}), {}, 0)
    assert "R has shape" in point_mismatch(inst, {"R": np.zeros((4, 2)), "y": np.zeros(5)})
    with pytest.raises(ValueError, match="x_lp"):
        inst.objective(Solution(variables={"R": np.zeros((5, 2)), "y": np.zeros(5)}))
    assert sp.issparse(Factored.of(inst.data).slack(np.zeros(5))[0][0])


def test_diagonal_constraints_give_the_trace_weights_without_lsqr():
    """diag(X) = b rows: w = 1 / a_i on them, A*(w) = I exactly; theta (one trace row) falls back to LSQR."""
    from psdbench.families.sdp.generators import maxcut, theta

    d = maxcut(12, 0.4, 0)
    w = d._diagonal_weights(d.identity())
    assert w is not None and np.array_equal(d.At_op(w), d.identity()) and d.trace_bound() == 12.0
    t = theta(12, 0.4, 0)
    assert t._diagonal_weights(t.identity()) is None and t.trace_bound() == pytest.approx(1.0, abs=1e-12)
