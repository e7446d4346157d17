"""Read the kernel suite's pytest-benchmark JSON: iteration against its kernels, and each kernel's growth.

    pytest benchmarks/kernels --benchmark-only --benchmark-json out.json
    python benchmarks/scripts/harness/kernel_report.py out.json [--limit 1.3] [--stat median]

Two tables (``benchmarks/kernels/conftest.py`` says what every benchmark records):

1. Per solver and size: one iteration's time, read off the solver's own trace where the benchmark
   recorded it (``iteration_s``: consecutive trace points of the measured iterations, "trace"),
   else the marginal cost between the two capped solves ``(t(cap_hi) - t(cap_lo)) / (cap_hi -
   cap_lo)`` ("diff"); the sum of its kernels,
   ``sum_k calls_k x t(kernel k)`` with ``calls_k`` the kernel's calls per iteration (counted in an
   untimed run) and ``t`` its benchmark at the same size; their ratio (the glue overhead), marked
   ``>`` where it exceeds ``--limit``; and, where the benchmark recorded it (``in_place_*``, see
   ``conftest.in_place``), the same iteration timed with its kernels where the solver calls them:
   the kernels' share of it and the ratio iteration / kernels in place, which is the glue alone
   (a replayed kernel runs on warm caches, so the replays' sum can be below the same calls in place).
2. Per kernel: the least-squares slope of log(time) over log(size), and over log(nnz) for the
   sparse kernels, with the span of sizes and the exponent the code expects beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np


def load(path: Path, stat: str = "median") -> list[dict]:
    """One dict per benchmark: its ``extra_info`` plus ``t`` (seconds, the chosen statistic) and ``name``."""
    data = json.loads(path.read_text())
    out = []
    for b in data["benchmarks"]:
        row = dict(b.get("extra_info", {}))
        if "family" not in row:
            continue
        # a replay of several recorded calls (conftest.run_calls) counts per call
        row["t"], row["name"] = float(b["stats"][stat]) / row.get("calls_per_round", 1), b["name"]
        out.append(row)
    return out


def slope(x: list[float], t: list[float]) -> float:
    """Least-squares slope of log t over log x."""
    return float(np.polyfit(np.log(x), np.log(t), 1)[0])


def iteration_table(rows: list[dict], limit: float, stat: str = "median") -> list[str]:
    kernels = {(r["family"], r["kernel"], r["size"]): r["t"] for r in rows if r.get("kernel")}
    solves = defaultdict(dict)
    for r in rows:
        if r.get("role") == "solve":
            solves[(r["solver"], r["family"], r["size"])][r["iterations"]] = r
    families = defaultdict(set)
    for solver, fam, _ in solves:
        families[solver].add(fam)
    lines = [f"{'solver':24s} {'size':>6s} {'iteration':>11s} {'from':>5s} {'kernels':>11s} {'ratio':>7s} "
             f"{'in place: iteration':>20s} {'kernels':>10s} {'ratio':>6s}  kernel share"]
    for (solver, fam, size), caps in sorted(solves.items()):
        label = solver if len(families[solver]) == 1 else f"{solver} ({fam})"  # one solver timed on two paths
        if len(caps) < 2:
            continue
        lo, hi = min(caps), max(caps)
        own = caps[hi].get("iteration_min_s" if stat == "min" else "iteration_s")
        it = own if own is not None else (caps[hi]["t"] - caps[lo]["t"]) / (hi - lo)
        how = "trace" if own is not None else "diff"
        calls = caps[hi].get("calls", {})
        parts = {}
        for key, n in calls.items():
            fam, name = key.split(":", 1)
            t = kernels.get((fam, name, size))
            parts[name] = np.nan if t is None else n * t
        total = float(np.nansum(list(parts.values())))
        ratio = it / total if total > 0 else np.inf
        share = ", ".join(f"{k} {v / it:.0%}" for k, v in sorted(parts.items(), key=lambda kv: -np.nan_to_num(kv[1])))
        mark = ">" if ratio > limit else " "
        ip_it, ip_k = caps[hi].get("in_place_iteration_s"), caps[hi].get("in_place_kernels_s")
        inplace = (f"{1e3 * ip_it:18.3f}ms {1e3 * ip_k:8.3f}ms {ip_it / ip_k:6.2f}" if ip_it and ip_k
                   else f"{'-':>20s} {'-':>10s} {'-':>6s}")
        lines.append(f"{label:24s} {size:6d} {1e3 * it:9.3f}ms {how:>5s} {1e3 * total:9.3f}ms {ratio:6.2f}{mark} "
                     f"{inplace}  {share}")
    return lines


def slope_table(rows: list[dict]) -> list[str]:
    series = defaultdict(list)
    for r in rows:
        if r.get("kernel"):
            series[(r["family"], r["kernel"])].append(r)
    lines = [f"{'kernel':36s} {'sizes':>11s} {'span':>6s} {'slope(size)':>12s} {'slope(nnz)':>11s} {'expected':>9s}  "
             "complexity"]
    for (fam, name), rs in sorted(series.items()):
        rs = sorted(rs, key=lambda r: r["size"])
        if len(rs) < 2:
            continue
        sizes, ts = [r["size"] for r in rs], [r["t"] for r in rs]
        s_size = slope(sizes, ts)
        s_nnz = slope([r["nnz"] for r in rs], ts) if rs[0].get("sparse") and "nnz" in rs[0] else np.nan
        exp = rs[0].get("expected_slope", np.nan)
        got = s_nnz if rs[0].get("sparse") else s_size
        mark = ">" if np.isfinite(exp) and got > exp + 0.2 else " "
        lines.append(f"{fam + ':' + name:36s} {f'{sizes[0]}-{sizes[-1]}':>11s} {sizes[-1] / sizes[0]:5.0f}x "
                     f"{s_size:12.2f} {s_nnz:11.2f} {exp:8.1f}{mark}  {rs[0].get('expected', '')}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("json", type=Path, nargs="+", help="pytest-benchmark JSON file(s) (--benchmark-json)")
    ap.add_argument("--limit", type=float, default=1.3, help="mark iterations costing more than this x their kernels")
    ap.add_argument("--stat", default="median", choices=["median", "min", "mean"])
    args = ap.parse_args(argv)
    rows = [r for p in args.json for r in load(p, args.stat)]
    print(f"# iteration against the sum of its kernels ({args.stat}; '>' above {args.limit}x)")
    print("\n".join(iteration_table(rows, args.limit, args.stat)))
    print("\n# log-log slope of each kernel's time over size ('>' more than 0.2 above the expected exponent;"
          " sparse kernels are compared on nnz)")
    print("\n".join(slope_table(rows)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
