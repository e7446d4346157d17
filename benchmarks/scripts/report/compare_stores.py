"""Compare two results stores cell by cell: statuses and objectives must agree.

Usage::

    python benchmarks/scripts/report/compare_stores.py A.sqlite B.sqlite [--rtol 1e-9]

Cells are matched on ``(problem, dataset, instance_params, seed, solver, solver_params)``, not on
the cell key (which changes with versions and defaults).  A mismatch is a cell present in one store
only, a different status, or objectives that differ by more than ``rtol * max(1, |a|, |b|)``
(one ``None`` and one number also differ).  Cells that a time budget stopped (status ``timeout``
in either store) are listed but do not count.  Exit status 1 if any counted mismatch, else 0.
Works with both store schemas (v1 table ``results``; v2 view ``results``).
"""

from __future__ import annotations

import argparse
import math
import sqlite3
import sys
from typing import Any

from psdbench.report.frame import canonical_json

KEY = ("problem", "dataset", "instance_params", "seed", "solver", "solver_params")
BUDGET_STOPPED = {"timeout"}


_canon = canonical_json  # JSON text in a canonical form (sorted keys): equal parameters compare equal


def load(path: str) -> dict[tuple, dict[str, Any]]:
    """The latest row per cell of a store, keyed on the cell's content columns."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    con.row_factory = sqlite3.Row
    try:
        rows = con.execute(f"SELECT {', '.join(KEY)}, status, objective, created_at FROM results "
                           "ORDER BY created_at").fetchall()
    finally:
        con.close()
    out: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        key = (r["problem"], r["dataset"], _canon(r["instance_params"]), int(r["seed"]), r["solver"],
               _canon(r["solver_params"]))
        out[key] = {"status": r["status"], "objective": r["objective"]}
    return out


def differs(a: float | None, b: float | None, rtol: float) -> bool:
    """Whether two objectives differ beyond ``rtol`` (relative to ``max(1, |a|, |b|)``)."""
    if a is None or b is None:
        return (a is None) != (b is None)
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) != math.isnan(b)
    return abs(a - b) > rtol * max(1.0, abs(a), abs(b))


def compare(a: dict[tuple, dict], b: dict[tuple, dict], rtol: float) -> tuple[list[str], list[str]]:
    """``(counted, budget_stopped)`` mismatch lines."""
    counted, stopped = [], []
    for key in sorted(set(a) | set(b), key=str):
        ra, rb = a.get(key), b.get(key)
        label = " ".join(str(k) for k in key)
        if ra is None or rb is None:
            counted.append(f"only in {'B' if ra is None else 'A'}: {label}")
            continue
        why = []
        if ra["status"] != rb["status"]:
            why.append(f"status {ra['status']} != {rb['status']}")
        if differs(ra["objective"], rb["objective"], rtol):
            why.append(f"objective {ra['objective']!r} != {rb['objective']!r}")
        if why:
            line = f"{label}: {'; '.join(why)}"
            (stopped if {ra["status"], rb["status"]} & BUDGET_STOPPED else counted).append(line)
    return counted, stopped


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--rtol", type=float, default=1e-9)
    args = ap.parse_args(argv)
    a, b = load(args.a), load(args.b)
    counted, stopped = compare(a, b, args.rtol)
    for line in counted:
        print(f"MISMATCH {line}")
    for line in stopped:
        print(f"budget-stopped (not counted) {line}")
    print(f"{len(a)} cells in A, {len(b)} in B: {len(counted)} mismatches, {len(stopped)} budget-stopped differences")
    return 1 if counted else 0


if __name__ == "__main__":
    sys.exit(main())
