#!/usr/bin/env bash
# The results site's measurement (docs/publish.md, "Measured"): the default suite run on three setups of
# this machine (BLAS 1 thread per worker; 2 threads; Dask nanny workers) and once more at an older
# psdbench commit (its own checkout and venv), each exported, then merged, published as a site, and
# verified in a fresh virtual environment; an edited objective and an edited, re-hashed point are found.
#
#   bash benchmarks/scripts/publish/three_setups.sh WORKDIR [OLD_COMMIT]     (from the repository's root)
#
# Needs PSDBENCH_DATA, this checkout's venv active (psdbench with the dask extra), git and ~30 min of 2 cores.
set -euo pipefail
work=$(realpath -m "${1:?a work folder}"); old=${2:-17c8b3a}
repo=$(pwd); mkdir -p "$work"; cd "$work"
run() { /usr/bin/time -f "%e s wall" psdbench run --db "$1.sqlite" --save-solutions --out '' --quiet "${@:2}"; }
run a                                   # BLAS 1 thread per worker, local workers
run b --blas-threads 2                  # 2 BLAS threads per worker
dask scheduler --host 127.0.0.1 --port 8786 --no-dashboard > sched.log 2>&1 & S=$!
sleep 5; dask worker tcp://127.0.0.1:8786 --nworkers 2 --nthreads 1 --no-dashboard > workers.log 2>&1 & W=$!
sleep 15; run c --backend dask --scheduler tcp://127.0.0.1:8786
kill $W; sleep 3; kill $S
git -C "$repo" worktree add -f --detach "$work/old" "$old"
python -m venv oldvenv && oldvenv/bin/pip install -q -e "$work/old[peers,sdpa,cvxopt,qics]"
( PATH="$work/oldvenv/bin:$PATH" run d )  # the older commit, BLAS 1 thread, local: the history's other build
for x in a b c d; do psdbench export --db $x.sqlite --out ds_$x; done
psdbench merge ds_a ds_b ds_c ds_d --out merged
/usr/bin/time -f "site %e s" psdbench site merged -o site
python -m venv fresh && fresh/bin/pip install -q "$repo"
fresh/bin/psdbench verify merged
rm -rf edited && cp -r merged edited && fresh/bin/python - <<'PY'
import hashlib, io
from pathlib import Path
import numpy as np, pandas as pd
d = Path("edited"); c = pd.read_parquet(d / "cells.parquet")
ok = c.index[(c["status"] == "ok") & c["point"].notna()]
i, j = ok[0], ok[len(ok) // 2]
c.loc[i, "objective"] *= 1 + 1e-4                       # an edited objective
z = dict(np.load(d / c.loc[j, "point"])); k = next(iter(z)); z[k] = z[k] * 1.001
buf = io.BytesIO(); np.savez(buf, **z); h = hashlib.sha256(buf.getvalue()).hexdigest()
(d / "points" / f"{h}.npz").write_bytes(buf.getvalue())  # an edited point, re-hashed
c.loc[j, ["point", "point_sha256"]] = [f"points/{h}.npz", h]
c.to_parquet(d / "cells.parquet", index=False)
PY
fresh/bin/psdbench verify edited || echo "verify exit $? (4: rows that do not reproduce)"
