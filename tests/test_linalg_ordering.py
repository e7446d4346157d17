"""The nested-dissection path of the eigenvalue certificate: the exact fill count against SuperLU's
factor, and a certificate where the envelope refuses (a 2-D torus, the Gset G81 class)."""

from __future__ import annotations

import sys

import numpy as np
import pytest
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from psdbench.linalg.certify import envelope_size, lambda_max_upper
from psdbench.linalg.ordering import cholesky_fill, nested_dissection


def _torus(k: int) -> sp.csr_matrix:
    idx = np.arange(k * k).reshape(k, k)
    r = np.concatenate([idx.ravel(), idx.ravel()])
    c = np.concatenate([np.roll(idx, 1, 0).ravel(), np.roll(idx, 1, 1).ravel()])
    A = sp.coo_matrix((np.ones(2 * k * k), (r, c)), shape=(k * k, k * k))
    return sp.csr_matrix(A + A.T)


def _random_graph(n: int, density: float, seed: int) -> sp.csr_matrix:
    A = sp.random(n, n, density, random_state=seed)
    A.data[:] = 1.0
    return sp.csr_matrix(A + A.T)


def _superlu_fill(M: sp.spmatrix) -> int:
    lu = spla.splu(sp.csc_matrix(M), permc_spec="NATURAL", diag_pivot_thresh=0.0, options=dict(SymmetricMode=True))
    return int(lu.L.nnz)


@pytest.mark.parametrize("graph", ["torus", "random", "path"])
@pytest.mark.parametrize("order", ["natural", "nd", "shuffled"])
def test_fill_count_equals_superlu_factor(graph, order):
    A = {"torus": lambda: _torus(17), "random": lambda: _random_graph(250, 0.01, 3),
         "path": lambda: sp.csr_matrix(sp.diags([np.ones(99), np.ones(99)], [-1, 1]))}[graph]()
    n = A.shape[0]
    M = sp.csr_matrix(A + (abs(A).sum(axis=1).max() + 1) * sp.eye(n))  # diagonally dominant: no pivot fails
    perm = {"natural": np.arange(n), "nd": nested_dissection(M),
            "shuffled": np.random.default_rng(0).permutation(n)}[order]
    assert sorted(perm) == list(range(n))
    Mp = M[perm][:, perm]
    exact = cholesky_fill(Mp)
    assert exact == _superlu_fill(Mp)
    assert cholesky_fill(Mp, budget=exact) == exact
    assert cholesky_fill(Mp, budget=exact - 1) is None


def test_nested_dissection_beats_the_envelope_on_a_grid():
    M = sp.csr_matrix(_torus(60) + 5 * sp.eye(3600))
    nd = cholesky_fill(M[nested_dissection(M)][:, nested_dissection(M)])
    assert nd < envelope_size(M) / 2


def _signed_torus(k: int, seed: int) -> sp.csr_matrix:
    A = _torus(k)
    w = np.random.default_rng(seed).choice([-1.0, 1.0], size=A.nnz)
    W = sp.csr_matrix((w, A.indices, A.indptr), shape=A.shape)
    return sp.csr_matrix(sp.triu(W, 1) + sp.triu(W, 1).T)  # +-1 weights, G81's class


def test_torus_certified_where_the_envelope_refuses():
    S = _signed_torus(40, 1)
    lam = np.linalg.eigvalsh(S.toarray())[-1]
    env = envelope_size(S)
    perm = nested_dissection(S)
    fill = cholesky_fill(S[perm][:, perm])
    budget = (fill + env) // 2
    assert fill < budget < env
    b = lambda_max_upper(S, max_fill=budget, dense_max=0)
    assert b.certified, b.reason
    assert "nested dissection" in b.reason
    assert lam <= b.value <= lam + 1e-6 * max(1.0, abs(lam))
    refused = lambda_max_upper(S, max_fill=fill - 1, dense_max=0)
    assert refused.kind == "estimate" and "nested-dissection factor would have more than" in refused.reason


def test_without_pymetis_the_reason_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "pymetis", None)  # import pymetis raises ImportError
    S = _signed_torus(30, 2)
    b = lambda_max_upper(S, max_fill=envelope_size(S) - 1, dense_max=0)
    assert b.kind == "estimate" and "pymetis is not installed" in b.reason
