"""Report section of the SDP family, in the form of Mittelmann's benchmark pages.

Tables (all from the tidy frame; DIMACS errors are the instance's own ``metric_err1..6``):

* **cells**: per problem and solver: status, time, iterations, objective, its relative difference
  to the reference, the largest DIMACS error and Mittelmann's flag (``a``: > 1e-4, ``f``: > 1e-2,
  counted as failed).
* **shifted geometric mean**: per solver, ``exp(mean(log(t + 10))) - 10`` over the problems, a
  failure (not verified at the problem's ``tol``, or no point) charged at the time limit (the
  report option ``time_limit``, else the budget the native adapters record, else the largest
  ``timeout`` cell's time, else the largest time seen); problems where no solver returned a point
  (the infeasible ones) are left out, scaled so the best solver is 1; "solved %" beside it at the grid's tolerance and by the
  SCS benchmark page's rule (every error under 10x its 1e-4 target).
* **progress** and **runs** (:mod:`.progress`): the largest error each solver reported against time
  and iterations, and per cell its own status word, iterations, time per iteration and log.
* **accuracy**: per solver, median and 90th percentile of its largest DIMACS error, and its
  ``a`` / ``f`` counts.
* **verified by**: per problem, the solvers whose largest DIMACS error is within the problem's
  ``tol``, fewest first.
* **published vs reference**: the SDPLIB value (in this problem's sign) beside the reference, and
  whether they agree to the published value's printed digits.
* **certificates**: infeasibility certificates solvers returned, and whether each holds from the data.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from psdbench.report.blocks import Table

from .progress import progress_chart, runs_table

SHIFT = 10.0
#: the SCS benchmark page's acceptance: every relative residual under 10x its 1e-4 target
SCS_RULE = 1e-3
#: the SCS benchmark page's ordering by shifted geometric mean at a 1e-4 target
SCS_PAGE_ORDER = ("sdp-sdpa", "sdp-cvxopt", "sdp-clarabel", "sdp-scs")


def _fmt(x: Any, spec: str = ".4g") -> str:
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "-"
    return "-" if not math.isfinite(v) else format(v, spec)


def _flag(e: Any) -> str:
    try:
        v = float(e)
    except (TypeError, ValueError):
        return "f"
    if not math.isfinite(v):
        return "f"
    return "f" if v > 1e-2 else ("a" if v > 1e-4 else "")


def _col(df: pd.DataFrame, name: str) -> pd.Series:
    return df[name] if name in df.columns else pd.Series(np.nan, index=df.index)


def _solved(df: pd.DataFrame) -> pd.Series:
    tol = pd.to_numeric(_col(df, "p_tol"), errors="coerce").fillna(1e-6)
    err = pd.to_numeric(_col(df, "metric_max_err"), errors="coerce")
    return (err <= tol) & df["status"].isin(["ok", "max_iter", "timeout"])


def shifted_geomean(times: pd.Series, shift: float = SHIFT) -> float:
    """``exp(mean(log(t + shift))) - shift``."""
    t = pd.to_numeric(times, errors="coerce").dropna()
    return float(np.exp(np.mean(np.log(t + shift))) - shift) if len(t) else float("nan")


def time_limit(df: pd.DataFrame, options: Any) -> float:
    """The time failures are charged at (see the module docstring)."""
    if options and options.get("time_limit"):
        return float(options["time_limit"])
    given = pd.to_numeric(_col(df, "metric_solver_budget_s"), errors="coerce").dropna()
    if len(given):
        return float(given.max())
    to = pd.to_numeric(df.loc[df["status"] == "timeout", "wall_time_s"], errors="coerce").dropna()
    if len(to):
        return float(to.max())
    return float(pd.to_numeric(df["wall_time_s"], errors="coerce").max())


def sgm_table(df: pd.DataFrame, limit: float) -> pd.DataFrame:
    """Scaled shifted geometric means and solved % per solver, under two rules.

    ``tol``: solved when the largest DIMACS error is at most the problem's ``tol``; ``scs``: the
    SCS benchmark page's rule at its 1e-4 target, every error under 10x the target (1e-3), whatever
    the status (a point that fails ``tol`` still counts when it meets 1e-3).
    """
    t = pd.to_numeric(df["wall_time_s"], errors="coerce")
    err = pd.to_numeric(_col(df, "metric_max_err"), errors="coerce")
    d = df.assign(_solved=_solved(df), _scs=(err <= SCS_RULE) & df["status"].isin(
        ["ok", "max_iter", "timeout", "infeasible"]))
    d["_t"] = np.where(d["_solved"], t, limit)
    d["_t_scs"] = np.where(d["_scs"], t, limit)
    rows = []
    for label, g in d.groupby("solver_label"):
        rows.append({"solver": label, "sgm_s": shifted_geomean(g["_t"]), "sgm_scs_s": shifted_geomean(g["_t_scs"]),
                     "problems": len(g), "solved_pct": 100.0 * g["_solved"].mean(),
                     "solved_scs_rule_pct": 100.0 * g["_scs"].mean()})
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    for col, sc in (("sgm_s", "scaled"), ("sgm_scs_s", "scaled_scs")):
        best = out[col].min()
        out[sc] = out[col] / best if best > 0 else np.nan
    return out.sort_values("sgm_s").reset_index(drop=True)


def _digits_agree(ref: float, pub: float, digits: float) -> bool:
    """``ref`` rounds to ``pub`` at ``digits`` significant digits."""
    if not (math.isfinite(ref) and math.isfinite(pub)) or not digits or digits != digits:
        return False
    if pub == 0:
        return abs(ref) < 10 ** (-int(digits))
    e = math.floor(math.log10(abs(pub)))
    half_ulp = 0.5 * 10 ** (e - int(digits) + 1)
    return abs(ref - pub) <= half_ulp * (1 + 1e-9)


class MittelmannTables:
    """The SDP family's section: Mittelmann-style tables, shifted geometric means, accuracy."""

    name = "sdp-mittelmann"
    title = "General SDPs: SDPLIB-style tables (DIMACS errors, shifted geometric means)"
    family = "sdp"
    order = 100

    def render(self, context: Any) -> list[Any]:
        df = context.frame
        if df is None or df.empty:
            return []
        df = df[df["status"] != "skipped"].copy()
        if df.empty:
            return []
        df["_ref"] = pd.to_numeric(_col(df, "instance_reference"), errors="coerce")
        df["_err"] = pd.to_numeric(_col(df, "metric_max_err"), errors="coerce")
        blocks: list[Any] = [self._cells(df), self._times(df)]
        limit = time_limit(df, getattr(context, "options", {}))
        has_point = df.groupby("instance_key")["_err"].transform(lambda s: s.notna().any())
        sgm = sgm_table(df[has_point], limit)
        blocks.append(Table(
            "sdp_sgm", "Shifted geometric mean of time (10 s shift), failures charged at the time limit",
            pd.DataFrame({"solver": sgm["solver"], "scaled SGM (tol)": sgm["scaled"].map(lambda v: _fmt(v, ".2f")),
                          "SGM (s, tol)": sgm["sgm_s"].map(lambda v: _fmt(v, ".3g")),
                          "solved % (max err <= tol)": sgm["solved_pct"].map(lambda v: _fmt(v, ".0f")),
                          "scaled SGM (<= 1e-3)": sgm["scaled_scs"].map(lambda v: _fmt(v, ".2f")),
                          "SGM (s, <= 1e-3)": sgm["sgm_scs_s"].map(lambda v: _fmt(v, ".3g")),
                          "solved % (<= 1e-3)": sgm["solved_scs_rule_pct"].map(lambda v: _fmt(v, ".0f")),
                          "problems": sgm["problems"].astype(str)}),
            note=f"tol: a problem counts as solved when its largest DIMACS error is at most the problem's tol "
                 f"(1e-6 unless set); <= 1e-3: the SCS benchmark page's rule at its 1e-4 target (every error "
                 f"under 10x the target).  Otherwise the time is charged at {limit:.4g} s.  Scaled: divided by "
                 f"the best solver's SGM under the same rule.  Problems where no solver returned a point are left out."))
        blocks += self._runs(df, context)
        blocks.append(self._accuracy(df))
        blocks.append(self._verified_by(df))
        pub = self._published(df, getattr(context, "refs", None))
        if pub is not None:
            blocks.append(pub)
        cert = self._certificates(df)
        if cert is not None:
            blocks.append(cert)
        order = self._ordering(sgm)
        if order is not None:
            blocks.append(order)
        return blocks

    def _cells(self, df: pd.DataFrame) -> Table:
        ref = df["_ref"]
        rel = (pd.to_numeric(df["objective"], errors="coerce") - ref) / (1 + ref.abs())
        out = pd.DataFrame({
            "problem": df["dataset"].astype(str) + np.where(df["dataset"].str.startswith("sdp-gen"),
                                                             " n=" + _col(df, "p_n").astype(str)
                                                             + " s=" + df["seed"].astype(str), ""),
            "solver": df["solver_label"], "status": df["status"],
            "time (s)": df["wall_time_s"].map(lambda v: _fmt(v, ".3g")),
            "iter": df["iterations"].map(lambda v: _fmt(v, ".0f")),
            "objective": df["objective"].map(lambda v: _fmt(v, ".8g")),
            "reference": ref.map(lambda v: _fmt(v, ".8g")),
            "rel. diff": rel.map(lambda v: _fmt(v, ".1e")),
            "max DIMACS err": df["_err"].map(lambda v: _fmt(v, ".1e")),
            "flag": df["_err"].map(_flag),
        }).sort_values(["problem", "solver"])
        return Table("sdp_cells", "Per problem and solver (Mittelmann's form)", out.reset_index(drop=True),
                     note="rel. diff = (objective - reference) / (1 + |reference|); flags: a = some DIMACS error "
                          "> 1e-4, f = > 1e-2 (failed).  Objective: <C, X> of (P), the negative of SDPLIB's sign.")

    def _times(self, df: pd.DataFrame) -> Table:
        cell = df["wall_time_s"].map(lambda v: _fmt(v, ".3g")) + df["_err"].map(lambda e: (" " + _flag(e)) if _flag(e) else "")
        cell = cell.where(df["status"].isin(["ok", "max_iter", "timeout", "infeasible"]), df["status"])
        wide = pd.DataFrame({"problem": df["dataset"].astype(str) + np.where(df["dataset"].str.startswith("sdp-gen"),
                                                                                " s=" + df["seed"].astype(str), ""),
                             "solver": df["solver_label"], "cell": cell})
        wide = wide.drop_duplicates(["problem", "solver"], keep="last").pivot(index="problem", columns="solver",
                                                                           values="cell").fillna("-")
        return Table("sdp_times", "Time (s) with Mittelmann's flag, per problem", wide.reset_index(),
                     note="A cell shows the wall time and, after it, a or f; a failed cell shows its status.")

    def _runs(self, df: pd.DataFrame, context: Any) -> list[Any]:
        """The progress chart and the per-cell run table (:mod:`.progress`)."""
        opts = {**dict(getattr(context, "options", None) or {}), "out_dir": getattr(context, "out_dir", None)}
        chart = progress_chart(df)
        return ([chart] if chart is not None else []) + [runs_table(df, opts)]

    def _accuracy(self, df: pd.DataFrame) -> Table:
        rows = []
        for label, g in df.groupby("solver_label"):
            e = g["_err"].dropna()
            rows.append({"solver": label, "cells": str(len(g)), "median max err": _fmt(e.median(), ".1e") if len(e) else "-",
                         "90th pct max err": _fmt(e.quantile(0.9), ".1e") if len(e) else "-",
                         "a (> 1e-4)": str(int(((e > 1e-4) & (e <= 1e-2)).sum())), "f (> 1e-2)": str(int((e > 1e-2).sum())),
                         "no point": str(int(g["_err"].isna().sum()))})
        return Table("sdp_accuracy", "Achieved accuracy: the largest DIMACS error per solver", pd.DataFrame(rows),
                     note="DIMACS errors recomputed from the data and the returned (X, y, Z); norms: ||b||_inf, "
                          "||C||_inf (largest absolute entry), ||.||_2 / Frobenius for the residuals.")

    def _verified_by(self, df: pd.DataFrame) -> Table:
        """Per problem: how many solvers (configurations) reached the problem's tol, and which."""
        d = df.assign(_ok=_solved(df))
        rows = []
        for prob, g in d.groupby("dataset"):
            ok = sorted(g.loc[g["_ok"], "solver_label"].astype(str).unique())
            best = g["_err"].min()
            rows.append({"problem": prob, "verified": f"{len(ok)}/{g['solver_label'].nunique()}",
                         "solvers within tol": ", ".join(ok) or "none", "smallest max err": _fmt(best, ".1e")})
        out = pd.DataFrame(rows)
        out["_k"] = [int(v.split("/")[0]) for v in out["verified"]]
        out = out.sort_values(["_k", "problem"]).drop(columns="_k").reset_index(drop=True)
        return Table("sdp_verified_by", "Solvers that reach the tolerance, per problem", out,
                     note="A solver counts when its largest DIMACS error is at most the problem's tol (1e-6 unless "
                          "set); configurations of one solver count apart.  Fewest first.")

    def _published(self, df: pd.DataFrame, refs: Any = None) -> Table | None:
        """The published value beside the family's own reference (the refs row: two agreeing
        interior-point solves or a certified interval), not the harness's best verified cell, which
        at a 1e-6 DIMACS tolerance may sit just below the optimum."""
        if "metric_published" not in df.columns:
            return None
        d = df.dropna(subset=["metric_published"]).copy()
        own: dict[str, tuple[float, str]] = {}
        if refs is not None and len(refs) and {"instance_key", "value"} <= set(refs.columns):
            for r in refs.itertuples():
                if r.value is not None and r.value == r.value:
                    own[r.instance_key] = (float(r.value), str(getattr(r, "kind", "")))
        d["_own"] = [own.get(k, (np.nan, ""))[0] for k in d["instance_key"]]
        d["_ownkind"] = [own.get(k, (np.nan, "none"))[1] or "none" for k in d["instance_key"]]
        if "metric_published_digits" not in d.columns:
            d["metric_published_digits"] = np.nan
        g = d.groupby("dataset").agg(published=("metric_published", "first"),
                                     digits=("metric_published_digits", "first"),
                                     reference=("_own", "first"), kind=("_ownkind", "first"))
        if g.empty:
            return None
        agree = [_digits_agree(r, p, dg) for r, p, dg in zip(g["reference"], g["published"], g["digits"])]
        out = pd.DataFrame({"problem": g.index, "published (SDPLIB, our sign)": g["published"].map(lambda v: _fmt(v, ".8g")),
                            "reference": g["reference"].map(lambda v: _fmt(v, ".10g")), "kind": g["kind"].astype(str),
                            "rel. diff": ((g["reference"] - g["published"]) / (1 + g["published"].abs())).map(
                                lambda v: _fmt(v, ".1e")),
                            "agrees to printed digits": ["yes" if a else ("-" if r != r else "NO")
                                                         for a, r in zip(agree, g["reference"])]})
        return Table("sdp_published", "Published SDPLIB values beside psdbench's references", out.reset_index(drop=True),
                     note="The published value is never the reference.  NO: the reference does not round to the "
                          "published value at its printed digits (see docs/families/sdp.md for the explained cases).")

    def _certificates(self, df: pd.DataFrame) -> Table | None:
        cols = [c for c in ("metric_cert_primal_infeasible", "metric_cert_dual_infeasible") if c in df.columns]
        if not cols:
            return None
        d = df.dropna(subset=cols, how="all")
        if d.empty:
            return None
        rows = []
        for _, r in d.iterrows():
            for c, what in (("metric_cert_primal_infeasible", "(P) infeasible: y with A*(y) nsd, b'y > 0"),
                            ("metric_cert_dual_infeasible", "(D) infeasible: X psd, A(X) = 0, <C,X> < 0")):
                if c in d.columns and r.get(c) == r.get(c) and r.get(c) is not None:
                    viol = r.get(c.replace("infeasible", "violation"))
                    rows.append({"problem": r["dataset"], "seed": str(r["seed"]), "solver": r["solver_label"],
                                 "certificate": what, "holds": "yes" if r[c] == 1 else "NO",
                                 "violation": _fmt(viol, ".1e")})
        return Table("sdp_certificates", "Infeasibility certificates, checked from the data", pd.DataFrame(rows),
                     note="Scaled to b'y = 1 (resp. <C,X> = -1); holds when the violation is <= 1e-6.")

    def _ordering(self, sgm: pd.DataFrame) -> Table | None:
        """This run's ordering of the native adapters beside the SCS benchmark page's (a table:
        this checkout's renderer draws tables, texts and figures)."""
        present = [s for s in SCS_PAGE_ORDER if s in set(sgm["solver"])]
        if len(present) < 2:
            return None
        ours = [s for s in sgm.sort_values("sgm_scs_s")["solver"] if s in present]
        out = pd.DataFrame({"source": ["SCS benchmark page (1e-4 target, 4 cores, 94 problems)", "this run"],
                            "ordering by shifted geometric mean": [" < ".join(present), " < ".join(ours)],
                            "same": ["", "yes" if ours == present else "no"]})
        return Table("sdp_ordering", "Solver ordering against the SCS benchmark page", out,
                     note="Native adapters only, ordered by the SGM under the page's rule (errors <= 1e-3); this "
                          "run's problems, solver tolerances and time limit.")
