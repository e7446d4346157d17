"""asv benchmark: the harness's overhead per trivial cell, in milliseconds.

``track_overhead_ms_per_cell`` runs ``benchmarks/scripts/harness/harness_overhead.py``'s measure (a fresh run of
100 ``example-harmonic`` cells, then the fully resumed rerun; ``(run - resumed - solver time) /
cells``) with ``--jobs`` 1 and 2.  Run from the repository root::

    asv run --quick --python=same -b HarnessOverhead
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path

_SCRIPT = Path(__file__).resolve().parent / "scripts" / "harness" / "harness_overhead.py"


def _measure_module():
    spec = importlib.util.spec_from_file_location("psdbench_harness_overhead", _SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class HarnessOverhead:
    params = [[1, 2]]
    param_names = ["jobs"]
    timeout = 900
    number = 1
    repeat = 1
    unit = "ms per cell"
    CELLS = 100

    def track_overhead_ms_per_cell(self, jobs):
        with tempfile.TemporaryDirectory(prefix="psdbench-asv-overhead-") as tmp:
            return _measure_module().measure(self.CELLS, jobs, Path(tmp))["overhead_ms_per_cell"]
