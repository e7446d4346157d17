"""How long the read commands take to answer, whole process (start-up and imports included).

Each command is started ``--repeats`` times (after one warm-up run that is not counted) as a new
``psdbench`` process, and the median wall time is reported, as ``farm-bench`` or ``hyperfine``
would; the budget is 0.5 s for ``--version``, ``list``, ``info``, ``results`` and ``compare``, and
1 s for a resumed ``run`` with nothing to do, its report included (left as it is: nothing it shows changed).  A small store is made first (one graph-
classification instance, two solvers, no reference) in a temporary folder.

    python benchmarks/scripts/harness/cli_latency.py                 # the table, median of 5
    python benchmarks/scripts/harness/cli_latency.py --repeats 9 --json out.json

``farm-bench -n 5 -- psdbench list solvers`` times one of them the same way from outside.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Yardsticks timed the same way (a loaded machine inflates every figure: compare with these).
YARDSTICKS = [("python -c pass", ["-c", "pass"]), ("python -c 'import numpy'", ["-c", "import numpy"]),
              ("python -c 'import pandas'", ["-c", "import pandas"])]
#: (label, arguments after ``psdbench``, budget in seconds); ``{db}`` is the small store.
COMMANDS = [
    ("--version", ["--version"], 0.5),
    ("list solvers", ["list", "solvers"], 0.5),
    ("list problems", ["list", "problems"], 0.5),
    ("list", ["list"], 0.5),
    ("info graph-classification", ["info", "graph-classification"], 0.5),
    ("info metric/mcml", ["info", "metric/mcml"], 0.5),
    ("info gdpa-lp", ["info", "gdpa-lp"], 0.5),
    ("results", ["results", "--db", "{db}"], 0.5),
    ("compare", ["compare", "{db}", "{db}"], 0.5),
    ("run (resumed, nothing to do, no report)", ["run", "--grid", "{grid}", "--db", "{db}", "--report", "", "--quiet"],
     1.0),
    # the warm-up run writes the report; the timed runs find it current and leave it as it is
    ("run (resumed, nothing to do, report unchanged)",
     ["run", "--grid", "{grid}", "--db", "{db}", "--report", "{out}", "--quiet"], 1.0),
    ("report (rewritten on request)", ["report", "--db", "{db}", "--out", "{out}"], None),
]

GRID = """\
[run]
seeds = [0]
timeout = 60
reference = false
[[problems]]
name = "graph-classification"
datasets = ["sklearn/breast-cancer"]
params = { n = [30], graph = ["knn"], k = [5] }
[[solvers]]
name = "gdpa-lp"
[[solvers]]
name = "scs"
"""


def psdbench() -> list[str]:
    """The command that starts psdbench (the installed script, else ``python -m psdbench.cli``)."""
    exe = shutil.which("psdbench")
    return [exe] if exe else [sys.executable, "-m", "psdbench.cli"]


def wall_times(argv: list[str], repeats: int) -> list[float]:
    """Wall seconds of ``repeats`` runs of ``argv`` (after one uncounted warm-up); raises if one fails."""
    times = []
    for i in range(repeats + 1):
        t0 = time.perf_counter()
        res = subprocess.run(argv, capture_output=True, text=True)
        dt = time.perf_counter() - t0
        if res.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} exited {res.returncode}: {res.stderr.strip()[-300:]}")
        if i:
            times.append(dt)
    return times


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--json", default=None, help="write the timings here too")
    ap.add_argument("--only", action="append", default=None, help="time only the commands with this label")
    args = ap.parse_args(argv)
    base = psdbench()
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        grid, db, out = d / "grid.toml", d / "r.sqlite", d / "report"
        grid.write_text(GRID)
        subprocess.run([*base, "run", "--grid", str(grid), "--db", str(db), "--report", "", "--quiet", "--jobs", "1"],
                       check=True, capture_output=True, env={**os.environ})
        rows = []
        print(f"{' '.join(base)}: median of {args.repeats} whole-process runs (one warm-up), {os.cpu_count()} cores")
        print("| command | median s | min s | max s | budget s | within |")
        print("|---|---|---|---|---|---|")
        for label, cmd, budget in [(y, c, None) for y, c in YARDSTICKS] + COMMANDS:
            if args.only and label not in args.only:
                continue
            prefix = [sys.executable] if cmd[0] == "-c" else base
            full = [*prefix, *(c.format(db=db, grid=grid, out=out) for c in cmd)]
            t = wall_times(full, args.repeats)
            med = statistics.median(t)
            ok = "" if budget is None else ("yes" if med <= budget else "NO")
            shown = label if cmd[0] == "-c" else f"psdbench {' '.join(cmd)}"
            print(f"| `{shown}` | {med:.3f} | {min(t):.3f} | {max(t):.3f} | "
                  f"{'-' if budget is None else budget} | {ok} |")
            rows.append({"command": label, "argv": cmd, "times_s": t, "median_s": med, "budget_s": budget})
    if args.json:
        Path(args.json).write_text(json.dumps({"repeats": args.repeats, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
