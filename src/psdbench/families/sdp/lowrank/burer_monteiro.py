"""``sdp-burer-monteiro``: SDPLR's low-rank augmented Lagrangian method, its rules as SDPLR 1.03 states them.

S. Burer and R. D. C. Monteiro, "A nonlinear programming algorithm for solving semidefinite
programs via low-rank factorization", Math. Program. Ser. B 95:329-357, 2003 ([BM03]); "Local
minima and convergence in low-rank semidefinite programming", Math. Program. Ser. A 103:427-444,
2005 ([BM05]).  Neither paper is in /work/shared/papers, so every rule below is cited from the
source of SDPLR 1.03-beta (sburer/sdplr @ 6866be4, its ``source/`` folder), file:line;
the papers are cited by name only where the code or the rule is theirs (section numbers unchecked).

(P) ``min <C, X> s.t. A(X) = b, X psd`` with ``X = R R'`` per PSD block ([BM03]):

* **rank** per block ``r_k = min(floor(sqrt(2 m_k)) + 1, n_k)``, ``m_k`` the constraints that touch
  the block (``main.c:211``, ``getstorage``): the Barvinok-Pataki bound ``r (r + 1) / 2 <= m`` on
  the rank of some optimal ``X``, rounded up ([BM03], [BM05]); one ``R`` of
  ``max r_k`` columns, a block's columns past its rank held at zero;
* **start** ``R_0`` entries ``U(0,1) - U(0,1)`` (``main.c:135-138``, seeded by the instance's
  seed), ``y_0 = 0``, ``sigma_0 = 1 / n`` with ``n`` the order of ``X`` (``main.c:145``);
* **augmented Lagrangian** (``dataoper.c:11-20``, [BM03])::

      L(R, y, sigma) = <C, R R'> - y'(A(R R') - b) + sigma / 2 ||A(R R') - b||^2
      grad_R L = 2 S R,   S = C - A*(y - sigma (A(R R') - b))             (dataoper.c:265-283)

* **inner solve** (the minor iterations, ``sdplrlib.c:189-252``): limited-memory BFGS with 4 pairs
  (``lbfgs.c``, two-loop recursion from ``H_0 = I``; steepest descent when the direction is not
  one of descent, ``sdplrlib.c:200``) and the EXACT line search: ``L(R + a D)`` is a quartic in
  ``a``, minimised over ``(0, 1]`` through the roots of its cubic derivative (``linesearch.c``),
  until ``||2 S R||_F / (1 + |C|_max) <= rho_c / sigma`` (``sdplrlib.c:189``; "centrality
  tolerance" ``rho_c = 0.1``, ``params.c``);
* **multipliers** after every inner solve ``y <- y - sigma (A(R R') - b)`` (``sdplrlib.c:261``);
  the same ``sigma`` is kept, with further inner solves and updates, until an inner solve takes at
  most 10 iterations (its "difficulty", ``sdplrlib.c:181, 274-278``; ``SIGMASTRATEGY 1``);
* **penalty** then ``sigma <- 2 sigma`` ("penalty factor increase", ``params.c``), repeated while
  the current ``R`` already meets the new, tighter inner test (``sdplrlib.c:317-321``), and the
  L-BFGS pairs are cleared (``sdplrlib.c:330-333``);
* **stop** (SDPLR's) at ``||A(R R') - b||_2 / (1 + |b|_max) <= rho_f`` ("feasibility tolerance",
  1e-5 shipped), tested after every minor iteration, with a last multiplier update
  (``sdplrlib.c:242-246, 306``);
* **dual bound** ([BM03]; ``eigen.c:252-262``, commented out in 1.03 and its
  ``checkbd`` parameter restricted to -1): ``b'y + T min(0, lambda_min(C - A*(y)))`` where the
  data fix ``tr X <= T``.

The 2003 paper's own penalty rule (update ``y`` when ``||A(RR') - b||`` fell below ``eta = 1/4``
of its best, else ``sigma <- 10 sigma``, as textbooks state it) is not what SDPLR 1.03 runs;
measured here on theta1 it raised ``sigma`` to 2e4 within 11 inner solves and the next took
28,000+ iterations, so it is not implemented.

**What is ours**, each to reach a point the harness verifies (every DIMACS error of the returned
factored point at most ``tol``, with the bound from ``y``), which SDPLR's stop does not give (its
dual is 1e-4 to 1e-3 infeasible on theta1-3 and gpp100: its err4 1.4e-3, 2.1e-4, 1.3e-4, 5.2e-4):

* **going on past SDPLR's stop.**  SDPLR's stop (``rho_f = tol``) ends only its phase: the method
  goes on by the same rules, its inner solves ending only at the gradient test, and after every
  multiplier update from then on the point is checked: an estimate of ``lambda_min(S)`` first
  (``S = C - A*(y)`` of the updated ``y``, dense ``eigh`` up to order :data:`DENSE_EIG_MAX`, else
  Lanczos) and where that passes, the family's certificate: :func:`.lowrank_bound.shift_dual`
  (``y`` moved along ``A*(w) = I`` into the dual cone, the bound ``b'y + T min(0, lambda_min)``
  unchanged) then :func:`.lowrank_bound.factored_errors`, the harness's own verification of a
  factored point; "converged" when their largest error is at most ``tol``.  The ``y`` returned is
  that shifted ``y``: the multipliers the method converged to.
* **saddle escape** ([BM05]: a rank-deficient local minimiser has ``S`` psd, so where ``S`` has a
  negative eigenvalue ``R`` is not one).  On theta1 ``R`` collapses to rank one while ``sigma`` is
  small (its other columns fall to 1e-17) and the inner solves then regrow directions for 10,000+
  iterations (SDPLR's too: 10,609 line searches in its 13th major iteration).  At a check that
  ``lambda_min(S)`` fails, and before SDPLR's stop after every "hard" inner solve (more than
  :data:`HARD` line searches, sdplrlib.c:277), ``R``'s block is rotated to its principal columns
  (``R R'`` unchanged) and its weakest columns moved along the eigenvectors of ``S``'s eigenvalues
  below the threshold, by the exact line search (up to :data:`ESCAPE_VECTORS`); the pairs cleared.
* **facial reduction** (:mod:`.bm_kernels`): a constraint ``<A_i, X> = 0`` with ``A_i`` psd and low
  rank (gpp's ``<J, X> = 0``, which no ``X`` satisfies strictly, so the augmented Lagrangian's
  multiplier of it diverges and the infeasibility falls 2 % per update: 8,000 line searches to
  1e-6 on gpp100) is kept exactly, ``V_i' R = 0``, by projecting the start and every gradient; its
  multiplier, which no longer enters ``L``, is set for the bound: ``lambda_min(C - A*(y))`` rises
  with ``-y_i`` to its value on the face, ``-y_i`` raised tenfold while it gains.
* an inner solve also ends when the exact line search finds no decrease even along steepest
  descent (the subproblem stationary at working precision: on gpp100 at ``sigma`` 2e4, before the
  face, the gradient test sat 10 % above its threshold for 150,000 iterations); it runs in slices of
  ``slice`` iterations between which the deadline is checked: a pause (the same iterations as
  ``slice = 1``), never its end;
* SDPLR's low-rank data type for dense low-rank ``A_i`` / ``C`` read from an SDPA file
  (:mod:`.bm_kernels`), and the minor iterations compiled (numba, one thread), so an iteration
  costs about what SDPLR's C does;
* ``A(R R')`` from its pattern values each iteration, those refreshed from ``R`` every 50 line
  searches (SDPLR updates ``A(R R')`` along the quartic for 10^7 iterations: sdplrlib.c:53, 209-218).

Stops otherwise at the deadline ("budget"), at SDPLR's limit of 1e7 minor iterations, or when
``sigma`` passes :data:`SIGMA_MAX` ("stalled").  Handles PSD blocks only (LP blocks, SDPLR's
squared variables: skipped with the reason).  Returns the factored point ``R`` and ``y`` (:mod:`.factored`).
"""

from __future__ import annotations

import math
import time
from importlib.metadata import version
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Solution, Status, TraceRecorder

from psdbench.families.sdp import KIND
from psdbench.families.sdp.lowrank.bm_kernels import FEASIBLE, SLICE, Operators, SplitData, warm_kernels
from psdbench.families.sdp.lowrank.factored import FactoredSolver
from psdbench.families.sdp.lowrank.lowrank_bound import factored_errors, shift_dual

#: the penalty is not raised past this ("stalled"): the quartic's coefficients lose every digit
SIGMA_MAX = 1e14
#: SDPLR's limit on minor iterations (sdplrlib.c:242)
MAX_MINOR = 10_000_000
#: blocks up to this order: the stopping test's eigenvalue estimate from a dense eigh, else Lanczos
DENSE_EIG_MAX = 1200
#: eigenvectors of S a saddle escape may use per block
ESCAPE_VECTORS = 8
#: SDPLR's 'hard' inner solve (more line searches than this, sdplrlib.c:277): before SDPLR's stop the
#: saddle check runs after one
HARD = 50


def rank_bound(m: int) -> int:
    """The smallest ``r`` with ``r (r + 1) / 2 >= m`` (Barvinok-Pataki)."""
    return int(math.ceil((math.sqrt(8 * m + 1) - 1) / 2))


def sdplr_rank(m_k: int, n_k: int) -> int:
    """SDPLR's rank of a block: ``min(floor(sqrt(2 m_k)) + 1, n_k)`` (``main.c:211``)."""
    return int(min(math.isqrt(2 * m_k) + 1, n_k))


def exact_step(q: np.ndarray, amax: float = math.inf) -> float:
    """The ``a`` in ``(0, amax]`` minimising the quartic ``sum_k q_k a^k`` (0 when none decreases it)."""
    from psdbench.families.sdp.lowrank.bm_kernels import kernels

    return float(kernels()["step"](float(q[1]), float(q[2]), float(q[3]), float(q[4]), float(amax)))


def _eig_low(Z: Any, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``k`` smallest eigenvalues of the symmetric ``Z`` (ascending) and their eigenvectors: a dense
    ``eigh`` of an array, Lanczos (``eigsh``) on an operator (what converged where it does not)."""
    if isinstance(Z, np.ndarray):
        from scipy.linalg import eigh

        return eigh(Z, subset_by_index=[0, min(k, Z.shape[0]) - 1], check_finite=False)
    from scipy.sparse.linalg import ArpackNoConvergence, eigsh

    try:
        w, V = eigsh(Z, k=min(k, Z.shape[0] - 1), which="SA", tol=1e-10, maxiter=20 * Z.shape[0])
    except ArpackNoConvergence as e:
        w, V = e.eigenvalues, e.eigenvectors
        if w.size == 0:
            w, V = eigsh(Z, k=1, which="SA", tol=1e-8, maxiter=100 * Z.shape[0])
    o = np.argsort(w)
    return w[o], V[:, o]


class SdpBurerMonteiro(FactoredSolver):
    """SDPLR's method (Burer-Monteiro with an augmented Lagrangian) on (P), PSD blocks only."""

    name = "sdp-burer-monteiro"
    kinds: tuple[str, ...] = (KIND,)
    preload = ("scipy.linalg", "scipy.sparse.linalg")  # its stopping test's eigh and trace_upper's LSQR: not timed
    returns = ("R (n_psd, r): the PSD blocks' factors stacked by rows (X_j = R_j R_j'), a factored point verified "
               "without forming X; y (m,): the multipliers it converged to, moved into the dual cone along A*(w) = I")
    params: dict[str, api.Param] = {
        "rank": api.number(low=0, default=0, integer=True,
                           doc="columns of R; 0: SDPLR's min(floor(sqrt(2 m_k)) + 1, n_k) per block"),
        "tol": api.number(low=0, default=1e-6,
                          doc="SDPLR's feasibility tolerance rho_f, then stop when every DIMACS error of the "
                              "point is <= tol"),
        "rho_c": api.number(low=0, default=0.1,
                            doc="SDPLR's centrality tolerance: inner test ||2SR|| / (1 + |C|_max) <= rho_c / sigma"),
        "sigma_factor": api.number(low=1.01, default=2.0, doc="SDPLR's penalty factor increase"),
        "sigma0": api.number(low=0, default=0.0, doc="initial penalty; 0: SDPLR's 1 / n"),
        "memory": api.number(low=1, default=4, integer=True, doc="SDPLR's number of L-BFGS vectors"),
        "step_max": api.number(low=0, default=1.0, doc="the exact line search's largest step (SDPLR: 1)"),
        "escape": api.Param(default=True, types=(bool,),
                            doc="at a failed check, move R's weakest columns along S's negative eigenvectors "
                                "(a saddle escape)"),
        "slice": api.number(low=1, default=200, integer=True,
                            doc="minor iterations between two checks of the deadline (a pause of the inner "
                                "solve, not its end)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        return {"numpy": version("numpy"), "scipy": version("scipy"), "numba": version("numba")}

    def skip_reason(self, instance: Any) -> str | None:
        """Skips data with LP (diagonal) blocks, and data without constraints or PSD blocks."""
        d = instance.data
        if any(s < 0 for s in d.block_sizes):
            return "sdp-burer-monteiro handles PSD blocks only; the data have LP (diagonal) blocks"
        if not d.block_sizes or d.m == 0:
            return "sdp-burer-monteiro needs at least one PSD block and one constraint"
        return None

    def warm_up(self, instance: Any) -> None:
        """Compile the kernels (untimed, once per worker; numba's disk cache after the first)."""
        super().warm_up(instance)
        warm_kernels()

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        from psdbench.families.sdp.reference import trace_upper

        p = {**self.default_params, **params}
        d = instance.data
        tol = float(p["tol"])
        split = SplitData.of(d)
        ranks = np.array([int(p["rank"]) and min(int(p["rank"]), int(n)) or sdplr_rank(int(mk), int(n))
                          for mk, n in zip(split.constraints_per_block, split.sizes)])
        b = np.asarray(d.b, dtype=float)
        ops = Operators(split, b, ranks)
        T = trace_upper(d)
        nb, nc = 1.0 + d.norm_b_inf(), 1.0 + d.norm_C_inf()
        rng = np.random.default_rng(instance.seed)
        R = ops.project(rng.random((split.n_psd, ops.r)) - rng.random((split.n_psd, ops.r)))  # main.c:135-138
        y = np.zeros(d.m)
        sigma = float(p["sigma0"]) or 1.0 / d.n  # main.c:145
        rho_c, memory, amax, sl = float(p["rho_c"]), int(p["memory"]), float(p["step_max"]), int(p["slice"])
        max_minor = int(budget.max_iter or MAX_MINOR)
        rec = TraceRecorder(budget)
        st = ops.state(R, y, sigma)
        minor, major, updates, checks, certs, escapes = 0, 0, 0, 0, 0, 0
        escape = bool(p["escape"])
        feasible, status, last, errs = False, "", None, None
        t0 = time.monotonic()

        t_face = {int(i): nc / float(np.max(np.abs(split.d[split.own == i + 1]))) for i in split.faced}

        def face_dual(y: np.ndarray, gain: float) -> np.ndarray:
            """``y`` with the multiplier of each faced constraint (``<A_i, X> = 0``, ``A_i`` psd; ours, see
            :mod:`.bm_kernels`) set: the ALM leaves it at 0 (its residual is 0), and ``lambda_min(C - A*(y))``
            rises with ``-y_i`` (``A_i`` psd) towards its value on the face; ``-y_i`` is raised tenfold from
            the last one found while ``lambda_min`` gains more than ``gain`` (a larger ``|y_i|`` costs the
            certified bound its rounding, ``gamma_k |A_i| |y_i|`` entrywise)."""
            if not t_face:
                return y
            y = y.copy()
            for i, t in t_face.items():
                sgn = 1.0 if split.d[split.own == i + 1][0] > 0 else -1.0
                y[i] = -sgn * t / 10
                best = min(_eig_low(Z, 1)[0][0] for Z in split.slack_matrices(y, dense_max=DENSE_EIG_MAX))
                for _ in range(20):
                    y[i] = -sgn * t
                    lam = min(_eig_low(Z, 1)[0][0] for Z in split.slack_matrices(y, dense_max=DENSE_EIG_MAX))
                    if lam <= best + gain:
                        break
                    best, t = lam, t * 10
                t_face[i] = t / 10 if lam <= best else t
                y[i] = -sgn * t_face[i]
            return y

        def check(stop: bool = True) -> bool:
            """The stopping test after a multiplier update (module docstring, "What is ours"), and the
            escape from a saddle where ``S`` has a negative eigenvalue that fails it."""
            nonlocal checks, certs, last, errs, st, escapes
            checks += 1
            err1 = float(np.linalg.norm(st["v"])) / nb
            pairs = [_eig_low(Z, ESCAPE_VECTORS) for Z in split.slack_matrices(y, faced=True, dense_max=DENSE_EIG_MAX)]
            lam = min(float(w[0]) for w, _ in pairs)
            pobj, tr = st["cval"], float(np.sum(st["R"] * st["R"]))
            if T is not None:
                dobj = float(b @ y) + T * min(0.0, lam)
                scale = 1.0 + abs(pobj) + abs(dobj)
                # <X, Z - min(0, lam) I> = <C, X> - y'A(X) - min(0, lam) tr X
                e6 = (pobj - float(y @ (st["v"] + b)) - min(0.0, lam) * tr) / scale
                est = max(err1, abs(pobj - dobj) / scale, abs(e6))
                thr = tol * scale / T  # lambda_min below -thr alone fails the test
            else:
                scale = 1.0 + abs(pobj) + abs(float(b @ y))
                est = max(err1, max(0.0, -lam) / nc, abs(pobj - float(b @ y)) / scale)
                thr = tol * nc
            if stop and est <= tol:
                certs += 1
                ys = shift_dual(d, face_dual(y, 0.05 * thr))
                e = factored_errors(d, st["R"], None, ys)
                errs = e
                if e.max_err <= tol:
                    last = ys
                    return True
            if lam < -thr and escape:
                R = st["R"]
                D = np.zeros_like(R)
                for (w, V), s0, n, rk in zip(pairs, split.starts, split.sizes, ranks):
                    neg = np.flatnonzero(w < -thr)[:rk]
                    if neg.size == 0:
                        continue
                    U, sv, _ = np.linalg.svd(R[s0:s0 + n, :rk], full_matrices=False)
                    R[s0:s0 + n, :rk] = U * sv  # its principal columns: R R' unchanged
                    weak = np.arange(rk - neg.size, rk)
                    D[s0:s0 + n, weak] = V[:, neg] * np.sqrt(w[neg] / w[neg[0]])
                ops.project(D)
                st = ops.state(R, y, sigma)
                a = ops.step(ops.quartic(st, D, y, sigma))
                if a > 0:
                    st["R"] += a * D
                    st = ops.state(st["R"], y, sigma)
                    ops.reset_memory()
                    escapes += 1
            return False

        while status == "" and major < 100_000:
            major += 1
            easy = False
            while not easy and status == "":  # the multiplier updates at one sigma (sdplrlib.c:181-280)
                if st["gnorm"] / nc <= rho_c / sigma:
                    break  # already meets the inner test (sdplrlib.c:187)
                local = 0
                while True:  # one inner solve, in slices between deadline checks
                    code, its = ops.inner(st, y, sigma, gtol=rho_c / sigma * nc, ftol=-1.0 if feasible else tol * nb,
                                          max_it=min(sl, max_minor - minor), memory=memory, amax=amax)
                    local, minor = local + its, minor + its
                    if code != SLICE or budget.expired() or minor >= max_minor:
                        break
                if code == FEASIBLE:
                    feasible = True  # SDPLR stops here (sdplrlib.c:242); we go on (module docstring)
                y = y - sigma * st["v"]  # sdplrlib.c:243, 261
                updates += 1
                st = ops.state(st["R"], y, sigma)  # essential_calcs (sdplrlib.c:271)
                rec.add(objective=st["cval"], err1=float(np.linalg.norm(st["v"])) / nb, sigma=sigma, iter=minor)
                if (feasible or (escape and local > HARD)) and check(stop=feasible):
                    status = "converged"
                elif budget.expired():
                    status = "budget"
                elif minor >= max_minor:
                    status = "minor iterations"
                easy = local <= 10  # sdplrlib.c:274-278
            if status:
                break
            while True:  # sdplrlib.c:317-321
                sigma *= float(p["sigma_factor"])
                st["G"] = ops.gradient(st, y - sigma * st["v"])
                st["gnorm"] = float(np.linalg.norm(st["G"]))
                if st["gnorm"] / nc > rho_c / sigma or sigma > SIGMA_MAX:
                    break
            ops.reset_memory()
            if sigma > SIGMA_MAX:
                status = "stalled"
        y_out = last if last is not None else shift_dual(d, face_dual(y, 0.05 * tol * nc))
        info_face = {"faced_constraints": [int(i) for i in split.faced],
                     "faced_multipliers": [float(y_out[i]) for i in split.faced]} if split.faced.size else {}
        info = {**info_face, "status": status or "major iterations", "rank": int(ops.r),
                "ranks": [int(k) for k in ranks], "major": major, "minor": minor, "updates": updates,
                "checks": checks, "certificates": certs, "escapes": escapes,
                "sigma": sigma, "lowrank_matrices": split.n_lowrank, "solve_s": time.monotonic() - t0}
        if errs is not None:
            info["last_max_err"] = float(errs.max_err)
        variables = {"R": st["R"], "y": y_out}
        return Solution(variables=variables, status=Status.TIMEOUT if budget.expired() else Status.OK,
                        iterations=minor, info=info, trace=rec.points, iterates=rec.finish(variables),
                        message="" if status == "converged" else f"stopped: {info['status']}")
