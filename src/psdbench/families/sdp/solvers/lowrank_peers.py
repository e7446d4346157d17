"""``sdp-lorads`` and ``sdp-sdplr``: the LoRADS and SDPLR programs on an SDPA file, in a child process.

LoRADS (Han, Lin, Liu, Chen, Deng, Ge, Ye, arXiv:2403.09133; ``lorads`` on PATH or ``$PSDBENCH_LORADS``)
and SDPLR 1.03 (Burer, Monteiro, Math. Program. B 95:329-357, 2003; ``sdplr`` or ``$PSDBENCH_SDPLR``),
built by ``bash benchmarks/peers/build.sh``.  Each reads the SDPA file of :func:`.sdpa_io.write_sdpa`
(``F_0 = -C``, ``F_i = A_i``, ``c = b``) as ``min <-F_0, X> s.t. <F_i, X> = c_i, X psd``: our (P).  So its
``X = R R'`` (SDPA's ``Y``), its ``y`` (dual ``max b'y s.t. C - A*(y) psd``; SDPA's ``x = -y``) and its
objective (minus SDPLIB's) are ours unchanged; an LP entry is ``x_j = r_j^2`` in both; ``Z`` is left
to ``C - A*(y)``.  Returned: ``X``, ``y`` (``point = "dense"``) or ``R``, ``x_lp``, ``y`` (``"factored"``).
Upstream LoRADS writes no solution: ``benchmarks/peers/lorads-solfile.patch`` (ours) adds ``--solFile``;
without it the cell is ``skipped`` with the build command.  LoRADS reads one LP block, the last
(:func:`lp_last`).  SDPLR writes ``soln_out``; its ``soln_in`` is a missing path (a cold start).  Their
claims go into ``info`` (metrics ``solver_claimed_*``) and the status word the run table shows beside
the verified outcome; the point is returned with status ``ok`` whatever they say, and judged by the harness.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Solution, Status

from psdbench.families.sdp.data import SdpData
from psdbench.families.sdp.sdpa_io import write_sdpa
from psdbench.families.sdp.solvers.binaries import _MEMORY
from psdbench.families.sdp.solvers.child import ChildRun, run_child
from psdbench.families.sdp.solvers.native import _budget_s, _Native, memory_failure, returned_status

BUILD = "bash benchmarks/peers/build.sh"
_THREADS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "BLIS_NUM_THREADS")
_SHA: dict[tuple[str, int, int], str] = {}
_PROBE: dict[tuple[str, int, int], bool] = {}


def find_program(program: str, env: str) -> tuple[str | None, str]:
    """``(path, "")`` of ``$env`` (when set) or of ``program`` on PATH; ``(None, why)`` otherwise."""
    named = os.environ.get(env, "").strip()
    if named:
        p = Path(named).expanduser()
        return (str(p), "") if p.is_file() and os.access(p, os.X_OK) else (None, f"{env}={named} is not an executable file")
    found = shutil.which(program)
    return (found, "") if found else (None, f"{program} is not on PATH and {env} is not set")


def _key(path: str) -> tuple[str, int, int]:
    return (os.path.realpath(path), os.stat(path).st_mtime_ns, os.stat(path).st_size)


def _sha(path: str) -> str:
    """``sha256:<16 hex>`` of the executable (its identity in the cell key; cached by mtime and size)."""
    k = _key(path)
    if k not in _SHA:
        _SHA[k] = "sha256:" + hashlib.sha256(Path(k[0]).read_bytes()).hexdigest()[:16]
    return _SHA[k]


class _Tokens:
    """A solution file's tokens, read in order; a mismatch is a ``ValueError`` naming the file."""

    def __init__(self, path: str | Path) -> None:
        self.name, self.tok, self.at = Path(path).name, Path(path).read_text().split(), 0

    def take(self, n: int = 1) -> list[str]:
        if self.at + n > len(self.tok):
            raise ValueError(f"{self.name}: the file ends at token {len(self.tok)}, {n} more expected")
        self.at += n
        return self.tok[self.at - n:self.at]

    def word(self, *words: str) -> None:
        got = self.take(len(words))
        if got != list(words):
            raise ValueError(f"{self.name}: expected {' '.join(words)!r}, found {' '.join(got)!r}")

    def count(self, want: int, what: str) -> int:
        if (n := int(self.take()[0])) != want:
            raise ValueError(f"{self.name}: {n} {what}, the problem has {want}")
        return n

    def factor(self, n: int, r: int) -> np.ndarray:  # n r values written by columns (R[:, 0] first)
        return np.array(self.take(n * r), dtype=float).reshape(r, n).T


def read_lorads_solution(path: str | Path, data: SdpData) -> dict[str, Any]:
    """The patched LoRADS's ``--solFile`` (benchmarks/peers/lorads-solfile.patch), checked against ``data``::

        LoRADS-solution 1 / status S / pobj P / dobj D / dual m + m values of y / lp k + k values r_j
        (x_j = r_j^2) / nblocks K / per PSD block: block k n_k r_k + n_k r_k values of R_k (by columns)

    Returns ``{"y", "factors", "lp", "status", "pobj", "dobj"}``: the PSD blocks' ``R_k``, the LP entries.
    """
    t, out = _Tokens(path), {}
    t.word("LoRADS-solution", "1")
    for key in ("status", "pobj", "dobj"):
        t.word(key)
        out[key] = float(t.take()[0])
    t.word("dual")
    y = np.array(t.take(t.count(data.m, "multipliers")), dtype=float)
    t.word("lp")
    lp = np.array(t.take(t.count(-sum(s for s in data.block_sizes if s < 0), "LP entries")), dtype=float) ** 2
    psd = [s for s in data.block_sizes if s > 0]
    t.word("nblocks")
    t.count(len(psd), "PSD blocks")
    factors = []
    for j, s in enumerate(psd):
        t.word("block", str(j + 1))
        n, r = t.count(s, f"rows in block {j + 1}"), int(t.take()[0])
        factors.append(t.factor(n, r))
    return {"y": y, "factors": factors, "lp": lp, **out, "status": int(out["status"])}


def read_sdplr_solution(path: str | Path, data: SdpData) -> dict[str, Any]:
    """SDPLR's ``soln_out`` (``writeout`` in its main.c), checked against ``data``::

        dual variable m + m values of y / per block: primal variable k t n maxrank rank + n rank values
        (by columns; t = s a PSD block, d an LP block of rank 1, x_j = R_j^2) / special NAME VALUE lines

    Returns ``{"y", "factors", "lp", "special"}`` as :func:`read_lorads_solution`.
    """
    t = _Tokens(path)
    t.word("dual", "variable")
    y = np.array(t.take(t.count(data.m, "multipliers")), dtype=float)
    factors, lps = [], []
    for j, s in enumerate(data.block_sizes):
        t.word("primal", "variable", str(j + 1), "s" if s > 0 else "d")
        n, r = t.count(abs(s), f"rows in block {j + 1}"), int(t.take(2)[1])
        F = t.factor(n, r)
        factors.append(F) if s > 0 else lps.append(F[:, 0] ** 2)
    special = {t.tok[i + 1]: float(t.tok[i + 2]) for i in range(t.at, len(t.tok) - 2, 3) if t.tok[i] == "special"}
    return {"y": y, "factors": factors, "lp": np.concatenate(lps) if lps else np.zeros(0), "special": special}


def point_variables(data: SdpData, sol: dict[str, Any], form: str) -> dict[str, np.ndarray]:
    """The returned variables: ``X`` (stacked ``R_k R_k'`` and LP entries) and ``y``, or ``R``, ``x_lp``, ``y``."""
    factors, lp, y = sol["factors"], np.asarray(sol["lp"], dtype=float), np.asarray(sol["y"], dtype=float)
    if form == "factored":  # the blocks' factors stacked by rows, zero columns up to the largest rank
        r = max([F.shape[1] for F in factors] + [1])
        R = np.vstack([np.pad(F, ((0, 0), (0, r - F.shape[1]))) for F in factors]) if factors else np.zeros((0, r))
        return {"R": R, "x_lp": lp, "y": y}
    blocks, it, k = [], iter(factors), 0
    for s in data.block_sizes:
        F = next(it) if s > 0 else None
        blocks.append(F @ F.T if F is not None else lp[k:k - s])
        k -= min(s, 0)
    return {"X": data.stack(blocks), "y": y}


def lp_last(data: SdpData) -> SdpData:
    """``data`` with its LP blocks merged into one after the PSD blocks (both keep their order: the point maps back)."""
    sizes, off = data.block_sizes, data.offsets
    lp = [j for j, s in enumerate(sizes) if s < 0]
    if not lp or lp == [len(sizes) - 1]:
        return data
    cols = np.concatenate([np.arange(off[j], off[j + 1]) for j in [j for j, s in enumerate(sizes) if s > 0] + lp])
    new = tuple(s for s in sizes if s > 0) + (sum(sizes[j] for j in lp),)
    return SdpData(block_sizes=new, A=data.A[:, cols].tocsr(), b=data.b, c=data.c[:, cols].tocsr(),
                   name=data.name)


def own_limit(budget: Budget, cap: float) -> float:
    """The program's own time limit: ``cap``, within 90 % of the budget left less 1 s (at least 1 s)."""
    left = budget.remaining()
    return float(cap) if left is None else max(min(float(cap), 0.9 * left - 1.0), 1.0)


def _g(v: float) -> str:  # a claimed measure as the status word shows it
    return f"{v:.2e}" if v == v else "n/a"


def _env() -> dict[str, str]:
    """The child's environment: BLAS / OpenMP threads 1 unless set (the harness's workers set them)."""
    return {**{k: "1" for k in _THREADS}, **os.environ}


POINT = api.choice("dense", "factored", default="dense",
                   doc="what is returned: X = R R' stacked (dense), or the factors R, x_lp (verified without forming X)")


class _Peer(_Native):
    """A program on an SDPA file in a child process: a subclass's ``run`` writes its inputs and runs it (solution:
    ``solution.txt``), ``reader`` reads it, ``claims`` gives ``(status word, info)``: what it says of its point."""

    program, env, label, repo, limit_param = "", "", "", "", ""
    reader: Any = None
    returns = ("X (N,), y (m,): the point, Z = C - A*(y) (point = 'dense'); "
               "R (n_psd, r), x_lp (n_lp,), y (m,) with point = 'factored'")

    def library_versions(self) -> dict[str, str]:
        path, _ = find_program(self.program, self.env)
        return {self.program: _sha(path) if path else "absent"}

    def skip_reason(self, instance: Any) -> str | None:
        path, why = find_program(self.program, self.env)
        if path is None:
            return (f"{why} (optional: build {self.label} from {self.repo} with `{BUILD}`, then put "
                    f"benchmarks/peers/build/bin on PATH or set {self.env})")
        return None

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        p = {**self.default_params, **params}
        d = instance.data
        path = find_program(self.program, self.env)[0] or self.program  # skip_reason said it is there
        limit = own_limit(budget, p[self.limit_param])
        with tempfile.TemporaryDirectory(prefix=f"psdbench-{self.program}-") as tmp:
            dst = Path(tmp) / "solution.txt"
            run = self.run(path, d, Path(tmp), limit, p, budget)
            log = run.stdout + (("\n" + run.stderr) if run.stderr.strip() else "")
            info: dict[str, Any] = {"budget_s": _budget_s(budget), "log": log, "time_limit_s": limit}
            if run.killed:
                return Solution(variables={}, status=Status.TIMEOUT, info={**info, "status": "killed at the deadline"},
                                message=f"{self.label} stopped at the deadline (killed)")
            if _MEMORY.search(log):
                line = next(ln for ln in log.splitlines() if _MEMORY.search(ln)).strip()
                return memory_failure(f"{self.label}: {line}", info=info)
            if not dst.is_file() or dst.stat().st_size == 0:
                last = (run.stderr.strip() or run.stdout.strip()).splitlines()[-1:] or ["no output"]
                return Solution(variables={}, status=Status.ERROR, info={**info, "status": "no solution file"},
                                message=f"{self.label} wrote no solution (exit code {run.returncode}): {last[0]}")
            sol = type(self).reader(dst, d)
        word, own = self.claims(run, sol, limit)
        trace = own.pop("trace", [])
        info.update(own, status=word, rank=float(max([F.shape[1] for F in sol["factors"]] + [0])))
        return Solution(variables=point_variables(d, sol, p["point"]), status=returned_status(budget),
                        iterations=int(own.get("iterations", 0)), info=info, trace=trace,
                        message="" if word.startswith("optimal ") else f"{self.label}: {word}")


def probe_solfile(path: str) -> bool:
    """Whether ``path`` takes ``--solFile`` (cached); on a missing SDPA file LoRADS parses its options and stops."""
    k = _key(path)
    if k not in _PROBE:
        with tempfile.TemporaryDirectory(prefix="psdbench-lorads-probe-") as tmp:
            res = subprocess.run([path, str(Path(tmp) / "none.dat-s"), "--solFile", str(Path(tmp) / "x.sol")], cwd=tmp,
                                 capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL, check=False)
        _PROBE[k] = not re.search(r"(unrecognized|invalid|unknown) option.*solFile", res.stdout + res.stderr)
    return _PROBE[k]


LORADS_WORDS = {0: "unknown", 1: "optimal", 2: "primal optimal", 3: "iteration limit", 4: "time limit"}
#: its final block: ||A(X)-b||_2 / (1 + ||b||_1 | _inf), max(0, -lambda_min(C - A*(y))) / (1 + ||C||_1 | _inf), gap
_LORADS_OWN = {"claimed_pobj": "Primal Objective:", "claimed_dobj": "Dual Objective:",
               "claimed_cv1": r"Constraint Violation\(1\)", "claimed_dual_infeas1": r"Dual Infeasibility\(1\)",
               "claimed_pd_gap": "Primal Dual Gap", "claimed_cv_inf": r"Constraint Violation\(Inf\)",
               "claimed_dual_infeas_inf": r"Dual Infeasibility\(Inf\)"}
_LORADS_LINE = re.compile(r"^(ALM OuterIter|ADMM Iter):(\d+)(?: InnerIter:(\d+))? pObj:(\S+) dObj:(\S+) "
                          r"pInfea\(1\):(\S+) .*?pdGap:(\S+) .*Time:(\S+)", re.M)


class SdpLorads(_Peer):
    """LoRADS 2.0.1 (low-rank ALM, then ADMM splitting), the ``lorads`` program on an SDPA file."""

    name = "sdp-lorads"
    program, env, label, repo, limit_param = "lorads", "PSDBENCH_LORADS", "LoRADS", "COPT-Public/LoRADS", "timeSecLimit"
    reader = read_lorads_solution
    params: dict[str, api.Param] = {
        "phase1Tol": api.number(low=0, default=1e-3, doc="ALM -> ADMM switch tolerance (--phase1Tol)"),
        "phase2Tol": api.number(low=0, default=1e-5, doc="final tolerance: CV(1) <= it, DualInf(1), PDGap <= 5 it"),
        "timesLogRank": api.number(low=0, default=2.0, doc="initial rank per block ~ timesLogRank ln(n_k); 0: Barvinok-Pataki"),
        "initRho": api.number(low=0, default=0.0, doc="initial penalty; 0: 1/sqrt(sum n_k)"),
        "rhoMax": api.number(low=0, default=5000.0, doc="largest penalty"),
        "rhoFreq": api.number(low=1, default=5, integer=True, doc="ADMM penalty update every rhoFreq iterations"),
        "rhoFactor": api.number(low=1, default=1.2, doc="ADMM penalty factor"),
        "ALMRhoFactor": api.number(low=1, default=2.0, doc="ALM penalty factor"),
        "heuristicFactor": api.number(low=0, default=1.0, doc="penalty scale at the switch to ADMM"),
        "maxALMIter": api.number(low=1, default=200, integer=True, doc="ALM iteration limit (budget.max_iter caps it)"),
        "maxADMMIter": api.number(low=0, default=10000, integer=True, doc="ADMM iteration limit"),
        "lbfgsListLength": api.number(low=1, default=2, integer=True, doc="L-BFGS memory"),
        "reoptLevel": api.number(low=0, high=2, default=2, integer=True, doc="re-optimization level"),
        "dyrankLevel": api.number(low=0, high=2, default=2, integer=True, doc="dynamic rank update level"),
        "highAccMode": api.Param(default=False, types=(bool,), doc="LoRADS's high-accuracy mode"),
        "l2Rescaling": api.Param(default=False, types=(bool,), doc="LoRADS's l2 rescaling of the data"),
        "timeSecLimit": api.number(low=1, default=3600.0, doc="its own time limit (s), within the cell's budget"),
        "point": POINT,
    }
    default_params: dict[str, Any] = api.default_params(params)

    def skip_reason(self, instance: Any) -> str | None:
        why = super().skip_reason(instance)
        if why is None and not any(s > 0 for s in instance.data.block_sizes):
            return "LoRADS needs a PSD block (the data have LP blocks only)"
        path = find_program(self.program, self.env)[0]
        if why is None and path and not probe_solfile(path):
            return (f"{path} writes no solution (no --solFile: upstream LoRADS prints its point nowhere); build "
                    f"the patched one (benchmarks/peers/lorads-solfile.patch) with `{BUILD}` and put "
                    f"benchmarks/peers/build/bin on PATH or set {self.env}")
        return why

    def run(self, path: str, data: SdpData, tmp: Path, limit: float, p: dict[str, Any], budget: Budget) -> ChildRun:
        write_sdpa(lp_last(data), tmp / "problem.dat-s")
        q = {**p, "maxALMIter": int(budget.max_iter or p["maxALMIter"])}
        argv = [path, str(tmp / "problem.dat-s")]  # the file must be argv[1]
        argv += [a for k in self.params if k not in ("point", "timeSecLimit")
                 for a in (f"--{k}", str(int(q[k]) if isinstance(q[k], bool) else q[k]))]
        argv += ["--timeSecLimit", repr(limit), "--solFile", str(tmp / "solution.txt")]
        return run_child(argv, tmp, budget.remaining(), env=_env())

    def claims(self, run: ChildRun, sol: dict[str, Any], limit: float) -> tuple[str, dict[str, Any]]:
        out = run.stdout
        own: dict[str, Any] = {"claimed_status": float(sol["status"])}
        pats = {**{k: rf"{v}\s*:\s*(\S+)" for k, v in _LORADS_OWN.items()}, "solve_time_s": r"^all_time:\s*(\S+)"}
        own.update({k: float(re.findall(v, out, re.M)[-1]) for k, v in pats.items() if re.search(v, out, re.M)})
        said = re.findall(r"^End Program (?:due to reaching `([^`]*)`|(.*?)\.?)\s*:?\s*$", out, re.M)
        text = (said[-1][0] or said[-1][1]).strip() if said else "no final line"
        trace, t_alm, inner, admm = [], 0.0, 0, 0
        for kind, it, inn, po, do, cv, gap, t in _LORADS_LINE.findall(out):
            alm = kind.startswith("ALM")
            t_alm, inner, admm = (float(t), int(inn), admm) if alm else (t_alm, inner, int(it) + 1)
            trace.append({"t": float(t) + (0.0 if alm else t_alm), "iter": inner + admm,  # ADMM's clock starts at 0
                          "objective": float(po), "dual_objective": float(do), "rel_gap": float(gap), "pinfeas": float(cv)})
        claim = ", ".join(f"{k} {_g(own.get(v, math.nan))}" for k, v in (
            ("CV(1)", "claimed_cv1"), ("DualInf(1)", "claimed_dual_infeas1"), ("PDGap", "claimed_pd_gap"),
            ("CV(Inf)", "claimed_cv_inf"), ("DualInf(Inf)", "claimed_dual_infeas_inf")))
        own.update(iterations=inner + admm, alm_inner_iterations=float(inner), admm_iterations=float(admm), trace=trace,
                   claimed=f"pobj {sol['pobj']:.10g}, dobj {sol['dobj']:.10g}, {claim}")
        word = f"{LORADS_WORDS.get(sol['status'], 'status ' + str(sol['status']))} ({text})"
        return f"{word}; claims {claim}", own


#: SDPLR's parameter file (the layout of ``sdplr gen_params``; it reads each line by its text before ':')
SDPLR_PARAMS = """Input type (1=SDPA, 2=SDPLR) : 1
Feasibility tolerance : {feastol!r}
Centrality tolerance : {centol!r}
Penalty factor increase : {sigmafac!r}
Rank reduction (1=yes, 0=no) : {rankreduce:d}
Time limit (in seconds) : {timelim:d}
Print level (0=nothing, 1=all) : 1
Dimension threshold for dense matrices : {dthresh_dim:d}
Density threshold for dense matrices (in [0,1]) : {dthresh_dens!r}
Number of LBFGS vectors : {numbfgsvecs:d}
Rank tolerance (e.g., machine precision) : {rankredtol!r}
Duality gap tolerance : {gaptol!r}
Check dual bound (-1, 0, 1) : {checkbd:d}
Dual bound type (1=+/-1, 2=0/1) : {typebd:d}
"""


def sdplr_params_file(p: dict[str, Any], timelim: int) -> str:
    """:data:`SDPLR_PARAMS` filled from the solver's parameters, its time limit ``timelim`` seconds."""
    return SDPLR_PARAMS.format(**{k: float(v) if isinstance(v, float) else int(v) for k, v in p.items() if k != "point"}
                               | {"timelim": int(timelim)})


class SdpSdplr(_Peer):
    """SDPLR 1.03-beta (Burer-Monteiro low-rank augmented Lagrangian), the ``sdplr`` program on an SDPA file."""

    name = "sdp-sdplr"
    program, env, label, repo, limit_param = "sdplr", "PSDBENCH_SDPLR", "SDPLR", "sburer/sdplr", "timelim"
    reader = read_sdplr_solution
    params: dict[str, api.Param] = {
        "feastol": api.number(low=0, default=1e-5, doc="stop when ||A(RR')-b||_2 / (1+||b||_inf) <= feastol (rho_f)"),
        "centol": api.number(low=0, default=1e-1, doc="subproblem gradient tolerance, divided by sigma (rho_c)"),
        "sigmafac": api.number(low=1, default=2.0, doc="penalty factor increase"),
        "rankreduce": api.Param(default=False, types=(bool,), doc="SDPLR's rank reduction"),
        "timelim": api.number(low=1, default=3600, integer=True, doc="its own limit in CPU seconds, within the budget"),
        "dthresh_dim": api.number(low=0, default=10, integer=True, doc="dimension threshold for dense matrices"),
        "dthresh_dens": api.number(low=0, high=1, default=0.75, doc="density threshold for dense matrices"),
        "numbfgsvecs": api.number(low=0, default=4, integer=True, doc="number of L-BFGS vectors"),
        "rankredtol": api.number(low=0, default=2.2204460492503131e-16, doc="rank tolerance"),
        "gaptol": api.number(low=0, default=1e-3, doc="duality gap tolerance (in development upstream)"),
        "checkbd": api.choice(-1, 0, 1, default=-1, doc="check dual bound (in development upstream)"),
        "typebd": api.choice(1, 2, default=1, doc="dual bound type (in development upstream)"),
        "point": POINT,
    }
    default_params: dict[str, Any] = api.default_params(params)

    def run(self, path: str, data: SdpData, tmp: Path, limit: float, p: dict[str, Any], budget: Budget) -> ChildRun:
        write_sdpa(data, tmp / "problem.dat-s")
        (tmp / "sdplr.params").write_text(sdplr_params_file(p, int(limit)))
        argv = [path, str(tmp / "problem.dat-s"), str(tmp / "sdplr.params"),
                str(tmp / "no-warm-start.sol"), str(tmp / "solution.txt")]  # a soln_in that does not exist: a cold start
        return run_child(argv, tmp, budget.remaining(), env=_env())

    def claims(self, run: ChildRun, sol: dict[str, Any], limit: float) -> tuple[str, dict[str, Any]]:
        out, sp_ = run.stdout, sol["special"]
        own: dict[str, Any] = {**{f"sdplr_{k}": v for k, v in sp_.items()}, "iterations": int(sp_.get("iter", 0))}
        # its table's last row "major minor val infeas time": val is L = <C,X> - y'v + sigma/2 |v|^2 (not <C,X>)
        rows = re.findall(r"^\s*(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+(\d+)\s*$", out, re.M)
        own.update({"claimed_lagrangian": float(rows[-1][2]), "claimed_infeas": float(rows[-1][3])} if rows else {})
        dim = re.findall(r"^DIMACS error measures:(.*)$", out, re.M)
        errs = [float(v) for v in dim[-1].replace("(n/a)", "nan").split()] if dim else []
        own.update({f"claimed_err{k + 1}": v for k, v in enumerate(errs) if v == v})
        # its stops (sdplrlib.c): the time limit, feasibility rho_f, 1e7 minor or CG iterations; or it gives up
        word = ("stopped: cannot reduce infeasibility any further" if "Cannot reduce infeasibility" in out
                else "stopped: NaN" if "Got NaN" in out
                else "time limit" if sp_.get("totaltime", 0.0) >= int(limit)
                else "iteration limit" if max(sp_.get("iter", 0), sp_.get("CG", 0)) >= 1e7
                else "optimal (feasibility tolerance reached)")
        claim = "DIMACS " + " ".join(_g(v) for v in errs) if errs else "no DIMACS line"
        own["claimed"] = f"augmented Lagrangian {own.get('claimed_lagrangian', math.nan):.10g}, {claim}"
        return f"{word}; claims {claim}", own
