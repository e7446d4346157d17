"""Bytes a results store spends per cell on traces and curves, per family.

Reads the latest row of every cell (the ``results`` view) of a store and prints, per family (the
problem's ``family`` hook), the number of cells and the median / max bytes of the ``trace`` and
``curve`` JSON columns together, and of ``trace`` alone; ``--all`` adds every column of the row.

Usage::

    python benchmarks/scripts/harness/store_bytes.py results.db
    python benchmarks/scripts/harness/store_bytes.py before.db after.db     # one after the other
    python benchmarks/scripts/harness/store_bytes.py --by-solver results.db  # per family and solver

Not an asv benchmark (it measures a store, not code): run it on the store of a suite before and
after a change to what solvers record.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

import pandas as pd

from psdbench.api import problem_family
from psdbench.harness.store.results import RESULT_COLUMNS


def cell_bytes(path: str | Path, all_columns: bool = False) -> pd.DataFrame:
    """One row per cell: ``problem``, ``solver``, ``trace_bytes``, ``curve_bytes`` (``row_bytes``)."""
    if not Path(path).is_file():
        raise SystemExit(f"store_bytes: no store at {path}")
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        row = " + ".join(f"COALESCE(LENGTH(CAST({c} AS BLOB)), 0)" for c in RESULT_COLUMNS)
        sql = ("SELECT problem, solver, COALESCE(LENGTH(CAST(trace AS BLOB)), 0) AS trace_bytes, "
               "COALESCE(LENGTH(CAST(curve AS BLOB)), 0) AS curve_bytes"
               + (f", {row} AS row_bytes" if all_columns else "") + " FROM results")
        return pd.read_sql_query(sql, con)
    finally:
        con.close()


def families(problems: pd.Series) -> pd.Series:
    """The family of each problem name (the name itself for a problem no longer registered)."""
    from psdbench.registry import discover

    reg = discover()
    fam = {}
    for name in problems.unique():
        try:
            fam[name] = problem_family(reg.problem(name))
        except Exception:  # a problem of a plugin not installed here
            fam[name] = name
    return problems.map(fam)


def summary(path: str | Path, all_columns: bool = False, by_solver: bool = False) -> pd.DataFrame:
    """Per family (and solver): cells, median and max bytes of trace + curve, median trace bytes."""
    df = cell_bytes(path, all_columns)
    df = df.assign(family=families(df["problem"]), tc=df["trace_bytes"] + df["curve_bytes"])
    agg = {"cells": ("tc", "size"), "median trace+curve (B)": ("tc", "median"),
           "max trace+curve (B)": ("tc", "max"), "median trace (B)": ("trace_bytes", "median"),
           "total trace+curve (kB)": ("tc", lambda s: s.sum() / 1e3)}
    if all_columns:
        agg["median row (B)"] = ("row_bytes", "median")
    out = df.groupby(["family", "solver"] if by_solver else "family").agg(**agg)
    return out.round(1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stores", nargs="+")
    ap.add_argument("--all", action="store_true", help="also the median bytes of the whole row")
    ap.add_argument("--by-solver", action="store_true", help="one line per family and solver")
    args = ap.parse_args(argv)
    for path in args.stores:
        print(f"{path} ({Path(path).stat().st_size / 1e6:.2f} MB on disk)")
        print(summary(path, args.all, args.by_solver).to_string())
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
