"""The family's reference: interior-point solves that must agree, certified where tr(X) is bounded.

1. Interior-point methods, in order SDPA (tolerances 1e-8), CVXOPT (1e-8) and SDPA-GMP (multiple
   precision, 1e-10) (optional extras) and Clarabel (native, chordal decomposition off, its
   default 1e-8 tolerances, only when its PSD cones are small enough for its dense KKT blocks),
   then SCS at eps 1e-9 (first order; it counts only where its point reaches the same DIMACS
   error, e.g. without the extras), until two points with largest DIMACS error <= 1e-6 agree on
   their primal value to ``AGREE_RTOL`` (relative to ``1 + |value|``).  Where fewer than two reach
   1e-6, two points up to 1e-4 that agree to 1e-4 make the reference, and the message says
   "LOOSE".  Where the points disagree (no such pair), the most accurate point (smallest largest
   DIMACS error) decides, and the message says "DISAGREE" and lists every point's value and error.
   Where only one point reaches 1e-6 and the data bound the trace (step 2), the certified lower
   bound from its own ``y`` is the second witness: its value within ``AGREE_RTOL`` above that
   bound makes the reference ("ONE SOLVE" in the message) and ends the search (thetaG11: SDPA's
   point in seconds, where CVXOPT's dense Schur complement runs past 900 s).
2. Where the data bound the trace, ``tr(X) <= T`` for every feasible ``X`` (:func:`trace_upper`:
   the identity is in the range of ``A*``; max-cut, theta, gpp, qap and the generators; ``T``
   rounded up from ``w'b``, ``A*(w) = I``):

   * lower bound (Jansson, Chaykin and Keil 2007, Theorem 2 with an a-priori bound on the primal
     trace; VSDP): for any ``y``, with ``Z = C - A*(y)``, ``<C, X> = b'y + <Z, X> >= b'y + T *
     min(0, lambda_min(Z))`` for every feasible ``X``: it needs only ``T >= tr X``.  Rigor
     (:func:`lower_bound`): each floating-point step's rounding is bounded a priori and taken
     against the bound (Higham's ``gamma_k`` for ``Z``'s entries and ``b'y``, Weyl plus a
     backward-stable eigensolver's ``n eps ||Z||_F`` for ``lambda_min``), not enclosed in interval
     arithmetic; the data are taken as exact.
   * upper bound, where ``A(I) = kappa b`` (the same structure; max-cut, theta, not gpp or qap):
     the solver's ``X`` corrected to ``A(X) = b`` by the least-norm step (sparse LSQR, accepted at
     residual 1e-10 relative: feasible to rounding, not rigorously), then ``(X + delta I) / (1 +
     delta kappa)`` with ``delta = max(0, -lambda_min)``: still on ``A(X) = b`` and PSD.  Its
     ``<C, X>`` is the value.

   With both, the reference is ``certified`` (by the harness) when the interval is narrower than
   its tolerance; the message gives both bounds.  An interval no wider than ``AGREE_RTOL`` from
   the first point that reaches 1e-6 ends the search (the bounds hold whatever solver produced the
   point; it saves CVXOPT's dense Schur complement on mcp500 and theta5-6, minutes each).  With
   the lower bound only (gpp100, qap5: ``A(I)`` is not proportional to ``b``), the value is the
   decided point's and the certified one-sided lower bound is the result's ``bound`` (the store's
   ``refs.bound`` column, kind ``bound``; the harness's ``lower`` is kept for a two-sided interval).
   Where two solves agree, their relative spread is the result's ``spread``.
3. Elsewhere the decided primal value is returned without a bound (``best_verified``): it is not
   exactly feasible, and the message says so.

SDPA and CVXOPT have no time limit of their own: each runs in a forked child killed at the
reference's deadline (:func:`_bounded`), so a solver that runs past it (CVXOPT's dense Schur
complement on thetaG11) costs its own point only, not the points found before it.

The published SDPLIB value is not used; the report shows it beside the reference.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from psdbench.api import Budget, Solution

from .errors import dimacs_errors

AGREE_RTOL = 1e-6
POINT_TOL = 1e-6
#: where fewer than two points reach POINT_TOL (SDPLIB's hinf problems), points up to this error
#: are accepted, agreeing to LOOSE_RTOL, and the message says so
LOOSE_TOL = 1e-4
LOOSE_RTOL = 1e-4
#: Clarabel's KKT holds a dense (d x d) block per PSD cone of svec size d: skip it past this d
CLARABEL_MAX_SVEC = 8000


def _candidates(instance: Any) -> list[tuple[str, Any, dict[str, Any]]]:
    from psdbench.families.sdp.solvers.native import SdpClarabel, SdpCvxopt, SdpScs
    from psdbench.families.sdp.solvers.sdpa import SdpSdpa
    from psdbench.families.sdp.solvers.sdpa_gmp import SdpSdpaGmp

    d = instance.data
    out = []
    # SDPA and CVXOPT first (Schur-complement IPMs: m x m systems, fast on SDPLIB), Clarabel after
    # them (its KKT holds a dense block per PSD cone: minutes on mcp100 with chordal decomposition
    # off, which the reference needs: with it on, Clarabel reports control1 solved at 18.0587)
    for name, solver, opts in (("sdpa", SdpSdpa(), {"epsilonStar": 1e-8, "epsilonDash": 1e-8}),
                               ("cvxopt", SdpCvxopt(), {}),  # at 1e-9 CVXOPT divides by zero on control1
                               # multiple precision: 10-100x SDPA's time, the only one past 1e-6 on hinf1,
                               # hinf3 and qap6 (docs/families/sdp.md)
                               ("sdpa-gmp", SdpSdpaGmp(), {})):
        if solver.skip_reason(instance) is None:
            out.append((name, solver, opts))
    if max((s * (s + 1) // 2 for s in d.block_sizes if s > 0), default=0) <= CLARABEL_MAX_SVEC:
        # Clarabel's own default tolerances (1e-8): at 1e-10 it stops "almost solved" with larger
        # DIMACS errors on hinf / control (measured: 6.8e-5 on hinf1, 2.9e-5 on control1)
        out.append(("clarabel", SdpClarabel(), {"chordal": False}))
    # last: SCS at high accuracy (where the optional extras are absent, e.g. the default suite)
    out.append(("scs", SdpScs(), {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 200000}))
    return out


#: candidates with no time limit of their own: run in a forked child, killed at the deadline
UNBOUNDED = ("sdpa", "cvxopt")


def _bounded(solver: Any, instance: Any, left: float, opts: dict[str, Any]) -> Solution:
    """``solver.solve`` in a forked child given ``left`` seconds, killed when they run out.

    ``os.fork`` and a pipe, not :mod:`multiprocessing`: the harness computes references in a
    daemonic worker, which multiprocessing forbids to have children.  Raises ``TimeoutError`` when
    killed and ``RuntimeError`` with the child's error otherwise.
    """
    import os
    import pickle
    import select
    import signal

    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child: solve, send the pickled outcome, leave at once
        code = 0
        try:
            os.close(rfd)
            try:
                out: tuple[str, Any] = ("ok", solver.solve(instance, Budget.seconds(left), **opts))
            except Exception as exc:  # the parent reports it as this candidate's failure
                out = ("error", f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(wfd, "wb") as fh:
                fh.write(data)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(wfd)
    chunks: list[bytes] = []
    deadline = time.monotonic() + max(left, 0.0)
    try:
        while True:
            wait = deadline - time.monotonic()
            if wait <= 0 or not select.select([rfd], [], [], wait)[0]:
                raise TimeoutError(f"killed at the deadline ({left:.0f} s left)")
            chunk = os.read(rfd, 1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
    finally:
        os.close(rfd)
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
    if not chunks:
        raise RuntimeError(f"the solver's process died (wait status {status})")
    kind, payload = pickle.loads(b"".join(chunks))
    if kind != "ok":
        raise RuntimeError(payload)
    return payload


def _gamma(k: int) -> float:
    """Higham's ``gamma_k = k u / (1 - k u)``: the relative error bound of a k-term floating-point sum."""
    u = np.finfo(float).eps / 2
    return k * u / (1 - k * u)


def _column_terms(data: Any) -> int:
    """The most terms a stacked entry of ``A*(y)`` sums (nonzeros in a column of A), plus one."""
    return int(np.diff(data.A.tocsc().indptr).max(initial=0)) + 1


def trace_upper(data: Any) -> float | None:
    """``T >= tr(X)`` for every ``X`` with ``A(X) = b``, ``X`` psd, rounded up; ``None`` where the data
    give none.

    With ``w`` from :meth:`.data.SdpData.trace_weights` (``A*(w) = I - E``, ``E`` the rounding left)
    ``tr X = w'b + <E, X> <= w'b + ||E||_F tr X`` for psd ``X``, so ``tr X <= w'b / (1 - ||E||_F)``.
    Rounding: ``w'b`` is raised by ``gamma_m |w|'|b|`` and ``E`` bounded entrywise by its computed
    value plus ``gamma_k (|A|'|w| + 1)`` (Higham's a-priori bounds for k-term sums; not interval
    arithmetic), the quotient raised by 4 units and the next float up.
    """
    w = data.trace_weights()
    if w is None:
        return None
    eye = data.identity()
    absA = abs(data.A)
    e = np.abs(eye - data.At_op(w)) + _gamma(_column_terms(data)) * (np.asarray(absA.T @ np.abs(w)).ravel() + eye)
    e_f = float(np.linalg.norm(e)) * (1 + _gamma(e.size))
    if not e_f < 0.5:
        return None
    wb = float(w @ data.b) + _gamma(data.m) * float(np.abs(w) @ np.abs(data.b))
    if wb < 0:
        return None
    return float(np.nextafter(wb / (1 - e_f) * (1 + 4 * np.finfo(float).eps), np.inf))


def lower_bound(data: Any, y: np.ndarray, trace: float) -> float:
    """``b'y + T min(0, lambda_min(C - A*(y)))``, every rounding taken against it (Jansson, Chaykin
    and Keil 2007, Theorem 2 with an a-priori bound ``T >= tr X``).

    ``Z = C - A*(y)`` is formed in floating point; its entries' error is bounded by
    ``gamma_k (|C| + |A|'|y|)`` and the block's smallest eigenvalue lowered by that error's Frobenius
    norm (Weyl) and by ``n_j eps ||Z_j||_F`` (a backward-stable eigensolver's error, LAPACK's bound
    with constant 1: assumed, not proven for the routine); ``b'y`` is lowered by
    ``gamma_m |b|'|y|`` and the result by two units.  Not interval arithmetic (VSDP uses INTLAB).
    """
    y = np.asarray(y, dtype=float)
    z = data.c_dense() - data.At_op(y)
    dz = _gamma(_column_terms(data)) * (np.abs(data.c_dense()) + np.asarray(abs(data.A).T @ np.abs(y)).ravel())
    lam = np.inf
    for B, D, s in zip(data.split(z), data.split(dz), data.block_sizes):
        if s > 0:
            sym = (B + B.T) / 2
            slack = s * np.finfo(float).eps * float(np.linalg.norm(sym)) + float(np.linalg.norm(D))
            lam = min(lam, float(np.linalg.eigvalsh(sym)[0]) - slack)
        else:
            lam = min(lam, float(np.min(B - D)))
    by = float(data.b @ y) - _gamma(data.m) * float(np.abs(data.b) @ np.abs(y))
    out = by + trace * min(0.0, lam)
    return float(np.nextafter(out - 2 * np.finfo(float).eps * abs(out), -np.inf))


def feasible_value(data: Any, x: np.ndarray) -> float | None:
    """``<C, X>`` of an exactly feasible correction of ``x``, or ``None`` where the structure gives none."""
    from scipy.sparse.linalg import lsqr

    eye = data.identity()
    ai = data.A_op(eye)
    nz = np.abs(data.b) > 0
    if not nz.any():
        return None
    kappa = float(np.median(ai[nz] / data.b[nz]))
    if not kappa > 0 or np.max(np.abs(ai - kappa * data.b)) > 1e-12 * (1 + np.max(np.abs(ai))):
        return None
    r = data.b - data.A_op(x)
    dx = lsqr(data.A, r, atol=1e-15, btol=1e-15, iter_lim=max(200, 10 * data.m))[0]
    xc = x + dx
    resid = float(np.max(np.abs(data.A_op(xc) - data.b)))
    if resid > 1e-10 * (1 + data.norm_b_inf()):
        return None
    delta = max(0.0, -float(data.min_eigs(xc).min()))
    if delta:
        delta *= 1 + 1e-8  # strictly inside
        xc = (xc + delta * eye) / (1 + delta * kappa)
    return float(data.c_dense() @ xc)


def _interval(data: Any, solutions: list[Solution], trace: float) -> tuple[float, float] | None:
    """``(upper, lower)``: the best exactly feasible value and the best VSDP-style bound of the points."""
    lower = max(lower_bound(data, s.variables["y"], trace) for s in solutions)
    uppers = [v for v in (feasible_value(data, s.variables["X"]) for s in solutions) if v is not None]
    return (min(uppers), lower) if uppers else None


def _versions(solvers: dict[str, Any], names: list[str]) -> str:
    """``"sdpa 0.2.3, cvxopt 1.3.3"``: each named candidate's library version."""
    return ", ".join(f"{n} {v}" for n in names for v in solvers[n].library_versions().values())


def _agree(a: float, b: float, rtol: float) -> bool:
    return abs(a - b) <= rtol * (1 + abs(a))


def _agreeing_pair(points: list[tuple[str, Solution, Any]], rtol: float) -> list[tuple[str, Solution, Any]] | None:
    """The two most accurate points whose primal values agree to ``rtol``, or ``None``."""
    ranked = sorted(points, key=lambda t: t[2].max_err)
    for i, a in enumerate(ranked):
        for b in ranked[i + 1:]:
            if _agree(a[2].primal_obj, b[2].primal_obj, rtol):
                return [a, b]
    return None


def certified_reference(instance: Any, time_limit_s: float | None = None, rtol: float = 1e-5) -> dict[str, Any]:
    """See the module docstring.  Returns the hook's dict (``value``, ``lower``, ...; ``bound``
    where only a certified lower bound exists)."""
    d = instance.data
    trace = trace_upper(d)
    t0 = time.monotonic()
    solved: list[tuple[str, Solution, Any]] = []
    notes = []
    candidates = _candidates(instance)
    solvers = {name: solver for name, solver, _ in candidates}
    for name, solver, opts in candidates:
        if _agreeing_pair([t for t in solved if t[2].max_err <= POINT_TOL], AGREE_RTOL):
            break
        left = None if time_limit_s is None else time_limit_s - (time.monotonic() - t0)
        if left is not None and left <= 0:
            notes.append(f"{name}: no time left")
            break
        budget = Budget.seconds(left) if left is not None else Budget(deadline=None)
        try:
            if left is not None and name in UNBOUNDED:
                sol = _bounded(solver, instance, left, opts)
            else:
                sol = solver.solve(instance, budget, **opts)
        except Exception as exc:  # a failing reference solver is reported, the next one tried
            notes.append(f"{name}: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            continue
        if "X" not in sol.variables or "y" not in sol.variables:
            notes.append(f"{name}: no point ({sol.message or sol.status})")
            continue
        e = dimacs_errors(d, sol.variables["X"], sol.variables["y"], sol.variables.get("Z"))
        notes.append(f"{name}: <C,X> {e.primal_obj:.10g}, b'y {e.dual_obj:.10g}, max DIMACS error {e.max_err:.1e}")
        if e.max_err <= LOOSE_TOL:
            solved.append((name, sol, e))
        if e.max_err <= POINT_TOL and trace is not None:
            one = _interval(d, [sol], trace)
            if one is None and e.primal_obj - lower_bound(d, sol.variables["y"], trace) <= AGREE_RTOL * (
                    1 + abs(e.primal_obj)):
                break  # its own certified lower bound agrees (ONE SOLVE in _decide): a second solve adds little
            if one is not None and one[0] - one[1] <= AGREE_RTOL * (1 + abs(one[0])):
                return {"solver": name, "solver_version": _versions(solvers, [name]), "value": one[0], "lower": one[1],
                        "status": "ok", "message": f"tr(X) <= {trace:.17g} (rounded up) fixed by the data; one solve "
                        f"certifies the interval (exactly feasible upper {one[0]:.12g}, VSDP-style lower {one[1]:.12g}): "
                        "no second solve needed; " + "; ".join(notes)}
    return _decide(d, solved, trace, notes, solvers)


def _decide(d: Any, solved: list[tuple[str, Solution, Any]], trace: float | None, notes: list[str],
            solvers: dict[str, Any]) -> dict[str, Any]:
    """The reference from the points found (see the module docstring, steps 1-3)."""
    tight = [t for t in solved if t[2].max_err <= POINT_TOL]
    pair = _agreeing_pair(tight, AGREE_RTOL)
    if pair is None and len(tight) == 1 and trace is not None:
        # one solve, and the certified lower bound from its own y agrees with its value: the bound is
        # the second, independent witness (thetaG11: SDPA alone in seconds, CVXOPT past any limit)
        name, sol, e = tight[0]
        low = lower_bound(d, sol.variables["y"], trace)
        if e.primal_obj - low <= AGREE_RTOL * (1 + abs(e.primal_obj)):
            notes.insert(0, f"ONE SOLVE: {name}'s value {e.primal_obj:.12g} lies within {AGREE_RTOL:g} (relative) "
                            f"above the certified lower bound {low:.12g}")
            pair = [tight[0]]
    if pair is None and len(tight) < 2:
        pair = _agreeing_pair(solved, LOOSE_RTOL)
        if pair is not None:
            notes.insert(0, f"LOOSE: fewer than two points reach DIMACS error {POINT_TOL:g}; the two best "
                            f"(<= {LOOSE_TOL:g}) agree to {LOOSE_RTOL:g}")
    if pair is None and len(solved) >= 2:
        # no two agree: the most accurate point decides, and every point is listed beside it
        best = min(solved, key=lambda t: t[2].max_err)
        notes.insert(0, "DISAGREE: " + ", ".join(
            f"{n} {e.primal_obj:.10g} (max err {e.max_err:.1e})" for n, _, e in sorted(solved, key=lambda t: t[2].max_err))
            + f" differ by more than {AGREE_RTOL if len(tight) >= 2 else LOOSE_RTOL:g} relative; the most accurate "
            f"({best[0]}) decides")
        pair = [best]
    if pair is None:
        return {"solver": " + ".join(n for n, _, _ in solved) or "none", "solver_version": "", "value": None,
                "lower": None, "status": "none", "message": f"fewer than two interior-point solves reached DIMACS "
                f"error {LOOSE_TOL:g}: " + "; ".join(notes)}
    names = [n for n, _, _ in pair]
    base = {"solver": " + ".join(names), "solver_version": _versions(solvers, names)}
    if len(pair) == 2:  # the relative spread of the two agreeing solves: how well the value is known
        a, b = (e.primal_obj for _, _, e in pair)
        base["spread"] = abs(a - b) / max(1.0, abs(a))
    best = min(pair, key=lambda t: t[2].max_err)
    one = bool(notes) and notes[0].startswith("ONE SOLVE")
    what = ("agreed interior-point value" if len(pair) == 2 else "the one solve's value" if one
            else "the most accurate point's value")
    if trace is not None:
        both = _interval(d, [s for _, s, _ in pair], trace)
        if both is not None:
            value, lower = both
            return {**base, "value": value, "lower": lower, "status": "ok",
                    "message": f"tr(X) <= {trace:.17g} (rounded up) fixed by the data; exactly feasible upper "
                               f"{value:.12g}, VSDP-style lower {lower:.12g}; " + "; ".join(notes)}
        # no exactly feasible correction (A(I) not proportional to b): the lower bound stands alone
        lower = max(lower_bound(d, s.variables["y"], trace) for _, s, _ in solved)
        return {**base, "value": best[2].primal_obj, "lower": None, "bound": lower, "status": "ok",
                "message": f"{what} (not exactly feasible); certified one-sided lower bound "
                           f"{lower:.12g} from tr(X) <= {trace:.17g} (rounded up; no exactly feasible correction, "
                           "so no upper bound); " + "; ".join(notes)}
    return {**base, "value": best[2].primal_obj, "lower": None, "status": "ok",
            "message": f"{what} (not exactly feasible: no certificate); " + "; ".join(notes)}
