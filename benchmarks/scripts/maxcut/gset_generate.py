"""Time and peak memory of the ``gset-class`` generator, each graph in a fresh process.

For each name: the wall time of :func:`psdbench.families.maxcut.gset.generate`, the stored entries
(nnz = 2 x edges), the bytes of the CSR arrays, and the process's peak RSS (``ru_maxrss``) minus
its RSS before generating (imports excluded).  BLAS on one thread.

    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/scripts/maxcut/gset_generate.py
    OMP_NUM_THREADS=1 PYTHONPATH=src python benchmarks/scripts/maxcut/gset_generate.py toroidal-1000000-pm1 random-1000000-d4
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

DEFAULT = ["toroidal-20000-pm1", "random-7000-p0.0007", "planar-7000", "toroidal-1000000-pm1",
           "toroidal-1000x1000", "random-1000000-d4", "random-1000000-d4-pm1", "planar-1000000"]

CHILD = r"""
import json, resource, sys, time
import numpy as np, scipy.sparse
from psdbench.families.maxcut.gset import generate, parse_name
spec = parse_name(sys.argv[1])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
t = time.perf_counter(); A = generate(spec); dt = time.perf_counter() - t
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"name": sys.argv[1], "n": A.shape[0], "edges": A.nnz // 2, "seconds": dt,
                  "csr_mib": (A.data.nbytes + A.indices.nbytes + A.indptr.nbytes) / 2**20,
                  "peak_rss_growth_mib": peak - before}))
"""


def main(names: list[str]) -> None:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    print(f"{'graph':28} {'n':>9} {'edges':>10} {'seconds':>8} {'CSR MiB':>8} {'peak RSS growth MiB':>20}")
    for name in names:
        out = subprocess.run([sys.executable, "-c", CHILD, name], capture_output=True, text=True, env=env, check=True)
        r = json.loads(out.stdout)
        print(f"{r['name']:28} {r['n']:>9,} {r['edges']:>10,} {r['seconds']:>8.2f} {r['csr_mib']:>8.1f} "
              f"{r['peak_rss_growth_mib']:>20.0f}")


if __name__ == "__main__":
    main(sys.argv[1:] or DEFAULT)
