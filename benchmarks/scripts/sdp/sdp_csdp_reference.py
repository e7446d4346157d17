"""A reference from CSDP's point where the family's reference solvers run out of time (thetaG11, thetaG51).

Usage::

    PSDBENCH_DATA=/work/shared/datasets OMP_NUM_THREADS=1 nice -n 10 \\
        python benchmarks/scripts/sdp/sdp_csdp_reference.py thetaG11 thetaG51 [--limit 3600] [--solutions DIR]

Per problem: CSDP (``apt-get install coinor-csdp``) solves the SDPLIB file in a temporary folder
(killed after ``--limit`` seconds; ``--solutions DIR`` reuses ``DIR/<name>.sol`` written earlier,
with ``DIR/<name>.log`` its output), its solution file is read back
(:func:`~psdbench.families.sdp.sdpa_io.read_csdp_solution`), and the point is judged and bounded
as the family's reference does it (:mod:`psdbench.families.sdp.reference`): its six DIMACS
errors, ``T >= tr X`` rounded up, the certified lower bound ``b'y + T min(0, lambda_min(Z))`` and
the exactly feasible upper value.  One JSON line per problem, with CSDP's wall time and the
published value (SDPLIB's sign).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

from psdbench.families.sdp.datasets import SdplibCollection
from psdbench.families.sdp.errors import dimacs_errors
from psdbench.families.sdp.reference import feasible_value, lower_bound, trace_upper
from psdbench.families.sdp.sdpa_io import read_csdp_solution


def certify(name: str, limit: float, solutions: Path | None) -> dict:
    coll = SdplibCollection()
    ds = coll.load(name)
    d = ds.payload["sdp"]
    out: dict = {"name": name, "published_sdplib_sign": ds.payload.get("published")}
    sol = solutions / f"{name}.sol" if solutions else None
    if sol is None or not sol.is_file():
        work = Path(tempfile.mkdtemp(prefix=f"csdp-{name}-"))
        sol = work / f"{name}.sol"
        t0 = time.monotonic()
        try:
            run = subprocess.run([shutil.which("csdp") or "csdp", str(coll.path(name)), str(sol)], cwd=work,
                                 capture_output=True, text=True, timeout=limit)
        except subprocess.TimeoutExpired:
            return {**out, "status": f"CSDP killed after {limit:.0f} s"}
        out.update(csdp_wall_s=round(time.monotonic() - t0, 1), csdp_last=run.stdout.strip().splitlines()[-6:])
    x, y, z = read_csdp_solution(d, sol)
    e = dimacs_errors(d, x, y, z)
    T = trace_upper(d)
    out.update(status="ok", primal=e.primal_obj, dual=e.dual_obj, dimacs=[float(v) for v in e.err], max_err=e.max_err,
               trace_upper=T)
    if T is not None:
        out.update(lower=lower_bound(d, y, T), upper=feasible_value(d, x))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("problems", nargs="+")
    ap.add_argument("--limit", type=float, default=3600.0)
    ap.add_argument("--solutions", type=Path, default=None)
    a = ap.parse_args()
    for name in a.problems:
        print(json.dumps(certify(name, a.limit, a.solutions)), flush=True)


if __name__ == "__main__":
    main()
