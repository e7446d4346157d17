"""Report section of the SDP family, in the form of Mittelmann's benchmark pages.

Tables (all from the tidy frame; DIMACS errors are the instance's own ``metric_err1..6``):

* **cells**: per problem and solver: status, time, iterations, objective, its relative difference
  to the reference, the largest DIMACS error and Mittelmann's flag (``a``: > 1e-4, ``f``: > 1e-2,
  counted as failed).
* **shifted geometric mean**: per solver, ``exp(mean(log(t + 10))) - 10`` over the problems
  under three rules, each named after its source (:data:`RULES`), a cell's time capped at the
  run's time limit (a verified timeout counts the limit, not its overrun), problems where no
  solver returned a point (the infeasible ones) left out, scaled so the best solver is 1:

  - **Mittelmann's** (the section's main SGM; his benchmark pages): solved unless the flag is
    ``f`` (largest DIMACS error > 1e-2) or the cell is a time or memory failure (status
    ``timeout`` or ``crashed``, or a message naming a memory error); ``a`` (> 1e-4) still counts.
    Failures charged at the time limit.
  - **the SCS page's** (SCS's benchmarks, bodono/solver_benchmarks): solved when the largest of
    its relative KKT residuals on the SCS form (:mod:`.kkt`) is at most the page's 1e-4 target
    and the cell is not a time or memory failure; failures charged at the page's own 1000 s
    (``profiles.py``, ``DEFAULT_FAILURE_PENALTY``, whatever the run's limit).
  - **1e-6** (the problem's ``tol``, 1e-6 unless set): solved when the largest DIMACS error is at
    most ``tol`` (the harness's verdict; a timeout whose kept point verifies counts, at the
    limit).  Failures charged at the time limit.

  The time limit: the report option ``time_limit``, else the budget the native adapters record,
  else the largest ``timeout`` cell's time, else the largest time seen.
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
import re
from typing import Any

import numpy as np
import pandas as pd

from psdbench.report.rules import shifted_geomean
from psdbench.report.blocks import Table

from .errors import FLAG_A, FLAG_F
from .progress import progress_chart, runs_table

SHIFT = 10.0
#: the SCS benchmark page's accuracy target (its relative KKT residuals, :mod:`.kkt`)
SCS_PAGE_TARGET = 1e-4
#: the SCS benchmark page's failure charge (bodono/solver_benchmarks, analysis/profiles.py: 1e3 s)
SCS_PAGE_FAILURE_S = 1000.0
#: the SCS benchmark page's ordering by shifted geometric mean at a 1e-4 target
SCS_PAGE_ORDER = ("sdp-sdpa", "sdp-cvxopt", "sdp-clarabel", "sdp-scs")
#: the rules of the SGM table, main first: key, label, what it counts as solved
RULES = (("mittelmann", "Mittelmann (not f, no time/memory failure)", "largest DIMACS error <= 1e-2"),
         ("scs", "SCS page (KKT rel. <= 1e-4)", "largest SCS-form relative KKT residual <= 1e-4"),
         ("tol", "1e-6 (the problem's tol)", "largest DIMACS error <= tol"))
_MEMORY = r"MemoryError|out of memory|memory limit|Cannot allocate memory|std::bad_alloc"


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
    return "f" if v > FLAG_F else ("a" if v > FLAG_A else "")


def _col(df: pd.DataFrame, name: str) -> pd.Series:
    return df[name] if name in df.columns else pd.Series(np.nan, index=df.index)


def _solved(df: pd.DataFrame) -> pd.Series:
    """The 1e-6 rule: the largest DIMACS error within the problem's ``tol`` (the harness's verdict)."""
    tol = pd.to_numeric(_col(df, "p_tol"), errors="coerce").fillna(1e-6)
    err = pd.to_numeric(_col(df, "metric_max_err"), errors="coerce")
    return (err <= tol) & df["status"].isin(["ok", "max_iter", "timeout"])


def time_limit(df: pd.DataFrame, options: Any) -> float:
    """The time failures are charged at and every time capped at (see the module docstring)."""
    if options and options.get("time_limit"):
        return float(options["time_limit"])
    given = pd.to_numeric(_col(df, "metric_solver_budget_s"), errors="coerce").dropna()
    if len(given):
        return float(given.max())
    to = pd.to_numeric(df.loc[df["status"] == "timeout", "wall_time_s"], errors="coerce").dropna()
    if len(to):
        return float(to.max())
    return float(pd.to_numeric(df["wall_time_s"], errors="coerce").max())


def hard_failure(df: pd.DataFrame) -> pd.Series:
    """A time or memory failure: status ``timeout`` or ``crashed``, or a message naming a memory error."""
    msg = _col(df, "message").astype(str)
    return df["status"].isin(["timeout", "crashed", "out_of_memory"]) | msg.str.contains(_MEMORY, regex=True, na=False)


def solved_by(df: pd.DataFrame, rule: str) -> pd.Series:
    """Per cell, whether ``rule`` (a key of :data:`RULES`) counts it solved (see the module docstring)."""
    if rule == "tol":
        return _solved(df)
    if rule == "mittelmann":
        err = pd.to_numeric(_col(df, "metric_max_err"), errors="coerce")
        return (err <= FLAG_F) & ~hard_failure(df)
    if rule == "scs":
        kkt = pd.to_numeric(_col(df, "metric_kkt_worst_rel"), errors="coerce")
        return (kkt <= SCS_PAGE_TARGET) & ~hard_failure(df)
    raise ValueError(f"unknown rule {rule!r}")


def charge(rule: str, limit: float) -> float:
    """What ``rule`` charges a failure: the page's 1000 s for the SCS page's, the time limit otherwise."""
    return SCS_PAGE_FAILURE_S if rule == "scs" else limit


def rule_sgm(times: pd.Series, solved: pd.Series, limit: float, fail_at: float) -> float:
    """The shifted geometric mean of one solver's cells: solved times capped at ``limit``, the others
    charged ``fail_at``.  The one place this section computes an SGM: it calls the generic report's
    :func:`psdbench.report.rules.shifted_geomean` (failures as inf, charged at its limit)."""
    t = np.minimum(pd.to_numeric(times, errors="coerce").to_numpy(float), limit)
    t = np.where(solved.to_numpy(bool) & np.isfinite(t), t, np.inf)
    return shifted_geomean(t, fail_at, SHIFT)


def sgm_table(df: pd.DataFrame, limit: float) -> pd.DataFrame:
    """Per solver and rule of :data:`RULES`: ``sgm_<rule>_s``, ``scaled_<rule>`` (over the best solver's
    under the same rule) and ``solved_<rule>_pct``; sorted by the main rule (Mittelmann's)."""
    d = df.assign(**{f"_ok_{k}": solved_by(df, k) for k, _, _ in RULES})
    rows = []
    for label, g in d.groupby("solver_label"):
        row: dict[str, Any] = {"solver": label, "problems": len(g)}
        for k, _, _ in RULES:
            row[f"sgm_{k}_s"] = rule_sgm(g["wall_time_s"], g[f"_ok_{k}"], limit, charge(k, limit))
            row[f"solved_{k}_pct"] = 100.0 * g[f"_ok_{k}"].mean()
        rows.append(row)
    out = pd.DataFrame(rows)
    if out.empty:
        return out
    for k, _, _ in RULES:
        best = out[f"sgm_{k}_s"].min()
        out[f"scaled_{k}"] = out[f"sgm_{k}_s"] / best if best > 0 else np.nan
    return out.sort_values(f"sgm_{RULES[0][0]}_s").reset_index(drop=True)


def _digits_agree(ref: float, pub: float, digits: float) -> bool:
    """``ref`` rounds to ``pub`` at ``digits`` significant digits."""
    if not (math.isfinite(ref) and math.isfinite(pub)) or not digits or digits != digits:
        return False
    if pub == 0:
        return abs(ref) < 10 ** (-int(digits))
    e = math.floor(math.log10(abs(pub)))
    half_ulp = 0.5 * 10 ** (e - int(digits) + 1)
    return abs(ref - pub) <= half_ulp * (1 + 1e-9)


def certified_lower(ref: Any) -> float:
    """A refs row's certified lower bound: its ``lower`` (two-sided interval), else the one-sided bound
    its message states (``reference.py``: "certified one-sided lower bound <value>"), else NaN."""
    low = getattr(ref, "lower", None)
    if low is not None and low == low:
        return float(low)
    m = re.search(r"certified one-sided lower bound (\S+)", str(getattr(ref, "message", "") or ""))
    return float(m.group(1)) if m else float("nan")


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
        table = {"solver": sgm["solver"]}
        # a store written before the SCS-form residuals were recorded has none: its column says so
        no_kkt = pd.to_numeric(_col(df, "metric_kkt_worst_rel"), errors="coerce").isna().all()
        for k, label, _ in RULES:
            shown = (lambda v: "not recorded") if k == "scs" and no_kkt else None
            table[f"{label}: scaled SGM"] = sgm[f"scaled_{k}"].map(shown or (lambda v: _fmt(v, ".2f")))
            table[f"{label}: SGM (s)"] = sgm[f"sgm_{k}_s"].map(shown or (lambda v: _fmt(v, ".3g")))
            table[f"{label}: solved %"] = sgm[f"solved_{k}_pct"].map(shown or (lambda v: _fmt(v, ".0f")))
        table["problems"] = sgm["problems"].astype(str)
        blocks.append(Table(
            "sdp_sgm", "Shifted geometric mean of time (10 s shift) under the judges' rules, Mittelmann's first",
            pd.DataFrame(table),
            note=f"Mittelmann's rule (the main SGM): solved unless flag f (largest DIMACS error > 1e-2) or a time "
                 f"or memory failure; flag a counts; failures charged at the time limit {limit:.4g} s.  SCS page's: "
                 f"the largest SCS-form relative KKT residual (primal, dual, gap; bodono/solver_benchmarks kkt.py) "
                 f"<= {SCS_PAGE_TARGET:g} and no time or memory failure; failures charged at the page's "
                 f"{SCS_PAGE_FAILURE_S:g} s.  1e-6: the largest DIMACS error <= the problem's tol (1e-6 unless "
                 f"set); failures at the limit.  Every time capped at the limit; scaled: over the best solver's SGM "
                 f"under the same rule.  Problems where no solver returned a point are left out."))
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
        # Mittelmann's letters: t a time-out, m out of memory, else a / f from the largest DIMACS error
        marks = [("t" if s == "timeout" else "m" if s == "out_of_memory" else _flag(e))
                 for s, e in zip(df["status"], df["_err"])]
        cell = df["wall_time_s"].map(lambda v: _fmt(v, ".3g")) + pd.Series([f" {m}" if m else "" for m in marks],
                                                                           index=df.index)
        cell = cell.where(df["status"].isin(["ok", "max_iter", "timeout", "infeasible", "out_of_memory"]), df["status"])
        wide = pd.DataFrame({"problem": df["dataset"].astype(str) + np.where(df["dataset"].str.startswith("sdp-gen"),
                                                                                " s=" + df["seed"].astype(str), ""),
                             "solver": df["solver_label"], "cell": cell})
        wide = wide.drop_duplicates(["problem", "solver"], keep="last").pivot(index="problem", columns="solver",
                                                                           values="cell").fillna("-")
        return Table("sdp_times", "Time (s) with Mittelmann's flag, per problem", wide.reset_index(),
                     note="A cell shows the wall time and, after it, Mittelmann's letter: t (time-out), m (out of "
                          "memory), else a or f (largest DIMACS error); another failed cell shows its status.")

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
                     note="DIMACS errors recomputed from the data and the returned (X, y, Z), as the 7th DIMACS challenge "
                          "defines them: |b|_max and |C|_max (largest absolute entry), ||A(X) - b||_2, and for err3 the "
                          "sum of the PSD blocks' Frobenius norms plus the LP part's 2-norm.")

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
        bounds: dict[str, float] = {}
        if refs is not None and len(refs) and {"instance_key", "value"} <= set(refs.columns):
            for r in refs.itertuples():
                if r.value is not None and r.value == r.value:
                    own[r.instance_key] = (float(r.value), str(getattr(r, "kind", "")))
                    bounds[r.instance_key] = certified_lower(r)
        d["_own"] = [own.get(k, (np.nan, ""))[0] for k in d["instance_key"]]
        d["_ownkind"] = [own.get(k, (np.nan, "none"))[1] or "none" for k in d["instance_key"]]
        d["_lower"] = [bounds.get(k, np.nan) for k in d["instance_key"]]
        if "metric_published_digits" not in d.columns:
            d["metric_published_digits"] = np.nan
        g = d.groupby("dataset").agg(published=("metric_published", "first"),
                                     digits=("metric_published_digits", "first"),
                                     reference=("_own", "first"), kind=("_ownkind", "first"),
                                     lower=("_lower", "first"))
        if g.empty:
            return None
        agree = [_digits_agree(r, p, dg) for r, p, dg in zip(g["reference"], g["published"], g["digits"])]
        out = pd.DataFrame({"problem": g.index, "published (SDPLIB, our sign)": g["published"].map(lambda v: _fmt(v, ".8g")),
                            "reference": g["reference"].map(lambda v: _fmt(v, ".10g")), "kind": g["kind"].astype(str),
                            "certified lower bound": g["lower"].map(lambda v: _fmt(v, ".10g")),
                            "rel. diff": ((g["reference"] - g["published"]) / (1 + g["published"].abs())).map(
                                lambda v: _fmt(v, ".1e")),
                            "agrees to printed digits": ["yes" if a else ("-" if r != r else "NO")
                                                         for a, r in zip(agree, g["reference"])]})
        return Table("sdp_published", "Published SDPLIB values beside psdbench's references", out.reset_index(drop=True),
                     note="The published value is never the reference.  NO: the reference does not round to the "
                          "published value at its printed digits (see docs/families/sdp.md for the explained cases).  "
                          "Certified lower bound: the interval's lower end, or the one-sided bound where the data "
                          "bound tr(X) but give no exactly feasible point (gpp, qap, thetaG).")

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
        ours = [s for s in sgm.sort_values("sgm_scs_s")["solver"] if s in present]  # the page's own rule
        out = pd.DataFrame({"source": ["SCS benchmark page (1e-4 target, 4 cores, 94 problems)", "this run"],
                            "ordering by shifted geometric mean": [" < ".join(present), " < ".join(ours)],
                            "same": ["", "yes" if ours == present else "no"]})
        return Table("sdp_ordering", "Solver ordering against the SCS benchmark page", out,
                     note="Native adapters only, ordered by the SGM under the page's rule (SCS-form relative KKT "
                          "residuals <= 1e-4, failures at 1000 s); this run's problems, solver tolerances and time limit.")
