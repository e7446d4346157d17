"""Graph classification on sparse kNN instances: the O(nnz) kernels of ``gdpa-lp`` and ``gdpa-lp-elim``.

The same digits subsets as :mod:`kern_graph_classification` (n = 150-1500, kNN graph, k = 10), built
with ``dense_n = 0`` so that ``L`` is ``scipy.sparse`` and the solvers take their sparse path
(:mod:`~psdbench.families.graph_classification.sparse_gdpa_lp`, :mod:`~.sparse_elim`), the one
they take on every kNN instance above ``dense_n``.  nnz of H-bar grows like n (k neighbours).

Kernels (graph-classifier paper): the warm-started first eigenvector of H-bar (section 5.1,
LOBPCG, Jacobi-preconditioned), H-bar (15)/(20), the Gershgorin rows (21) and the LP of
``gdpa-lp``, the Gershgorin scan (eq. (4), the instance's O(nnz) certificate), and for
``gdpa-lp-elim`` its H-bar, rows, closed-form LP and eigenvector.  ``gdpa-lp-elim`` runs with
``scalars = "gdpa"``: its default (``"optimal"``) stops after one LP in closed form, which has no
iteration to measure.  Each kernel is checked once, untimed, against a dense reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from conftest import cached, in_place, iteration_calls, per_iteration_calls, run, run_calls, run_solve
from kern_graph_classification import _check_eig, _replay_lp_solve

from psdbench.api import Budget
from psdbench.families.graph_classification import sparse_elim, sparse_gdpa_lp
from psdbench.families.graph_classification.gdpa_lp import GdpaLp, SplitDualLP
from psdbench.families.graph_classification.gdpa_lp_elim import GdpaLpElim
from psdbench.linalg.gdpa import first_eigvec, gershgorin_left_ends, magnitudes
from psdbench.linalg.gershgorin_lp import DiagAffineMatrix
from psdbench.linalg.lp import solve_lp
from psdbench.linalg.psd import gershgorin_left_end

SIZES = [150, 300, 750, 1500]
FAMILY = "graph-sparse"
SPARSE = {"expected": "O(nnz)", "expected_slope": 1.0, "sparse": True}
SOLVE_CAPS = (1, 2)  # LPs: the iteration is the marginal cost of LP 2
PARAMS = {"gdpa-lp": {}, "gdpa-lp-elim": {"scalars": "gdpa"}}
CLASSES = {"gdpa-lp": GdpaLp, "gdpa-lp-elim": GdpaLpElim}


def _inst(cache: dict, n: int):
    from benchmarks.instances import DIGITS, graph_classification

    return cached(cache, ("graph-sparse", n), lambda: graph_classification(n, dataset=DIGITS, dense_n=0))


def _solver(cache: dict, n: int, solver: str):
    """``k -> solve capped at k LPs`` (``tol = 0``) on the sparse instance of size ``n``."""
    inst = _inst(cache, n)
    return lambda k: CLASSES[solver]().solve(inst, Budget(max_iter=k), tol=0.0, **PARAMS[solver])


def _calls(cache: dict, n: int, solver: str, owner, attr: str) -> list:
    """Inputs of ``owner.attr`` in the iteration the capped solves measure (LP 2)."""
    solve = _solver(cache, n, solver)
    return cached(cache, ("graph-sparse-calls", n, solver, attr), lambda: iteration_calls(solve, SOLVE_CAPS, owner, attr))


def _iterate(cache: dict, n: int, solver: str):
    """The solution after LP 2."""
    return cached(cache, ("graph-sparse-sol", n, solver), lambda: _solver(cache, n, solver)(2))


def _disc_left_ends(H: np.ndarray, a: np.ndarray) -> np.ndarray:
    """Dense reference: Gershgorin disc left ends of ``S H S^-1``, ``s = 1 / a`` (eq. (4))."""
    off = np.abs(H) * (a[None, :] / a[:, None])
    np.fill_diagonal(off, 0.0)
    return np.diag(H) - off.sum(axis=1)


# ----------------------------------------------------------------------------- gdpa-lp
def test_first_eigvec_warm(benchmark, cache, size):
    """gdpa-lp's first eigenvector of the sparse H-bar, warm-started from the previous one (section 5.1)."""
    calls = _calls(cache, size, "gdpa-lp", sparse_gdpa_lp, "first_eigvec")
    H = calls[0][0][0]
    eigs = run_calls(benchmark, first_eigvec, calls, family=FAMILY, kernel="first_eigvec_warm", size=size,
                     nnz=int(H.nnz), **SPARSE)
    _check_eig(H, eigs[0])


def test_split_dual_matrix(benchmark, cache, size):
    """H-bar of (15)/(20) at gdpa-lp's iterate, sparse."""
    inst = _inst(cache, size)
    calls = _calls(cache, size, "gdpa-lp", inst, "split_dual_matrix")
    nnz = int(inst.split_dual_matrix(*calls[0][0]).nnz)
    H = run_calls(benchmark, inst.split_dual_matrix, calls, family=FAMILY, kernel="split_dual_matrix", size=size,
                  nnz=nnz, **SPARSE)
    # the dense path's affine description of (15) gives the same matrix
    y, z, eps = calls[0][0]
    lp = SplitDualLP(L=inst.L.toarray(), xhat=inst.xhat, free_eps=True)
    np.testing.assert_allclose(H[0].toarray(), lp.matrix().evaluate(np.concatenate([y, z, [eps]])), atol=1e-10)


def test_split_lp_rows(benchmark, cache, size):
    """The Gershgorin rows (21) of gdpa-lp's LP from the eigenvector's magnitudes, sparse."""
    inst = _inst(cache, size)
    calls = _calls(cache, size, "gdpa-lp", sparse_gdpa_lp, "lp_rows")
    L, xhat, eps, free, a, rho = calls[0][0]
    nnz = int(sparse_gdpa_lp.split_affine(L, xhat, eps, free).evaluate(np.zeros(inst.n + 2 + inst.m)).nnz)
    out = run_calls(benchmark, sparse_gdpa_lp.lp_rows, calls, family=FAMILY, kernel="split_lp_build", size=size,
                    nnz=nnz, **SPARSE)
    A, rhs = out[0]
    # closed form: at any point x the rows' slack is the disc left ends of S H-bar(x) S^-1, eq. (4)
    sol = _iterate(cache, size, "gdpa-lp")
    x = np.concatenate([sol.variables["y"], sol.variables["z"], [float(sol.variables["eps"])] if free else []])
    H = SplitDualLP(L=L.toarray(), xhat=xhat, free_eps=free).matrix(eps).evaluate(x)
    np.testing.assert_allclose(rhs - A @ x, _disc_left_ends(H, a) - rho, atol=1e-8 * (1 + np.abs(H).max()))


def test_split_lp_solve(benchmark, cache, size):
    """One LP (20)+(21) of gdpa-lp by HiGHS dual simplex (sparse rows)."""
    calls = _calls(cache, size, "gdpa-lp", sparse_gdpa_lp, "solve_lp")
    _replay_lp_solve(benchmark, calls, FAMILY, "split_lp_solve", size)


def test_gershgorin_scan(benchmark, cache, size):
    """Smallest disc left end of S H-bar S^-1 (eq. (4)): the instance's O(nnz) certificate."""
    inst = _inst(cache, size)
    sol = _iterate(cache, size, "gdpa-lp")
    H = inst.split_dual_matrix(sol.variables["y"], sol.variables["z"], float(sol.variables["eps"]))
    w, V = sla.eigh(H.toarray(), subset_by_index=[0, 0])
    s = 1.0 / magnitudes(V[:, 0])
    g = run(benchmark, lambda: gershgorin_left_end(H, s), family=FAMILY, kernel="gershgorin_scan", size=size,
            nnz=int(H.nnz), **SPARSE)
    # the dense scan gives the same smallest left end, which (Gershgorin) is below lambda_min
    ref = gershgorin_left_ends(H.toarray(), V[:, 0]).min()
    scale = max(1.0, float(abs(H).max()))
    assert abs(g - ref) <= 1e-9 * scale and g <= w[0] + 1e-9 * scale


# ----------------------------------------------------------------------------- gdpa-lp-elim
def test_elim_first_eigvec_warm(benchmark, cache, size):
    calls = _calls(cache, size, "gdpa-lp-elim", sparse_elim, "first_eigvec")
    H = calls[0][0][0]
    eigs = run_calls(benchmark, first_eigvec, calls, family=FAMILY, kernel="elim_first_eigvec_warm", size=size,
                     nnz=int(H.nnz), **SPARSE)
    _check_eig(H, eigs[0])


def test_elim_evaluate(benchmark, cache, size):
    """H-bar of the split reduced dual at the iterate (every variable on the diagonal)."""
    calls = _calls(cache, size, "gdpa-lp-elim", DiagAffineMatrix, "evaluate")
    Haff, x = calls[0][0]
    out = run_calls(benchmark, DiagAffineMatrix.evaluate, calls, family=FAMILY, kernel="elim_evaluate", size=size,
                    nnz=int(Haff.C.nnz), **SPARSE)
    k = len(x) - 1
    ref = _inst(cache, size).reduced_split_matrix(x[:k], float(x[k]))
    assert abs(out[0] - ref).max() <= 1e-10


def test_elim_gershgorin_rows(benchmark, cache, size):
    """The Gershgorin rows of the split reduced dual (called by the closed-form LP)."""
    calls = _calls(cache, size, "gdpa-lp-elim", DiagAffineMatrix, "rows")
    Haff, a = calls[0][0][:2]
    out = run_calls(benchmark, DiagAffineMatrix.rows, calls, family=FAMILY, kernel="elim_gershgorin_rows", size=size,
                    nnz=int(Haff.C.nnz), **SPARSE)
    A, b = out[0]
    sol = _iterate(cache, size, "gdpa-lp-elim")
    x = np.concatenate([sol.variables["y_reduced"], [float(sol.variables["eps_reduced"])]])
    H = Haff.evaluate(x).toarray()
    rho = calls[0][0][2] if len(calls[0][0]) > 2 else calls[0][1].get("rho", 0.0)
    np.testing.assert_allclose(b - A @ x, _disc_left_ends(H, a) - rho, atol=1e-8 * (1 + np.abs(H).max()))


def test_elim_tight_rows(benchmark, cache, size):
    """The elim LP in closed form (every Gershgorin row tight); equal to HiGHS on the same rows."""
    calls = _calls(cache, size, "gdpa-lp-elim", DiagAffineMatrix, "tight_rows")
    Haff, a = calls[0][0][:2]
    out = run_calls(benchmark, DiagAffineMatrix.tight_rows, calls, family=FAMILY, kernel="elim_tight_rows", size=size,
                    nnz=int(Haff.C.nnz), **SPARSE)
    A, b = Haff.rows(a)
    c = np.concatenate([np.ones(Haff.n_vars - 1), [0.0]])
    ref = solve_lp(c, A, b, [(None, None)] * Haff.n_vars, tol=1e-9)
    assert abs(c @ out[0] - ref.fun) <= 1e-6 * max(1.0, abs(ref.fun))


# ----------------------------------------------------------------------------- whole iterations
def _targets(solver: str, inst) -> dict:
    if solver == "gdpa-lp":
        return {"first_eigvec_warm": (sparse_gdpa_lp, "first_eigvec"), "split_lp_build": (sparse_gdpa_lp, "lp_rows"),
                "split_lp_solve": (sparse_gdpa_lp, "solve_lp"), "split_dual_matrix": (inst, "split_dual_matrix")}
    return {"elim_tight_rows": (DiagAffineMatrix, "tight_rows"), "elim_evaluate": (DiagAffineMatrix, "evaluate"),
            "elim_first_eigvec_warm": (sparse_elim, "first_eigvec")}


@pytest.mark.parametrize("cap", SOLVE_CAPS)
@pytest.mark.parametrize("solver", list(CLASSES))
def test_solve(benchmark, cache, size, solver, cap):
    """A sparse solve capped at ``cap`` LPs (``tol = 0``); two caps give one iteration's marginal cost."""
    inst = _inst(cache, size)
    solve = _solver(cache, size, solver)
    calls = per_iteration_calls(solve, _targets(solver, inst), *SOLVE_CAPS) if cap == SOLVE_CAPS[-1] else {}
    extra = in_place(benchmark, solve, _targets(solver, inst), *SOLVE_CAPS) if calls else {}
    sol = run_solve(benchmark, lambda: solve(cap), rounds=3, measured=cap - SOLVE_CAPS[0] if calls else 0, **extra,
                    family=FAMILY, role="solve", solver=solver, size=size, iterations=cap,
                    calls={f"{FAMILY}:{k}": v for k, v in calls.items()})
    assert sol.iterations == cap
    # the returned point's certified bound (Gershgorin, O(nnz)) is below x' L x of its labels
    lower = inst.evaluate(sol)["lower_bound"]
    assert lower <= inst.objective(sol) + 1e-9 * max(1.0, abs(inst.objective(sol)))
