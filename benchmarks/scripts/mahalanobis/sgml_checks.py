"""The SGML paper's checks on a results store of the SGML suites (objective and/or classification protocol).

Usage::

    python benchmarks/scripts/mahalanobis/sgml_checks.py --db sgml-objective.sqlite --db sgml-classification.sqlite

Prints, from whatever the stores hold:

* feasibility of every ``sgml`` / ``pgml`` row (verified, balanced);
* objective protocol: per objective, the number of datasets where ``sgml``'s mean verified objective
  is better than ``pgml``'s (strictly; ties listed), and the number where ``sgml / pd-cone`` is
  within the paper's SGML / PD-cone ratio (Tables 4-5); each comparison averages over the folds
  that both solvers have (a fold held by several stores counts once);
* classification protocol: per objective, the mean k-NN accuracy over the datasets present next
  to the paper's SGML average of Tables 6-7 (over its 15 datasets) and over the same datasets.
"""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np
import pandas as pd

from psdbench.families.mahalanobis.paper_values import is_better, load

PAPER = load()  # the SGML paper's Tables 4-7 (families/mahalanobis/paper_values/*.csv)
from psdbench.harness.store.db import Store


def load(paths: list[str]) -> pd.DataFrame:
    frames = [Store(p).results_frame() for p in paths]
    df = pd.concat(frames, ignore_index=True)
    df = df[df["problem"].astype(str).str.startswith("metric/")].copy()
    df["objective_name"] = df["problem"].str.split("/").str[1].str.upper()
    df["protocol"] = df["instance_params"].map(lambda p: p.get("protocol", "objective"))
    # the same fold may sit in several stores (e.g. a first-10-folds run and an all-folds run):
    # count it once; max_folds only limits the expansion, it does not change the instance
    df["_instance"] = df["instance_params"].map(
        lambda p: json.dumps({k: v for k, v in p.items() if k != "max_folds"}, sort_keys=True, default=str))
    df["_solver"] = df["solver_params"].map(lambda p: json.dumps(p, sort_keys=True, default=str))
    df = df.drop_duplicates(subset=["problem", "dataset", "_instance", "seed", "solver", "_solver"], keep="last")
    return df.drop(columns=["_solver"])


def feasibility(df: pd.DataFrame) -> None:
    g = df[df["solver"].isin(["sgml", "pgml"])]
    ran = g[g["status"].isin(["ok", "max_iter", "infeasible"])]
    print(f"sgml/pgml rows with a returned point: {len(ran)}; verified: {int((ran['feasible'] == 1).sum())}; "
          f"balanced: {int((ran['metric_verify_balanced'] == 1).sum())}; statuses: {g['status'].value_counts().to_dict()}")


def objective_checks(df: pd.DataFrame) -> None:
    ok = df[(df["protocol"] == "objective") & (df["feasible"] == 1) & df["objective"].notna()]
    for obj, sub in ok.groupby("objective_name"):
        sense = "max" if obj == "DEML" else "min"
        per_fold = sub.pivot_table(index=["dataset", "_instance", "seed"], columns="solver", values="objective",
                                   aggfunc="first")

        def means(a: str, b: str) -> pd.DataFrame:
            """Per-dataset means of solvers a and b over the folds both of them have."""
            if not {a, b} <= set(per_fold.columns):
                return pd.DataFrame(columns=[a, b])
            return per_fold[[a, b]].dropna().groupby(level="dataset").mean()

        both = means("sgml", "pgml")
        if both.empty:
            continue
        better = [d for d, r in both.iterrows() if is_better(r["sgml"], r["pgml"], sense)]
        ties = [d for d, r in both.iterrows() if np.isclose(r["sgml"], r["pgml"], rtol=1e-9, atol=1e-12)]
        line = f"{obj}: sgml better than pgml on {len(better)}/{len(both)} datasets"
        if ties:
            line += f" (ties: {', '.join(ties)})"
        ratio = means("sgml", "pd-cone")
        if not ratio.empty:
            within, total = 0, 0
            for d, r in ratio.iterrows():
                pd_name = PAPER.paper_dataset(d)
                ps, pp = PAPER.objective_value(obj, "SGML", pd_name), PAPER.objective_value(obj, "PD-cone", pd_name)
                if not (np.isfinite(ps) and np.isfinite(pp)) or r["pd-cone"] == 0:
                    continue
                total += 1
                ours, theirs = r["sgml"] / r["pd-cone"], ps / pp
                within += bool(ours >= theirs) if sense == "max" else bool(ours <= theirs)
            line += f"; sgml/pd-cone within the paper's SGML/PD-cone ratio on {within}/{total}"
        print(line)


def classification_checks(df: pd.DataFrame) -> None:
    if "metric_accuracy" not in df.columns:  # a store of the objective protocol only
        return
    ok = df[(df["protocol"] == "classification") & df["metric_accuracy"].notna()
            & df["status"].isin(["ok", "max_iter"]) & (df["feasible"] == 1)]
    for (obj, solver), sub in ok.groupby(["objective_name", "solver"]):
        acc = sub.groupby("dataset")["metric_accuracy"].mean() * 100
        names = [PAPER.paper_dataset(d) for d in acc.index]
        paper_same = [PAPER.accuracy_value(obj, "SGML", n, k_nn=10) for n in names]
        seeds = sub.groupby("dataset")["seed"].nunique()
        paper_mean = float(np.nanmean(paper_same))
        print(f"{obj} {solver}: mean 10-NN accuracy {acc.mean():.2f} % over {len(acc)} datasets "
              f"({int(seeds.min())}-{int(seeds.max())} seeds each); paper SGML over the same datasets "
              f"{paper_mean:.2f} % (difference {acc.mean() - paper_mean:+.2f} points)")
        # the spread over seeds of the average over datasets, on the seeds every dataset has
        per_seed = sub.pivot_table(index="seed", columns="dataset", values="metric_accuracy", aggfunc="mean")
        per_seed = per_seed.dropna() * 100
        if len(per_seed) >= 2:
            avg = per_seed.mean(axis=1)
            print(f"    average over the {per_seed.shape[1]} datasets per seed, {len(avg)} complete seeds: "
                  f"min {avg.min():.2f}, max {avg.max():.2f}, standard deviation {avg.std(ddof=1):.2f} points")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", action="append", required=True)
    args = ap.parse_args(argv)
    df = load(args.db)
    feasibility(df)
    objective_checks(df)
    classification_checks(df)
    return 0


if __name__ == "__main__":
    sys.exit(main())
