"""The judges' rules of the SDP section: when a cell counts as solved, what a failure is charged, and
the shifted geometric mean (SGM) of every solver over the same problems.

Each rule is implemented as its source defines a solved run:

* **Mittelmann's** (H. D. Mittelmann, "Benchmark of SDP solvers", plato.asu.edu/ftp/sparse_sdp.html,
  and the DIMACS error definitions its tables use, plato.asu.edu/dimacs/node3.html; the same two
  thresholds in Math. Prog. 95:407-430, 2003, Section 2): a run is flagged ``a`` when its largest
  DIMACS error exceeds 1e-4 (:data:`.errors.FLAG_A`) and ``f`` (failed) above 1e-2
  (:data:`.errors.FLAG_F`); ``a`` still counts, ``f``, a time-out (``t``) and a memory failure
  (``m``) do not.  His page ranks every solver by the scaled SGM (shift 10 s) over the same
  problems, a failure charged at the time limit.
* **the SCS page's** (SCS's benchmarks, made with bodono/solver_benchmarks): a run counts only when
  the solver's own status is ``optimal`` (``core/status.py``, ``SOLUTION_PRESENT = {OPTIMAL}``;
  :func:`says_optimal` maps each solver's word) and its point passes the page's re-verification
  (``analysis/derive.py``, ``kkt_verify``): the relative KKT residuals (``KKT_FIELDS``) and the
  relative distances of both cone variables to their cones (``CONE_FIELDS``) at most the 1e-4
  target (:mod:`.kkt`).  Failures are charged at the run's time limit (``analysis/penalties.py``
  reads it from the run's manifest); the page's older fixed charge, 1000 s (``analysis/profiles.py``,
  ``DEFAULT_FAILURE_PENALTY``), is the option ``sdp_failure_charge = "page"``.
* **SCS 3.3's protocol** (the SCS 3.3.0 release notes, github.com/cvxgrp/scs/releases/tag/3.3.0):
  ``eps_abs = eps_rel = 1e-6``, a 300 s per-problem cap, accuracy from KKT residuals recomputed
  from the returned vectors: the SCS page's rule at 1e-6, a run over 300 s unsolved, failures
  charged 300 s.  (The protocol's solver settings are the run's business: the tolerances table
  shows what each configuration asked for.)
* **1e-6** (the problem's ``tol``): the harness's verdict, the largest DIMACS error at most ``tol``
  (a time-out whose kept point verifies counts, at its limit).

**Every solver over the same problems.**  The problems are those where some solver returned a point
(the others, infeasible or failed by all, are named and left out for all); a solver with no cell on
one of them, or a ``skipped`` cell, is unsolved there and charged like any failure, so a solver
skipped on the slow problem is not faster for it.  The option ``sdp_skipped = "leave out"`` leaves
such problems out for every solver instead (named in the table's note).

**Charges.**  A failure is charged at its cell's recorded time limit (``time_limit_s``, the run's
timeout); a cell stored without one falls back to the report option ``time_limit``, then the budget
the adapter recorded (``solver_budget_s``), then the longest wall time on its problem, and the note
counts those.  Every time is capped at its cell's limit.  The option ``sdp_failure_charge`` (seconds,
a mapping of rule key to seconds, or ``"page"``: the SCS page's 1000 s) charges a page's own value
instead, so a table can stand beside that page.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np
import pandas as pd

from psdbench.report.rules import shifted_geomean

from psdbench.families.sdp.errors import FLAG_A, FLAG_F

SHIFT = 10.0
#: the SCS benchmark page's accuracy target (its relative KKT residuals and cone distances, :mod:`.kkt`)
SCS_PAGE_TARGET = 1e-4
#: the SCS benchmark page's older fixed failure charge (bodono/solver_benchmarks, analysis/profiles.py: 1e3 s)
SCS_PAGE_FAILURE_S = 1000.0
#: SCS 3.3's published protocol: eps 1e-6, a 300 s per-problem cap
SCS33_TARGET = 1e-6
SCS33_CAP_S = 300.0
_MEMORY = r"MemoryError|out of memory|memory limit|Cannot allocate memory|std::bad_alloc"
#: the SCS page's residuals: relative KKT residuals, then the relative cone distances (:mod:`.kkt`)
KKT_METRICS = ("metric_scs_primal_res_rel", "metric_scs_dual_res_rel", "metric_scs_gap_rel")
CONE_METRICS = ("metric_scs_primal_cone_res_rel", "metric_scs_dual_cone_res_rel")


@dataclass(frozen=True)
class Rule:
    """One judge's rule: its key, the table's label, what counts as solved and what a failure costs."""

    key: str
    label: str
    solved: str
    charge: str


RULES = (
    Rule("mittelmann", "Mittelmann (not f, no t/m)",
         f"largest DIMACS error <= {FLAG_F:g} (flag f above; a, above {FLAG_A:g}, counts), no time or memory failure",
         "the cell's time limit"),
    Rule("scs", f"SCS page (optimal, KKT and cone <= {SCS_PAGE_TARGET:g})",
         f"the solver's status optimal, and its SCS-form relative KKT residuals and cone distances <= {SCS_PAGE_TARGET:g}",
         "the cell's time limit"),
    Rule("scs33", f"SCS 3.3 protocol ({SCS33_TARGET:g}, {SCS33_CAP_S:g} s)",
         f"as the SCS page's at {SCS33_TARGET:g}, within {SCS33_CAP_S:g} s", f"{SCS33_CAP_S:g} s"),
    Rule("tol", "1e-6 (the problem's tol)", "largest DIMACS error <= the problem's tol (1e-6 unless set)",
         "the cell's time limit"),
)
RULE_KEYS = tuple(r.key for r in RULES)


def col(df: pd.DataFrame, name: str) -> pd.Series:
    """A column, or NaN where the frame has none."""
    return df[name] if name in df.columns else pd.Series(np.nan, index=df.index)


def problem_label(df: pd.DataFrame) -> pd.Series:
    """A problem's name: the dataset, and for a generator its ``n`` and seed (its seed draws the data;
    a file's seeds are replicate runs of one problem).  Integers as integers."""
    def num(v: Any) -> str:
        try:
            f = float(v)
        except (TypeError, ValueError):
            return str(v)
        return str(int(f)) if math.isfinite(f) and f == int(f) else str(v)

    gen = df["dataset"].astype(str).str.startswith("sdp-gen")
    extra = " n=" + col(df, "p_n").map(num).astype(str) + " s=" + col(df, "seed").map(num).astype(str)
    return df["dataset"].astype(str) + np.where(gen, extra, "")


def says_optimal(word: Any) -> bool:
    """Whether a solver's own status word is the SCS page's ``optimal`` (its adapters' mapping: a
    solve reported as solved to the solver's tolerance; "inaccurate", "almost", "partial" are not).

    SCS ``solved``, Clarabel ``Solved``, CVXOPT / COPT / cvxpy ``optimal``, QICS ``optimal (...)``,
    SDPA ``pdOPT``, CSDP ``Success: SDP solved``, DSDP ``DSDP Converged``.
    """
    w = str(word or "").strip().lower()
    if not w or "inaccurate" in w or "almost" in w or "partial" in w or "near" in w:
        return False
    return (w in ("solved", "optimal", "pdopt") or w.startswith(("optimal ", "optimal(", "success:"))
            or w.startswith("dsdp converged"))


_WORD_KEYS = ("solver_cvxpy_status", "solver_sdpa_phase", "solver_scs_status", "solver_clarabel_status",
              "solver_cvxopt_status")


def solver_words(df: pd.DataFrame) -> pd.Series:
    """Each cell's own status word: ``metrics["solver_status"]``, else what its message quotes
    (:func:`psdbench.harness.store.results.solver_word`), else cvxpy's status (``solver_cvxpy_status``: the
    generic conic solvers) or a per-solver field of an older store."""
    from psdbench.harness.store.results import solver_word

    mets = df["metrics"] if "metrics" in df.columns else pd.Series([{}] * len(df), index=df.index)
    msgs = col(df, "message").fillna("").astype(str)

    def word(msg: str, m: Any) -> str:
        w = solver_word(msg, m)
        if w or not isinstance(m, Mapping):
            return w
        # cvxpy's status (the generic conic solvers), and the per-solver fields of stores before solver_status
        for k in _WORD_KEYS:
            if isinstance(m.get(k), str) and m[k].strip():
                return m[k].strip()
        return ""

    return pd.Series([word(x, m) for x, m in zip(msgs, mets)], index=df.index, dtype=object)


def page_residuals(df: pd.DataFrame) -> tuple[pd.Series, bool]:
    """Per cell, the largest of the SCS page's relative KKT residuals and cone distances, and whether
    the cone distances were recorded (stores before them: DIMACS err2 and err4, the relative cone
    violations of X and Z, stand in)."""
    kkt = pd.concat([pd.to_numeric(col(df, c), errors="coerce") for c in KKT_METRICS], axis=1)
    worst = kkt.max(axis=1, skipna=False)
    if "metric_kkt_worst_rel" in df.columns:
        worst = worst.fillna(pd.to_numeric(df["metric_kkt_worst_rel"], errors="coerce"))
    recorded = all(c in df.columns for c in CONE_METRICS) and df[list(CONE_METRICS)].notna().any().any()
    cone_cols = CONE_METRICS if recorded else ("metric_err2", "metric_err4")
    cone = pd.concat([pd.to_numeric(col(df, c), errors="coerce").fillna(0.0) for c in cone_cols], axis=1).max(axis=1)
    return np.maximum(worst, cone).where(worst.notna()), bool(recorded)


def hard_failure(df: pd.DataFrame) -> pd.Series:
    """A time or memory failure: status ``timeout``, ``crashed`` or ``out_of_memory``, or a message naming a memory error."""
    msg = col(df, "message").astype(str)
    return df["status"].isin(["timeout", "crashed", "out_of_memory"]) | msg.str.contains(_MEMORY, regex=True, na=False)


def solved_by(df: pd.DataFrame, rule: str) -> pd.Series:
    """Per cell, whether ``rule`` (a key of :data:`RULES`) counts it solved (see the module docstring);
    a ``skipped`` cell never is."""
    err = pd.to_numeric(col(df, "metric_max_err"), errors="coerce")
    ran = df["status"] != "skipped"
    if rule == "tol":
        tol = pd.to_numeric(col(df, "p_tol"), errors="coerce").fillna(1e-6)
        return (err <= tol) & df["status"].isin(["ok", "max_iter", "timeout"])
    if rule == "mittelmann":
        return (err <= FLAG_F) & ~hard_failure(df) & ran
    if rule in ("scs", "scs33"):
        res, _ = page_residuals(df)
        target = SCS_PAGE_TARGET if rule == "scs" else SCS33_TARGET
        ok = solver_words(df).map(says_optimal).astype(bool) & (res <= target) & ~hard_failure(df) & ran
        if rule == "scs33":
            ok &= pd.to_numeric(df["wall_time_s"], errors="coerce") <= SCS33_CAP_S
        return ok
    raise ValueError(f"unknown rule {rule!r}")


def cell_limits(df: pd.DataFrame, options: Mapping[str, Any] | None) -> tuple[pd.Series, pd.Series]:
    """Per cell, its time limit and whether the store recorded it (see the module docstring)."""
    rec = pd.to_numeric(col(df, "time_limit_s"), errors="coerce")
    ok = np.isfinite(rec) & (rec > 0)
    opt = (options or {}).get("time_limit")
    budget = pd.to_numeric(col(df, "metric_solver_budget_s"), errors="coerce")
    wall = pd.to_numeric(df["wall_time_s"], errors="coerce")
    longest = wall.groupby(df["instance_key"].to_numpy()).transform("max").fillna(1.0).clip(lower=1.0)
    fallback = pd.Series(float(opt), index=df.index) if opt else budget.where(budget > 0, longest)
    return rec.where(ok, fallback).astype(float), pd.Series(np.asarray(ok), index=df.index)


def charge_option(options: Mapping[str, Any] | None, rule: str) -> float | None:
    """The page's own charge the option ``sdp_failure_charge`` sets for ``rule``, else ``None``."""
    v = (options or {}).get("sdp_failure_charge")
    if v is None:
        return None
    if isinstance(v, str):
        if v != "page":
            raise ValueError(f"sdp_failure_charge = {v!r}: give seconds, a mapping of rule to seconds, or 'page'")
        return SCS_PAGE_FAILURE_S if rule == "scs" else None
    if isinstance(v, Mapping):
        v = v.get(rule)
        if v is None:
            return None
    s = float(v)
    if not (math.isfinite(s) and s > 0):
        raise ValueError(f"sdp_failure_charge for {rule}: {s!r} is not a positive number of seconds")
    return s


def square(df: pd.DataFrame, options: Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, list[str], list[str]]:
    """Every solver over the same problems: one row per (problem, solver), a missing cell added as
    ``skipped`` (not run); problems where no solver returned a point left out (named), and with
    ``sdp_skipped = "leave out"`` the problems some solver skipped (named).

    Returns the square frame, the problems left out for no point, those left out for a skip.
    """
    d = df.drop_duplicates(["instance_key", "solver_label"], keep="last")
    err = pd.to_numeric(col(d, "metric_max_err"), errors="coerce")
    has_point = err.notna().groupby(d["instance_key"].to_numpy()).transform("any").to_numpy(bool)
    name = d.set_index("instance_key")["dataset"].astype(str)
    name = name[~name.index.duplicated()]
    no_point = sorted({name[k] for k in d.loc[~has_point, "instance_key"]})
    d = d[has_point]
    solvers = sorted(df["solver_label"].astype(str).unique())
    full = pd.MultiIndex.from_product([sorted(d["instance_key"].unique()), solvers], names=["instance_key", "solver_label"])
    d = d.set_index(["instance_key", "solver_label"]).reindex(full).reset_index()
    missing = d["status"].isna()
    d.loc[missing, "status"] = "skipped"
    d.loc[missing, "message"] = "not run"
    d["dataset"] = d["instance_key"].map(name)
    left: list[str] = []
    if (options or {}).get("sdp_skipped", "unsolved") == "leave out":
        skip = d.groupby("instance_key")["status"].transform(lambda s: (s == "skipped").any()).to_numpy(bool)
        left = sorted(set(d.loc[skip, "dataset"]))
        d = d[~skip]
    return d.reset_index(drop=True), no_point, left


def sgm_table(df: pd.DataFrame, options: Mapping[str, Any] | None = None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """Per solver and rule of :data:`RULES`, over the same problems (:func:`square`): ``sgm_<rule>_s``,
    ``scaled_<rule>`` (over the best solver's under the same rule), ``solved_<rule>_pct``; sorted by
    Mittelmann's.  With it, what the note states: problems left out, skipped cells, limits and charges."""
    d, no_point, left = square(df, options)
    if d.empty:
        return pd.DataFrame(), {"no_point": no_point, "left_out": left}
    limit, recorded = cell_limits(d, options)
    # a cell added as not run carries no limit: its problem's largest
    limit = limit.where(~(d["message"].eq("not run") & ~recorded),
                        limit.groupby(d["instance_key"].to_numpy()).transform("max"))
    wall = pd.to_numeric(d["wall_time_s"], errors="coerce")
    rows = []
    charges: dict[str, str] = {}
    for label, g in d.assign(_lim=limit).groupby("solver_label"):
        row: dict[str, Any] = {"solver": label, "problems": len(g), "skipped": int((g["status"] == "skipped").sum())}
        for r in RULES:
            ok = solved_by(g, r.key).to_numpy(bool)
            lim = g["_lim"].to_numpy(float)
            fixed = charge_option(options, r.key)
            cap = np.minimum(lim, SCS33_CAP_S) if r.key == "scs33" else lim
            charge = np.full(len(g), fixed) if fixed is not None else (np.full(len(g), SCS33_CAP_S) if r.key == "scs33" else lim)
            t = np.where(ok, np.minimum(wall.loc[g.index].to_numpy(float), cap), np.inf)
            row[f"sgm_{r.key}_s"] = shifted_geomean(t, charge, SHIFT)
            row[f"solved_{r.key}_pct"] = 100.0 * ok.mean()
            charges[r.key] = (f"{fixed:g} s (the option sdp_failure_charge)" if fixed is not None else
                              f"{SCS33_CAP_S:g} s (the protocol's cap)" if r.key == "scs33" else "its cell's time limit")
        rows.append(row)
    out = pd.DataFrame(rows)
    for r in RULES:
        best = out[f"sgm_{r.key}_s"].min()
        out[f"scaled_{r.key}"] = out[f"sgm_{r.key}_s"] / best if best > 0 else np.nan
    lims = sorted({float(v) for v in limit[recorded]})
    info = {"no_point": no_point, "left_out": left, "charges": charges, "limits": lims,
            "unrecorded": int((~recorded & d["message"].ne("not run")).sum()),
            "skipped": int((d["status"] == "skipped").sum()), "problems": int(problem_label(d).nunique()),
            "runs": int(d["instance_key"].nunique()),
            "short_of_cap": any(v < SCS33_CAP_S for v in lims), "cone_recorded": page_residuals(d)[1]}
    return out.sort_values(f"sgm_{RULES[0].key}_s").reset_index(drop=True), info


def disagreements(df: pd.DataFrame, target: float) -> pd.DataFrame:
    """Cells where Mittelmann's rule and the generic report's verdict at ``target`` disagree, and why.

    The generic verdict: the final point verified (largest DIMACS error within the problem's tol)
    and its ranked gap to the reference at most ``target`` (:mod:`psdbench.report.rules`)."""
    mitt = solved_by(df, "mittelmann")
    verified = col(df, "verified").map(lambda v: bool(v) if v == v and v is not None else False).astype(bool)
    gap = pd.to_numeric(col(df, "ranked_gap"), errors="coerce")
    generic = verified & (gap <= target)
    err = pd.to_numeric(col(df, "metric_max_err"), errors="coerce")
    tol = pd.to_numeric(col(df, "p_tol"), errors="coerce").fillna(1e-6)
    ref = pd.to_numeric(col(df, "instance_reference"), errors="coerce")
    obj = pd.to_numeric(col(df, "objective"), errors="coerce")
    rel = (obj - ref).abs() / np.maximum(ref.abs(), 1.0)
    label = problem_label(df)
    rows = []
    for i in df.index[mitt != generic]:
        if mitt[i]:
            if not verified[i]:
                why = (f"largest DIMACS error {err[i]:.1e} > tol {tol[i]:g}: the generic rule ranks verified points "
                       f"only; Mittelmann's counts errors up to {FLAG_F:g}"
                       + (f" (objective {rel[i]:.1e} from the reference)" if np.isfinite(rel[i]) else ""))
            else:
                why = f"verified, but its ranked gap {gap[i]:.1e} to the reference is above {target:g}"
        else:
            why = (f"status {df.at[i, 'status']}: a time or memory failure for Mittelmann; its point verified and "
                   f"reaches {target:g}, which the generic rule counts" if hard_failure(df.loc[[i]]).iloc[0] else
                   f"largest DIMACS error {err[i]:.1e} (flag f) though verified")
        rows.append({"problem": label[i], "solver": df.at[i, "solver_label"],
                     "Mittelmann": "solved" if mitt[i] else "failed",
                     f"generic at {target:g}": "reached" if generic[i] else "not reached", "why": why})
    cols = ["problem", "solver", "Mittelmann", f"generic at {target:g}", "why"]
    out = pd.DataFrame(rows, columns=cols)
    if out.empty:
        return out.assign(runs=pd.Series(dtype=str))
    # a file's replicate runs that disagree the same way are one row (the first run's numbers)
    out["runs"] = out.groupby(cols[:4])["why"].transform("size").astype(str)
    return out.drop_duplicates(cols[:4]).reset_index(drop=True)


def winners(df: pd.DataFrame, rule: str = "mittelmann") -> pd.DataFrame:
    """Per problem, under ``rule``: the fastest configuration that solved it in every run (a file's
    seeds are replicate runs: its median time), the runner-up and its median time over the winner's
    with the range over runs; ``none solved`` where no configuration did."""
    if df.empty:
        return pd.DataFrame()
    d = df.drop_duplicates(["instance_key", "solver_label"], keep="last")
    d = d.assign(_ok=solved_by(d, rule).to_numpy(bool), _t=pd.to_numeric(d["wall_time_s"], errors="coerce"),
                 _p=problem_label(d).to_numpy(), _seed=col(d, "seed").to_numpy())
    rows = []
    for prob, g in d.groupby("_p", sort=True):
        per = g.groupby("solver_label").agg(ok=("_ok", "all"), t=("_t", "median"), runs=("_ok", "size"))
        s = per[per["ok"]].sort_values(["t"], kind="stable")
        runs = int(per["runs"].max())
        row = {"problem": str(prob), "runs": str(runs), "solved by": f"{len(s)}/{len(per)}", "winner": "none solved",
               "median time (s)": "-", "runner-up": "-", "runner-up's time / winner's": "-"}
        if len(s):
            row.update({"winner": str(s.index[0]), "median time (s)": f"{s['t'].iloc[0]:.3g}"})
        if len(s) > 1:
            w, r = s.index[0], s.index[1]
            pair = g[g["solver_label"].isin([w, r])].pivot_table(index="_seed", columns="solver_label", values="_t")
            ratio = (pair[r] / pair[w].clip(lower=1e-9)).dropna()
            txt = f"{s['t'].iloc[1] / max(s['t'].iloc[0], 1e-9):.3g}"
            if len(ratio) > 1:
                txt += f" [{ratio.min():.3g}-{ratio.max():.3g}]"
            row.update({"runner-up": str(r), "runner-up's time / winner's": txt})
        rows.append(row)
    return pd.DataFrame(rows)
