#!/usr/bin/env python
"""Recompute, independently of the report code, the verdicts a referee checked on a default-suite report.

Usage: python benchmarks/scripts/report/verdict_recheck.py REPORT_DIR STORE.sqlite

Prints the GLR ratio finding, winners whose margin is below 1 without saying what they won on, the
Dykstra bound-check count, and results.csv rows carrying a gap the store does not have."""
from __future__ import annotations

import os
import re
import sqlite3
import sys

import numpy as np
import pandas as pd


def main(argv: list[str]) -> int:
    """Print the rechecks of one report folder ``argv[0]`` against its store ``argv[1]``."""
    if len(argv) != 2:
        print("usage: verdict_recheck.py REPORT_DIR STORE.sqlite", file=sys.stderr)
        return 2
    rep, db = argv
    md = open(f"{rep}/report.md").read()
    # 1. GLR finding
    for line in md.splitlines():
        if "GLR" in line and "428" in line:
            print("GLR:", line[:400]); break
    # log-scale recompute of every "per-fold ratio" finding is in the table CSV; check no negative interval printed
    neg = re.findall(r"\[(-\d[\d.e+-]*),", md)
    print("negative interval lower ends printed:", len(neg))
    # 2. winners with margin < 1
    r = pd.read_csv(f"{rep}/winners_per_set.csv") if os.path.exists(f"{rep}/winners_per_set.csv") else None
    bad = 0
    if r is not None:
        for c in [c for c in r.columns if c.startswith("gap")]:
            for v in r[c].dropna().astype(str):
                m = re.search(r"x(0\.\d+)", v)
                if m and float(m.group(1)) < 1 and "won on" not in v:
                    bad += 1; print("  margin<1 unlabeled:", v)
    print("winners with margin < 1 not saying so:", bad)
    # 3. Dykstra
    for line in md.splitlines():
        if "section 4.1 bound is never below" in line:
            print("Dykstra:", line[:500]); break
    # 4. CSV values vs store
    con = sqlite3.connect(db)
    store = pd.read_sql("select cell_key, run_id, status, gap_rel, feasible from results", con)
    csv = pd.read_csv(f"{rep}/results.csv")
    j = csv.merge(store, on=["cell_key", "run_id"], suffixes=("", "_store"))
    extra = j[np.isfinite(pd.to_numeric(j["gap"], errors="coerce")) & j["gap_rel_store"].isna()]
    print("results.csv rows with a gap the store lacks:", len(extra), "of", len(j), "rows;", (j.outcome=="rejected").sum(), "rejected")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
