"""sdp-qics and sdp-copt (optional): optima against cvxpy on small generated instances and on a PSD
block with an LP block, infeasibility, the kit's conformance, QICS's log as progress, and COPT's size
limit without a license (skipped with the reason, before any solve)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.api import Budget, Dataset, Status
from psdbench.families.sdp.solvers.copt_solver import SIZE_LIMIT, SdpCopt, _lower_packed
from psdbench.families.sdp.data import SdpData, from_blocks
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.section.progress import largest_error
from psdbench.families.sdp.solvers.qics_solver import SdpQics, qics_progress
from psdbench.testing import check_solver

SOLVERS = [SdpQics, SdpCopt]


def _inst(gen: str, n: int, seed: int):
    return SdpStandard().build(Dataset(name=f"sdp-gen/{gen}", payload={"generator": gen}),
                               {"n": n, "density": 0.4}, seed)


def _need(S):
    if importlib.util.find_spec(S.module) is None:
        pytest.skip(f"{S.package} not installed (pip install '.[{S.extra}]')")


def _cvxpy_value(inst) -> float:
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL")
    return float(form.problem.value)


def _two_block():
    """A PSD block, a 1 x 1 block and an LP block (COPT takes the 1 x 1 block as a scalar)."""
    rng = np.random.default_rng(4)
    n, k = 4, 3
    G = rng.standard_normal((n, n))
    As = []
    for _ in range(3):
        M = rng.standard_normal((n, n))
        As.append([(M + M.T) / 2, rng.standard_normal((1, 1)), rng.standard_normal(k)])
    b = [float(np.trace(a[0]) + a[1][0, 0] + a[2].sum()) for a in As]
    As.append([np.eye(n), np.eye(1), np.ones(k)])
    b.append(float(n + 1 + k))
    d = from_blocks((n, 1, -k), [G @ G.T / n + 0.1 * np.eye(n), np.array([[0.7]]), rng.random(k) + 0.5], As, b)
    return SdpStandard().build(Dataset(name="t/blocks", payload={"sdp": d}), {}, 0)


@pytest.mark.parametrize("S", SOLVERS)
@pytest.mark.parametrize("which", ["maxcut", "theta", "blocks"])
def test_match_cvxpy(S, which):
    _need(S)
    inst = _two_block() if which == "blocks" else _inst(which, 12, 0)
    sol = S().solve(inst, Budget())
    assert sol.status is Status.OK, sol.message
    assert inst.verify(sol).ok, inst.verify(sol).details
    assert inst.objective(sol) == pytest.approx(_cvxpy_value(inst), rel=1e-6, abs=1e-6)
    assert sol.info["status"] and sol.info["log"]


@pytest.mark.parametrize("S", SOLVERS)
def test_infeasible(S):
    _need(S)
    inst = _inst("infeasible", 8, 0)
    sol = S().solve(inst, Budget())
    assert sol.status is Status.INFEASIBLE, sol.message
    if "y_ray" in sol.variables:  # QICS returns its certificate, COPT only its word
        assert inst.evaluate(sol).get("cert_primal_infeasible") == 1.0


@pytest.mark.parametrize("S", SOLVERS)
def test_contract(S):
    _need(S)
    check_solver(S(), lambda: [_inst("maxcut", 8, 0), _inst("theta", 8, 1)], deadline_s=60)


def test_qics_log_is_its_progress():
    _need(SdpQics)
    inst = _inst("theta", 10, 0)
    sol = SdpQics().solve(inst, Budget())
    assert len(sol.trace) == sol.iterations + 1 and [p["iter"] for p in sol.trace] == list(range(sol.iterations + 1))
    gaps = [largest_error(p) for p in sol.trace]
    assert {w for _, w in gaps} == {"its own gap"} and gaps[-1][0] < 1e-7
    assert qics_progress("   3   5.3e-03   1.9e-02  |  3.011e+00   3.020e+00   3.0e-03  |  9.6e-03   5.5e-03  |  0.02    ") == [
        {"t": 0.02, "iter": 3.0, "objective": 3.011, "dual_objective": 3.02, "solver_gap": 3.0e-3}]


def test_copt_lower_triangle_by_columns():
    M = np.array([[1.0, 2.0, 4.0], [2.0, 3.0, 5.0], [4.0, 5.0, 6.0]])
    assert _lower_packed([1, 2, 4, 3, 5, 6], 3).tolist() == M.ravel().tolist()


def test_copt_past_its_size_limit_is_skipped_with_the_reason(monkeypatch):
    _need(SdpCopt)
    S = SdpCopt()
    monkeypatch.setattr(SdpCopt, "licensed", lambda self: False)
    n = SIZE_LIMIT + 1  # an LP with SIZE_LIMIT + 1 constraints: past the limit before any solve
    d = SdpData(block_sizes=(-n,), A=sp.identity(n, format="csr"), b=np.ones(n), c=sp.csr_matrix(np.ones((1, n))))
    why = S.skip_reason(SdpStandard().build(Dataset(name="t/big", payload={"sdp": d}), {}, 0))
    assert why and f"limited to {SIZE_LIMIT} variables and {SIZE_LIMIT} constraints" in why and f"{n} constraints" in why
    assert S.skip_reason(_inst("maxcut", 8, 0)) is None
