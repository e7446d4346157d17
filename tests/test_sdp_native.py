"""Native SDP adapters: svec conventions, optima against cvxpy on small generated instances,
infeasibility certificates, the budget, and the contract."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from psdbench.api import Budget, Dataset, Status
from psdbench.families.sdp.data import from_blocks
from psdbench.families.sdp.solvers.native import SdpClarabel, SdpCvxopt, SdpScs
from psdbench.families.sdp.solvers.sdpa import SdpSdpa
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.solvers.svec import smat, svec, svec_indices, svec_matrix
from psdbench.testing import check_solver

S2 = np.sqrt(2.0)
IPMS = [SdpClarabel, SdpSdpa, SdpCvxopt]


def _inst(gen: str, n: int, seed: int, density: float = 0.4):
    return SdpStandard().build(Dataset(name=f"sdp-gen/{gen}", payload={"generator": gen}),
                               {"n": n, "density": density}, seed)


def test_svec_orders_by_hand():
    X = np.array([[1.0, 2.0, 4.0], [2.0, 3.0, 5.0], [4.0, 5.0, 6.0]])
    # SCS: lower triangle by column: (0,0) (1,0) (2,0) (1,1) (2,1) (2,2)
    assert np.allclose(svec(X, "scs"), [1, 2 * S2, 4 * S2, 3, 5 * S2, 6])
    # Clarabel: upper triangle by column: (0,0) (0,1) (1,1) (0,2) (1,2) (2,2)
    assert np.allclose(svec(X, "clarabel"), [1, 2 * S2, 3, 4 * S2, 5 * S2, 6])
    for order in ("scs", "clarabel"):
        S = svec_matrix(3, order)
        assert np.allclose(S @ X.ravel(), svec(X, order))
        assert np.allclose(S.T @ svec(X, order), X.ravel()) and np.allclose(smat(svec(X, order), 3, order), X)
        Y = np.arange(9.0).reshape(3, 3) + np.arange(9.0).reshape(3, 3).T
        assert svec(X, order) @ svec(Y, order) == pytest.approx(np.sum(X * Y))
    r, c = svec_indices(4, "scs")
    assert np.all(r >= c)
    r, c = svec_indices(4, "clarabel")
    assert np.all(r <= c)


def test_svec_convention_matches_the_solvers():
    """min <C, X> s.t. X_00 = 1, X_22 = 2, X psd, with an asymmetric pattern in C: a wrong svec
    order or scale gives another optimum.  Compared with cvxpy."""
    C = np.array([[2.0, 0.3, -1.0, 0.0], [0.3, 1.0, 0.2, 0.7], [-1.0, 0.2, 3.0, 0.4], [0.0, 0.7, 0.4, 1.5]])
    E = [np.zeros((4, 4)) for _ in range(3)]
    E[0][0, 0] = 1
    E[1][2, 2] = 1
    E[2][1, 3] = E[2][3, 1] = 0.5  # X_13 = 0.1
    d = from_blocks((4,), [C], [[e] for e in E], [1.0, 2.0, 0.1])
    inst = SdpStandard().build(Dataset(name="t/svec", payload={"sdp": d}), {}, 0)
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL")
    want = form.problem.value
    for S, opts, tol in ((SdpScs, {"eps_abs": 1e-7, "eps_rel": 1e-7}, 1e-4), (SdpClarabel, {}, 1e-6)):
        sol = S().solve(inst, Budget(), **opts)
        assert inst.objective(sol) == pytest.approx(want, abs=tol), S.name
        assert inst.verify(sol).max_residual < 1e-4


@pytest.mark.parametrize("gen", ["maxcut", "theta"])
def test_native_ipms_match_cvxpy(gen):
    inst = _inst(gen, 12, 0)
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL")
    want = form.problem.value
    ran = 0
    for S in IPMS:
        if S().skip_reason(inst):
            continue
        sol = S().solve(inst, Budget())
        # SDPA may end "pdFEAS" (max_iter) on a point that verifies: the point is what is judged
        assert sol.status in (Status.OK, Status.MAX_ITER), (S.name, sol.message)
        assert inst.verify(sol).ok, (S.name, inst.verify(sol).details)
        assert inst.objective(sol) == pytest.approx(want, rel=1e-6, abs=1e-6), S.name
        ran += 1
    assert ran >= 1
    sol = SdpScs().solve(inst, Budget(), eps_abs=1e-8, eps_rel=1e-8)
    assert inst.objective(sol) == pytest.approx(want, rel=1e-5)


def test_scs_chunks_record_a_curve_and_stop_at_the_budget():
    inst = _inst("theta", 14, 1)
    sol = SdpScs().solve(inst, Budget(), chunk_iters=25, eps_abs=1e-7, eps_rel=1e-7)
    assert len(sol.iterates) >= 2 and sol.iterations > 25
    t = [p[0] for p in sol.iterates]
    assert t == sorted(t)
    # an expired budget: SCS returns its point at once, marked timeout or not solved
    quick = SdpScs().solve(inst, Budget.seconds(1e-4), eps_abs=1e-12, eps_rel=1e-12)
    assert quick.status in (Status.TIMEOUT, Status.MAX_ITER)


def test_infeasible_certificates_hold():
    inst = _inst("infeasible", 8, 0)
    for S in [SdpScs, SdpClarabel, SdpCvxopt]:
        if S().skip_reason(inst):
            continue
        sol = S().solve(inst, Budget())
        assert sol.status is Status.INFEASIBLE, S.name
        ev = inst.evaluate(sol)
        assert ev.get("cert_primal_infeasible") == 1.0, (S.name, ev)
        assert not inst.verify(sol).ok


def test_contract_of_native_solvers():
    def instances():
        return [_inst("maxcut", 8, 0), _inst("theta", 8, 1)]

    for S in [SdpClarabel, SdpSdpa, SdpCvxopt]:
        if S().skip_reason(instances()[0]):
            continue
        check_solver(S(), instances, deadline_s=60)


@pytest.mark.parametrize("S", [SdpSdpa, SdpCvxopt])
def test_optional_extras_skip_with_a_reason(S, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == S.module else real(name, *a))
    why = S().skip_reason(_inst("maxcut", 6, 0))
    assert why and "not installed" in why and S.extra in why


def test_two_block_with_lp_block_against_cvxpy():
    """A PSD block and a diagonal block: every adapter maps the LP block and the cone order right."""
    rng = np.random.default_rng(5)
    n, k = 4, 3
    G = rng.standard_normal((n, n))
    C1 = G @ G.T / n + 0.1 * np.eye(n)
    c2 = rng.random(k) + 0.5
    As, b = [], []
    for _ in range(3):
        M = rng.standard_normal((n, n))
        As.append([(M + M.T) / 2, rng.standard_normal(k)])
    X0 = np.eye(n)
    x0 = np.ones(k)
    b = [float(np.sum(a[0] * X0) + a[1] @ x0) for a in As]
    As.append([np.eye(n), np.ones(k)])
    b.append(float(n + k))  # bounded: trace of everything fixed
    d = from_blocks((n, -k), [C1, c2], As, b)
    inst = SdpStandard().build(Dataset(name="t/two-block", payload={"sdp": d}), {}, 0)
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL")
    want = form.problem.value
    for S in IPMS:
        if S().skip_reason(inst):
            continue
        sol = S().solve(inst, Budget())
        assert inst.objective(sol) == pytest.approx(want, rel=1e-6, abs=1e-6), S.name
        assert inst.verify(sol).max_residual < 1e-5, S.name
    assert inst.data.trace_bound() == pytest.approx(n + k)


@pytest.mark.parametrize("gen", ["maxcut", "theta"])
def test_scs_on_either_form_reaches_the_cvxpy_optimum(gen):
    """SCS given (P) (svec(X) as variables) or the dual form: the same optimum, and y, Z mapped back
    so that the DIMACS errors are small on both."""
    inst = _inst(gen, 10, 4)
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL")
    for f in ("dual", "primal"):
        sol = SdpScs().solve(inst, Budget(), eps_abs=1e-8, eps_rel=1e-8, form=f)
        assert sol.status is Status.OK and sol.info["form"] == f
        assert inst.objective(sol) == pytest.approx(form.problem.value, rel=1e-5), f
        assert inst.verify(sol).max_residual < 1e-5, (f, inst.verify(sol).details)


def test_scs_primal_form_certifies_an_infeasible_problem():
    inst = _inst("infeasible", 8, 0)
    sol = SdpScs().solve(inst, Budget(), form="primal")
    assert sol.status is Status.INFEASIBLE
    assert inst.evaluate(sol).get("cert_primal_infeasible") == 1.0


def test_sdpa_versions_without_sdpa_python_say_absent_and_do_not_raise(monkeypatch):
    """Without sdpa-python (the README's test install has no `sdpa` extra) the adapter's library
    versions, read when a grid is expanded, say absent instead of raising."""
    import importlib.util

    from psdbench.families.sdp.solvers.sdpa import SdpSdpa, sdpa_library_version

    real = importlib.util.find_spec

    def hidden(name, *args, **kwargs):
        if name == "sdpap" or name.startswith("sdpap."):
            if name != "sdpap":
                raise ModuleNotFoundError(f"No module named {name.split('.')[0]!r}")
            return None
        return real(name, *args, **kwargs)

    monkeypatch.setattr(importlib.util, "find_spec", hidden)
    sdpa_library_version.cache_clear()  # cached per process: read again without the package
    assert sdpa_library_version() == "absent"
    assert SdpSdpa().library_versions()["SDPA"] == "absent"
    sdpa_library_version.cache_clear()  # the next test reads the installed one again
