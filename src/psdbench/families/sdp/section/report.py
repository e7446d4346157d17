"""Report section of the SDP family, in the form of Mittelmann's benchmark pages.

Tables (all from the tidy frame; DIMACS errors are the instance's own ``metric_err1..6``):

* **cells**: per problem and solver: status, time, iterations, objective, its relative difference
  to the reference, the largest DIMACS error and Mittelmann's flag (``a``: > 1e-4, ``f``: > 1e-2,
  counted as failed).
* **shifted geometric mean** (:mod:`.judges`): per solver, ``exp(mean(log(t + 10))) - 10`` over the
  same problems for every solver (a skipped or missing cell unsolved), under four rules each named
  after its source (Mittelmann's page, the SCS page's, SCS 3.3's protocol, the problem's 1e-6),
  failures charged at each cell's recorded limit (or a page's own value), scaled so the best
  solver is 1; and where Mittelmann's verdict and the generic report's disagree on a cell, why.
* **sizes and settings**: per problem m, n and blocks; per configuration its tolerances and its
  library's own version (SDPA's from its binary, not the wrapper's), the runs' CPU model.
* **winners** (:func:`.judges.winners`): per SDPLIB problem, the fastest configuration Mittelmann's
  rule counts solved in every run, the runner-up and the time ratio.
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

from psdbench.harness.store.results import outcome_column
from psdbench.report.blocks import Table
from psdbench.report.fmt import fmt_int as _int
from psdbench.report.fmt import fmt_spec as _fmt

from psdbench.families.sdp.errors import FLAG_A, FLAG_F
from psdbench.families.sdp.section.judges import RULES, disagreements, sgm_table, solved_by, winners
from psdbench.families.sdp.section.progress import progress_chart, runs_table
from psdbench.families.sdp.section.settings import settings_table, sizes_table

#: the SCS benchmark page's ordering by shifted geometric mean at a 1e-4 target
SCS_PAGE_ORDER = ("sdp-sdpa", "sdp-cvxopt", "sdp-clarabel", "sdp-scs")


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
    return solved_by(df, "tol")


def _problem(df: pd.DataFrame, with_n: bool = False) -> pd.Series:
    """A problem's name; a generator's with its seed (and ``n``), integers as integers."""
    gen = df["dataset"].astype(str).str.startswith("sdp-gen")
    extra = (" n=" + _col(df, "p_n").map(_int).astype(str) if with_n else "") + " s=" + _col(df, "seed").map(_int).astype(str)
    return df["dataset"].astype(str) + np.where(gen, extra, "")


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
    """A refs row's certified lower bound: its ``lower`` (two-sided interval), else its ``bound`` (a
    certified one-sided bound, schema 6: ``reference.py``), else NaN."""
    for col in ("lower", "bound"):
        v = getattr(ref, col, None)
        if v is not None and v == v:
            return float(v)
    return float("nan")


class MittelmannTables:
    """The SDP family's section: Mittelmann-style tables, shifted geometric means, accuracy."""

    name = "sdp-mittelmann"
    title = "General SDPs: SDPLIB-style tables (DIMACS errors, shifted geometric means)"
    family = "sdp"
    order = 100

    def render(self, context: Any) -> list[Any]:
        full = context.frame
        if full is None or full.empty:
            return []
        opts = dict(getattr(context, "options", None) or {})
        df = full[full["status"] != "skipped"].copy()
        if df.empty:
            return []
        df["_ref"] = pd.to_numeric(_col(df, "instance_reference"), errors="coerce")
        df["_err"] = pd.to_numeric(_col(df, "metric_max_err"), errors="coerce")
        df["_outcome"] = outcome_column(df)
        blocks: list[Any] = [sizes_table(full), settings_table(full, getattr(context, "runs", None)), self._cells(df),
                             self._times(df)]
        # the SGM ranks every solver over the same problems: skipped cells included (unsolved)
        sgm, info = sgm_table(full, opts)
        if not sgm.empty:
            blocks.append(self._sgm(sgm, info, df))
            tols = [float(t) for t in (opts.get("tolerances") or (1e-2,))]
            target = max(tols) if tols else 1e-2
            win = winners(df[df["dataset"].astype(str).str.startswith("sdplib/")])
            if len(win):
                count = win.loc[win["winner"] != "none solved", "winner"].value_counts()  # type: ignore[union-attr]
                summary = "; ".join(f"{k}: {v}" for k, v in count.items()) or "none"
                blocks.append(Table("sdp_winners", "Winners of the SDPLIB problems under Mittelmann's rule", win,
                                    note=f"Problems won: {summary} (of {len(win)}).  Per problem the fastest configuration "
                                         "whose largest DIMACS error is at most 1e-2 with no time or memory failure in every "
                                         "run, by its median time; the runner-up's median time over the winner's, with the "
                                         "range of the per-run ratios where a file ran more than once (seeds).  The winners "
                                         "table at the top ranks by the gap to the reference instead, and declares no "
                                         "winner where the reference is a competitor's own best-verified point."))
            dis = disagreements(df, target)
            if len(dis):
                blocks.append(Table("sdp_rules_disagree", f"Cells Mittelmann's rule and the generic verdict at {target:g} "
                                    "judge differently, and why", dis,
                                    note="Mittelmann's rule judges the point's DIMACS errors (up to 1e-2) and time or "
                                         "memory failures; the generic report's winners and profiles rank a verified "
                                         "point (largest DIMACS error within the problem's tol) by its gap to the "
                                         "reference.  Both are right by their own definitions."))
        blocks += self._runs(df, context)
        blocks.append(self._accuracy(df))
        blocks.append(self._verified_by(df))
        pub = self._published(df, getattr(context, "refs", None))
        if pub is not None:
            blocks.append(pub)
        cert = self._certificates(df)
        if cert is not None:
            blocks.append(cert)
        order = self._ordering(sgm) if not sgm.empty else None
        if order is not None:
            blocks.append(order)
        return blocks

    def _sgm(self, sgm: pd.DataFrame, info: dict[str, Any], df: pd.DataFrame) -> Table:
        table: dict[str, Any] = {"solver": sgm["solver"]}
        no_kkt = pd.to_numeric(_col(df, "metric_kkt_worst_rel"), errors="coerce").isna().all()
        for r in RULES:
            shown = (lambda v: "not recorded") if r.key in ("scs", "scs33") and no_kkt else None
            table[f"{r.label}: scaled SGM"] = sgm[f"scaled_{r.key}"].map(shown or (lambda v: _fmt(v, ".2f")))
            table[f"{r.label}: SGM (s)"] = sgm[f"sgm_{r.key}_s"].map(shown or (lambda v: _fmt(v, ".3g")))
            table[f"{r.label}: solved %"] = sgm[f"solved_{r.key}_pct"].map(shown or (lambda v: _fmt(v, ".0f")))
        table["cells"] = sgm["problems"].map(_int)
        table["skipped or not run (unsolved)"] = sgm["skipped"].map(_int)
        lims = info.get("limits") or []
        lim_txt = ("cells' recorded limits: " + ", ".join(f"{v:g} s" for v in lims)) if lims else "no limit recorded"
        rules_txt = "  ".join(f"{r.label}: solved when {r.solved}; a failure charged {info['charges'][r.key]}."
                              for r in RULES)
        reps = (f" ({info['runs']} runs: a file's seeds are replicate runs, each a unit of the mean)"
                if info.get("runs", 0) > info["problems"] else "")
        note = (f"Every solver over the same {info['problems']} problems{reps}: a skipped or missing cell is unsolved, "
                f"charged like a failure ({info['skipped']} such cells).  {rules_txt}  Every time capped at its "
                f"cell's limit ({lim_txt}"
                + (f"; {info['unrecorded']} cells stored without one: the report's time_limit, the adapter's budget or "
                   "the longest time on the problem" if info.get("unrecorded") else "") + ").  "
                + ("SCS 3.3's 300 s cap is longer than these runs' limits: cells stopped earlier count as failures.  "
                   if info.get("short_of_cap") else "")
                + ("" if info.get("cone_recorded") else "Cone distances not recorded in this store: DIMACS err2 / err4 "
                   "(the relative cone violations of X and Z) stand in.  ")
                + "Scaled: over the best solver's SGM under the same rule (shift 10 s).  Flags: Mittelmann's benchmark "
                  "page (plato.asu.edu/ftp/sparse_sdp.html), a above 1e-4, f above 1e-2.")
        if info.get("no_point"):
            note += "  Left out for every solver (no solver returned a point): " + ", ".join(info["no_point"]) + "."
        if info.get("left_out"):
            note += "  Left out for every solver (some solver skipped them): " + ", ".join(info["left_out"]) + "."
        return Table("sdp_sgm", "Shifted geometric mean of time (10 s shift) under the judges' rules, Mittelmann's first",
                     pd.DataFrame(table), note=note)

    def _cells(self, df: pd.DataFrame) -> Table:
        ref = df["_ref"]
        rel = (pd.to_numeric(df["objective"], errors="coerce") - ref) / (1 + ref.abs())
        out = pd.DataFrame({
            "problem": _problem(df, with_n=True),
            "solver": df["solver_label"], "status": df["_outcome"],
            "time (s)": df["wall_time_s"].map(lambda v: _fmt(v, ".3g")),
            "iter": df["iterations"].map(_int),
            "objective": df["objective"].map(lambda v: _fmt(v, ".8g")),
            "reference": ref.map(lambda v: _fmt(v, ".8g")),
            "rel. diff": rel.map(lambda v: _fmt(v, ".1e")),
            "max DIMACS err": df["_err"].map(lambda v: _fmt(v, ".1e")),
            "flag": df["_err"].map(_flag),
        }).sort_values(["problem", "solver"])
        return Table("sdp_cells", "Per problem and solver (Mittelmann's form)", out.reset_index(drop=True),
                     note="status: the outcome word every table uses (rejected: the returned point failed verification "
                          "at the problem's tol).  rel. diff = (objective - reference) / (1 + |reference|); flags "
                          "(Mittelmann's benchmark page): a = some DIMACS error > 1e-4, f = > 1e-2 (failed).  "
                          "Objective: <C, X> of (P), the negative of SDPLIB's sign.")

    def _times(self, df: pd.DataFrame) -> Table:
        # Mittelmann's letters: t a time-out, m out of memory, else a / f from the largest DIMACS error
        marks = pd.Series([("t" if s == "timeout" else "m" if s == "out_of_memory" else _flag(e))
                           for s, e in zip(df["status"], df["_err"])], index=df.index)
        cell = df["wall_time_s"].map(lambda v: _fmt(v, ".3g")) + marks.map(lambda m: f" {m}" if m else "")
        has_point = df["status"].isin(["ok", "max_iter", "timeout", "infeasible"]) & df["_err"].notna()
        cell = cell.where(has_point | df["status"].eq("out_of_memory"), df["_outcome"])
        wide = pd.DataFrame({"problem": _problem(df), "solver": df["solver_label"], "cell": cell})
        wide = wide.drop_duplicates(["problem", "solver"], keep="last").pivot(index="problem", columns="solver",
                                                                           values="cell").fillna("-")
        return Table("sdp_times", "Time (s) with Mittelmann's flag, per problem", wide.reset_index(),
                     note="A cell shows the wall time and, after it, Mittelmann's letter (his benchmark page): t "
                          "(time-out), m (out of memory), else a or f (largest DIMACS error above 1e-4, above 1e-2); "
                          "a cell without a point shows its outcome word.")

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
                    rows.append({"problem": r["dataset"], "seed": _int(r["seed"]), "solver": r["solver_label"],
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
                          "residuals and cone distances <= 1e-4 with the solver's status optimal, failures at each cell's limit); "
                          "this run's problems, solver tolerances and time limits.")
