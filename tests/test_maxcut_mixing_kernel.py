"""The max-cut mixing sweep (``maxcut/mixing.py``): the compiled kernel against a plain numpy sweep
of Algorithm 1 and against the kernel it replaced (one ``j != i`` branch per entry, one serial sum,
a division per entry), sweep for sweep and to the stopping rule."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.families.maxcut.mixing import _sweep, initial_point, mixing, offdiagonal_rows


def _graph(n: int, density: float, seed: int, isolated: int | None = None) -> sp.csr_matrix:
    """A symmetric C with +-1 and real weights, a diagonal (some of it explicit zeros), optionally an
    isolated vertex."""
    rng = np.random.default_rng(seed)
    A = sp.random(n, n, density=density, random_state=rng, data_rvs=lambda m: rng.choice([-1.0, 1.0, 0.37], m))
    A = sp.triu(A, 1)
    C = (A + A.T).tolil()
    if isolated is not None:
        C[isolated, :] = 0.0
        C[:, isolated] = 0.0
    C = C.tocsr()
    C.eliminate_zeros()
    d = rng.standard_normal(n)
    d[::3] = 0.0
    C.setdiag(d)  # a CSR's setdiag stores every diagonal entry, the zeros too
    assert C.nnz == (C != 0).nnz + (d == 0).sum()
    C.sort_indices()
    return C


def _reference_sweep(C: sp.csr_matrix, V: np.ndarray) -> float:
    """Algorithm 1, one sweep, in numpy: ``v_i <- g_i / ||g_i||``, ``g_i = sum_{j != i} c_ij v_j``
    (summed over ``j`` ascending, as the kernel does: with +-1 weights a sum can cancel to a few ulps,
    whose sign another order could flip)."""
    Coff = C.toarray()
    np.fill_diagonal(Coff, 0.0)
    gain = 0.0
    for i in range(V.shape[0]):
        g = np.zeros(V.shape[1])
        for j in np.flatnonzero(Coff[i]):
            g = g + Coff[i, j] * V[j]
        nrm = np.linalg.norm(g)
        if nrm > 0.0:
            gain += 2.0 * (nrm - g @ V[i])
            V[i] = g / nrm
    return gain


def _previous_sweep(indptr, indices, data, V):
    """The kernel before issue 49, verbatim (on the full CSR, diagonal skipped per entry), in Python."""
    n, k = V.shape
    gain = 0.0
    g = np.empty(k)
    for i in range(n):
        for t in range(k):
            g[t] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j = indices[p]
            if j != i:
                c = data[p]
                for t in range(k):
                    g[t] += c * V[j, t]
        nrm = 0.0
        dot = 0.0
        for t in range(k):
            nrm += g[t] * g[t]
            dot += g[t] * V[i, t]
        nrm = math.sqrt(nrm)
        if nrm > 0.0:
            gain += nrm - dot
            for t in range(k):
                V[i, t] = g[t] / nrm
    return 2.0 * gain


def _previous_mixing(C, k, seed, tol, max_sweeps):
    """The driver before issue 49 with :func:`_previous_sweep` (same start, same stopping rule)."""
    V = initial_point(C.shape[0], k, seed)
    d = C.diagonal()
    obj = float(np.sum(V * (C @ V)))
    sweeps = 0
    for sweeps in range(1, max_sweeps + 1):
        gain = _previous_sweep(C.indptr, C.indices, C.data, V)
        obj += gain
        if gain <= tol * max(1.0, abs(obj - float(d.sum()))):
            return V, sweeps, "converged"
    return V, sweeps, "max_iter"


def test_offdiagonal_rows_drop_only_the_diagonal():
    C = _graph(30, 0.2, 0, isolated=4)
    indptr, indices, data = offdiagonal_rows(C)
    assert indptr.dtype == indices.dtype == np.int32
    D = sp.csr_matrix((data, indices, indptr), shape=C.shape)
    assert abs(D - (C - sp.diags(C.diagonal()))).max() == 0.0
    assert indptr[5] == indptr[4]  # the isolated vertex has no row entries
    for i in range(30):
        row = indices[indptr[i]:indptr[i + 1]]
        assert np.all(np.diff(row) > 0) and i not in row


@pytest.mark.parametrize("k", [1, 3, 4, 7, 13])
def test_one_sweep_equals_a_numpy_sweep_of_algorithm_1(k):
    C = _graph(60, 0.15, k, isolated=7)
    V0 = initial_point(60, k, 1)
    V, R = V0.copy(), V0.copy()
    gain = _sweep(*offdiagonal_rows(C), V)
    ref = _reference_sweep(C, R)
    assert np.max(np.abs(V - R)) <= 1e-12
    assert gain == pytest.approx(ref, rel=1e-12, abs=1e-12)
    assert np.array_equal(V[7], V0[7])  # g_i = 0: v_i is left as it is
    assert np.max(np.abs(np.linalg.norm(V, axis=1) - 1.0)) <= 1e-14


def test_a_zero_gradient_leaves_the_row():
    """Vertex 0 with two neighbours whose terms cancel exactly: ``g_0 = 0``, ``v_0`` unchanged."""
    C = sp.csr_matrix(np.array([[0.0, 1.0, -1.0], [1.0, 0.0, 0.0], [-1.0, 0.0, 0.0]]))
    V = np.array([[0.6, 0.8], [1.0, 0.0], [1.0, 0.0]])
    V1 = V.copy()
    _sweep(*offdiagonal_rows(C), V1)
    assert np.array_equal(V1[0], V[0])
    R = V.copy()
    _reference_sweep(C, R)
    assert np.array_equal(V1, R)


@pytest.mark.parametrize("k,sweeps", [(6, 25), (9, 10)])
def test_sweeps_match_the_previous_kernel_within_rounding(k, sweeps):
    C = _graph(80, 0.1, 3)
    V, done, _ = mixing(C, k, 2, tol=0.0, max_sweeps=sweeps)
    P, done_p, _ = _previous_mixing(C, k, 2, 0.0, sweeps)
    assert done == done_p == sweeps
    assert np.max(np.abs(V - P)) <= 1e-11
    obj, obj_p = float(np.sum(V * (C @ V))), float(np.sum(P * (C @ P)))
    assert obj == pytest.approx(obj_p, rel=1e-13)


def test_stopping_rule_as_before():
    C = _graph(50, 0.2, 5)
    V, done, why = mixing(C, 8, 0, tol=1e-9, max_sweeps=5000)
    P, done_p, why_p = _previous_mixing(C, 8, 0, 1e-9, 5000)
    assert why == why_p == "converged"
    assert abs(done - done_p) <= 1  # the same rule; only the last bits of each sweep's gain differ
    assert float(np.sum(V * (C @ V))) == pytest.approx(float(np.sum(P * (C @ P))), rel=1e-12)


def test_an_unsorted_input_is_not_changed():
    C = _graph(20, 0.3, 8)
    perm = np.random.default_rng(0).permutation  # shuffle each row's entries
    for i in range(20):
        s = slice(C.indptr[i], C.indptr[i + 1])
        p = perm(s.stop - s.start)
        C.indices[s], C.data[s] = C.indices[s][p], C.data[s][p]
    C.has_sorted_indices = False
    before = (C.indices.copy(), C.data.copy())
    V, _, _ = mixing(C, 5, 0, tol=0.0, max_sweeps=4)
    assert np.array_equal(C.indices, before[0]) and np.array_equal(C.data, before[1])
    S = C.sorted_indices()
    W, _, _ = mixing(S, 5, 0, tol=0.0, max_sweeps=4)
    assert np.array_equal(V, W)
