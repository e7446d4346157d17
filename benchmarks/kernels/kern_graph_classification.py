"""Graph classification (GDPA classifier paper): the kernels of ``gdpa-lp`` and ``gdpa-lp-elim``, dense path.

Instances: subsets of n samples of scikit-learn's digits (1797 samples, so that n spans 150-1500),
kNN graph, k = 10 (``benchmarks/instances.py``), built dense as the problem does for N <=
``dense_n`` (default 2000): L, H-bar and the Gershgorin scalars are ``ndarray``s, so the kernels
that are O(nnz) on sparse input are O(n^2) here (``kern_graph_sparse.py`` times them on the same
graphs built sparse, the solvers' path above ``dense_n``).  The matrices are
those of the solvers' own iterates: ``gdpa-lp`` / ``gdpa-lp-elim`` run untimed with ``tol = 0`` for
one and two LPs, and the kernels are timed on iterate 2 (warm starts from iterate 1).

Kernels (section numbers of the paper): the first eigenvector of H-bar (section 5.1, cold and
warm-started LOBPCG), building H-bar (15)/(20), the LP (20)+(21) (its rows, then HiGHS), the
Gershgorin scan (eq. (4)), the reduced split dual's LP and eigenvector (``gdpa-lp-elim``), and
label propagation's harmonic solve.  Each is checked once, untimed, against a reference.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla
from conftest import cached, in_place, iteration_calls, last_call, per_iteration_calls, run, run_calls, run_solve

from psdbench.api import Budget
from psdbench.families.graph_classification import gdpa_lp, gdpa_lp_elim
from psdbench.families.graph_classification.gdpa_lp import GdpaLp, SplitDualLP
from psdbench.families.graph_classification.gdpa_lp_elim import GdpaLpElim, reduced_split_affine
from psdbench.linalg import gershgorin_lp
from psdbench.linalg.gdpa import first_eigvec, gershgorin_left_ends
from psdbench.linalg.gershgorin_lp import gershgorin_rows
from psdbench.linalg.lp import solve_lp

SIZES = [150, 300, 750, 1500]
FAMILY = "graph"
SPARSE = {"expected": "O(nnz)", "expected_slope": 1.0, "sparse": True}
DENSE2 = {"expected": "O(n^2) dense", "expected_slope": 2.0, "sparse": False}  # O(nnz) work on ndarray input
DENSE3 = {"expected": "O(n^3)", "expected_slope": 3.0, "sparse": False}
SOLVE_CAPS = (1, 2)  # LPs: the iteration is the marginal cost of LP 2 (tol = 0 still stops at an exactly repeated LP value)


def _inst(cache: dict, n: int):
    from benchmarks.instances import DIGITS, graph_classification

    return cached(cache, ("graph", n), lambda: graph_classification(n, dataset=DIGITS))


def _split(cache: dict, n: int) -> dict:
    """gdpa-lp's iterates 1 and 2 (tol = 0) and H-bar at iterate 2."""
    def build() -> dict:
        inst = _inst(cache, n)
        s2 = GdpaLp().solve(inst, Budget(max_iter=2), tol=0.0)
        y, z, eps = s2.variables["y"], s2.variables["z"], float(s2.variables["eps"])
        return {"inst": inst, "H2": inst.split_dual_matrix(y, z, eps), "x": np.concatenate([y, z, [eps]])}
    return cached(cache, ("graph-split", n), build)


def _elim(cache: dict, n: int) -> dict:
    """gdpa-lp-elim's split-dual matrix (affine) and its iterate 2 (tol = 0)."""
    def build() -> dict:
        inst = _inst(cache, n)
        Q, _ = inst.reduced_sdp()
        H = reduced_split_affine(Q)
        s2 = GdpaLpElim().solve(inst, Budget(max_iter=2), tol=0.0)
        x2 = np.concatenate([s2.variables["y_reduced"], [float(s2.variables["eps_reduced"])]])
        return {"inst": inst, "H": H, "x2": x2, "H2": H.evaluate(x2)}
    return cached(cache, ("graph-elim", n), build)


def _calls(cache: dict, n: int, solver: str, owner, attr: str) -> list:
    """Inputs of ``owner.attr`` in the iteration the capped solves measure (LP 2)."""
    cls = GdpaLp if solver == "gdpa-lp" else GdpaLpElim
    inst = _inst(cache, n)
    solve = lambda k: cls().solve(inst, Budget(max_iter=k), tol=0.0)  # noqa: E731
    return cached(cache, ("graph-calls", n, solver, attr), lambda: iteration_calls(solve, SOLVE_CAPS, owner, attr))


def _check_eig(H, eig) -> None:
    """Against dense ``eigh`` (of ``H`` densified if sparse): the smallest eigenvalue, and ``v`` an
    eigenvector of it (residual)."""
    H = H.toarray() if hasattr(H, "toarray") else H
    w = sla.eigvalsh(H)
    scale = max(1.0, float(np.abs(w).max()))
    assert abs(eig.lam_min - w[0]) <= 1e-4 * scale  # LOBPCG tol 1e-4 (the solvers' default)
    if eig.n_components == 1:
        assert np.linalg.norm(H @ eig.v - eig.lam_min * eig.v) <= 1e-3 * scale


def _nnz(H: np.ndarray) -> int:
    return int(np.count_nonzero(H))


def test_first_eigvec_cold(benchmark, cache, size):
    """The first eigenvector of H-bar at iterate 2 from a random start (no warm start)."""
    d = _split(cache, size)
    eig = run(benchmark, lambda: first_eigvec(d["H2"]), family=FAMILY, kernel="first_eigvec_cold", size=size,
              nnz=_nnz(d["H2"]), **DENSE2)
    _check_eig(d["H2"], eig)


def test_first_eigvec_warm(benchmark, cache, size):
    calls = _calls(cache, size, "gdpa-lp", gdpa_lp, "first_eigvec")
    H = calls[0][0][0]
    eigs = run_calls(benchmark, first_eigvec, calls, family=FAMILY, kernel="first_eigvec_warm", size=size,
                     nnz=_nnz(H), **DENSE2)
    _check_eig(H, eigs[0])


def test_split_dual_matrix(benchmark, cache, size):
    d = _split(cache, size)
    inst = d["inst"]
    calls = _calls(cache, size, "gdpa-lp", inst, "split_dual_matrix")
    H = run_calls(benchmark, inst.split_dual_matrix, calls, family=FAMILY, kernel="split_dual_matrix", size=size,
                  nnz=_nnz(d["H2"]), **DENSE2)
    # closed form: H-bar evaluated through the LP's affine description of (15) is the same matrix
    y, z, eps = calls[0][0]
    lp = SplitDualLP(L=inst.L, xhat=inst.xhat, free_eps=True)
    np.testing.assert_allclose(H[0], lp.matrix().evaluate(np.concatenate([y, z, [eps]])), atol=1e-10)


def test_labels(benchmark, cache, size):
    """Section 5.2's labels from the first eigenvector of H (12): one dense ``eigh`` (O(n^3)).

    gdpa-lp computes them once per solve, for the returned point; those of the iterates its
    TraceRecorder keeps are deferred (``psdbench.api.Deferred``) to the harness's re-scoring, after
    the timed interval, so they are no part of an iteration.
    """
    inst = _inst(cache, size)
    calls = cached(cache, ("graph-labels", size), lambda: [last_call(
        lambda: GdpaLp().solve(inst, Budget(max_iter=SOLVE_CAPS[-1]), tol=0.0), GdpaLp, "labels")])
    out = run_calls(benchmark, GdpaLp.labels, calls, family=FAMILY, kernel="labels", size=size,
                    expected="O(n^3)", expected_slope=3.0, sparse=False)
    inst, y, z = calls[0][0]
    w, V = np.linalg.eigh(inst.dual_matrix(y, z))  # reference: numpy's full eigendecomposition
    v = V[: inst.n, 0]
    x = np.sign(inst.xhat[0] * v[0] * v)
    ok = (x == out[0]) | (x == 0)
    ok[: inst.m] = out[0][: inst.m] == inst.xhat
    assert ok.all() or w[1] - w[0] < 1e-9 * max(1.0, abs(w[0]))  # equal unless the eigenvalue is repeated


def test_split_lp_rows(benchmark, cache, size):
    """The Gershgorin rows (21) of gdpa-lp's LP, built from the eigenvector's magnitudes."""
    d = _split(cache, size)
    calls = _calls(cache, size, "gdpa-lp", SplitDualLP, "build")
    out = run_calls(benchmark, SplitDualLP.build, calls, family=FAMILY, kernel="split_lp_build", size=size,
                    nnz=_nnz(d["H2"]), **DENSE2)
    lp, a, _ = calls[0][0]
    c, A, rhs, _ = out[0]
    # closed form: at the iterate x the rows' slack g0 + A'x is the disc left ends of S H S^-1, eq. (4)
    H = lp.matrix().evaluate(d["x"])
    off = np.abs(H) * (a[None, :] / a[:, None])
    np.fill_diagonal(off, 0.0)
    np.testing.assert_allclose(rhs - A @ d["x"], np.diag(H) - off.sum(axis=1), atol=1e-8 * (1 + np.abs(H).max()))


def _lp_reference(c, A, b, bounds) -> float:
    import cvxpy as cp

    x = cp.Variable(len(c))
    lo = np.array([-np.inf if l is None else l for l, _ in bounds])
    hi = np.array([np.inf if h is None else h for _, h in bounds])
    cons = [A @ x <= b]
    cons += [x[np.isfinite(lo)] >= lo[np.isfinite(lo)]] if np.isfinite(lo).any() else []
    cons += [x[np.isfinite(hi)] <= hi[np.isfinite(hi)]] if np.isfinite(hi).any() else []
    return cp.Problem(cp.Minimize(c @ x), cons).solve(solver=cp.CLARABEL)


def _replay_lp_solve(benchmark, calls: list, family: str, kernel: str, size: int) -> None:
    """Replay recorded ``solve_lp`` calls (HiGHS); the first one's optimum checked against cvxpy (Clarabel)."""
    (c, A, b, bounds), _ = calls[0]
    res = run_calls(benchmark, solve_lp, calls, family=family, kernel=kernel, size=size, nnz=int(A.nnz), **SPARSE)
    ref = _lp_reference(c, A, b, bounds)
    assert abs(res[0].fun - ref) <= 1e-6 * max(1.0, abs(ref))


def test_split_lp_solve(benchmark, cache, size):
    """One LP (20)+(21) of gdpa-lp by HiGHS dual simplex."""
    _replay_lp_solve(benchmark, _calls(cache, size, "gdpa-lp", gdpa_lp, "solve_lp"), FAMILY, "split_lp_solve", size)


def test_gershgorin_scan(benchmark, cache, size):
    """Disc left ends of S H S^-1 (eq. (4)); at the first eigenvector each equals lambda_min (GDPA)."""
    H = _split(cache, size)["H2"]
    w, V = sla.eigh(H, subset_by_index=[0, 0])
    left = run(benchmark, lambda: gershgorin_left_ends(H, V[:, 0]), family=FAMILY, kernel="gershgorin_scan",
               size=size, nnz=_nnz(H), **DENSE2)
    # paper property (GDPA, eq. (4)): every left end is lambda_min when H-bar is a balanced connected
    # generalized Laplacian; scale-aware check on rows whose |v_i| is not floored
    keep = np.abs(V[:, 0]) > 1e-6 * np.abs(V[:, 0]).max()
    np.testing.assert_allclose(left[keep], w[0], atol=1e-6 * max(1.0, np.abs(H).max()))


def test_elim_gershgorin_rows(benchmark, cache, size):
    d = _elim(cache, size)
    calls = _calls(cache, size, "gdpa-lp-elim", gdpa_lp_elim, "gershgorin_rows")
    out = run_calls(benchmark, gershgorin_rows, calls, family=FAMILY, kernel="elim_gershgorin_rows", size=size,
                    nnz=_nnz(d["H2"]), **DENSE2)
    Haff, a = calls[0][0][:2]
    A, b = out[0]
    H = Haff.evaluate(d["x2"])
    off = np.abs(H) * (a[None, :] / a[:, None])
    np.fill_diagonal(off, 0.0)
    np.testing.assert_allclose(b - A @ d["x2"], np.diag(H) - off.sum(axis=1), atol=1e-8 * (1 + np.abs(H).max()))


def test_elim_lp_solve(benchmark, cache, size):
    """One LP of gdpa-lp-elim (the split reduced dual's Gershgorin rows) by HiGHS."""
    calls = _calls(cache, size, "gdpa-lp-elim", gdpa_lp_elim, "solve_lp")
    _replay_lp_solve(benchmark, calls, FAMILY, "elim_lp_solve", size)


def test_elim_first_eigvec_warm(benchmark, cache, size):
    calls = _calls(cache, size, "gdpa-lp-elim", gdpa_lp_elim, "first_eigvec")
    H = calls[0][0][0]
    eigs = run_calls(benchmark, first_eigvec, calls, family=FAMILY, kernel="elim_first_eigvec_warm", size=size,
                     nnz=_nnz(H), **DENSE2)
    _check_eig(H, eigs[0])


def test_elim_evaluate(benchmark, cache, size):
    d = _elim(cache, size)
    calls = _calls(cache, size, "gdpa-lp-elim", gershgorin_lp.AffineSignedMatrix, "evaluate")
    out = run_calls(benchmark, gershgorin_lp.AffineSignedMatrix.evaluate, calls, family=FAMILY, kernel="elim_evaluate",
                    size=size, nnz=_nnz(d["H2"]), **DENSE2)
    # the split dual's H-bar is the instance's reduced_split_matrix at the same (y, eps)
    x = calls[0][0][1]
    k = len(x) - 1
    np.testing.assert_allclose(out[0], d["inst"].reduced_split_matrix(x[:k], float(x[k])), atol=1e-10)


def test_label_propagation(benchmark, cache, size):
    """Label propagation's harmonic solve (the instance's baseline), a dense LU solve."""
    inst = _inst(cache, size)
    m = inst.m
    L_UU, rhs = inst.L[m:, m:] + 1e-10 * np.eye(inst.n - m), -inst.L[m:, :m] @ inst.xhat
    f = run(benchmark, lambda: np.linalg.solve(L_UU, rhs), family=FAMILY, kernel="label_propagation", size=size,
            **DENSE3)
    # reference: the instance's own baseline (same harmonic function) and scipy's Cholesky solve
    np.testing.assert_allclose(f, sla.cho_solve(sla.cho_factor(L_UU), rhs), rtol=1e-6, atol=1e-9)
    truth = inst.x_true[m:]
    err = float(np.mean(np.where(f > 0, 1.0, -1.0) != truth))
    assert abs(err - inst.baselines()["labelprop_error"]) <= 1.0 / len(truth)


# ----------------------------------------------------------------------------- whole iterations
SOLVERS = {
    "gdpa-lp": (GdpaLp, {"first_eigvec_warm": (gdpa_lp, "first_eigvec"), "split_lp_build": (SplitDualLP, "build"),
                         "split_lp_solve": (gdpa_lp, "solve_lp"), "labels": (GdpaLp, "labels")}),
    "gdpa-lp-elim": (GdpaLpElim, {"elim_gershgorin_rows": (gdpa_lp_elim, "gershgorin_rows"),
                                  "elim_lp_solve": (gdpa_lp_elim, "solve_lp"),
                                  "elim_first_eigvec_warm": (gdpa_lp_elim, "first_eigvec"),
                                  "elim_evaluate": (gershgorin_lp.AffineSignedMatrix, "evaluate")}),
}


@pytest.mark.parametrize("cap", SOLVE_CAPS)
@pytest.mark.parametrize("solver", list(SOLVERS))
def test_solve(benchmark, cache, size, solver, cap):
    """A solve capped at ``cap`` LPs (``tol = 0``); two caps give one iteration's marginal cost."""
    cls, targets = SOLVERS[solver]
    inst = _inst(cache, size)
    if solver == "gdpa-lp":
        targets = {**targets, "split_dual_matrix": (inst, "split_dual_matrix")}
    solve = lambda k: cls().solve(inst, Budget(max_iter=k), tol=0.0)  # noqa: E731
    calls = per_iteration_calls(solve, targets, *SOLVE_CAPS) if cap == SOLVE_CAPS[-1] else {}
    extra = in_place(benchmark, solve, targets, *SOLVE_CAPS) if calls else {}
    sol = run_solve(benchmark, lambda: solve(cap), rounds=3, measured=cap - SOLVE_CAPS[0] if calls else 0,
                    family=FAMILY, role="solve", solver=solver, size=size, iterations=cap,
                    calls={f"{FAMILY}:{k}": v for k, v in calls.items()}, **extra)
    assert sol.iterations == cap
    # the returned point verifies (dense LAPACK checks), and gdpa-lp-elim's certified lower bound
    # on p* is below x' L x of its own labels (an upper bound on p*)
    assert inst.verify(sol).ok
    if solver == "gdpa-lp-elim":
        assert sol.info["bound"] <= inst.objective(sol) + 1e-9 * max(1.0, abs(inst.objective(sol)))
