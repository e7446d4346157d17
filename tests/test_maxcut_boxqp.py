"""``maxcut/boxqp`` and ``boxqp-mixing``: the box-QP SDP on a sparse C, checked against Clarabel."""

from __future__ import annotations

import os
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.api import Budget, DataError, Dataset, Solution
from psdbench.families.maxcut.boxqp import BoxqpMixing, MaxcutBoxqp, qpg_from_sdp
from psdbench.families.maxcut.graph import random_graph
from psdbench.families.sdp.sdpa_io import parse_sdpa


def _cost(n: int, density: float, seed: int, diag: bool) -> sp.csr_matrix:
    C = random_graph(n, density, seed, "pm1")
    if diag:
        C = (C + sp.diags(np.random.default_rng(seed).uniform(0.0, 2.0, n))).tocsr()
    return C


def _instance(C: sp.spmatrix, seed: int = 0):
    return MaxcutBoxqp().build(Dataset(name="t", source="test", payload={"cost": C}), {}, seed)


def _clarabel_reduced(C: np.ndarray) -> float:
    n = C.shape[0]
    Y = cp.Variable((n, n), PSD=True)
    return float(cp.Problem(cp.Maximize(cp.trace(C @ Y)), [cp.diag(Y) <= 1]).solve(solver=cp.CLARABEL))


def _clarabel_standard(C: np.ndarray) -> float:
    """SDPLIB's qpG form: one 2n block, ``<C, X_11>``, ``X_ii + X_(n+i)(n+i) = 1``."""
    n = C.shape[0]
    X = cp.Variable((2 * n, 2 * n), PSD=True)
    cons = [X[i, i] + X[n + i, n + i] == 1 for i in range(n)]
    return float(cp.Problem(cp.Maximize(cp.trace(C @ X[:n, :n])), cons).solve(solver=cp.CLARABEL))


@pytest.mark.parametrize("diag", [False, True])
def test_slack_block_elimination_keeps_the_optimum(diag):
    C = _cost(10, 0.4, 3, diag).toarray()
    assert _clarabel_standard(C) == pytest.approx(_clarabel_reduced(C), rel=1e-6, abs=1e-6)


@pytest.mark.parametrize("diag", [False, True])
@pytest.mark.parametrize("seed", [1, 2])
def test_mixing_matches_clarabel_and_bound_is_certified(diag, seed):
    C = _cost(30, 0.3, seed, diag)
    inst = _instance(C, seed)
    p_star = _clarabel_reduced(C.toarray())
    sol = BoxqpMixing().solve(inst, Budget(), tol=1e-13)
    assert inst.verify(sol).ok
    obj = inst.objective(sol)
    assert obj == pytest.approx(p_star, rel=1e-6)
    b = inst.bound(sol.variables["y"])
    assert b.kind == "certified" and b.value >= p_star - 1e-7 * abs(p_star)  # Clarabel's own accuracy
    assert b.value >= obj
    assert (b.value - obj) / abs(b.value) < 1e-6
    ev = inst.evaluate(sol)
    assert ev["dual_bound_certified"] == 1.0 and "cut" not in ev


def test_bound_clips_y_and_never_falls_below_the_optimum():
    C = _cost(20, 0.3, 5, True)
    inst = _instance(C)
    p_star = _clarabel_reduced(C.toarray())
    rng = np.random.default_rng(0)
    for y in (rng.normal(size=20), -np.ones(20), 10 * np.ones(20)):  # neither dual feasible nor y >= 0
        b = inst.bound(y)
        assert b.kind == "certified" and b.value >= p_star
    # y = 10: C - 10 I is negative definite, so U = 1'y = 200 (max(0, lambda_max) = 0)
    assert inst.bound(10 * np.ones(20)).value == pytest.approx(200.0)


def test_verification_rejects_diag_above_one_and_accepts_below():
    inst = _instance(_cost(8, 0.5, 0, False))
    R = np.full((8, 2), 0.5)  # ||r_i||^2 = 0.5 <= 1: feasible although not on the sphere
    assert inst.verify(Solution(variables={"R": R})).ok
    R[3] = [1.0, 0.1]
    f = inst.verify(Solution(variables={"R": R}))
    assert not f.ok and f.max_residual == pytest.approx(0.01)


def _qpg_text(C: np.ndarray, constraint=lambda i, n: [(i, i), (n + i, n + i)]) -> str:
    n = C.shape[0]
    lines = [f"{n}", "1", f"{2 * n}", " ".join(["1.0"] * n)]
    lines += [f"0 1 {i + 1} {j + 1} {C[i, j]}" for i in range(n) for j in range(i, n) if C[i, j]]
    for i in range(n):
        lines += [f"{i + 1} 1 {a + 1} {b + 1} 1.0" for a, b in constraint(i, n)]
    return "\n".join(lines) + "\n"


def test_qpg_reader_reads_the_top_left_block_and_refuses_other_structures():
    C = _cost(6, 0.6, 2, False).toarray()
    data = parse_sdpa(_qpg_text(C))
    assert np.array_equal(qpg_from_sdp(data).toarray(), C)
    inst = MaxcutBoxqp().build(Dataset(name="q", source="test", payload={"sdp": data, "published": 1.0}), {}, 0)
    assert inst.n == 6 and inst.published == 1.0
    with pytest.raises(DataError, match="constraints are not"):
        qpg_from_sdp(parse_sdpa(_qpg_text(C, lambda i, n: [(i, i), (n + (i + 1) % n, n + (i + 1) % n)])))
    with pytest.raises(DataError, match="constraints are not"):
        qpg_from_sdp(parse_sdpa(_qpg_text(C, lambda i, n: [(i, i)])))
    C2 = np.zeros((12, 12))
    C2[:6, :6] = C
    C2[7, 7] = 1.0
    text = _qpg_text(C).splitlines()
    text.insert(4, "0 1 8 8 1.0")
    with pytest.raises(DataError, match="outside the top-left"):
        qpg_from_sdp(parse_sdpa("\n".join(text) + "\n"))
    with pytest.raises(DataError, match="negative diagonal"):
        _instance(sp.csr_matrix(-np.eye(3)))


@pytest.mark.skipif(not (Path(os.environ.get("PSDBENCH_DATA", "/nonexistent")) / "sdplib" / "qpG51.dat-s").is_file(),
                    reason="needs PSDBENCH_DATA with sdplib/qpG51.dat-s")
def test_qpG51_reads_into_the_graph_form():
    from psdbench.families.sdp.datasets import SdplibCollection

    inst = MaxcutBoxqp().build(SdplibCollection().load("qpG51"), {}, 0)
    assert inst.n == 1000 and inst.W.nnz == 2 * 5909 and not inst.C.diagonal().any()
    assert np.all(inst.C.data == 1.0)  # Gset G51's unit weights: Y = 1 1' is optimal, p* = 2 * 5909
    assert inst.published == pytest.approx(1181.0)  # the shared table's value, shown beside only


def test_reference_formulation_gives_a_feasible_point_and_a_nonnegative_dual():
    C = _cost(12, 0.4, 7, True)
    inst = _instance(C)
    form = inst.reference_formulation()
    form.problem.solve(solver=cp.CLARABEL)
    v = form.extract()
    sol = Solution(variables=v)
    assert inst.verify(sol).ok and np.all(v["y"] >= 0)
    assert inst.objective(sol) == pytest.approx(form.problem.value, rel=1e-5)
    assert inst.bound(v["y"]).value >= form.problem.value - 1e-6


@pytest.mark.slow
def test_harness_runs_boxqp_mixing_beside_clarabel_with_a_certified_reference(tmp_path):
    """End to end, as a user runs it: both solvers reach the certified reference; maxcut-mixing refused."""
    import sqlite3
    import subprocess
    import sys

    grid = tmp_path / "g.toml"
    grid.write_text('[run]\nname = "boxqp-e2e"\nseeds = [0]\ntimeout = 600\nreference_timeout = 600\n\n'
                    '[[problems]]\nname = "maxcut/boxqp"\ndatasets = ["maxcut-gen/random-pm1"]\n'
                    'params = { n = [24] }\n\n'
                    '[[solvers]]\nname = "boxqp-mixing"\n\n[[solvers]]\nname = "clarabel"\n\n'
                    '[[solvers]]\nname = "maxcut-mixing"\n')
    db = tmp_path / "b.db"
    p = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(grid), "--db", str(db),
                        "--jobs", "1", "--no-ref-cache", "--report", "", "--quiet"],
                       capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    con = sqlite3.connect(db)
    assert [r[0] for r in con.execute("select kind from refs")] == ["certified"]
    rows = dict(con.execute("select solver, status from results").fetchall())
    assert rows == {"boxqp-mixing": "ok", "clarabel": "ok", "maxcut-mixing": "skipped"}
    gaps = [g for (g,) in con.execute("select gap_rel from results where status = 'ok'")]
    assert len(gaps) == 2 and all(g is not None and g < 1e-6 for g in gaps)
