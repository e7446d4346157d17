"""Probe: do the dual augmented-Lagrangian methods reach thetaG51's target where SDPLR's does not?

The issue's target for an SDPLIB theta problem: the objective within 1e-6 of the published value
with a certified bound as close, in 120 s on 2 cores.  ``sdp_lowrank_theta.py`` measures the
shipped ``sdp-burer-monteiro`` (SDPLR's augmented Lagrangian, L-BFGS inner solves).  This script
measures two alternatives on the dense ``X``, written for the measurement only (not shipped solvers):

``--method newton`` (default): the augmented Lagrangian on the DUAL with semismooth Newton-CG inner solves (Zhao, Sun and Toh,
SIAM J. Optim. 20(4), 2010, "SDPNAL"; from memory, the paper is not in the shared folder):
``phi(y) = -b'y + ||Pi_+(X + sigma (A*(y) - C))||^2 / (2 sigma)``, its gradient
``A(Pi_+(W)) - b``, its generalised Hessian ``sigma A(P (Omega o P'(A* d)P) P')`` from one dense
eigendecomposition per block, Armijo backtracking; ``X <- Pi_+(W)``; the penalty tripled while the
dual infeasibility exceeds the primal one.  Rows of ``A`` scaled to unit norm, then ``b`` and
``C`` by their norms (the paper's scaling).  On theta1 (n = 50) it ends at objective-bound 2e-10
in 0.2 s, so the method and its bound are right; the question is its time at n = 1001.

``--method boundary-point``: the boundary point method (Povh, Rendl and Wiegele, Computing 78,
2006; Malick, Povh, Rendl and Wiegele, SIAM J. Optim. 20(1), 2009): the same augmented Lagrangian
with ONE block step per multiplier update, ``y`` from ``A A* y = A(C - Z) + (b - A(X)) / sigma``
(sparse LU once), ``Z = Pi_+(C - A*(y) - X / sigma)``, ``X = sigma (Z - W)``; ``sigma`` divided or
multiplied by 1.5 when one infeasibility exceeds the other tenfold (checked every 25 steps).
Same scaling; theta1: objective-bound 1e-13.

Each outer iteration prints the time, the objective and the CERTIFIED bound from the current
dual (:func:`psdbench.families.sdp.lowrank.lowrank_bound.dual_bound`, the harness's bound) in SDPLIB's
sign, and the relative infeasibilities.  Usage::

    PSDBENCH_DATA=/work/shared/datasets OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2 \\
        python benchmarks/scripts/sdp/sdp_theta_second_order.py [--problem thetaG51] [--limit 120] [--sigma 1]
"""

from __future__ import annotations

import argparse
import math
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench.families.sdp.datasets import SdplibCollection
from psdbench.families.sdp.lowrank.lowrank_bound import dual_bound
from psdbench.families.sdp.problem import SdpStandard

Report = Callable[[float, float, np.ndarray, str], bool]


def _scaled(d: Any) -> tuple[Any, Any, np.ndarray, np.ndarray, np.ndarray, float, float]:
    """``A`` with unit rows, its transpose, ``b`` and ``C`` scaled, the row norms and the two scales."""
    A0 = d.A.tocsr()
    rs = np.sqrt(np.asarray(A0.multiply(A0).sum(axis=1)).ravel())
    rs[rs == 0] = 1.0
    A = (sp.diags(1 / rs) @ A0).tocsr()
    b0, c0 = np.asarray(d.b, dtype=float) / rs, d.c_dense()
    bs, cs = max(1.0, float(np.linalg.norm(b0))), max(1.0, float(np.linalg.norm(c0)))
    return A, A.T.tocsr(), b0 / bs, c0 / cs, rs, bs, cs


def _eig(d: Any, W: np.ndarray) -> list[tuple[np.ndarray, Any]]:
    """Per block: the eigen-decomposition (PSD block) or the entries (LP block) of stacked ``W``."""
    return [np.linalg.eigh((B + B.T) / 2) if s > 0 else (B, None) for B, s in zip(d.split(W), d.block_sizes)]


def _proj(d: Any, E: list[tuple[np.ndarray, Any]]) -> np.ndarray:
    """``Pi_+`` (the projection on the cone) from :func:`_eig`'s output, stacked."""
    out = []
    for (lam, P), s in zip(E, d.block_sizes):
        pos = lam > 0
        out.append((P[:, pos] * lam[pos]) @ P[:, pos].T if s > 0 else np.maximum(lam, 0))
    return d.stack(out)


def dual_newton(d: Any, sigma: float, report: Report) -> None:
    """The augmented Lagrangian on the dual with semismooth Newton-CG inner solves (SDPNAL's scheme)."""
    A, At, b, c, rs, bs, cs = _scaled(d)
    c0 = d.c_dense()

    def jac(E: list[tuple[np.ndarray, Any]], H: np.ndarray) -> np.ndarray:
        """``dPi_+(W)[H]`` block by block, on the smaller of the positive and the other eigenvalues."""
        out = []
        for (lam, P), s, Hb in zip(E, d.block_sizes, d.split(H)):
            if s <= 0:
                out.append(Hb * (lam > 0))
                continue
            pos = lam > 0
            r = int(pos.sum())
            if r in (0, s):
                out.append(Hb if r == s else np.zeros_like(Hb))
                continue
            flip = r > s / 2  # dPi_+(W)[H] = H - dPi_+(-W)[H]
            lam2, sel = (-lam, ~pos) if flip else (lam, pos)
            Pa = P[:, sel]
            K = P.T @ (Hb @ Pa)
            la = lam2[sel]
            Om = la[None, :] / (la[None, :] - np.minimum(lam2, 0)[:, None])
            Om[sel] = 0.5  # the (alpha, alpha) block once, mirrored below
            res = (P @ (K * Om)) @ Pa.T
            res = res + res.T
            out.append(Hb - res if flip else res)
        return d.stack(out)

    def phi(y: np.ndarray, X: np.ndarray, sigma: float) -> tuple[float, np.ndarray, Any]:
        E = _eig(d, X + sigma * (At @ y - c))
        Xn = _proj(d, E)
        return float(-b @ y + (Xn @ Xn - X @ X) / (2 * sigma)), Xn, E

    y, X = np.zeros(d.m), np.zeros(d.N)
    nb, ncn = 1 + float(np.linalg.norm(b)), 1 + float(np.linalg.norm(c))
    while True:
        f, Xn, E = phi(y, X, sigma)
        for _ in range(50):
            g = A @ Xn - b
            gn = float(np.linalg.norm(g))
            if gn / nb <= max(1e-9, min(0.5 * float(np.linalg.norm(Xn - X)) / sigma / ncn, 0.1)):
                break
            dd, res = np.zeros(d.m), -g
            p, rr, ctol = res.copy(), float(res @ res), min(0.1, gn ** 0.2) * gn
            for _k in range(300):  # CG on (sigma A dPi A* + eps I) d = -g
                Vp = sigma * (A @ jac(E, At @ p)) + 1e-10 * p
                al = rr / float(p @ Vp)
                dd, res = dd + al * p, res - al * Vp
                rn = float(res @ res)
                if math.sqrt(rn) <= ctol:
                    break
                p, rr = res + (rn / rr) * p, rn
            st, slope = 1.0, float(g @ dd)
            while True:  # Armijo
                f2, Xn2, E2 = phi(y + st * dd, X, sigma)
                if f2 <= f + 1e-4 * st * slope or st < 1e-6:
                    break
                st *= 0.5
            y, f, Xn, E = y + st * dd, f2, Xn2, E2
        eta_p, eta_d = gn / nb, float(np.linalg.norm(Xn - X)) / sigma / ncn
        X = Xn
        # back to the data's scaling: X * bs, y_i * cs / rs_i
        if report(float(c0 @ X) * bs, float(np.linalg.norm(d.A @ (X * bs) - d.b)) / (1 + d.norm_b_inf()),
                  y * cs / rs, f"sigma {sigma:.1e} dual infeasibility {eta_d:.1e} rank {[int((e[0] > 0).sum()) for e in E]}"):
            return
        sigma = sigma * 3 if eta_d > eta_p else sigma / 2 if eta_p > 10 * eta_d else sigma


def boundary_point(d: Any, sigma: float, report: Report, every: int = 25) -> None:
    """The boundary point method: one ``y`` step and one projection per multiplier update."""
    from scipy.sparse.linalg import splu

    A, At, b, c, rs, bs, cs = _scaled(d)
    lu = splu((A @ At).tocsc())
    X, Z = np.zeros(d.N), np.zeros(d.N)
    nb, ncn = 1 + float(np.linalg.norm(b)), 1 + float(np.linalg.norm(c))
    for k in range(10**9):
        y = lu.solve(A @ (c - Z) + (b - A @ X) / sigma)
        W = c - At @ y - X / sigma
        Z = _proj(d, _eig(d, W))
        X = sigma * (Z - W)
        if k % every:
            continue
        eta_p, eta_d = float(np.linalg.norm(A @ X - b)) / nb, float(np.linalg.norm(At @ y + Z - c)) / ncn
        if report(float(d.c_dense() @ X) * bs, float(np.linalg.norm(d.A @ (X * bs) - d.b)) / (1 + d.norm_b_inf()),
                  y * cs / rs, f"sigma {sigma:.2e} dual infeasibility {eta_d:.1e} (step {k})"):
            return
        sigma = sigma / 1.5 if eta_p > 10 * eta_d else sigma * 1.5 if eta_d > 10 * eta_p else sigma


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--method", choices=["newton", "boundary-point"], default="newton")
    ap.add_argument("--problem", default="thetaG51")
    ap.add_argument("--limit", type=float, default=120.0)
    ap.add_argument("--sigma", type=float, default=1.0, help="initial penalty")
    args = ap.parse_args()
    inst = SdpStandard().build(SdplibCollection().load(args.problem), {}, 0)
    d, pub = inst.data, inst.published
    t0 = time.perf_counter()

    def report(obj: float, err1: float, y: np.ndarray, note: str) -> bool:
        t = time.perf_counter() - t0
        bd = dual_bound(d, y)
        rel = abs(bd["bound"] - obj) / (1 + abs(obj))
        print(f"{t:7.1f} s  objective {-obj:.9f}  certified bound {-bd['bound']:.9f} ({bd['kind']})  "
              f"objective-bound {rel:.1e}  err1 {err1:.1e}  {note}", flush=True)
        return t > args.limit or (rel <= 1e-7 and err1 <= 1e-7)

    print(f"{args.problem}: m = {d.m}, blocks {d.block_sizes}, published {None if pub is None else -pub} (SDPLIB's sign)")
    (dual_newton if args.method == "newton" else boundary_point)(d, args.sigma, report)


if __name__ == "__main__":
    main()
