"""sdp/standard: DIMACS errors against a direct dense computation, the certified reference's
bounds against closed-form optima, the generators' structure, and the cvxpy formulation."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

from psdbench.api import Dataset, Solution
from psdbench.families.sdp.contract import SdpKind
from psdbench.families.sdp.data import from_blocks
from psdbench.families.sdp.errors import dimacs_errors, dual_infeasibility_holds, primal_infeasibility_holds
from psdbench.families.sdp.generators import infeasible, maxcut, theta
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.reference import feasible_value, lower_bound
from psdbench.testing import check_problem


def _min_eig_problem(n: int = 5, seed: int = 0):
    """min <C, X> s.t. tr X = 1, X psd: optimum lambda_min(C) at X = v v', y = lambda_min, Z = C - y I."""
    rng = np.random.default_rng(seed)
    G = rng.standard_normal((n, n))
    C = (G + G.T) / 2
    return C, from_blocks((n,), [C], [[np.eye(n)]], [1.0], name="min-eig")


def _direct_errors(C, As, b, X, y, Z):
    """The six DIMACS errors with dense matrices, written out independently of system/errors.py."""
    AX = np.array([np.sum(A * X) for A in As])
    Aty = sum(yi * A for yi, A in zip(y, As))
    nb, nc = 1 + np.max(np.abs(b)), 1 + np.max(np.abs(C))
    pobj, dobj = np.sum(C * X), b @ y
    den = 1 + abs(pobj) + abs(dobj)
    return [np.linalg.norm(AX - b) / nb, max(0, -np.linalg.eigvalsh(X)[0] / nb),
            # one PSD block: DIMACS's block norm is its Frobenius norm
            np.linalg.norm(Aty + Z - C, "fro") / nc, max(0, -np.linalg.eigvalsh(Z)[0] / nc),
            (pobj - dobj) / den, np.sum(X * Z) / den]


def test_dimacs_errors_at_the_optimum_and_perturbed():
    C, d = _min_eig_problem()
    w, V = np.linalg.eigh(C)
    X, y = np.outer(V[:, 0], V[:, 0]), np.array([w[0]])
    Z = C - w[0] * np.eye(len(C))
    e = dimacs_errors(d, X.ravel(), y, Z.ravel())
    assert e.max_err < 1e-12 and e.flag == ""
    rng = np.random.default_rng(1)
    P = rng.standard_normal(C.shape) * 1e-3
    Xp, Zp, yp = X + (P + P.T), Z - 2e-3 * np.eye(len(C)) + np.outer(P[0], P[0]), y + 1e-3
    e = dimacs_errors(d, Xp.ravel(), yp, Zp.ravel())
    direct = _direct_errors(C, [np.eye(len(C))], np.array([1.0]), Xp, yp, Zp)
    assert np.allclose(e.err[:5], direct[:5], rtol=1e-10, atol=1e-15)
    # err6 is defined only for X and Z in the cone (DIMACS): Xp (rank one plus noise) is not
    assert e.err[1] > 0 and np.isnan(e.err[5]) and "err6" not in e.as_dict()
    assert e.max_err == pytest.approx(max(abs(v) for v in direct[:5])) and e.max_err > 1e-4 and e.flag == "a"
    inside = dimacs_errors(d, (Xp + 1.0 * np.eye(len(C))).ravel(), yp, (Zp + 1.0 * np.eye(len(C))).ravel())
    assert inside.err[1] == inside.err[3] == 0.0
    assert inside.err[5] == pytest.approx(_direct_errors(C, [np.eye(len(C))], np.array([1.0]), Xp + np.eye(len(C)), yp,
                                                         Zp + np.eye(len(C)))[5], rel=1e-12)
    # Z omitted: Z = C - A*(y), err3 = 0
    e2 = dimacs_errors(d, Xp.ravel(), yp)
    assert e2.err[2] == 0.0 and np.isclose(e2.min_eig_Z, w[0] - yp[0])


def test_objective_verify_evaluate_and_tol():
    C, d = _min_eig_problem()
    inst = SdpStandard().build(Dataset(name="t/min-eig", payload={"sdp": d}), {"tol": 1e-6}, 0)
    w, V = np.linalg.eigh(C)
    sol = Solution(variables={"X": np.outer(V[:, 0], V[:, 0]).ravel(), "y": np.array([w[0]])})
    assert inst.objective(sol) == pytest.approx(w[0])
    assert inst.verify(sol).ok
    bad = Solution(variables={"X": (np.outer(V[:, 0], V[:, 0]) * 1.01).ravel(), "y": np.array([w[0]])})
    f = inst.verify(bad)
    assert not f.ok and f.details["err1"] == pytest.approx(0.01 / 2)
    # the message names the failed DIMACS checks (tr X = 1.01: the primal residual and, through
    # <C, X>, the duality gap) with value and tolerance, and not the cone checks that hold
    why = f.reason()
    assert why.count("DIMACS") == 2 and "err1 (primal residual" in why and "err5 (relative duality gap)" in why
    assert "= 0.005, needs <= 1e-06" in why and "lambda_min" not in why
    ev = inst.evaluate(bad)
    assert ev["flag_a"] == 1.0 and ev["flag_f"] == 0.0


def test_certificate_bound_below_true_optimum_and_feasible_value_above():
    """VSDP-style lower bound <= lambda_min(C) <= value of the exactly feasible correction, for any y."""
    C, d = _min_eig_problem(6, 3)
    opt = np.linalg.eigvalsh(C)[0]
    assert d.trace_bound() == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    for y in (opt - 0.5, opt - 1e-6, opt + 1e-6, opt + 0.3):
        assert lower_bound(d, np.array([y]), 1.0) <= opt + 1e-12
    # an infeasible, indefinite near-optimal X is corrected to an exactly feasible one
    w, V = np.linalg.eigh(C)
    X = np.outer(V[:, 0], V[:, 0]) * 1.001 + 1e-4 * rng.standard_normal(C.shape)
    X = (X + X.T) / 2
    val = feasible_value(d, X.ravel())
    assert val is not None and opt - 1e-12 <= val <= opt + 1e-2


def test_generators_have_sdplib_structure():
    mc = maxcut(12, 0.4, 0)
    assert mc.block_sizes == (12,) and mc.m == 12 and np.all(mc.b == 1)
    assert mc.trace_bound() == pytest.approx(12)
    L4 = -mc.C_blocks()[0]
    assert np.allclose(L4.sum(axis=1), 0)  # C = -L/4, a Laplacian's rows sum to 0
    th = theta(10, 0.3, 1)
    assert th.b[0] == 1 and np.all(th.b[1:] == 0) and th.trace_bound() == pytest.approx(1)
    assert np.allclose(th.C_blocks()[0], -np.ones((10, 10)))
    inf = infeasible(6, 0.3, 2)
    assert inf.block_sizes == (6, -6)


def test_infeasible_generator_has_a_farkas_certificate():
    d = infeasible(8, 0.3, 0)
    # find a certificate independently of the adapters: the feasibility SDP b'y = 1, A*(y) nsd, in cvxpy
    import cvxpy as cp

    y = cp.Variable(d.m)
    aty = d.A.T @ y
    off = d.offsets
    cons = [d.b @ y == 1]
    S = cp.reshape(aty[off[0]:off[1]], (8, 8), order="C")
    cons += [(S + S.T) / 2 << 0, aty[off[1]:off[2]] <= 0]
    cp.Problem(cp.Minimize(0), cons).solve(solver="CLARABEL")
    ok, viol = primal_infeasibility_holds(d, np.asarray(y.value), tol=1e-6)
    assert ok, viol
    # a non-certificate is refused
    assert not primal_infeasibility_holds(d, -np.asarray(y.value))[0]
    assert not dual_infeasibility_holds(d, d.identity())[0]


def test_cvxpy_formulation_matches_closed_form_and_conformance():
    C, d = _min_eig_problem(5, 2)
    ds = Dataset(name="t/min-eig", payload={"sdp": d})
    inst = check_problem(SdpStandard(), ds, kind=SdpKind)
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL")
    v = form.extract()
    sol = Solution(variables=v)
    assert inst.objective(sol) == pytest.approx(np.linalg.eigvalsh(C)[0], abs=1e-7)
    assert v["y"][0] == pytest.approx(np.linalg.eigvalsh(C)[0], abs=1e-6)  # the dual sign: y = -cvxpy's
    assert inst.verify(sol).max_residual < 1e-6


def test_generator_instances_build_from_payload():
    pr = SdpStandard()
    inst = pr.build(Dataset(name="sdp-gen/maxcut", payload={"generator": "maxcut"}), {"n": 9}, 4)
    again = pr.build(Dataset(name="sdp-gen/maxcut", payload={"generator": "maxcut"}), {"n": 9}, 4)
    assert inst.data.m == 9 and (inst.data.c != again.data.c).nnz == 0


@pytest.mark.slow  # two interior-point solves per problem (seconds each; more on a loaded machine)
@pytest.mark.skipif(importlib.util.find_spec("sdpap") is None or importlib.util.find_spec("cvxopt") is None,
                    reason="optional sdpa / cvxopt extras not installed")
@pytest.mark.parametrize("name, certified", [("theta1", True), ("mcp100", True), ("truss4", False), ("control1", False),
                                             ("hinf3", False), ("qap6", False)])
def test_reference_agrees_with_sdplib_to_printed_digits(data_dir, monkeypatch, name, certified):
    """The family's reference rounds to SDPLIB's published value (our sign) at its printed digits;
    where tr(X) is fixed the interval [lower, value] is narrow and contains it.  hinf3 and qap6
    have a reference only with SDPA-GMP (double precision stops above DIMACS error 1e-6)."""
    from psdbench.families.sdp.datasets import SdplibCollection
    from psdbench.families.sdp.section.report import _digits_agree
    from psdbench.families.sdp.solvers.sdpa_gmp import SdpSdpaGmp

    if name in ("hinf3", "qap6") and SdpSdpaGmp().skip_reason(None):
        pytest.skip("needs SDPA-GMP")
    monkeypatch.setenv("PSDBENCH_DATA", str(data_dir))
    inst = SdpStandard().build(SdplibCollection().load(name), {}, 0)
    ref = inst.certified_reference()
    assert ref["value"] is not None, ref["message"]
    assert _digits_agree(ref["value"], inst.published, inst.published_digits), (ref["value"], inst.published)
    if certified:
        assert ref["lower"] <= ref["value"] and ref["value"] - ref["lower"] <= 1e-5 * max(1, abs(ref["value"]))
    else:
        assert ref["lower"] is None


def test_one_certified_solve_is_the_reference_where_trace_is_fixed():
    """max-cut fixes tr(X): the first solve reaching DIMACS 1e-6 brackets the optimum by itself
    (exactly feasible upper value, VSDP lower bound), so no second solver runs; the cvxpy optimum
    lies inside the interval."""
    inst = SdpStandard().build(Dataset(name="sdp-gen/maxcut", payload={"generator": "maxcut"}), {"n": 12}, 3)
    ref = inst.certified_reference()
    assert " + " not in ref["solver"] and "one solve certifies" in ref["message"], ref["message"]
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    want = form.problem.value  # at its 1e-8 defaults cvxpy's value can sit 1e-7 above the exact upper bound
    width = ref["value"] - ref["lower"]
    assert 0 <= width <= 1e-6 * (1 + abs(ref["value"]))
    assert ref["lower"] - 1e-9 <= want <= ref["value"] + 1e-9


class _Sleeper:
    def __init__(self, seconds: float, fail: bool = False, done=None):
        self.seconds, self.fail, self.done = seconds, fail, done

    def solve(self, instance, budget, **opts):
        import time

        time.sleep(self.seconds)
        if self.done is not None:  # it slept its whole time: it was not killed
            self.done.write_text("")
        if self.fail:
            raise ValueError("bad pivot\nmore")
        return Solution(variables={"X": np.ones(2), "y": np.zeros(1)}, message=str(opts))


def test_a_reference_solver_without_a_time_limit_is_killed_at_the_deadline(tmp_path):
    """SDPA and CVXOPT run in a forked child: killed when the reference's time is up, their error
    reported in one line, their point returned whole otherwise."""
    from psdbench.families.sdp.reference import _bounded

    with pytest.raises(TimeoutError, match="killed at the deadline"):
        _bounded(_Sleeper(600, done=tmp_path / "done"), None, 0.5, {})
    assert not (tmp_path / "done").exists()  # killed, not waited for
    with pytest.raises(RuntimeError, match=r"^ValueError: bad pivot$"):
        _bounded(_Sleeper(0, fail=True), None, 600, {})
    sol = _bounded(_Sleeper(0), None, 600, {"a": 1})
    assert np.array_equal(sol.variables["X"], np.ones(2)) and sol.message == "{'a': 1}"


def _bounded_in_a_daemon(q):
    from psdbench.families.sdp.reference import _bounded

    try:
        sol = _bounded(_Sleeper(0), None, 600, {"b": 2})
        q.put(("ok", sol.message))
    except Exception as exc:
        q.put(("error", f"{type(exc).__name__}: {exc}"))


def test_the_bounded_solve_runs_inside_a_daemonic_worker():
    """The harness computes references in a daemonic worker process, where multiprocessing
    refuses to start children: the bounded solve must still run there."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    q = ctx.Queue()
    proc = ctx.Process(target=_bounded_in_a_daemon, args=(q,), daemon=True)
    proc.start()
    out = q.get(timeout=60)
    proc.join(10)
    assert out == ("ok", "{'b': 2}")


def test_trace_bound_is_rounded_up_and_the_lower_bound_is_one_sided_without_a_feasible_correction():
    """tr X = 2 and X_11 = 0.3: the trace is bounded (T >= 2, rounded up), but A(I) = (n, 1) is not
    proportional to b, so no exactly feasible correction: the reference carries a certified lower
    bound alone (the cvxpy optimum above it) and no interval."""
    from psdbench.families.sdp.reference import trace_upper

    n = 5
    rng = np.random.default_rng(7)
    G = rng.standard_normal((n, n))
    C = (G + G.T) / 2
    E11 = np.zeros((n, n))
    E11[0, 0] = 1.0
    d = from_blocks((n,), [C], [[np.eye(n)], [E11]], [2.0, 0.3], name="trace-2")
    T = trace_upper(d)
    assert 2.0 < T <= 2.0 * (1 + 1e-12)
    inst = SdpStandard().build(Dataset(name="t/trace-2", payload={"sdp": d}), {}, 0)
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL", tol_gap_abs=1e-11, tol_gap_rel=1e-11, tol_feas=1e-11)
    ref = inst.certified_reference()
    assert ref["lower"] is None and "certified one-sided lower bound" in ref["message"], ref["message"]
    assert ref["bound"] <= form.problem.value <= ref["bound"] + 1e-6
    assert ref["value"] == pytest.approx(form.problem.value, abs=1e-6)


def test_disagreeing_solves_the_most_accurate_decides():
    """Two points at DIMACS 1e-6 whose values differ by more than 1e-6: the one with the smaller
    largest error is the reference, and the message lists both."""
    from psdbench.families.sdp.errors import DimacsErrors
    from psdbench.families.sdp.reference import _decide

    C, d = _min_eig_problem()

    def pt(obj: float, err: float):
        e = DimacsErrors(err=(err, 0.0, 0.0, 0.0, 0.0, 0.0), primal_obj=obj, dual_obj=obj, min_eig_X=0.0, min_eig_Z=0.0)
        return Solution(variables={"X": np.zeros(d.N), "y": np.zeros(1)}), e

    (s1, e1), (s2, e2) = pt(-1.0, 3.7e-7), pt(-1.001, 1.5e-8)
    class _V:
        def library_versions(self):
            return {"lib": "1.0"}

    out = _decide(d, [("cvxopt", s1, e1), ("sdpa", s2, e2)], None, [], {"cvxopt": _V(), "sdpa": _V()})
    assert out["value"] == -1.001 and out["solver"] == "sdpa" and out["status"] == "ok"
    assert out["message"].startswith("the most accurate point's value")
    assert "DISAGREE: sdpa -1.001 (max err 1.5e-08), cvxopt -1 (max err 3.7e-07)" in out["message"]
    assert "the most accurate (sdpa) decides" in out["message"]


def test_info_lists_the_helpers_a_solver_reads_an_instance_with(registry):
    """``psdbench info sdp/standard``: block splitting, stacking and the dense C, with their shapes."""
    from psdbench.cli.describe import info_lines

    out = "\n".join(info_lines(registry, "sdp/standard"))
    helpers = out[out.index("helpers a solver uses to read an instance:"):]
    for line in ("split(x: np.ndarray) -> list[np.ndarray]  Blocks of a stacked (N,) vector",
                 "stack(blocks: list[np.ndarray]) -> np.ndarray", "c_dense() -> np.ndarray  ``C`` as a dense stacked vector (N,)",
                 "A_op(x: np.ndarray) -> np.ndarray  ``A(X) = (<A_i, X>)_i``: stacked ``x`` (N,) -> (m,)",
                 "A: sp.csr_matrix", "scipy.sparse.csr_matrix of shape (m, N)"):
        assert line in helpers, line
    assert "_cache" not in helpers
