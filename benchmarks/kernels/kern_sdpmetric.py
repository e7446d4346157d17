"""SDPMetric (rank-one Frank-Wolfe, Algorithms 1 and 2): the kernels of ``sdpmetric``.

Instances: the Fig. 2 setting (``synthetic/gaussian-classes``, the first D features, 1000 random
triplets, Huber loss; ``benchmarks/instances.py``).  Kernels, timed on the iterate of a 20-step
run: the top eigenvector of the gradient (Algorithm 2, line 2; ``auto`` as the solver runs it, and
ARPACK ``eigsh`` warm-started at every size), the gradient (12), rho's exact maximization
(Algorithm 1, line 3), the margins (5)-(6) and one trial of the backtracking line search (13)
(``f_value``; the search itself is inline in ``sdpmetric.solve`` and not reachable as a function:
moving it to ``losses.backtrack(m, dm, rho, slope, ...)`` would let it be timed whole).
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from conftest import cached, in_place, iteration_calls, per_iteration_calls, run, run_calls, run_solve

from psdbench.api import Budget
from psdbench.families.sdpmetric import losses, sdpmetric
from psdbench.families.sdpmetric.sdpmetric import Sdpmetric, top_eig

SIZES = [10, 25, 50, 100]
FAMILY = "sdpmetric"
CAPS = (20, 40)  # outer iterations; the iteration is their marginal cost


def _state(cache: dict, D: int) -> dict:
    def build() -> dict:
        from benchmarks.instances import triplet_margin

        inst = triplet_margin(D)
        X = Sdpmetric().solve(inst, Budget(max_iter=CAPS[0]), tol=0.0, eps=0.0).variables["X"]
        m = losses.margins(inst.U, inst.V, X)
        rho = losses.best_rho(m, inst.C, inst.loss, inst.h)
        G = losses.grad_X(inst.U, inst.V, m, rho, inst.C, inst.loss, inst.h)
        v0 = sla.eigh(G, subset_by_index=[D - 1, D - 1])[1][:, 0]
        G1 = losses.grad_X(inst.U, inst.V, m + 0.01 * ((inst.U @ v0) ** 2 - (inst.V @ v0) ** 2 - m), rho, inst.C,
                           inst.loss, inst.h)  # the next gradient after a small Frank-Wolfe step
        return {"inst": inst, "X": X, "m": m, "rho": rho, "G": G1, "v0": v0}
    return cached(cache, ("sdpmetric", D), build)


def _calls(cache: dict, D: int, owner, attr: str) -> list:
    """Sampled inputs of sdpmetric's calls to ``owner.attr`` in outer iterations 21-40 (the measured ones)."""
    inst = _state(cache, D)["inst"]
    solve = lambda k: Sdpmetric().solve(inst, Budget(max_iter=k), tol=0.0, eps=0.0)  # noqa: E731
    return cached(cache, ("sdp-calls", D, attr), lambda: iteration_calls(solve, CAPS, owner, attr))


def _args(inst) -> tuple:
    return inst.C, inst.loss, inst.h


def _check_top(G: np.ndarray, lam: float, v: np.ndarray) -> None:
    w = sla.eigvalsh(G)
    scale = max(1.0, float(np.abs(w).max()))
    assert abs(lam - w[-1]) <= 1e-8 * scale  # dense eigh
    assert np.linalg.norm(G @ v - lam * v) <= 1e-6 * scale


def test_top_eig(benchmark, cache, size):
    calls = _calls(cache, size, sdpmetric, "top_eig")
    out = run_calls(benchmark, top_eig, calls, family=FAMILY, kernel="top_eig", size=size,
                    expected="O(D^3) (eigh up to D = 50, then eigsh)", expected_slope=3.0, sparse=False)
    _check_top(calls[0][0][0], *out[0])


def test_top_eig_eigsh(benchmark, cache, size):
    """ARPACK warm-started at the previous eigenvector, at every size (dense G: O(D^2) per matvec)."""
    calls = [((a[0], a[1], "eigsh", a[3]), kw) for a, kw in _calls(cache, size, sdpmetric, "top_eig")]
    out = run_calls(benchmark, top_eig, calls, family=FAMILY, kernel="top_eig_eigsh", size=size,
                    expected="O(D^2) per matvec", expected_slope=2.0, sparse=False)
    _check_top(calls[0][0][0], *out[0])


def test_gradient(benchmark, cache, size):
    s = _state(cache, size)
    inst = s["inst"]
    calls = _calls(cache, size, losses, "grad_X")
    run_calls(benchmark, losses.grad_X, calls, rounds=20, family=FAMILY, kernel="grad_X", size=size,
              expected="O(n_triplets D^2)", expected_slope=2.0, sparse=False)
    rho = calls[0][0][3]
    # central difference of f(X, rho) (8) along a random symmetric direction, at a feasible X
    rng = np.random.default_rng(0)
    E = rng.standard_normal((size, size))
    E = 0.5 * (E + E.T)
    X = s["X"]
    G = losses.grad_X(inst.U, inst.V, losses.margins(inst.U, inst.V, X), rho, *_args(inst))
    f = lambda Y: losses.f_value(losses.margins(inst.U, inst.V, Y), rho, *_args(inst))  # noqa: E731
    h = 1e-6
    fd = (f(X + h * E) - f(X - h * E)) / (2 * h)
    assert abs(np.sum(G * E) - fd) <= 1e-5 * max(1.0, abs(fd))


def test_best_rho(benchmark, cache, size):
    inst = _state(cache, size)["inst"]
    calls = _calls(cache, size, losses, "best_rho")
    out = run_calls(benchmark, losses.best_rho, calls, rounds=20, family=FAMILY, kernel="best_rho", size=size,
                    expected="O(n_triplets log n_triplets) (D-free)", expected_slope=0.0, sparse=False)
    m, rho = calls[0][0][0], out[0]
    # reference: no rho on a fine grid over the breakpoints' range does better (f is concave in rho)
    grid = np.linspace(m.min() - 2 * inst.h, m.max() + 2 * inst.h, 4001)
    best_grid = max(losses.f_value(m, r, *_args(inst)) for r in grid)
    assert losses.f_value(m, rho, *_args(inst)) >= best_grid - 1e-9 * max(1.0, abs(best_grid))


def test_margins(benchmark, cache, size):
    s = _state(cache, size)
    inst = s["inst"]
    m = run(benchmark, lambda: losses.margins(inst.U, inst.V, s["X"]), rounds=20, family=FAMILY, kernel="margins",
            size=size, expected="O(n_triplets D^2)", expected_slope=2.0, sparse=False)
    ref = np.einsum("ri,ij,rj->r", inst.U, s["X"], inst.U) - np.einsum("ri,ij,rj->r", inst.V, s["X"], inst.V)
    np.testing.assert_allclose(m, ref, atol=1e-10 * max(1.0, np.abs(ref).max()))


def test_line_search_trial(benchmark, cache, size):
    """One trial of the backtracking search (13): f at ``m + alpha dm`` (margins are affine along p)."""
    calls = _calls(cache, size, losses, "f_value")
    run_calls(benchmark, losses.f_value, calls, rounds=20, family=FAMILY, kernel="line_search_trial", size=size,
              expected="O(n_triplets) (D-free)", expected_slope=0.0, sparse=False)
    s = _state(cache, size)
    inst, v = s["inst"], s["v0"]
    dm = (inst.U @ v) ** 2 - (inst.V @ v) ** 2 - s["m"]
    f = losses.f_value(s["m"] + 0.5 * dm, s["rho"], *_args(inst))
    # reference: the objective (8) recomputed from the point X + alpha (v v' - X) itself
    X = s["X"] + 0.5 * (np.outer(v, v) - s["X"])
    assert abs(f - inst.f(X, s["rho"])) <= 1e-9 * max(1.0, abs(f))


@pytest.mark.parametrize("cap", CAPS)
def test_solve(benchmark, cache, size, cap):
    """``sdpmetric`` capped at ``cap`` outer iterations (tol = eps = 0, one inner step each)."""
    inst = _state(cache, size)["inst"]
    targets = {"top_eig": (sdpmetric, "top_eig"), "grad_X": (losses, "grad_X"), "best_rho": (losses, "best_rho"),
               "line_search_trial": (losses, "f_value")}
    solve = lambda k: Sdpmetric().solve(inst, Budget(max_iter=k), tol=0.0, eps=0.0)  # noqa: E731
    calls = per_iteration_calls(solve, targets, *CAPS) if cap == CAPS[-1] else {}
    extra = in_place(benchmark, solve, targets, *CAPS) if calls else {}
    sol = run_solve(benchmark, lambda: solve(cap), rounds=3, measured=cap - CAPS[0] if calls else 0, family=FAMILY,
                    role="solve", solver="sdpmetric", size=size, iterations=cap,
                    calls={f"{FAMILY}:{k}": v for k, v in calls.items()}, **extra)
    assert sol.iterations == cap
    assert inst.verify(sol).ok
    assert inst.fw_bound(sol.variables["X"]) >= inst.objective(sol) - 1e-9  # Frank-Wolfe bound above the value
