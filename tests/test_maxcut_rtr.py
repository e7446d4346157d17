"""maxcut-rtr: Riemannian trust regions with rank adaptation, against Clarabel's optimum and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.api import Budget
from psdbench.families.maxcut.rtr import kernels as K
from psdbench.families.maxcut.graph import random_graph, torus_graph
from psdbench.families.maxcut.mixing import initial_point
from psdbench.families.maxcut.rtr.solver import MaxcutRtr, Rows, negative_directions, solve_rtr, start_rank, tcg

from .test_maxcut import _clarabel_opt, _graph, _instance  # the family's test helpers

GRAPHS = [("random", 20, 0.3, 0), ("random", 40, 0.15, 1), ("torus", 36, 0, 3), ("random-pm1", 40, 0.2, 4)]


@pytest.mark.parametrize("kind,n,density,seed", GRAPHS)
def test_rtr_matches_clarabel_with_a_certified_bound(kind, n, density, seed):
    """The objective equals Clarabel's optimum, and the certified bound of the returned y is within the
    solver's own gap tolerance of it (the stop is an estimate of the very gap that is certified)."""
    inst = _instance(_graph(kind, n, density, seed), seed)
    p_star = _clarabel_opt(inst.C)
    sol = MaxcutRtr().solve(inst, Budget(), gap_tol=1e-8)
    assert sol.status.value == "ok", sol.info
    assert inst.verify(sol).ok
    scale = max(1.0, abs(p_star))
    obj = inst.objective(sol)
    assert abs(obj - p_star) <= 1e-7 * scale
    ev = inst.evaluate(sol)
    assert ev["dual_bound_certified"] == 1.0
    assert ev["dual_bound"] >= p_star - 1e-9 * scale  # a bound, Clarabel to its 1e-10
    assert 0 <= ev["bound_gap_rel"] <= 1e-8


def _dense_parts(C: np.ndarray, V: np.ndarray):
    H = C @ V
    y = np.einsum("ij,ij->i", H, V)
    return H, y, 2 * (y[:, None] * V - H)


def test_gradient_and_hessian_kernels_equal_their_formulas():
    """grad = 2 (Diag(y) - C) V, Hess[U] = P_V(2 (Diag(y) - C) U); the Hessian is symmetric on the tangent
    space and matches the gradient's directional derivative along a curve on the manifold."""
    rng = np.random.default_rng(0)
    W = random_graph(30, 0.3, 0, "pm1")
    inst = _instance(W)
    C = inst.C.toarray()
    rows = Rows(inst.C)
    V = initial_point(30, 5, 1)
    pt = rows.point(V)
    H, y, G = _dense_parts(C, V)
    np.testing.assert_allclose(pt.H, H, atol=1e-13)
    np.testing.assert_allclose(pt.y, y, atol=1e-13)
    np.testing.assert_allclose(pt.G, G, atol=1e-13)
    assert pt.f == pytest.approx(np.trace(V.T @ C @ V), rel=1e-14)
    assert np.max(np.abs(np.einsum("ij,ij->i", pt.G, V))) < 1e-13  # tangent

    def tangent(Z):
        return Z - np.einsum("ij,ij->i", Z, V)[:, None] * V

    U1, U2 = tangent(rng.standard_normal(V.shape)), tangent(rng.standard_normal(V.shape))
    HU1 = rows.hess(pt, U1)
    np.testing.assert_allclose(HU1, tangent(2 * (y[:, None] * U1 - C @ U1)), atol=1e-12)
    assert np.vdot(U2, HU1) == pytest.approx(np.vdot(U1, rows.hess(pt, U2)), rel=1e-12)
    # the Riemannian Hessian is the derivative of the gradient (projected) along t -> R_V(t U)
    t = 1e-6
    Vp, Vm = np.empty_like(V), np.empty_like(V)
    K.retract(V, t * U1, Vp)
    K.retract(V, -t * U1, Vm)
    fd = tangent((rows.point(Vp).G - rows.point(Vm).G) / (2 * t))
    np.testing.assert_allclose(fd, HU1, atol=1e-6)
    # the objective's second derivative along the same curve: F = -f, d2F/dt2 = <U, Hess[U]>
    f0, fp, fm = pt.f, rows.point(Vp).f, rows.point(Vm).f
    assert -(fp - 2 * f0 + fm) / t**2 == pytest.approx(np.vdot(U1, HU1), rel=1e-3)
    # the exact decrease formula
    assert K.sum_diff(Vp, V, rows.point(Vp).H, pt.H) == pytest.approx(fp - f0, rel=1e-6, abs=1e-12)


def test_truncated_cg_stays_in_the_region_and_lowers_the_model():
    inst = _instance(torus_graph(6, 8, 2))
    rows = Rows(inst.C)
    pt = rows.point(initial_point(48, 4, 0))
    for delta in (1e-3, 0.1, 10.0):
        eta, Heta, boundary, its = tcg(rows, pt, delta)
        assert np.linalg.norm(eta) <= delta * (1 + 1e-12)
        assert np.max(np.abs(np.einsum("ij,ij->i", eta, pt.V))) < 1e-12  # tangent
        model = np.vdot(pt.G, eta) + 0.5 * np.vdot(eta, Heta)
        assert model < 0 and its >= 1
        np.testing.assert_allclose(Heta, rows.hess(pt, eta), atol=1e-12)
    assert tcg(rows, pt, 1e-3)[2]  # a tiny radius is reached


def test_rank_escape_from_rank_one_reaches_the_optimum():
    """From rank 1 (a cut: every point a saddle of the relaxation unless the cut is optimal for it)
    the eigenvectors of S's negative eigenvalues raise the rank until the certificate holds."""
    W = random_graph(40, 0.2, 5, "pm1")
    inst = _instance(W)
    p_star = _clarabel_opt(inst.C)
    pt, info = solve_rtr(inst.C, 0, rank=1, max_rank=20, rank_step=2, gap_tol=1e-8, max_iter=10_000)
    assert info["status"] == "converged" and info["escapes"] >= 1 and info["rank"] > 1
    assert pt.f == pytest.approx(p_star, rel=1e-7)


def test_negative_directions_are_negative_curvature_off_the_point():
    W = random_graph(60, 0.2, 6, "one")
    inst = _instance(W)
    rows = Rows(inst.C)
    pt = rows.point(initial_point(60, 2, 0))
    vals, vecs = negative_directions(rows, pt, 3, 0, 1e-6)
    S = (sp.diags(pt.y) - inst.C).toarray()
    w = np.linalg.eigvalsh(S)
    assert vals[0] < 0 and vals[0] >= w[0] - 1e-8  # a Rayleigh quotient: never below lambda_min
    np.testing.assert_allclose(np.einsum("ij,ij->j", vecs, S @ vecs), vals, atol=1e-10)
    assert np.max(np.abs(pt.V.T @ vecs)) < 1e-10  # off range(V)


def test_deterministic_budget_and_start_rank():
    inst = _instance(_graph("random", 40, 0.15, 1), 3)
    a = MaxcutRtr().solve(inst, Budget())
    b = MaxcutRtr().solve(inst, Budget())
    np.testing.assert_array_equal(a.variables["R"], b.variables["R"])
    capped = MaxcutRtr().solve(inst, Budget(max_iter=2))
    assert capped.status.value == "max_iter" and capped.iterations <= 2
    assert inst.verify(capped).ok  # every iterate is on the manifold
    assert start_rank(800) == 14 and start_rank(20_000) == 20
    assert a.variables["R"].shape[1] >= start_rank(40)
