"""The six DIMACS errors as the 7th DIMACS challenge defines them (Mittelmann 2003, Section 2):
a two-block case computed by hand, and CSDP's printed errors on the same point (CSDP's solution
file read back), on a loose point of truss1 and at CSDP's defaults on truss1 and truss6."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from psdbench.families.sdp.data import SdpData, from_blocks
from psdbench.families.sdp.errors import block_norm, dimacs_errors
from psdbench.families.sdp.sdpa_io import read_csdp_solution, read_sdpa


def _hand_case(lp_blocks: tuple[int, ...]) -> tuple[SdpData, np.ndarray, np.ndarray, np.ndarray]:
    """One 2x2 PSD block and two LP entries (as one block of 2 or two blocks of 1), m = 1.

    A_1 = (I, [1, 1]), b = 2, C = ([[2, 1], [1, 2]], [1, 3]); X = (I, [0.5, -0.25]), y = 1,
    Z = ([[4, 1], [1, 5]], [6, 10]).  Then A*(y) + Z - C = ([[3, 0], [0, 4]], [6, 8]).
    """
    sizes = (2, *lp_blocks)
    C1, Cl = np.array([[2.0, 1.0], [1.0, 2.0]]), np.array([1.0, 3.0])
    X1, Xl = np.eye(2), np.array([0.5, -0.25])
    Z1, Zl = np.array([[4.0, 1.0], [1.0, 5.0]]), np.array([6.0, 10.0])

    def split(v):
        return [v[:1], v[1:]] if len(lp_blocks) == 2 else [v]

    d = from_blocks(sizes, [C1, *split(Cl)], [[np.eye(2), *split(np.ones(2))]], [2.0], name="hand")
    return d, d.stack([X1, *split(Xl)]), np.array([1.0]), d.stack([Z1, *split(Zl)])


@pytest.mark.parametrize("lp_blocks", [(-2,), (-1, -1)])
def test_two_block_case_by_hand(lp_blocks):
    d, x, y, z = _hand_case(lp_blocks)
    e = dimacs_errors(d, x, y, z)
    # |b|_max = 2, |C|_max = 3; A(X) = tr(X1) + 0.5 - 0.25 = 2.25; lambda_min,K(X) = -0.25
    # ||R||_K = ||diag(3, 4)||_F + ||(6, 8)||_2 = 5 + 10 (the LP entries one vector, whatever the blocks)
    # <C, X> = 4 + 0.5 - 0.75 = 3.75, b'y = 2
    assert e.err[:5] == pytest.approx((0.25 / 3, 0.25 / 3, 15 / 4, 0.0, 1.75 / 6.75), rel=1e-14, abs=1e-15)
    # X outside the cone (err2 > 0): err6 is not defined, the largest error is over the other five
    assert np.isnan(e.err[5]) and e.max_err == 15 / 4
    # X inside: LP part (0.5, 0.25): A(X) = 2.75, <C, X> = 5.25, <X, Z> = 9 + 3 + 2.5 = 14.5
    x_in = x.copy()
    x_in[np.flatnonzero(x == -0.25)] = 0.25
    e = dimacs_errors(d, x_in, y, z)
    assert e.err == pytest.approx((0.75 / 3, 0.0, 15 / 4, 0.0, 3.25 / 8.25, 14.5 / 8.25), rel=1e-14, abs=1e-15)
    assert block_norm(d, d.stack([np.diag([3.0, 4.0]), *([np.array([6.0, 8.0])] if len(lp_blocks) == 1
                                                          else [np.array([6.0]), np.array([8.0])])])) == 15.0
    # the Frobenius norm of the whole block-diagonal residual would give sqrt(125) / 4 instead
    assert abs(e.err[2] - np.sqrt(125) / 4) > 0.9


# ------------------------------------------------------------------------------------------ CSDP
CSDP = shutil.which("csdp")
needs_csdp = pytest.mark.skipif(CSDP is None, reason="CSDP absent (Debian: apt-get install coinor-csdp)")


def _run_csdp(problem: Path, work: Path, params: dict[str, float] | None = None) -> tuple[list[float], Path]:
    """Run CSDP on ``problem`` in ``work`` (its param.csdp there); its printed DIMACS errors and solution file."""
    if params:
        (work / "param.csdp").write_text("".join(f"{k}={v:.1e}\n" for k, v in params.items()))
    sol = work / "out.sol"
    out = subprocess.run([CSDP, str(Path(problem).resolve()), str(sol)], cwd=work, capture_output=True, text=True,
                         timeout=600, env={"OMP_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"})
    m = re.search(r"DIMACS error measures:((?:\s+\S+){6})", out.stdout)
    assert m, out.stdout[-2000:]
    return [float(t) for t in m.group(1).split()], sol


def _same_printed(ours: float, printed: float) -> bool:
    """``ours`` prints as CSDP's ``%.2e`` (three significant digits, one unit of the last for rounding)."""
    return abs(ours - printed) <= 0.011 * abs(printed)


@needs_csdp
def test_against_csdps_printed_errors_on_a_loose_point(data_dir, tmp_path):
    """truss1 (6 PSD blocks) stopped at tolerances 1e-3: err3, err5, err6 well above rounding, so
    each of ours must print as CSDP's; err1 (at rounding on both sides) and CSDP's err2 = err4 = 0
    (its X and Z pass a Cholesky factorization) must stay at rounding."""
    prob = data_dir / "sdplib" / "truss1.dat-s"
    d = read_sdpa(prob)
    printed, sol = _run_csdp(prob, tmp_path, {"axtol": 1e-3, "atytol": 1e-3, "objtol": 1e-3})
    e = dimacs_errors(d, *read_csdp_solution(d, sol))
    for k in (2, 4, 5):
        assert printed[k] > 1e-12 and _same_printed(e.err[k], printed[k]), (k, e.err[k], printed[k])
    assert e.err[0] < 1e-12 and printed[0] < 1e-12
    assert e.err[1] == 0.0 and e.err[3] == 0.0 and printed[1] == printed[3] == 0.0


@needs_csdp
@pytest.mark.parametrize("name", ["truss1", "truss6"])
def test_err3_equals_csdps_dimacs_value_on_truss(data_dir, tmp_path, name):
    """At CSDP's own optimum (default tolerances), err3 equals the DIMACS value CSDP prints to 2 digits;
    the Frobenius norm of the whole residual (psdbench's former err3) is the smaller value the audit found."""
    prob = data_dir / "sdplib" / f"{name}.dat-s"
    d = read_sdpa(prob)
    printed, sol = _run_csdp(prob, tmp_path)
    x, y, z = read_csdp_solution(d, sol)
    e = dimacs_errors(d, x, y, z)
    assert float(f"{e.err[2]:.1e}") == float(f"{printed[2]:.1e}"), (e.err[2], printed[2])
    whole = float(np.linalg.norm(d.At_op(y) + z - d.c_dense())) / (1 + d.norm_C_inf())
    assert whole < e.err[2] / 1.5


# ------------------------------------------------------------------------------ SCS-form residuals
def test_scs_form_residuals_against_the_cone_form_built_explicitly():
    """kkt.py's residuals equal solver_benchmarks' ``cone_residuals`` formulas evaluated on the SCS
    form built with svec matrices (min -b'y s.t. svec(A*(y)) + s = svec(C), s = svec(Z); the cone's
    dual variable svec(X)): an independent path through :func:`.svec.stacked_svec`."""
    from psdbench.families.sdp.kkt import scs_residuals
    from psdbench.families.sdp.solvers.svec import stacked_svec

    d, x, y, z = _hand_case((-2,))
    rng = np.random.default_rng(0)
    x = x + 0.01 * d.stack([(lambda G: G + G.T)(rng.standard_normal((2, 2))), rng.standard_normal(2)])
    T, _, _ = stacked_svec(d.block_sizes, "scs")
    A = T @ d.A.T.toarray()  # columns: svec(A_k)
    b, s, ys = T @ d.c_dense(), T @ z, T @ x
    q = -d.b
    Ax, Aty = A @ y, A.T @ ys
    inf = lambda v: float(np.max(np.abs(v)))  # noqa: E731
    pobj, dobj = float(q @ y), float(-b @ ys)
    want = {"scs_primal_res_rel": inf(Ax + s - b) / (1 + max(inf(Ax), inf(s), inf(b))),
            "scs_dual_res_rel": inf(q + Aty) / (1 + max(inf(Aty), inf(q))),
            "scs_gap_rel": abs(pobj - dobj) / (1 + abs(pobj) + abs(dobj))}
    got = scs_residuals(d, x, y, z)
    assert {k: got[k] for k in want} == pytest.approx(want, rel=1e-12)
    assert got["kkt_worst_rel"] == max(want.values()) and got["scs_primal_res_rel"] > 0.1
    assert scs_residuals(d, x, y)["scs_primal_res_rel"] == 0.0  # no Z: s = svec(C - A*(y))


def test_scs_form_cone_distances_by_hand():
    """The SCS page's cone distances (solver_benchmarks' derive.py CONE_FIELDS), in closed form:
    X's PSD block Q diag(1, -3e-4) Q' (Q a rotation by 30 degrees) leaves the cone by -3e-4 q2 q2',
    whose svec inf-norm is 3e-4 * max(q21^2, q22^2, sqrt(2) |q21 q22|); its LP entry -0.25 by 0.25.
    Scaled by 1 + max(||A(X)||_inf, ||b||_inf); Z inside its cone: 0."""
    from psdbench.families.sdp.kkt import scs_residuals

    d, x, y, z = _hand_case((-2,))
    c, s_ = np.cos(np.pi / 6), np.sin(np.pi / 6)
    Q = np.array([[c, -s_], [s_, c]])
    X1 = Q @ np.diag([1.0, -3e-4]) @ Q.T
    x = d.stack([X1, np.array([0.5, 0.25])])
    q2 = Q[:, 1]
    dist = 3e-4 * max(q2[0] ** 2, q2[1] ** 2, np.sqrt(2) * abs(q2[0] * q2[1]))
    ax = np.trace(X1) + 0.75  # A_1 = (I, [1, 1])
    got = scs_residuals(d, x, y, z)
    assert got["scs_dual_cone_res_rel"] == pytest.approx(dist / (1 + max(abs(ax), 2.0)), rel=1e-9)
    assert got["scs_primal_cone_res_rel"] == 0.0
    x_lp = d.stack([np.eye(2), np.array([0.5, -0.25])])  # an LP entry outside: its distance 0.25
    assert scs_residuals(d, x_lp, y, z)["scs_dual_cone_res_rel"] == pytest.approx(0.25 / (1 + 2.25))
    assert got["kkt_worst_rel"] == max(got[k] for k in ("scs_primal_res_rel", "scs_dual_res_rel", "scs_gap_rel"))
