#!/usr/bin/env python
"""Recompute, independently of the report code, the verdicts a referee checked on a default-suite report.

Usage: python benchmarks/scripts/verdict_recheck.py REPORT_DIR STORE.sqlite

Prints the GLR ratio finding, winners whose margin is below 1 without saying what they won on, the
Dykstra bound-check count, and results.csv rows carrying a gap the store does not have."""
import sys, json, sqlite3, math, re
import numpy as np, pandas as pd
from scipy import stats
rep, db = sys.argv[1], sys.argv[2]
md = open(f"{rep}/report.md").read()
# 1. GLR finding
for line in md.splitlines():
    if "GLR" in line and "428" in line:
        print("GLR:", line[:400]); break
# log-scale recompute of every "per-fold ratio" finding is in the table CSV; check no negative interval printed
neg = re.findall(r"\[(-\d[\d.e+-]*),", md)
print("negative interval lower ends printed:", len(neg))
# 2. winners with margin < 1
r = pd.read_csv(f"{rep}/winners_per_set.csv") if __import__("os").path.exists(f"{rep}/winners_per_set.csv") else None
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
