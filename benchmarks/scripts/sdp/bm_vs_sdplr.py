"""``sdp-burer-monteiro`` through the harness beside SDPLR 1.03 itself on theta1-3, thetaG11 and gpp100.

One thread (BLAS, numba and SDPLR's BLAS pinned to 1), interleaved repeats, every number from this one run::

    PSDBENCH_DATA=/work/shared/datasets nice \\
        python benchmarks/scripts/sdp/bm_vs_sdplr.py [--sdplr /work/peers/bin/sdplr] [--repeat 3] \\
        [--problems theta1 theta2 theta3 thetaG11 gpp100] [--timeout 120] [--json out.jsonl]

SDPLR: the program from ``--sdplr``, else ``$PSDBENCH_SDPLR``, else ``sdplr`` on ``PATH``, on the SDPA
file with its shipped parameters (the defaults ``sdplr gen_params`` writes: feasibility 1e-5,
centrality 0.1, penalty factor 2, 4 L-BFGS vectors, no rank reduction), a missing ``soln_in`` (a cold
start) and a ``soln_out`` read back for its ``special totaltime`` (its own CPU seconds, file reading
excluded).  Its wall time (``perf_counter`` around the process) and the child's CPU time
(``RUSAGE_CHILDREN``) are measured here; its printed DIMACS errors are kept.

psdbench: ``psdbench.run`` with a grid of ``sdp/standard`` on ``sdplib/<problem>`` and the solver
``sdp-burer-monteiro`` (default parameters), one job, ``force=True`` into one store of this run, so
the harness times the solve (``wall_time_s``, ``cpu_time_s``: the worker's, after its untimed warm-up),
recomputes the DIMACS errors from the returned ``R`` and ``y`` and verifies them (``status = ok`` and
``feasible``: every error <= 1e-6), and computes the gap to the instance's reference (``gap_rel``; the
reference from the cache shared by stores, solved on first use).  The bound gap is
``(<C, RR'> - bound) / (1 + |<C, RR'>| + |bound|)`` with ``bound`` the family's certified lower
bound from the returned ``y`` (``metric_dual_bound``, :mod:`.lowrank_bound`).

Per repeat the problems are run in order, SDPLR then psdbench on each (then psdbench first on the next
repeat), so a change in the machine's load falls on both.  Printed: one line per run, then per problem
the medians (SDPLR's wall and CPU, psdbench's wall and CPU, their ratios psdbench / SDPLR), whether
every psdbench repeat verified, its gap and bound gap, and ``uptime`` before and after.  The issue's
target: every problem verified in at most 1.5 times SDPLR's time.
"""

from __future__ import annotations

import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_k] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

PROBLEMS = ["theta1", "theta2", "theta3", "thetaG11", "gpp100"]

#: SDPLR 1.03's shipped parameters (the defaults of ``sdplr gen_params``, params.c)
SDPLR_PARAMS = """SDPLR 1.03-beta paramter file (automatically generated)

--> Basic parameters <--

Input type (1=SDPA, 2=SDPLR) : 1
Feasibility tolerance : 1.0e-5
Centrality tolerance : 1.0e-1
Penalty factor increase : 2.0
Rank reduction (1=yes, 0=no) : 0
Time limit (in seconds) : 3600
Print level (0=nothing, 1=all) : 1
Dimension threshold for dense matrices : 10
Density threshold for dense matrices (in [0,1]) : 0.75
Number of LBFGS vectors : 4

--> In-development parameters <--

Rank tolerance (e.g., machine precision) : 2.2204460492503131e-16
Duality gap tolerance : 1.0e-3
Check dual bound (-1, 0, 1) : -1
Dual bound type (1=+/-1, 2=0/1) : 1
"""


def sdplr_path(arg: str | None) -> str:
    path = arg or os.environ.get("PSDBENCH_SDPLR") or shutil.which("sdplr")
    if not path or not Path(path).exists():
        raise SystemExit("SDPLR not found: pass --sdplr PATH, set $PSDBENCH_SDPLR, or put sdplr on PATH")
    return path


def sdpa_file(problem: str) -> Path:
    root = Path(os.environ.get("PSDBENCH_DATA", "")).resolve() / "sdplib"
    for name in (f"{problem}.dat-s", f"{problem}.dat-s.gz"):
        if (root / name).exists():
            return root / name
    raise SystemExit(f"{problem}: no {problem}.dat-s under {root} (set PSDBENCH_DATA)")


def run_sdplr(program: str, problem: str, work: Path) -> dict:
    """One cold SDPLR solve with its shipped parameters: wall and CPU seconds, its totaltime, DIMACS errors."""
    params, sol = work / "sdplr.params", work / f"{problem}.sol"
    params.write_text(SDPLR_PARAMS)
    src = sdpa_file(problem)
    if src.suffix == ".gz":  # SDPLR reads plain text
        import gzip

        plain = work / src.stem
        plain.write_bytes(gzip.decompress(src.read_bytes()))
        src = plain
    sol.unlink(missing_ok=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run([program, str(src), str(params), str(work / "missing-soln-in"), str(sol)],
                          capture_output=True, text=True, cwd=work)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0 or not sol.exists():
        raise RuntimeError(f"sdplr on {problem} exited {proc.returncode}:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}")
    total = float(re.search(r"special totaltime (\S+)", sol.read_text()).group(1))
    m = re.search(r"DIMACS error measures: (.*)", proc.stdout)
    rows = [ln.split() for ln in proc.stdout.splitlines() if re.match(r"\s+\d+\s+\d+\s+\S+\s+\S+\s+\d+\s*$", ln)]
    return {"wall_s": wall, "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
            "totaltime_s": total, "dimacs": m.group(1).strip() if m else "",
            "objective": float(rows[-1][2]) if rows else float("nan"), "minor": int(rows[-1][1]) if rows else -1}


def run_psdbench(problem: str, db: Path, timeout: float) -> dict:
    """One cell of ``sdp-burer-monteiro`` on ``sdplib/<problem>`` through ``psdbench.run``."""
    import psdbench

    grid = {"run": {"name": "bm-vs-sdplr", "seeds": [0], "timeout": timeout},
            "problems": [{"name": "sdp/standard", "datasets": [f"sdplib/{problem}"]}],
            "solvers": [{"name": "sdp-burer-monteiro"}]}
    df = psdbench.run(grid, db=db, jobs=1, force=True)
    r = df.iloc[0]
    obj, bound = float(r["objective"]), float(r.get("metric_dual_bound", float("nan")))
    return {"wall_s": float(r["wall_time_s"]), "cpu_s": float(r["cpu_time_s"]), "status": str(r["status"]),
            "verified": bool(r["status"] == "ok" and bool(r["feasible"])), "objective": obj,
            "gap_rel": None if r["gap_rel"] is None or r["gap_rel"] != r["gap_rel"] else float(r["gap_rel"]),
            "bound": bound, "bound_gap": (obj - bound) / (1 + abs(obj) + abs(bound)),
            "max_err": float(r.get("metric_max_err", float("nan"))), "message": str(r["message"]),
            "minor": int(r.get("metric_solver_minor", -1)), "solver_status": str(r.get("metric_solver_status", ""))}


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sdplr", help="the sdplr program (else $PSDBENCH_SDPLR, else sdplr on PATH)")
    ap.add_argument("--problems", nargs="+", default=PROBLEMS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120.0, help="seconds per psdbench cell")
    ap.add_argument("--json", help="append every run as one JSON line to this file")
    args = ap.parse_args()
    program = sdplr_path(args.sdplr)
    print("uptime before:", uptime(), flush=True)
    runs: dict[str, dict[str, list[dict]]] = {p: {"sdplr": [], "psdbench": []} for p in args.problems}
    with tempfile.TemporaryDirectory(prefix="bm-vs-sdplr-") as tmp:
        work, db = Path(tmp), Path(tmp) / "bm.sqlite"
        for rep in range(args.repeat):
            for problem in args.problems:
                order = ("sdplr", "psdbench") if rep % 2 == 0 else ("psdbench", "sdplr")
                for who in order:
                    out = (run_sdplr(program, problem, work) if who == "sdplr"
                           else run_psdbench(problem, db, args.timeout))
                    runs[problem][who].append(out)
                    line = {"repeat": rep, "problem": problem, "who": who, **out}
                    print(json.dumps(line), flush=True)
                    if args.json:
                        with open(args.json, "a") as fh:
                            fh.write(json.dumps(line) + "\n")
    med = statistics.median
    print("\n| problem | SDPLR wall s | SDPLR CPU s | psdbench solve wall s | psdbench CPU s | ratio wall | ratio CPU "
          "| verified | gap (rel., to the reference) | bound gap | SDPLR DIMACS errors |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for problem in args.problems:
        s, b = runs[problem]["sdplr"], runs[problem]["psdbench"]
        sw, sc = med(r["wall_s"] for r in s), med(r["cpu_s"] for r in s)
        bw, bc = med(r["wall_s"] for r in b), med(r["cpu_s"] for r in b)
        ver = sum(r["verified"] for r in b)
        gaps = [r["gap_rel"] for r in b if r["gap_rel"] is not None]
        gap = f"{med(gaps):.1e}" if gaps else "-"
        print(f"| {problem} | {sw:.3f} | {sc:.3f} | {bw:.3f} | {bc:.3f} | {bw / sw:.2f} | {bc / sc:.2f} "
              f"| {ver}/{len(b)} | {gap} | {med(r['bound_gap'] for r in b):.1e} | {s[-1]['dimacs']} |")
    print("\nuptime after:", uptime())


if __name__ == "__main__":
    main()
