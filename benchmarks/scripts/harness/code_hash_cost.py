"""Cost of the code hashes in cell keys (``psdbench.harness.store.keys.code_hash``), in a fresh process.

Prints, for a typical grid's plugins (``graph-classification``, ``gdpa-lp``, ``scs``) and for every
registered solver and problem, the time of the first call (module files read and hashed) and of a
second call (cached per process).  Each measurement runs in a new interpreter so nothing is cached
in it; the files may be in the OS page cache after the first repetition.

    PYTHONPATH=src python benchmarks/scripts/harness/code_hash_cost.py --repeat 3
"""

from __future__ import annotations

import argparse
import subprocess
import sys

PROBE = """
import time
from psdbench.registry import discover
from psdbench.harness.store import keys
reg = discover()
objs = {which}
t0 = time.perf_counter(); [keys.code_hash(o) for o in objs]; t1 = time.perf_counter()
[keys.code_hash(o) for o in objs]; t2 = time.perf_counter()
print(f"{{len(objs)}} plugins, {{keys._file_hash.cache_info().currsize}} module files hashed: first {{1e3 * (t1 - t0):.1f}} ms, "
      f"cached {{1e6 * (t2 - t1):.0f}} us")
"""
WHICH = {"typical": '[reg.problem("graph-classification"), reg.solver("gdpa-lp"), reg.solver("scs")]',
         "all": "list(reg.solvers.values()) + list(reg.problems.values())"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    for name, which in WHICH.items():
        for _ in range(args.repeat):
            out = subprocess.run([sys.executable, "-c", PROBE.format(which=which)], capture_output=True, text=True)
            print(f"{name}: {out.stdout.strip() or out.stderr.strip()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
