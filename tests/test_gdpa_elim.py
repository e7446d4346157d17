"""gdpa-lp-elim: the split dual of the reduced SDP certifies a lower bound on p*."""

import numpy as np
import pytest

from psdbench.api import Budget, Status
from psdbench.linalg.gdpa import magnitudes
from psdbench.linalg.gershgorin_lp import gershgorin_rows
from psdbench.linalg.psd import min_eig
from psdbench.families.graph_classification.gdpa_lp_elim import GdpaLpElim, reduced_split_affine

from .conftest import random_instance


@pytest.mark.parametrize("seed", range(4))
def test_split_quadratic_form_identity(registry, wdbc, seed):
    """w'(Q + diag y)w = a' H-bar a for a = [w_U; w_t; w_t]: H-bar PSD implies Q + diag(y) PSD."""
    inst = random_instance(registry, wdbc, n=20 + 6 * seed, graph="complete" if seed % 2 else "knn", seed=seed)
    rng = np.random.default_rng(seed)
    Q, _ = inst.reduced_sdp()
    k = Q.shape[0]
    y, eps = rng.normal(size=k) * 5, float(rng.normal())
    Hb = inst.reduced_split_matrix(y, eps)
    np.testing.assert_allclose(reduced_split_affine(Q).evaluate(np.append(y, eps)), Hb, atol=1e-12)
    for _ in range(3):
        w = rng.normal(size=k)
        a = np.concatenate([w, [w[-1]]])
        assert w @ inst.reduced_dual_matrix(y) @ w == pytest.approx(a @ Hb @ a, rel=1e-10, abs=1e-9)
    # The implication used for certification: shift H-bar to PSD, then Q + diag(y) is PSD too.
    delta = max(0.0, -min_eig(Hb))
    y_psd = y + delta * np.append(np.ones(k - 1), 2.0)  # H-bar + delta I
    assert min_eig(inst.reduced_split_matrix(y_psd, eps)) >= -1e-9
    assert min_eig(inst.reduced_dual_matrix(y_psd)) >= -1e-9


def test_lemma_1_eigenvalue_inequality_needs_psd(registry, wdbc):
    """Lemma 1 claims lambda_min(H-bar) <= lambda_min(H) always; step (a) of its proof divides a
    negative Rayleigh numerator by a larger norm, so for indefinite matrices the inequality can
    fail.  Only 'H-bar PSD => H PSD' holds, which is all the certificates use."""
    inst = random_instance(registry, wdbc, n=30, graph="knn", seed=1)
    Q, _ = inst.reduced_sdp()
    rng = np.random.default_rng(1)
    found = False
    for _ in range(50):
        y, eps = rng.normal(size=Q.shape[0]) * 5, float(rng.normal())
        if min_eig(inst.reduced_split_matrix(y, eps)) > min_eig(inst.reduced_dual_matrix(y)) + 1e-6:
            found = True
            break
    assert found


@pytest.mark.parametrize("start", ["dominant", "harmonic"])
@pytest.mark.parametrize("graph,seed", [("knn", 0), ("complete", 1), ("knn", 2)])
def test_bound_is_certified_and_below_p_star(registry, wdbc, start, graph, seed):
    inst = random_instance(registry, wdbc, n=60, graph=graph, seed=seed, k=10)
    sol = GdpaLpElim().solve(inst, Budget(), start=start, scalars="gdpa")
    assert sol.status is Status.OK
    feas = inst.verify(sol)
    assert feas.ok, feas.details
    ref = inst.certified_reference()
    ev = inst.evaluate(sol)
    assert ev["lower_bound"] <= ref["lower"] + 1e-8 * max(1.0, abs(ref["lower"]))
    assert inst.objective(sol) >= ref["lower"] - 1e-8  # the labels are a feasible point of (8)


def test_lp_makes_every_row_tight_so_gdpa_is_stationary(registry, wdbc):
    """Each row has its own free diagonal: the LP optimum is tight on every Gershgorin row, so the
    next scalars equal the current ones (H-bar (signed v) = 0) and the iteration stops after one
    step.  This is why the bound depends on the start."""
    from psdbench.linalg.lp import solve_lp

    inst = random_instance(registry, wdbc, n=40, graph="knn", seed=3, k=10)
    Q, _ = inst.reduced_sdp()
    H = reduced_split_affine(Q)
    a = np.random.default_rng(0).uniform(0.2, 1.0, Q.shape[0] + 1)
    A, b = gershgorin_rows(H, magnitudes(a))
    res = solve_lp(np.append(np.ones(Q.shape[0]), 0.0), A, b, [(None, None)] * (Q.shape[0] + 1))
    np.testing.assert_allclose(b - A @ res.x, 0.0, atol=1e-7)
    Hb = H.evaluate(res.x)
    assert min_eig(Hb) == pytest.approx(0.0, abs=1e-8)
    colour = np.ones(len(a))
    colour[-1] = -1.0  # t- is the other colour
    np.testing.assert_allclose(Hb @ (colour * a), 0.0, atol=1e-7)


@pytest.mark.parametrize("graph,seed", [("knn", 0), ("complete", 2)])
def test_optimal_scalars_solve_the_split_dual_exactly(registry, wdbc, graph, seed):
    """scalars='optimal' reaches the optimum of min 1'y s.t. H-bar(y, eps) PSD, solved by Clarabel."""
    import cvxpy as cp

    inst = random_instance(registry, wdbc, n=40, graph=graph, seed=seed, k=10)
    Q, const = inst.reduced_sdp()
    k = Q.shape[0]
    H = reduced_split_affine(Q)
    x = cp.Variable(k + 1)
    Hx = H.C + sum(cp.multiply(c, cp.reshape(x[v], ())) * _unit(len(H.C), i, j)
                   for i, j, v, c in zip(H.row, H.col, H.var, H.coef))
    prob = cp.Problem(cp.Minimize(cp.sum(x[:k])), [0.5 * (Hx + Hx.T) >> 0])
    prob.solve(solver="CLARABEL")
    exact = const - prob.value
    sol = GdpaLpElim().solve(inst, Budget(), start="harmonic", scalars="optimal")
    ev = inst.evaluate(sol)
    assert inst.verify(sol).ok
    assert ev["lower_bound"] == pytest.approx(exact, rel=1e-4, abs=1e-4 * abs(const))
    plain = inst.evaluate(GdpaLpElim().solve(inst, Budget(), start="harmonic", scalars="gdpa"))["lower_bound"]
    assert ev["lower_bound"] >= plain - 1e-8
    assert ev["lower_bound"] <= inst.certified_reference()["value"]


def _unit(n, i, j):
    E = np.zeros((n, n))
    E[i, j] = E[j, i] = 1.0
    return E
