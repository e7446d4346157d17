"""Metric learning (SGML paper): the kernels of ``sgml``, ``pgml`` and ``pd-cone``, and every objective's gradient.

Instances: the section 6.2 objective protocol (fold 0, about 4 samples) on seeded K-feature
Gaussian sets (``benchmarks/instances.py``), K = the matrix size.  SGML's kernels are timed on
the inputs SGML itself passed them in its second sweep (recorded in an untimed run): the
warm-started first eigenvector of M (section 4.3.2), and the pieces of a block's Frank-Wolfe step
(section 5.2): the scaled Gershgorin radii (eq. (30)), the rows of LP (41) for column j, the block
gradient (eq. (32) and column j), the closed-form vertex of LP (41), the pair distances of the
block direction and of the flipped start's column (eq. (25)), the step-size search (eqs.
(35)-(38)), the objective's pair coefficients; and the pair distances of M (eq. (25)).  PD-cone:
its projection (clip and rescale, one dense ``eigh``) and the gradient.  Each is checked once,
untimed, against a reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from conftest import cached, in_place, iteration_calls, per_iteration_calls, run, run_calls, run_solve
from scipy.optimize import brentq, linprog
from scipy.spatial.distance import cdist

from psdbench.api import Budget
from psdbench.families.mahalanobis import pd_cone, sgml
from psdbench.families.mahalanobis.objectives import gradient_from_pairs
from psdbench.families.mahalanobis.pd_cone import PdCone, project_rescale
from psdbench.families.mahalanobis.sgml import Pgml, Sgml
from psdbench.families.mahalanobis.sgml_kernels import (block_dir_distances, block_gradient, block_rows, block_vertex,
                                                        column_distances, dir_distances, scaled_radii, step_size)
from psdbench.linalg.gdpa import first_eigvec, gershgorin_left_ends

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


def test_sgml_radii(benchmark, cache, size):
    """``|offdiag(M)| a``: the scaled Gershgorin radii of eq. (30), once per scalar update."""
    calls = _sgml_calls(cache, size, sgml, "scaled_radii")
    Ts = run_calls(benchmark, scaled_radii, calls, rounds=20, family=FAMILY, kernel="sgml_radii", size=size,
                   expected="O(K^2)", expected_slope=2.0, sparse=False)
    for ((M, a), _), T in zip(calls, Ts):  # reference: disc left ends of S M S^-1, S = diag(1 / a)
        np.testing.assert_allclose(T / a, np.diag(M) - gershgorin_left_ends(M, a), rtol=1e-12,
                                   atol=1e-12 * np.abs(M).max())


def test_sgml_block_rows(benchmark, cache, size):
    """The rows of LP (41) for column j: fixed radii without column j, coefficients, signs."""
    calls = _sgml_calls(cache, size, sgml, "block_rows")
    out = run_calls(benchmark, block_rows, calls, rounds=20, family=FAMILY, kernel="sgml_block_rows", size=size,
                    expected="O(K)", expected_slope=1.0, sparse=False)
    for ((M, T, a, colours, j, rho), _), rows in zip(calls, out):  # reference: eq. (30) written out
        R = np.abs(M) * a[None, :] / a[:, None]  # |s_i M_ik / s_k| with s = 1 / a
        np.fill_diagonal(R, 0.0)
        R[:, j] = 0.0
        low = rho + R.sum(axis=1)
        low[j] = rho
        others = np.flatnonzero(np.arange(len(a)) != j)
        np.testing.assert_array_equal(rows.others, others)
        np.testing.assert_array_equal(rows.sigma, -colours[others] * colours[j])
        np.testing.assert_allclose(rows.low, low, rtol=1e-12, atol=1e-12 * np.max(T / a))  # T - |M_ij| a_j cancels
        np.testing.assert_allclose(rows.alpha * rows.beta, 1.0, rtol=1e-12)
        np.testing.assert_allclose(rows.alpha, a[j] / a[others], rtol=1e-15)


def test_sgml_block_gradient(benchmark, cache, size):
    """Diagonal and column j of the gradient (eq. (32)) from the pair coefficients dQ/dD."""
    calls = _sgml_calls(cache, size, sgml, "block_gradient")
    out = run_calls(benchmark, block_gradient, calls, rounds=20, family=FAMILY, kernel="sgml_block_gradient",
                    size=size, expected="O(n^2 + n K) (n samples)", expected_slope=1.0, sparse=False)
    for ((F, A, j, F_others, sign), _), (gd, go) in zip(calls, out):  # reference: the whole K x K gradient
        G = sign * gradient_from_pairs(F, A)
        others = np.flatnonzero(np.arange(F.shape[1]) != j)
        np.testing.assert_array_equal(F_others, F[:, others])
        scale = np.abs(G).max()
        np.testing.assert_allclose(gd, np.diag(G), rtol=1e-10, atol=1e-10 * scale)
        np.testing.assert_allclose(go, 2.0 * G[others, j], rtol=1e-10, atol=1e-10 * scale)


def test_sgml_block_lp(benchmark, cache, size):
    """The closed-form vertex of LP (41) for one block (2K - 1 variables, one coupling row)."""
    calls = _sgml_calls(cache, size, sgml, "block_vertex")
    out = run_calls(benchmark, block_vertex, calls, rounds=20, family=FAMILY, kernel="sgml_block_lp", size=size,
                    expected="O(K)", expected_slope=1.0, sparse=False)
    for ((rows, gd, go, C, *flipped), _), vert in zip(calls, out):  # reference: LP (41) as written, by HiGHS
        K = len(gd)
        j, others, sigma, low, alpha, beta, _, low_sum = rows
        assert low_sum == float(low.sum())
        if flipped and flipped[0]:  # node j with the other colour: every sign of column j reversed
            sigma = -sigma
        A = np.zeros((K + 1, 2 * K - 1))
        A[others, K + np.arange(K - 1)] = alpha * sigma  # |M_ij| = sigma_i M_ij
        A[j, K:] = beta * sigma
        A[np.arange(K), np.arange(K)] = -1.0
        A[K, :K] = 1.0  # tr(M) <= C
        bounds = [(None, None)] * K + [(0.0, None) if sg > 0 else (None, 0.0) for sg in sigma]
        ref = linprog(np.concatenate([gd, go]), A_ub=A, b_ub=np.concatenate([-low, [C]]), bounds=bounds, method="highs")
        if vert is None:
            # infeasible: the bounds alone exceed the trace (HiGHS may accept an excess within its tolerance)
            assert C < low.sum() and (ref.status == 2 or low.sum() - C <= 1e-9 * C)
            continue
        diag, col = vert
        assert abs(gd @ diag + go @ col - ref.fun) <= 1e-7 * max(1.0, abs(ref.fun))  # HiGHS tolerances
        assert diag.sum() <= C * (1 + 1e-12) and np.all(sigma * col >= 0)


def test_sgml_dir_distances(benchmark, cache, size):
    """Pair distances (eq. (25)) of a block direction ``diag(delta) + e_j dcol' + dcol e_j'``."""
    calls = _sgml_calls(cache, size, sgml, "block_dir_distances")
    out = run_calls(benchmark, block_dir_distances, calls, rounds=20, family=FAMILY, kernel="sgml_dir_distances",
                    size=size, expected="O(n^2 K) (n samples)", expected_slope=1.0, sparse=False)
    for ((F, j, F_others, delta, dcol), _), E in zip(calls, out):  # reference: the K x K direction
        others = np.flatnonzero(np.arange(F.shape[1]) != j)
        Dir = np.diag(delta)
        Dir[others, j] = Dir[j, others] = dcol
        ref = dir_distances(F, Dir)
        np.testing.assert_allclose(E, ref, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(ref).max()))


def test_sgml_column_distances(benchmark, cache, size):
    """Pair distances (eq. (25)) of column j alone: the flipped colour's start (Algorithm 1, line 7)."""
    calls = _sgml_calls(cache, size, sgml, "column_distances")
    out = run_calls(benchmark, column_distances, calls, rounds=20, family=FAMILY, kernel="sgml_column_distances",
                    size=size, expected="O(n^2 + n K) (n samples)", expected_slope=1.0, sparse=False)
    for ((F, j, col), _), E in zip(calls, out):
        Dir = np.zeros((len(col), len(col)))
        Dir[:, j] = Dir[j, :] = col
        ref = dir_distances(F, Dir)
        np.testing.assert_allclose(E, ref, rtol=1e-10, atol=1e-12 * max(1.0, np.abs(ref).max()))


def test_sgml_line_search(benchmark, cache, size):
    """The step size along SGML's directions (section 4.4.2): Q'(gamma) from the objective (eq. (37))
    and its root by Newton-Raphson / regula falsi (eqs. (35)-(38))."""
    calls = _sgml_calls(cache, size, sgml, "step_size")
    gammas = run_calls(benchmark, step_size, calls, family=FAMILY, kernel="sgml_line_search", size=size,
                       expected="O(n^2) per Q' (n samples; K-free)", expected_slope=0.0, sparse=False)
    for ((obj, D0, E, sign, tol, g0), _), gamma in zip(calls, gammas):
        slope = obj.slope_along(D0, E)
        dq = lambda g: sign * slope(g)  # noqa: E731
        if g0 < 0 < dq(1.0):  # reference: the root of Q' on [0, 1] by Brent's method
            root = brentq(dq, 0.0, 1.0, xtol=1e-12)
            assert abs(dq(gamma)) <= tol * abs(g0) or abs(gamma - root) <= 1e-4
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
SGML_KERNELS = {"sgml_first_eigvec_warm": (sgml, "first_eigvec"), "sgml_radii": (sgml, "scaled_radii"),
                "sgml_block_rows": (sgml, "block_rows"), "sgml_block_gradient": (sgml, "block_gradient"),
                "sgml_block_lp": (sgml, "block_vertex"), "sgml_dir_distances": (sgml, "block_dir_distances"),
                "sgml_column_distances": (sgml, "column_distances"), "sgml_line_search": (sgml, "step_size"),
                "pair_distances": (sgml, "pair_distances")}


@pytest.mark.parametrize("cap", SWEEPS)
@pytest.mark.parametrize("solver", ["sgml", "pgml"])
def test_solve_sgml(benchmark, cache, size, solver, cap):
    """SGML / PGML capped at ``cap`` sweeps (tol = 0, no whole-matrix phase)."""
    inst = _inst(cache, size)
    cls = Sgml if solver == "sgml" else Pgml
    targets = {**SGML_KERNELS, "sgml_pair_coef": (inst.obj, "value_and_coef")}
    calls = per_iteration_calls(lambda k: _sgml_solve(inst, k, cls), targets, *SWEEPS) if cap == SWEEPS[-1] else {}
    keep = lambda p: p.get("phase") in (0, 1)  # noqa: E731 (the sweeps' points, not the whole-matrix phase's)
    extra = in_place(benchmark, lambda k: _sgml_solve(inst, k, cls), targets, *SWEEPS, keep=keep) if calls else {}
    sol = run_solve(benchmark, lambda: _sgml_solve(inst, cap, cls), rounds=3, measured=cap - SWEEPS[0] if calls else 0,
                    keep=keep, family=FAMILY, role="solve", solver=solver, size=size,
                    iterations=cap, calls={f"{FAMILY}:{k}": v for k, v in calls.items()}, **extra)
    assert sol.info["sweeps"] == cap
    check = inst.verify(sol)
    assert check.ok and check.details["balanced"]  # dense eigvalsh, trace, 2-colouring


@pytest.mark.parametrize("cap", PD_CAPS)
def test_solve_pdcone(benchmark, cache, size, cap):
    inst = _inst(cache, size)
    targets = {"pdcone_projection": (pd_cone, "project_rescale"), "pdcone_gradient": (inst, "value_and_grad")}
    solve = lambda k: PdCone().solve(inst, Budget(max_iter=k), tol=0.0)  # noqa: E731
    calls = per_iteration_calls(solve, targets, *PD_CAPS) if cap == PD_CAPS[-1] else {}
    extra = in_place(benchmark, solve, targets, *PD_CAPS) if calls else {}
    sol = run(benchmark, lambda: solve(cap), rounds=5, family=FAMILY, role="solve", solver="pd-cone", size=size,
              iterations=cap, calls={f"{FAMILY}:{k}": v for k, v in calls.items()}, **extra)
    assert sol.iterations == cap
    assert inst.verify(sol).ok
