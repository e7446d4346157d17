"""Seconds per sweep of maxcut-mixing's kernel against the paper's C code (locuslab/mixing), one run.

Both run the mixing method (Wang, Chang and Kolter 2017, Algorithm 1) on the same SDPLIB max-cut
graph, at the same rank, from the same start (the C code's: ``srand48(0)``, ``drand48() * 2 - 1`` per
entry, rows normalized, replayed here bit for bit), for the same number of sweeps ``S``, ``--repeats``
times, interleaved (the order rotates each repeat).  The C code's seconds are its own printed
per-sweep clock (``time`` column: CLOCK_MONOTONIC since the first sweep, file reading excluded, its
per-sweep ``printf`` included); psdbench's are :func:`psdbench.families.maxcut.mixing.mixing`'s own
loop as the solver runs it (a :class:`TraceRecorder` and a deadline check per sweep), stamped after
each sweep, compiled and warmed up first.  A run's seconds per sweep are ``(t_S - t_1) / (S - 1)``
(sweep 1 and the set-up excluded); also shown: the median of its single sweeps, and CPU seconds per
sweep (C: the CPU time of a run of ``S`` sweeps minus that of a run of one, over ``S - 1``; psdbench:
this process's CPU clock at the same stamps), less sensitive to a loaded machine than the wall
clock.  Prints, per graph, the median over the repeats of each, its ratio to C, and the objective
``<C, V V^T>`` each reached after ``S`` sweeps (C: minus its printed ``fval``; SDPLIB's offset is 0).
``--also FILE`` times another copy of ``maxcut/mixing.py`` in the same run (before / after).  BLAS
and numba on one thread.  Timings on a shared machine: run it niced, read the ratios of one
invocation.

    nice -n 10 env PSDBENCH_DATA=../shared/datasets PYTHONPATH=src \\
        python benchmarks/scripts/maxcut/mixing_vs_c.py --mixing /work/peers/bin/mixing
    ... mixing_vs_c.py maxG32 maxG60 maxG51 /work/peers/data/maxG11.dat-s --sweeps 500 --repeats 7
    ... mixing_vs_c.py --rank 64 --also /tmp/mixing_before.py

The C binary: ``--mixing``, else ``$PSDBENCH_MIXING_C``, else ``mixing`` on PATH.  Its input is the
graph's edge list (``n m`` then ``i j w``, 1-based, ``i < j``, ``w_ij = -4 c_ij``), written to a
temporary folder (the binary writes its ``.sol`` and ``.rounding`` beside its input).
"""

from __future__ import annotations

import os

for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ[_v] = "1"

import argparse  # noqa: E402
import importlib.util  # noqa: E402
import re  # noqa: E402
import resource  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402
import scipy.sparse as sp  # noqa: E402

ITER = re.compile(r"^iter\s+(\d+)\s+time\s+(\S+)\s+fval\s+(\S+)\s+delta\s+(\S+)", re.M)


def drand48_start(n: int, k: int, seed: int = 0) -> np.ndarray:
    """The C code's start: ``srand48(seed)``, then per row ``x_t = drand48() * 2 - 1`` and
    ``x *= 1 / sqrt(ddot(x, x))`` with its ddot's summation order (blocks of five), so bit for bit."""
    a, c, mask = 0x5DEECE66D, 0xB, (1 << 48) - 1
    x = (seed << 16) | 0x330E
    out = np.empty(n * k)
    for p in range(n * k):  # glibc's drand48: X <- a X + c mod 2^48, returns X / 2^48 exactly
        x = (a * x + c) & mask
        out[p] = x
    V = (out / 2.0**48) * 2.0 - 1.0
    V = V.reshape(n, k)
    s = np.zeros(n)
    t = 0
    while t < k - 4:  # s += x0 x0 + x1 x1 + x2 x2 + x3 x3 + x4 x4, left to right
        blk = V[:, t] * V[:, t]
        for u in range(1, 5):
            blk = blk + V[:, t + u] * V[:, t + u]
        s = s + blk
        t += 5
    for u in range(t, k):
        s = s + V[:, u] * V[:, u]
    return np.ascontiguousarray(V * (1.0 / np.sqrt(s))[:, None])


def write_edges(W: sp.spmatrix, path: Path) -> None:
    U = sp.triu(sp.csr_matrix(W), 1).tocoo()
    order = np.lexsort((U.col, U.row))
    with open(path, "w") as f:
        f.write(f"{W.shape[0]} {U.nnz}\n")
        for i, j, w in zip(U.row[order], U.col[order], U.data[order]):
            f.write(f"{i + 1} {j + 1} {w:.17g}\n")


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def run_c(binary: str, edges: Path, k: int, sweeps: int) -> dict[str, float]:
    """The C code: seconds per sweep by its clock, its median single sweep, CPU seconds per sweep
    (a run of ``sweeps`` minus a run of one, over ``sweeps - 1``), the objective at sweeps 0 and S."""

    def once(s: int) -> tuple[str, float]:
        cpu = _children_cpu()
        out = subprocess.run([binary, "-s", "maxcut", "-k", str(k), "-e", "-1", "-t", str(s), str(edges)],
                             capture_output=True, text=True, check=True).stdout
        return out, _children_cpu() - cpu

    out, cpu = once(sweeps)
    _, cpu1 = once(1)
    rows = [(int(m[1]), float(m[2]), float(m[3])) for m in ITER.finditer(out)]
    if len(rows) != sweeps + 1 or rows[-1][0] != sweeps:
        raise RuntimeError(f"{binary}: expected {sweeps} sweeps, read {len(rows) - 1}")
    t = np.array([r[1] for r in rows[1:]])
    return {"wall": (t[-1] - t[0]) / (sweeps - 1), "median": float(np.median(np.diff(t))),
            "cpu": (cpu - cpu1) / (sweeps - 1), "start": -rows[0][2], "end": -rows[-1][2]}


def run_mixing(mixing, C: sp.csr_matrix, k: int, sweeps: int, V0: np.ndarray) -> dict[str, float]:
    """``mixing`` as the solver runs it (a trace recorder, a deadline): the same numbers as :func:`run_c`,
    from stamps taken after each sweep (wall and CPU clocks of this process)."""
    from psdbench.api import Budget, TraceRecorder

    class Stamped(TraceRecorder):
        def __init__(self, budget):
            super().__init__(budget)
            self.stamps: list[tuple[float, float]] = []

        def add(self, variables=None, **values):
            super().add(variables, **values)
            self.stamps.append((time.perf_counter(), time.process_time()))

    budget = Budget.seconds(3600.0)
    rec = Stamped(budget)
    V, done, _ = mixing(C, k, 0, tol=-1.0, max_sweeps=sweeps, budget=budget, trace=rec, V0=V0)
    if done != sweeps:
        raise RuntimeError(f"stopped after {done} sweeps")
    t, cpu = np.array(rec.stamps).T
    return {"wall": (t[-1] - t[0]) / (sweeps - 1), "median": float(np.median(np.diff(t))),
            "cpu": (cpu[-1] - cpu[0]) / (sweeps - 1), "start": float(np.sum(V0 * (C @ V0))),
            "end": float(np.sum(V * (C @ V)))}


def load_mixing(path: str):
    """``mixing`` of another copy of ``maxcut/mixing.py`` (e.g. ``git show REV:...`` saved to a file)."""
    name = "psdbench.families.maxcut._mixing_other"
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # importable by name: numba's on-disk cache rebuilds its environment so
    spec.loader.exec_module(mod)
    return mod.mixing


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("graphs", nargs="*", default=["maxG32", "maxG60"],
                    help="SDPLIB max-cut names (sdplib/NAME) or paths of SDPA max-cut files")
    ap.add_argument("--mixing", default=os.environ.get("PSDBENCH_MIXING_C", "mixing"), help="the C binary")
    ap.add_argument("--sweeps", type=int, default=300)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--rank", type=int, default=0, help="0: maxcut-mixing's default rank")
    ap.add_argument("--also", metavar="FILE", help="time another copy of maxcut/mixing.py too (e.g. the last "
                    "commit's: git show HEAD:src/psdbench/families/maxcut/mixing.py > /tmp/old.py)")
    a = ap.parse_args()
    binary = shutil.which(a.mixing) or a.mixing
    if not Path(binary).is_file():
        raise SystemExit(f"no C binary {a.mixing!r}: pass --mixing PATH or set PSDBENCH_MIXING_C")

    from psdbench.api import Dataset
    from psdbench.families.maxcut.mixing import MaxcutMixing, default_rank, mixing
    from psdbench.families.sdp.sdpa_io import read_sdpa
    from psdbench.registry import discover

    reg = discover()
    problem = reg.problem("maxcut/sdp")
    MaxcutMixing().warm_up(None)  # compile (numba caches it on disk)
    impls = {"psdbench": mixing}
    if a.also:
        impls[Path(a.also).stem] = load_mixing(a.also)
    print(f"{a.sweeps} sweeps, {a.repeats} interleaved repeats, one thread; C binary {binary}; "
          f"load {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as tmp:
        for name in a.graphs:
            if Path(name).is_file():
                ds = Dataset(name=Path(name).name, source=name, label_coding="", meta={},
                             payload={"sdp": read_sdpa(Path(name), name=Path(name).name)})
                name = Path(name).name.split(".")[0]
            else:
                ds = reg.load_dataset(f"sdplib/{name}")
            inst = problem.build(ds, {}, 0)
            C = sp.csr_matrix(inst.C)
            n = C.shape[0]
            k = a.rank or default_rank(n, int(MaxcutMixing.default_params["max_rank"]))
            edges = Path(tmp) / f"{name}.edges"
            write_edges(inst.W, edges)
            V0 = drand48_start(n, k)
            runners = {"C": lambda: run_c(binary, edges, k, a.sweeps)}
            for label, f in impls.items():
                f(C, k, 0, tol=-1.0, max_sweeps=3, V0=V0)  # compile / warm the code path
                runners[label] = lambda f=f: run_mixing(f, C, k, a.sweeps, V0)
            runs: dict[str, list[dict[str, float]]] = {label: [] for label in runners}
            order = list(runners)
            for r in range(a.repeats):  # interleaved: the order rotates each repeat
                for label in order[r % len(order):] + order[:r % len(order)]:
                    runs[label].append(runners[label]())
            med = {label: {q: float(np.median([x[q] for x in rs])) for q in ("wall", "median", "cpu")}
                   for label, rs in runs.items()}
            print(f"\n{name}: n = {n}, edges = {inst.W.nnz // 2}, rank k = {k}; ms per sweep, median of "
                  f"{a.repeats} (ratio to C)")
            for label, m in med.items():
                c = med["C"]
                print(f"  {label:>12}: {m['wall'] * 1e3:8.4f} ({m['wall'] / c['wall']:5.3f})   median single sweep "
                      f"{m['median'] * 1e3:8.4f} ({m['median'] / c['median']:5.3f})   CPU {m['cpu'] * 1e3:8.4f} "
                      f"({m['cpu'] / c['cpu']:5.3f})   objective after {a.sweeps}: {runs[label][-1]['end']:.10f}")
            for label, rs in runs.items():
                print(f"  {label:>12} per repeat: " + " ".join(f"{x['wall'] * 1e3:.3f}" for x in rs))
            c0, p0 = runs["C"][0]["start"], runs["psdbench"][0]["start"]
            c1, p1 = runs["C"][-1]["end"], runs["psdbench"][-1]["end"]
            same = abs(c0 - p0) <= 1e-12 * max(1.0, abs(c0))
            print(f"  start {'the same' if same else 'DIFFERENT'} (objective {p0:.12f}, the C code's {c0:.12f}); "
                  f"after {a.sweeps} sweeps psdbench - C = {p1 - c1:.2e} ({abs(p1 - c1) / abs(c1):.1e} relative)")
    print(f"\nload {os.getloadavg()[0]:.2f} at the end")


if __name__ == "__main__":
    main()
