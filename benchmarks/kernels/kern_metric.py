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
from conftest import cached, last_call, per_iteration_calls, run
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
PD_CAPS = (1, 6)  # pd-cone: the iteration is one projected-gradient step


def _inst(cache: dict, K: int, objective: str = "mcml"):
    from benchmarks.instances import metric

    return cached(cache, ("metric", objective, K), lambda: metric(objective, K))


def _sgml_solve(inst, sweeps: int, cls=Sgml):
    return cls().solve(inst, Budget(max_iter=sweeps), tol=0.0, full_phase=False)


def _sgml_call(cache: dict, K: int, owner, attr: str):
    """Arguments of SGML's last call to ``owner.attr`` in a two-sweep run."""
    inst = _inst(cache, K)
    return cached(cache, ("sgml-call", K, attr), lambda: last_call(lambda: _sgml_solve(inst, SWEEPS[-1]), owner, attr))


def _fd_check(value, grad_dot, X: np.ndarray, seed: int = 0) -> None:
    """Directional derivative against a central difference along a random symmetric direction."""
    rng = np.random.default_rng(seed)
    E = rng.standard_normal(X.shape)
    E = 0.5 * (E + E.T)
    h = 1e-6 * max(1.0, np.abs(X).max()) / np.abs(E).max()
    fd = (value(X + h * E) - value(X - h * E)) / (2 * h)
    assert abs(grad_dot(E) - fd) <= 1e-5 * max(1.0, abs(fd))


def test_sgml_first_eigvec_warm(benchmark, cache, size):
    (M, v0, tol, maxiter), kw = _sgml_call(cache, size, sgml, "first_eigvec")
    eig = run(benchmark, lambda: first_eigvec(M, v0, tol, maxiter), family=FAMILY, kernel="sgml_first_eigvec_warm",
              size=size, nnz=int(np.count_nonzero(M)), expected="O(nnz)", expected_slope=1.0, sparse=True)
    w = sla.eigvalsh(M)
    assert abs(eig.lam_min - w[0]) <= 1e-4 * max(1.0, np.abs(w).max())  # dense eigh; LOBPCG tol 1e-4


def test_sgml_block_lp(benchmark, cache, size):
    """The closed-form vertex of LP (41) for one block (2K - 1 variables, one coupling row)."""
    (kappa, w, b), _ = _sgml_call(cache, size, sgml, "knapsack_lp")
    x = run(benchmark, lambda: knapsack_lp(kappa, w, b), rounds=20, family=FAMILY, kernel="sgml_block_lp", size=size,
            expected="O(K)", expected_slope=1.0, sparse=False)
    ref = linprog(kappa, A_ub=w[None, :], b_ub=[b], bounds=(0, None), method="highs")
    assert abs(kappa @ x - ref.fun) <= 1e-9 * max(1.0, abs(ref.fun))


def test_sgml_line_search(benchmark, cache, size):
    """Newton-Raphson / regula falsi on Q'(gamma) (eqs. (35)-(38)) along SGML's last direction."""
    (dq,), kw = _sgml_call(cache, size, sgml, "newton_step_size")
    gamma = run(benchmark, lambda: newton_step_size(dq, **kw), family=FAMILY, kernel="sgml_line_search", size=size,
                expected="O(n^2) per Q' (n samples; K-free)", expected_slope=0.0, sparse=False)
    g0 = dq(0.0)
    if g0 < 0 < dq(1.0):  # reference: the root of Q' on [0, 1] by Brent's method
        root = brentq(dq, 0.0, 1.0, xtol=1e-12)
        assert abs(dq(gamma)) <= kw.get("tol", 1e-3) * abs(g0) or abs(gamma - root) <= 1e-4
    else:
        assert gamma in (0.0, 1.0)


def test_sgml_pair_coefficients(benchmark, cache, size):
    """``value_and_coef(D)``: Q and dQ/dD of MCML at the pair distances of SGML's iterate."""
    inst = _inst(cache, size)
    M = _sgml_solve(inst, 1).variables["M"]
    D = sgml.pair_distances(inst.F, M)
    q, A = run(benchmark, lambda: inst.obj.value_and_coef(D), rounds=20, family=FAMILY, kernel="sgml_pair_coef",
               size=size, expected="O(n^2) (n samples; K-free)", expected_slope=0.0, sparse=False)
    assert abs(q - inst.obj.value_D(D)) <= 1e-12 * max(1.0, abs(q))
    _fd_check(inst.obj.value_D, lambda E: float(np.sum(A * E)), D + 1.0)  # away from the floor at 0


def test_pair_distances(benchmark, cache, size):
    inst = _inst(cache, size)
    M = _sgml_solve(inst, 1).variables["M"]
    D = run(benchmark, lambda: sgml.pair_distances(inst.F, M), rounds=20, family=FAMILY, kernel="pair_distances",
            size=size, expected="O(n K^2)", expected_slope=2.0, sparse=False)
    w, V = np.linalg.eigh(0.5 * (M + M.T))
    Y = inst.F @ (V * np.sqrt(np.maximum(w, 0.0)))  # M = R R', D_ij = ||R'(f_i - f_j)||^2
    np.testing.assert_allclose(D, cdist(Y, Y, "sqeuclidean"), atol=1e-10 * max(1.0, np.abs(D).max()))


def test_pdcone_projection(benchmark, cache, size):
    """PD-cone's projection (clip at rho, rescale the trace; one dense eigh)."""
    inst = _inst(cache, size)
    M = inst.identity_start()
    _, G = inst.value_and_grad(M)
    A = M - (0.1 / len(inst.y)) * G
    P, lam = run(benchmark, lambda: project_rescale(A, inst.rho, inst.C), family=FAMILY, kernel="pdcone_projection",
                 size=size, **DENSE3)
    # closed form on dense eigvalsh: clipped eigenvalues, the part above rho rescaled to the trace bound
    w = np.maximum(sla.eigvalsh(A), inst.rho)
    if w.sum() > inst.C:
        w = inst.rho + (w - inst.rho) * (inst.C - len(w) * inst.rho) / (w.sum() - len(w) * inst.rho)
    np.testing.assert_allclose(np.sort(sla.eigvalsh(P)), np.sort(w), atol=1e-9 * max(1.0, inst.C))


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
    sol = run(benchmark, lambda: _sgml_solve(inst, cap, cls), rounds=3, family=FAMILY, role="solve", solver=solver,
              size=size, iterations=cap, calls={f"{FAMILY}:{k}": v for k, v in calls.items()})
    assert sol.info["sweeps"] == cap
    check = inst.verify(sol)
    assert check.ok and check.details["balanced"]  # dense eigvalsh, trace, 2-colouring


@pytest.mark.parametrize("cap", PD_CAPS)
def test_solve_pdcone(benchmark, cache, size, cap):
    inst = _inst(cache, size)
    targets = {"pdcone_projection": (pd_cone, "project_rescale"), "gradient_mcml": (inst, "value_and_grad")}
    solve = lambda k: PdCone().solve(inst, Budget(max_iter=k), tol=0.0)  # noqa: E731
    calls = per_iteration_calls(solve, targets, *PD_CAPS) if cap == PD_CAPS[-1] else {}
    sol = run(benchmark, lambda: solve(cap), rounds=5, family=FAMILY, role="solve", solver="pd-cone", size=size,
              iterations=cap, calls={f"{FAMILY}:{k}": v for k, v in calls.items()})
    assert sol.iterations == cap
    assert inst.verify(sol).ok
