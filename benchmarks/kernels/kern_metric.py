"""Metric learning (SGML paper): the kernels of ``sgml``, ``pgml`` and ``pd-cone``, and every objective's gradient.

Instances: the section 6.2 objective protocol (fold 0, about 4 samples) on seeded K-feature
Gaussian sets (``benchmarks/instances.py``), K = the matrix size.  SGML's kernels are timed on
the inputs SGML itself passed them in its second sweep (recorded in an untimed run): the
warm-started first eigenvector of M (section 4.3.2), the closed-form LP (41) of a block
(``knapsack_lp``), the step-size search (eqs. (35)-(38)), the objective's pair coefficients, the
pair distances (eq. (25)).  PD-cone: its projection (clip and rescale, one dense ``eigh``) and
the gradient.  Each is checked once, untimed, against a reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from conftest import cached, iteration_calls, per_iteration_calls, run, run_calls, run_solve
from scipy.optimize import brentq, linprog
from scipy.spatial.distance import cdist

from psdbench.api import Budget
from psdbench.families.mahalanobis import pd_cone, sgml
from psdbench.families.mahalanobis.pd_cone import PdCone, project_rescale
from psdbench.families.mahalanobis.sgml import Pgml, Sgml
from psdbench.families.mahalanobis.sgml_kernels import knapsack_lp, newton_step_size
from psdbench.linalg.gdpa import first_eigvec

SIZES = [25, 50, 100, 250]
FAMILY = "metric"
OBJECTIVES = ["mcml", "deml", "lsml", "lmnn", "glr"]
DENSE3 = {"expected": "O(K^3)", "expected_slope": 3.0, "sparse": False}
DENSE2 = {"expected": "O(K^2)", "expected_slope": 2.0, "sparse": False}
SWEEPS = (1, 2)  # sgml / pgml: the iteration is one sweep over the K blocks (Algorithm 1, lines 3-11)
PD_CAPS = (1, 21)  # pd-cone: the iteration is one projected-gradient step (marginal over 20 steps)


def _inst(cache: dict, K: int, objective: str = "mcml"):
    from benchmarks.instances import metric

    return cached(cache, ("metric", objective, K), lambda: metric(objective, K))


def _sgml_solve(inst, sweeps: int, cls=Sgml):
    return cls().solve(inst, Budget(max_iter=sweeps), tol=0.0, full_phase=False)


def _sgml_calls(cache: dict, K: int, owner, attr: str) -> list:
    """Sampled inputs of SGML's calls to ``owner.attr`` in its second sweep (the measured iteration)."""
    inst = _inst(cache, K)
    return cached(cache, ("sgml-calls", K, attr),
                  lambda: iteration_calls(lambda k: _sgml_solve(inst, k), SWEEPS, owner, attr))


def _pd_calls(cache: dict, K: int, owner, attr: str) -> list:
    """Sampled inputs of PD-cone's calls to ``owner.attr`` in its steps 2-21 (the measured iterations)."""
    inst = _inst(cache, K)
    solve = lambda k: PdCone().solve(inst, Budget(max_iter=k), tol=0.0)  # noqa: E731
    return cached(cache, ("pd-calls", K, attr), lambda: iteration_calls(solve, PD_CAPS, owner, attr))


def _fd_check(value, grad_dot, X: np.ndarray, seed: int = 0) -> None:
    """Directional derivative against a central difference along a random symmetric direction."""
    rng = np.random.default_rng(seed)
    E = rng.standard_normal(X.shape)
    E = 0.5 * (E + E.T)
    h = 1e-6 * max(1.0, np.abs(X).max()) / np.abs(E).max()
    fd = (value(X + h * E) - value(X - h * E)) / (2 * h)
    assert abs(grad_dot(E) - fd) <= 1e-5 * max(1.0, abs(fd))


def test_sgml_first_eigvec_warm(benchmark, cache, size):
    calls = _sgml_calls(cache, size, sgml, "first_eigvec")
    M = calls[0][0][0]
    eigs = run_calls(benchmark, first_eigvec, calls, family=FAMILY, kernel="sgml_first_eigvec_warm", size=size,
                     nnz=int(np.count_nonzero(M)), expected="O(nnz)", expected_slope=1.0, sparse=True)
    w = sla.eigvalsh(M)
    assert abs(eigs[0].lam_min - w[0]) <= 1e-4 * max(1.0, np.abs(w).max())  # dense eigh; LOBPCG tol 1e-4


def test_sgml_block_lp(benchmark, cache, size):
    """The closed-form vertex of LP (41) for one block (2K - 1 variables, one coupling row)."""
    calls = _sgml_calls(cache, size, sgml, "knapsack_lp")
    xs = run_calls(benchmark, knapsack_lp, calls, rounds=20, family=FAMILY, kernel="sgml_block_lp", size=size,
                   expected="O(K)", expected_slope=1.0, sparse=False)
    for ((kappa, w, b), _), x in zip(calls, xs):  # reference: the same LP by HiGHS
        ref = linprog(kappa, A_ub=w[None, :], b_ub=[b], bounds=(0, None), method="highs")
        assert (x is None and b < 0) or abs(kappa @ x - ref.fun) <= 1e-9 * max(1.0, abs(ref.fun))


def test_sgml_line_search(benchmark, cache, size):
    """Newton-Raphson / regula falsi on Q'(gamma) (eqs. (35)-(38)) along SGML's directions."""
    calls = _sgml_calls(cache, size, sgml, "newton_step_size")
    gammas = run_calls(benchmark, newton_step_size, calls, family=FAMILY, kernel="sgml_line_search", size=size,
                       expected="O(n^2) per Q' (n samples; K-free)", expected_slope=0.0, sparse=False)
    for ((dq,), kw), gamma in zip(calls, gammas):
        g0 = kw.get("g0", dq(0.0))
        if g0 < 0 < dq(1.0):  # reference: the root of Q' on [0, 1] by Brent's method
            root = brentq(dq, 0.0, 1.0, xtol=1e-12)
            assert abs(dq(gamma)) <= kw.get("tol", 1e-3) * abs(g0) or abs(gamma - root) <= 1e-4
        else:
            assert gamma in (0.0, 1.0)


def test_sgml_pair_coefficients(benchmark, cache, size):
    """``value_and_coef(D)``: Q and dQ/dD of MCML at SGML's pair distances."""
    inst = _inst(cache, size)
    calls = _sgml_calls(cache, size, inst.obj, "value_and_coef")
    out = run_calls(benchmark, inst.obj.value_and_coef, calls, rounds=20, family=FAMILY, kernel="sgml_pair_coef",
                    size=size, expected="O(n^2) (n samples; K-free)", expected_slope=0.0, sparse=False)
    (D,), _ = calls[0]
    q, A = out[0]
    assert abs(q - inst.obj.value_D(D)) <= 1e-12 * max(1.0, abs(q))
    _fd_check(inst.obj.value_D, lambda E: float(np.sum(A * E)), D + 1.0)  # away from the floor at 0


def test_pair_distances(benchmark, cache, size):
    calls = _sgml_calls(cache, size, sgml, "pair_distances")
    Ds = run_calls(benchmark, sgml.pair_distances, calls, rounds=20, family=FAMILY, kernel="pair_distances",
                   size=size, expected="O(n K^2)", expected_slope=2.0, sparse=False)
    (F, M), _ = calls[0]
    D = Ds[0]
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    Y = F @ (V * np.sqrt(np.maximum(w, 0.0)))  # M = R R', D_ij = ||R'(f_i - f_j)||^2
    np.testing.assert_allclose(D, cdist(Y, Y, "sqeuclidean"), atol=1e-10 * max(1.0, np.abs(D).max()))


def test_pdcone_projection(benchmark, cache, size):
    """PD-cone's projection (clip at rho, rescale the trace; one dense eigh)."""
    calls = _pd_calls(cache, size, pd_cone, "project_rescale")
    out = run_calls(benchmark, project_rescale, calls, family=FAMILY, kernel="pdcone_projection", size=size, **DENSE3)
    (A, rho, C), _ = calls[0]
    P = out[0][0]
    # closed form on dense eigvalsh: clipped eigenvalues, the part above rho rescaled to the trace bound
    w = np.maximum(sla.eigvalsh(0.5 * (A + A.T)), rho)
    if w.sum() > C:
        w = rho + (w - rho) * (C - len(w) * rho) / (w.sum() - len(w) * rho)
    np.testing.assert_allclose(np.sort(sla.eigvalsh(P)), np.sort(w), atol=1e-9 * max(1.0, C))


def test_pdcone_gradient(benchmark, cache, size):
    """``value_and_grad`` at PD-cone's iterates (MCML)."""
    inst = _inst(cache, size)
    calls = _pd_calls(cache, size, inst, "value_and_grad")
    out = run_calls(benchmark, inst.value_and_grad, calls, rounds=20, family=FAMILY, kernel="pdcone_gradient",
                    size=size, **DENSE2)
    (M,), _ = calls[0]
    _fd_check(inst.value, lambda E: float(np.sum(out[0][1] * E)), M)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_gradient(benchmark, cache, size, objective):
    """``value_and_grad(M)`` of each objective of Table 2 (one chain rule through the distances)."""
    inst = _inst(cache, size, objective)
    M = inst.identity_start()
    q, G = run(benchmark, lambda: inst.value_and_grad(M), rounds=20, family=FAMILY, kernel=f"gradient_{objective}",
               size=size, **DENSE2)
    assert abs(q - inst.value(M)) <= 1e-12 * max(1.0, abs(q))
    _fd_check(inst.value, lambda E: float(np.sum(G * E)), M)


# ----------------------------------------------------------------------------- whole iterations
SGML_KERNELS = {"sgml_first_eigvec_warm": (sgml, "first_eigvec"), "sgml_block_lp": (sgml, "knapsack_lp"),
                "sgml_line_search": (sgml, "newton_step_size"), "pair_distances": (sgml, "pair_distances")}


@pytest.mark.parametrize("cap", SWEEPS)
@pytest.mark.parametrize("solver", ["sgml", "pgml"])
def test_solve_sgml(benchmark, cache, size, solver, cap):
    """SGML / PGML capped at ``cap`` sweeps (tol = 0, no whole-matrix phase)."""
    inst = _inst(cache, size)
    cls = Sgml if solver == "sgml" else Pgml
    targets = {**SGML_KERNELS, "sgml_pair_coef": (inst.obj, "value_and_coef")}
    calls = per_iteration_calls(lambda k: _sgml_solve(inst, k, cls), targets, *SWEEPS) if cap == SWEEPS[-1] else {}
    sol = run_solve(benchmark, lambda: _sgml_solve(inst, cap, cls), rounds=3, measured=cap - SWEEPS[0] if calls else 0,
                    keep=lambda p: p.get("phase") in (0, 1), family=FAMILY, role="solve", solver=solver, size=size,
                    iterations=cap, calls={f"{FAMILY}:{k}": v for k, v in calls.items()})
    assert sol.info["sweeps"] == cap
    check = inst.verify(sol)
    assert check.ok and check.details["balanced"]  # dense eigvalsh, trace, 2-colouring


@pytest.mark.parametrize("cap", PD_CAPS)
def test_solve_pdcone(benchmark, cache, size, cap):
    inst = _inst(cache, size)
    targets = {"pdcone_projection": (pd_cone, "project_rescale"), "pdcone_gradient": (inst, "value_and_grad")}
    solve = lambda k: PdCone().solve(inst, Budget(max_iter=k), tol=0.0)  # noqa: E731
    calls = per_iteration_calls(solve, targets, *PD_CAPS) if cap == PD_CAPS[-1] else {}
    sol = run(benchmark, lambda: solve(cap), rounds=5, family=FAMILY, role="solve", solver="pd-cone", size=size,
              iterations=cap, calls={f"{FAMILY}:{k}": v for k, v in calls.items()})
    assert sol.iterations == cap
    assert inst.verify(sol).ok
