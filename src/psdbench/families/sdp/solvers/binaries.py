"""``sdp-csdp`` and ``sdp-dsdp``: the CSDP and DSDP programs on an SDPA file, in a child process.

CSDP (B. Borchers, "CSDP, a C library for semidefinite programming", Optim. Methods Softw.
11:613-623, 1999; Debian ``coinor-csdp``, program ``csdp``) and DSDP (S. J. Benson and Y. Ye,
"Algorithm 875: DSDP5", ACM TOMS 34(3), 2008; Debian ``dsdp``, program ``dsdp5``) each read the
instance as an SDPA file written by :func:`.sdpa_io.write_sdpa` (``F_0 = -C``, ``F_i = A_i``,
``c = b``) and write their solution as ``y`` on the first line, then ``1 block i j value`` for
SDPA's ``X`` (our ``Z``) and ``2 block i j value`` for SDPA's ``Y`` (our ``X``), one triangle.
Their ``y`` is SDPA's ``x``, so ours is its negative (:mod:`.sdpa_io`).

The program runs in a temporary folder (:func:`.child.run_child`) and is killed at the budget's
deadline.  Whatever it ends with, a point it wrote is returned with status ``ok`` and judged by its
DIMACS errors (its own status line is kept in ``info["status"]``, its output in ``info["log"]``);
an infeasibility it reports returns the certificate it wrote; a failed allocation is a memory
failure (:func:`.native.memory_failure`).  Absent programs: ``skipped`` with the install command.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Solution, Status

from psdbench.families.sdp.solvers.child import ChildRun, run_child
from psdbench.families.sdp.solvers.native import _budget_s, _Native, memory_failure, returned_status
from psdbench.families.sdp.sdpa_io import write_sdpa

#: CSDP's exit codes (its user's guide), for a run whose output names only the code
CSDP_CODES = {0: "Success: SDP solved", 1: "Success: SDP is primal infeasible",
              2: "Success: SDP is dual infeasible", 3: "Partial Success: SDP solved with reduced accuracy",
              4: "Failure: maximum iterations reached", 5: "Failure: stuck at edge of primal feasibility",
              6: "Failure: stuck at edge of dual infeasibility", 7: "Failure: lack of progress",
              8: "Failure: X, Z, or O was singular", 9: "Failure: detected NaN or Inf values"}
_MEMORY = re.compile(r"storage allocation failed|memory error|out of memory|cannot allocate", re.I)


def read_solution(path: Path, data: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(y, Z, X)`` of a CSDP / DSDP solution file, in the program's signs (see the module docstring).

    ``y``: the first line; entries ``1 b i j v`` fill SDPA's ``X`` (our ``Z``) and ``2 b i j v``
    SDPA's ``Y`` (our ``X``), both triangles of a PSD block, stacked as in :mod:`.data`.
    """
    lines = path.read_text().splitlines()
    if not lines:
        raise ValueError(f"{path.name}: empty solution file")
    y = np.array(lines[0].split(), dtype=float)
    if y.size != data.m:
        raise ValueError(f"{path.name}: y has {y.size} entries, the problem {data.m} constraints")
    E = np.array(" ".join(lines[1:]).split(), dtype=float).reshape(-1, 5)
    mat, blk, r, c = (E[:, k].astype(np.int64) for k in range(4))
    v = E[:, 4]
    sizes = np.asarray(data.block_sizes, dtype=np.int64)
    dim, base = np.abs(sizes)[blk - 1], np.asarray(data.offsets, dtype=np.int64)[blk - 1]
    lp = sizes[blk - 1] < 0
    out = []
    for k in (1, 2):
        sel = mat == k
        vec = np.zeros(data.N)
        i, j, d, o, s = r[sel] - 1, c[sel] - 1, dim[sel], base[sel], lp[sel]
        vec[np.where(s, o + i, o + i * d + j)] = v[sel]
        vec[np.where(s, o + i, o + j * d + i)] = v[sel]
        out.append(vec)
    return y, out[0], out[1]


def _dpkg_version(package: str) -> str:
    try:
        res = subprocess.run(["dpkg-query", "-W", "-f=${Version}", package], capture_output=True, text=True,
                             timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return res.stdout.strip() or "unknown"


class _Binary(_Native):
    """An SDPA-file program run in a child process (see the module docstring)."""

    program = ""
    apt = ""  # the Debian package that installs it
    label = ""
    solved: tuple[str, ...] = ()  # the status lines that claim an optimum

    def library_versions(self) -> dict[str, str]:
        if shutil.which(self.program) is None:
            return {self.apt: "absent"}
        return {self.apt: _dpkg_version(self.apt)}

    def skip_reason(self, instance: Any) -> str | None:
        if shutil.which(self.program) is not None:
            return None
        return f"{self.program} is not on PATH (optional: apt-get install {self.apt})"

    def argv(self, src: Path, dst: Path, p: dict[str, Any], budget: Budget) -> list[str]:
        raise NotImplementedError

    def outcome(self, run: ChildRun) -> tuple[str, str]:
        """``(word, kind)``: the program's status line and ``"point"``, ``"primal_infeasible"`` or
        ``"dual_infeasible"`` (ours: (P) infeasible, (D) infeasible)."""
        raise NotImplementedError

    def iterations(self, log: str) -> int:
        raise NotImplementedError

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        p = {**self.default_params, **params}
        d = instance.data
        with tempfile.TemporaryDirectory(prefix=f"psdbench-{self.program}-") as tmp:
            src, dst = Path(tmp) / "problem.dat-s", Path(tmp) / "solution.txt"
            write_sdpa(d, src)
            run = run_child(self.argv(src, dst, p, budget), tmp, budget.remaining())
            log = run.stdout + (("\n" + run.stderr) if run.stderr.strip() else "")
            iters = self.iterations(run.stdout)
            info: dict[str, Any] = {"budget_s": _budget_s(budget), "log": log}
            if run.killed:
                return Solution(variables={}, status=Status.TIMEOUT, iterations=iters,
                                info={**info, "status": "killed at the deadline"},
                                message=f"{self.label} stopped at the deadline (killed)")
            if _MEMORY.search(log):
                line = next(ln for ln in log.splitlines() if _MEMORY.search(ln)).strip()
                return memory_failure(f"{self.label}: {line}", iterations=iters, info=info)
            word, kind = self.outcome(run)
            info["status"] = word
            if not dst.is_file() or dst.stat().st_size == 0:
                last = (run.stderr.strip() or run.stdout.strip()).splitlines()[-1:] or [f"exit code {run.returncode}"]
                return Solution(variables={}, status=Status.ERROR, iterations=iters, info=info,
                                message=f"{self.label} wrote no solution ({word}): {last[0]}")
            y, Z, X = read_solution(dst, d)
        if kind == "primal_infeasible":  # y certifies (P) infeasible: A*(-y) nsd, b'(-y) > 0
            return Solution(variables={"y_ray": -y}, status=Status.INFEASIBLE, iterations=iters, info=info,
                            message=f"{self.label}: {word}")
        if kind == "dual_infeasible":  # X certifies (D) infeasible: X psd, A(X) = 0, <C, X> < 0
            return Solution(variables={"X_ray": X}, status=Status.INFEASIBLE, iterations=iters, info=info,
                            message=f"{self.label}: {word}")
        return Solution(variables={"X": X, "y": -y, "Z": Z}, status=returned_status(budget), iterations=iters,
                        info=info, message="" if word in self.solved else f"{self.label}: {word}")


class SdpCsdp(_Binary):
    """CSDP 6 (primal-dual interior point, predictor-corrector), the ``csdp`` program on an SDPA file."""

    name = "sdp-csdp"
    program = "csdp"
    apt = "coinor-csdp"
    package = "coinor-csdp"
    label = "CSDP"
    solved = ("Success: SDP solved",)
    params: dict[str, api.Param] = {
        "maxiter": api.number(low=1, default=100, integer=True, doc="CSDP's iteration limit (param.csdp maxiter)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def argv(self, src: Path, dst: Path, p: dict[str, Any], budget: Budget) -> list[str]:
        # CSDP reads its parameters from param.csdp in its working folder; the others keep its defaults
        (src.parent / "param.csdp").write_text(f"maxiter={int(budget.max_iter or p['maxiter'])}\n")
        return [str(shutil.which(self.program)), str(src), str(dst)]

    def outcome(self, run: ChildRun) -> tuple[str, str]:
        said = [ln.strip() for ln in run.stdout.splitlines()
                if ln.startswith(("Success:", "Partial Success:", "Failure:"))]
        word = said[-1] if said else CSDP_CODES.get(run.returncode or 0, f"exit code {run.returncode}")
        if run.returncode == 1 or "primal infeasible" in word:
            return word, "primal_infeasible"
        if run.returncode == 2 or "dual infeasible" in word:
            return word, "dual_infeasible"
        if word.startswith("Failure: return code is"):
            word = CSDP_CODES.get(run.returncode or 0, word)
        return word, "point"

    def iterations(self, log: str) -> int:
        its = re.findall(r"^Iter:\s*(\d+)", log, re.M)
        return int(its[-1]) if its else 0


class SdpDsdp(_Binary):
    """DSDP 5 (dual-scaling interior point), the ``dsdp5`` program on an SDPA file."""

    name = "sdp-dsdp"
    program = "dsdp5"
    apt = "dsdp"
    package = "dsdp"
    label = "DSDP"
    solved = ("DSDP Converged.",)
    params: dict[str, api.Param] = {
        "gaptol": api.number(low=0, default=1e-6, doc="DSDP's relative duality gap tolerance (-gaptol)"),
        "maxit": api.number(low=1, default=200, integer=True, doc="DSDP's iteration limit (-maxit)"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def argv(self, src: Path, dst: Path, p: dict[str, Any], budget: Budget) -> list[str]:
        # names relative to its working folder: dsdp5 copies file names into short fixed buffers
        # (a 41-character path to -save is cut to 40; a longer one crashes it)
        return [str(shutil.which(self.program)), src.name, "-save", dst.name, "-print", "1",
                "-gaptol", repr(float(p["gaptol"])), "-maxit", str(int(budget.max_iter or p["maxit"]))]

    def outcome(self, run: ChildRun) -> tuple[str, str]:
        said = [ln.strip() for ln in run.stdout.splitlines() if ln.startswith("DSDP ") and (
            "Converged" in ln or "Terminated" in ln or "Unbounded" in ln or "Infeasible" in ln)]
        word = said[-1] if said else f"no stop reason printed (exit code {run.returncode})"
        # DSDP's dual is our (D) (the y problem): its dual unbounded means (P) infeasible
        if "Dual Unbounded" in word:
            return word, "primal_infeasible"
        if "Primal Unbounded" in word:
            return word, "dual_infeasible"
        return word, "point"

    def iterations(self, log: str) -> int:
        its = re.findall(r"^(\d+)\s+[-+0-9.eE]+\s+[-+0-9.eE]+\s", log, re.M)
        return int(its[-1]) if its else 0
