"""``sdp-sdpa-gmp``: SDPA-GMP, SDPA in multiple-precision arithmetic (``sdpa-multiprecision``, GPL).

SDPA-GMP (M. Nakata, "A numerical evaluation of highly accurate multiple-precision arithmetic
version of semidefinite programming solver: SDPA-GMP, -QD and -DD", IEEE CACSD 2010) runs the same
primal-dual interior-point method as SDPA with GMP floating point (``mpfPrecision`` bits, 200 by
default); the high-precision SDPLIB values that disagree with the published table come from it.

Its PyPI package ``sdpa-multiprecision`` ships a module called ``sdpap``, as ``sdpa-python`` does,
so the two cannot share an environment.  It is installed into a folder of its own::

    pip install --no-deps --target "$VIRTUAL_ENV/share/psdbench/sdpa-gmp" sdpa-multiprecision

(or any folder named by ``PSDBENCH_SDPA_GMP``), and each solve runs in a child Python process with
that folder first on ``sys.path`` (:mod:`.sdpa_gmp_child`); the arrays go through a temporary
``.npz``.  SDPA has no time limit of its own: this adapter kills the child at the budget's deadline
(and the child dies with its parent, so a killed worker leaves nothing running).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from psdbench import api
from psdbench.api import Budget, Solution, Status

from psdbench.families.sdp.solvers.child import die_with_parent
from psdbench.families.sdp.solvers.native import _budget_s, _Native
from psdbench.families.sdp.solvers.sdpa import SDPA_RETURNS, sdpa_options, sdpa_solution, sedumi_problem

ENV = "PSDBENCH_SDPA_GMP"
PACKAGE = "sdpa-multiprecision"


def gmp_dir() -> Path:
    """Where ``sdpa-multiprecision`` is looked for: ``$PSDBENCH_SDPA_GMP``, else ``<prefix>/share/psdbench/sdpa-gmp``."""
    env = os.environ.get(ENV, "").strip()
    return Path(env).expanduser() if env else Path(sys.prefix) / "share" / "psdbench" / "sdpa-gmp"


def gmp_version(folder: Path) -> str | None:
    """The installed version of ``sdpa-multiprecision`` in ``folder``, or ``None`` where it is absent."""
    from importlib.metadata import distributions

    if not (folder / "sdpap" / "__init__.py").is_file():
        return None
    for dist in distributions(path=[str(folder)]):
        if (dist.metadata.get("Name") or "").lower() == PACKAGE:
            return str(dist.version)
    return None


class SdpSdpaGmp(_Native):
    """SDPA-GMP (multiple-precision primal-dual interior point) on (P) in SeDuMi form, in a child process."""

    name = "sdp-sdpa-gmp"
    module = "sdpap"
    package = PACKAGE
    extra = ""
    returns = SDPA_RETURNS
    params: dict[str, api.Param] = {
        "epsilonStar": api.number(low=0, default=1e-10, doc="SDPA's relative gap / feasibility tolerance"),
        "epsilonDash": api.number(low=0, default=1e-10, doc="SDPA's feasibility tolerance"),
        "mpfPrecision": api.number(low=64, default=200, integer=True, doc="bits of the GMP floating point"),
        "maxIteration": api.number(low=1, default=200, integer=True, doc="iteration limit"),
    }
    default_params: dict[str, Any] = api.default_params(params)

    def library_versions(self) -> dict[str, str]:
        return {PACKAGE: gmp_version(gmp_dir()) or "absent"}

    def skip_reason(self, instance: Any) -> str | None:
        folder = gmp_dir()
        if gmp_version(folder) is not None:
            return None
        return (f"{PACKAGE} is not installed in {folder} (optional, GPL: pip install --no-deps --target "
                f"'{folder}' {PACKAGE}; or name its folder in {ENV})")

    def solve(self, instance: Any, budget: Budget, **params: Any) -> Solution:
        p = {**self.default_params, **params}
        d = instance.data
        A, b, c, perm, n_lp, psd = sedumi_problem(d)
        opt = sdpa_options(p, budget)
        child = Path(__file__).with_name("sdpa_gmp_child.py")
        with tempfile.TemporaryDirectory(prefix="psdbench-sdpa-gmp-") as tmp:
            src, dst = Path(tmp) / "in.npz", Path(tmp) / "out.npz"
            np.savez(src, A_data=A.data, A_indices=A.indices, A_indptr=A.indptr, A_shape=np.array(A.shape),
                     b=b, c=c, n_lp=np.array(n_lp), psd=np.array(psd, dtype=np.int64), options=np.array(json.dumps(opt)))
            proc = subprocess.Popen([sys.executable, str(child), str(gmp_dir()), str(src), str(dst)],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                    preexec_fn=die_with_parent if sys.platform.startswith("linux") else None)
            try:
                _, err = proc.communicate(timeout=budget.remaining())
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.communicate()
                return Solution(variables={}, status=Status.TIMEOUT, info={"budget_s": _budget_s(budget)},
                                message="SDPA-GMP stopped at the deadline (killed)")
            if proc.returncode != 0 or not dst.is_file():
                last = (err or "").strip().splitlines()[-1:] or [f"exit code {proc.returncode}"]
                raise RuntimeError(f"SDPA-GMP child failed: {last[0]}")
            with np.load(dst, allow_pickle=False) as f:
                x, y, phase = f["x"], f["y"], str(f["phase"])
                iters, solve_time = int(f["iterations"]), float(f["solve_time"])
        return sdpa_solution(d, perm, x, y, phase, iters, {"budget_s": _budget_s(budget), "solve_time_s": solve_time,
                                                           "mpf_precision": int(p["mpfPrecision"])})
