"""Time to a certified bound gap: ``maxcut-rtr`` and ``maxcut-mixing`` beside LoRADS, one run, one thread.

For each max-cut instance and repeat (interleaved: every solver on an instance, then the next instance,
so that a change of load falls on all of them):

* **LoRADS** (the patched program of ``benchmarks/peers/build.sh``, ``--lorads`` or ``$PSDBENCH_LORADS``)
  at its default settings, then at ``phase2Tol`` 1e-6 and 1e-7, on the SDPA file of the instance's
  ``:sdp`` view (written once, untimed).  Its wall time is measured around the process.  Its point is
  judged the way psdbench judges every point: the rows of its factor normalised (an exactly feasible
  point), the objective recomputed, and the family's certified bound computed from its multipliers
  (``y_maxcut = -y``, the SDP family's sign); its *certified gap* is ``(bound - objective) / bound``.
* **psdbench's solvers** in this process after their untimed warm-up, as the harness runs them:
  ``maxcut-rtr`` with ``gap_tol`` equal to each target, and ``maxcut-mixing`` with ``tol`` 1e-7, 1e-9
  and 1e-11; each point certified by the family's ``evaluate`` (the certificate's seconds printed apart).

Printed: per instance the medians of every configuration (solve seconds, certified gap, the
certificate's seconds), then the table of **time to a certified gap** of each target: the least median
solve time among the configurations of a solver whose median certified gap reaches it ("-" when none
does), as the family page shows it::

    PSDBENCH_DATA=... python benchmarks/scripts/maxcut/rtr_vs_lorads.py --lorads /path/to/lorads \\
        [--repeats 3] [--targets 1e-4 1e-5 1e-6] [--json out.jsonl] [DATASET ...]

Default datasets: ``sdplib/maxG11`` (needs SDPLIB's file in ``$PSDBENCH_DATA/sdplib``), ``sdplib/maxG32``,
``sdplib/maxG51``, ``sdplib/maxG60`` and ``gset-class/toroidal-20000-pm1`` (G81's class and size).
"""

from __future__ import annotations

import os

for _k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_k] = "1"

import argparse  # noqa: E402
import json  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from psdbench.api import Budget, Solution  # noqa: E402
from psdbench.families.maxcut.mixing import MaxcutMixing  # noqa: E402
from psdbench.families.maxcut.problem import MaxcutSdp  # noqa: E402
from psdbench.families.maxcut.rtr.solver import MaxcutRtr  # noqa: E402
from psdbench.families.sdp import sdpa_io  # noqa: E402
from psdbench.families.sdp.solvers.lowrank_peers import read_lorads_solution  # noqa: E402
from psdbench.registry import discover  # noqa: E402

#: seconds any one solve is given (LoRADS's --timeSecLimit, psdbench's budget)
CAP_S = 120.0
DEFAULT = ["sdplib/maxG11", "sdplib/maxG32", "sdplib/maxG51", "sdplib/maxG60", "gset-class/toroidal-20000-pm1"]


def certified(inst, R: np.ndarray, y: np.ndarray) -> tuple[float, float, float]:
    """``(objective, certified gap, certificate seconds)`` of a factor (rows normalised) and a dual."""
    R = R / np.linalg.norm(R, axis=1, keepdims=True)
    t = time.perf_counter()
    ev = inst.evaluate(Solution(variables={"R": R, "y": y}))
    cert = time.perf_counter() - t
    gap = ev.get("bound_gap_rel", float("nan")) if ev.get("dual_bound_certified") == 1.0 else float("nan")
    return inst.objective(Solution(variables={"R": R})), float(gap), cert


def run_lorads(binary: str, sdpa: Path, data, inst, phase2: float | None, tmp: Path) -> dict:
    sol = tmp / "solution.txt"
    argv = [binary, str(sdpa), "--solFile", str(sol), "--timeSecLimit", repr(CAP_S)]
    argv += [] if phase2 is None else ["--phase2Tol", repr(phase2)]
    t = time.perf_counter()
    subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - t
    s = read_lorads_solution(sol, data)
    obj, gap, cert = certified(inst, s["factors"][0], -np.asarray(s["y"]))
    return {"solve_s": wall, "objective": obj, "gap": gap, "cert_s": cert}


def run_ours(solver, inst, params: dict) -> dict:
    t = time.perf_counter()
    sol = solver.solve(inst, Budget.seconds(CAP_S), **params)
    wall = time.perf_counter() - t
    obj, gap, cert = certified(inst, np.asarray(sol.variables["R"]), np.asarray(sol.variables["y"]))
    return {"solve_s": wall, "objective": obj, "gap": gap, "cert_s": cert, "status": str(sol.status.value)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("datasets", nargs="*", default=DEFAULT)
    ap.add_argument("--lorads", default=os.environ.get("PSDBENCH_LORADS", "lorads"))
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--targets", type=float, nargs="+", default=[1e-4, 1e-5, 1e-6])
    ap.add_argument("--json", help="append every run as a JSON line")
    a = ap.parse_args(argv)
    binary = shutil.which(a.lorads) or a.lorads
    reg = discover()
    configs = [("LoRADS", "defaults", None), ("LoRADS", "phase2Tol=1e-6", 1e-6), ("LoRADS", "phase2Tol=1e-7", 1e-7)]
    configs += [("maxcut-rtr", f"gap_tol={t:g}", {"gap_tol": t}) for t in a.targets]
    configs += [("maxcut-mixing", f"tol={t:g}", {"tol": t}) for t in (1e-7, 1e-9, 1e-11)]
    solvers = {"maxcut-rtr": MaxcutRtr(), "maxcut-mixing": MaxcutMixing()}
    print("uptime before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    results: dict[tuple[str, str, str], list[dict]] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        cases = []
        for name in a.datasets:
            inst = MaxcutSdp().build(reg.load_dataset(name), {"hyperplanes": 0}, 0)
            data = reg.load_dataset(name if name.startswith("sdplib/") else f"{name}:sdp").payload["sdp"]
            sdpa = tmp / (name.replace("/", "_") + ".dat-s")
            sdpa_io.write_sdpa(data, sdpa)
            for s in solvers.values():
                s.warm_up(inst)
            cases.append((name, inst, data, sdpa))
        for rep in range(a.repeats):
            for name, inst, data, sdpa in cases:
                for who, label, param in (configs if rep % 2 == 0 else configs[::-1]):
                    r = (run_lorads(binary, sdpa, data, inst, param, tmp) if who == "LoRADS"
                         else run_ours(solvers[who], inst, param))
                    results.setdefault((name, who, label), []).append(r)
                    line = {"repeat": rep, "dataset": name, "solver": who, "config": label, **r}
                    print(json.dumps(line), flush=True)
                    if a.json:
                        with open(a.json, "a") as fh:
                            fh.write(json.dumps(line) + "\n")
    print("uptime after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    med = {k: {f: statistics.median(r[f] for r in v) for f in ("solve_s", "gap", "cert_s")} for k, v in results.items()}
    print("\n| dataset | solver | configuration | solve (s), median | certified gap | certificate (s) |")
    print("|---|---|---|---|---|---|")
    for (name, who, label), m in med.items():
        print(f"| {name} | {who} | {label} | {m['solve_s']:.3g} | {m['gap']:.2e} | {m['cert_s']:.3g} |")
    heads = " | ".join(f"certified {t:g}" for t in a.targets)
    print(f"\n| dataset | solver | LoRADS defaults (s) | {heads} |")
    print("|---|---|---|" + "---|" * len(a.targets))
    for name, *_ in cases:
        base = med[(name, "LoRADS", "defaults")]["solve_s"]
        for who in ("maxcut-rtr", "maxcut-mixing", "LoRADS"):
            cells = []
            for t in a.targets:
                ok = [m["solve_s"] for (nm, w, _), m in med.items() if nm == name and w == who and m["gap"] <= t]
                cells.append(f"{min(ok):.3g}" if ok else "-")
            print(f"| {name} | {who} | {base:.3g} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
