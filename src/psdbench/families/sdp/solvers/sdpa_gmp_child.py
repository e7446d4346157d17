"""Child process of ``sdp-sdpa-gmp``: run SDPA-GMP (``sdpa-multiprecision``) on arrays from a file.

Run as ``python sdpa_gmp_child.py GMP_DIR IN.npz OUT.npz``.  ``GMP_DIR`` is the folder that
``pip install --target`` filled with ``sdpa-multiprecision``; it goes first on ``sys.path`` because
that package's module is called ``sdpap``, like ``sdpa-python``'s, so the two cannot share an
environment.  It writes ``x``, ``y``, the SDPA phase, the
iteration count and SDPA's own solve time to ``OUT.npz``.
"""

from __future__ import annotations

import sys


def main(argv: list[str]) -> int:
    gmp_dir, src, dst = argv
    sys.path.insert(0, gmp_dir)
    import json

    import numpy as np
    import scipy.sparse as sp
    import sdpap

    from psdbench.families.sdp.solvers.sdpa import sdpa_cones  # its sdpap is now the GMP one

    with np.load(src, allow_pickle=False) as f:
        A = sp.csc_matrix((f["A_data"], f["A_indices"], f["A_indptr"]), shape=tuple(f["A_shape"]))
        b, c = f["b"], f["c"]
        n_lp, psd = int(f["n_lp"]), tuple(int(s) for s in f["psd"])
        opt = json.loads(str(f["options"]))
    K, J = sdpa_cones(n_lp, list(psd), A.shape[0])
    x, y, info, timeinfo, sdpainfo = sdpap.solve(A, b.reshape(-1, 1), sp.csc_matrix(c.reshape(-1, 1)), K, J, opt)
    x = np.asarray(x.todense() if sp.issparse(x) else x, dtype=float).ravel()
    y = np.asarray(y.todense() if sp.issparse(y) else y, dtype=float).ravel()
    phase = str(sdpainfo.get("phasevalue", info.get("phasevalue", "")))
    np.savez(dst, x=x, y=y, phase=np.array(phase), iterations=np.array(int(sdpainfo.get("iteration", 0))),
             solve_time=np.array(float(timeinfo.get("sdpa", 0.0))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
