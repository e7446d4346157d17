"""What the site ranks, by the report's rules: the winners of each setup, every configuration's time
to each target per instance, and the history of a configuration across builds.

Nothing here decides a verdict: :func:`psdbench.report.summary.winners_section` (the report's winners
tables), :func:`psdbench.report.measures.analysis.reach_times`, ``set_scores`` and ``unresolved`` do,
on the rows of **one setup** (:mod:`psdbench.publish.site.model`).  Tables come back as DataFrames of
Markdown-like cells (the report's :func:`psdbench.report.fmt.inline_html` turns them into HTML), every
time linked to the row or rows it is the median of.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Iterable, Mapping

import numpy as np
import pandas as pd

from psdbench.report.fmt import MISSING, fmt_num, fmt_ratio
from psdbench.report.measures import analysis as an
from psdbench.report.rules import DEFAULT_ALLOWANCE, TOLERANCES

__all__ = ["history_tables", "ranked", "set_times", "setup_winners"]

#: A row's link: ``row_link(solver, row_id)`` -> relative URL.
RowLink = Callable[[str, str], str]


def ranked(frame: pd.DataFrame) -> pd.DataFrame:
    """The rows a time ranking reads, as :func:`psdbench.report.measures.analysis.reach_times` keeps
    them (a reference, not skipped), so that its per-cell output lines up with them."""
    if frame.empty:
        return frame
    ref = np.isfinite(pd.to_numeric(frame["reference_objective"], errors="coerce").astype(float))
    return frame[ref & (frame["status"].astype(str) != "skipped")]


def _relink(value: Any, setup: str, set_link: Callable[[str], str]) -> Any:
    """A winners cell with the report's in-page anchors pointed at the site's pages."""
    if not isinstance(value, str):
        return value
    return (value.replace("(#s-winners-per-instance-set)", f"(#winners-{setup})")
            .replace("(#s-glossary)", "(rules.html#s-glossary)"))


def setup_winners(frame: pd.DataFrame, options: Mapping[str, Any], setup: str,
                  set_link: Callable[[str], str]) -> tuple[pd.DataFrame, pd.DataFrame, str, str]:
    """The report's two winners tables of one setup's current rows, linked into the site.

    Returns
    -------
    (DataFrame, DataFrame, str, str)
        Per family and target; per instance set (its name linked to its page); and the two captions.
    """
    from psdbench.report.summary import winners_section

    front, per_set = (s.blocks[0] for s in winners_section(frame, options))
    fam = front.frame.map(lambda v: _relink(v, setup, set_link))
    sets = per_set.frame.map(lambda v: _relink(v, setup, set_link))
    if "instance set" in sets.columns:
        sets["instance set"] = [f"[{s}]({set_link(s)})" for s in sets["instance set"]]
    return fam, sets, _relink(front.note, setup, set_link), per_set.note


def _links(rows: pd.DataFrame, row_link: RowLink) -> str:
    return " ".join(f"[{i + 1}]({row_link(s, r)})" for i, (s, r) in enumerate(zip(rows["solver"], rows["row_id"])))


def _time_cell(vals: pd.Series, rows: pd.DataFrame, limit: float, row_link: RowLink) -> str:
    t = float(np.median(vals.to_numpy(float))) if len(vals) else math.nan
    if len(rows) == 1:
        r = rows.iloc[0]
        text = f"{fmt_num(t)} s" if np.isfinite(t) else f"not reached ({r['outcome'] or r['status']})"
        return f"[{text}]({row_link(r['solver'], r['row_id'])})"
    text = f"{fmt_num(t)} s" if np.isfinite(t) else f"not reached (limit {fmt_num(limit)} s)"
    return f"{text}, median of {len(rows)}: rows {_links(rows, row_link)}"


def set_times(frame: pd.DataFrame, row_link: RowLink, tols: Iterable[float] = TOLERANCES,
              allowance: float = DEFAULT_ALLOWANCE, short: Callable[[str], str] = str) -> list[dict[str, Any]]:
    """One instance set of one setup: per target, a table of units x configurations of the time to
    reach it (the report's reach times; replicates: their median, each row linked), then the report's
    shifted geometric mean and reached count, or why the target is not resolved.

    Returns
    -------
    list of dict
        ``tol``, ``table`` (DataFrame), ``note`` (the shift, or why it is not resolved).
    """
    f = ranked(frame)
    if f.empty:
        return []
    tols = list(tols)
    cells = an.reach_times(f, tols, allowance, by_unit=False)
    if len(cells) != len(f):  # pragma: no cover - reach_times keeps every ranked row (see ranked())
        raise AssertionError("reach times do not line up with their rows")
    cells.index = f.index
    units = an.reach_times(f, tols, allowance)
    labels = sorted(f["solver_label"].unique(), key=an.natural_key)
    unit_text = f.groupby("unit")["instance_text"].first()
    slim = f[["unit", "solver_label", "solver", "row_id", "outcome", "status"]].join(cells.drop(columns=["solver_label"]))
    groups = {k: g for k, g in slim.groupby(["unit", "solver_label"], sort=False)}
    order = sorted(f["unit"].unique(), key=lambda u: an.natural_key(unit_text.get(u, u)))
    out = []
    for tol in tols:
        col = f"t_{tol:g}"
        body = []
        for unit in order:
            row = {"instance": unit_text.get(unit, unit)}
            for lab in labels:
                g = groups.get((unit, lab))
                row[short(lab)] = MISSING if g is None else _time_cell(g[col], g, float(g["limit_s"].max()), row_link)
            body.append(row)
        why = an.unresolved(units, tol)
        if why:
            note = f"not resolved: {why}"
        else:
            scores, shift = an.set_scores(units, tol)
            body.append({"instance": "shifted geometric mean (s)",
                         **{short(lab): fmt_num(scores.loc[lab, "sgm"]) if lab in scores.index else MISSING
                            for lab in labels}})
            body.append({"instance": "reached / compared",
                         **{short(lab): f"{int(scores.loc[lab, 'reached'])}/{int(scores.loc[lab, 'instances'])}"
                            if lab in scores.index else "not compared (ran part of the set)" for lab in labels}})
            note = f"shift {fmt_num(shift)} s; a unit not reached is charged at its cell's time limit"
        out.append({"tol": tol, "table": pd.DataFrame(body), "note": note})
    return out


def history_tables(frame: pd.DataFrame, tols: Iterable[float] = TOLERANCES,
                   allowance: float = DEFAULT_ALLOWANCE) -> list[dict[str, Any]]:
    """Per setup, instance set and configuration run by more than one build (psdbench's version and
    commit, the solver's code): the builds compared on the units every one of them ran, by the
    report's shifted geometric mean and reached count.

    Returns
    -------
    list of dict
        ``setup``, ``setup_label``, ``set``, ``configuration``, ``common`` (units compared), ``left_out``
        (units some build did not run), ``table`` (DataFrame: one row per build).
    """
    tols = list(tols)
    out = []
    f = ranked(frame)
    if f.empty:
        return out
    for (setup, s), g in f.groupby(["setup", "set"], sort=True):
        nb = g.groupby("solver_label")["build"].nunique()
        labels = sorted(nb.index[nb > 1])
        if not labels:
            continue
        h = g[g["solver_label"].isin(labels)]
        # one reach-time table of the set (the report's), a configuration's builds as its columns
        units = an.reach_times(h.assign(solver_label=h["solver_label"] + "\0" + h["build"]), tols, allowance)
        for lab in labels:
            mine = h[h["solver_label"] == lab]
            builds = sorted(mine["build"].unique())
            per = mine.groupby("build")["unit"].agg(lambda u: set(u))
            common = set.intersection(*per.tolist())
            left = set.union(*per.tolist()) - common
            u = units[units["solver_label"].str.startswith(lab + "\0") & units["instance_key"].isin(common)]
            u = u.assign(solver_label=u["solver_label"].str.split("\0", n=1).str[1])
            scores = {tol: an.set_scores(u, tol)[0] for tol in tols if len(u) and not an.unresolved(u, tol)}
            rows = []
            for b in builds:
                rows_b = mine[mine["build"] == b]
                row = {"build": b, "rows": len(rows_b), "runs": rows_b["run_id"].nunique(),
                       "first stored": str(rows_b["created_at"].min())[:19]}
                for tol in tols:
                    sc = scores.get(tol)
                    row[f"gap ≤ {tol:g}: reached"] = (f"{int(sc.loc[b, 'reached'])}/{int(sc.loc[b, 'instances'])}"
                                                      if sc is not None and b in sc.index else
                                                      ("not resolved" if common else MISSING))
                    row[f"gap ≤ {tol:g}: SGM s (x best)"] = (f"{fmt_num(sc.loc[b, 'sgm'])} (x{fmt_ratio(sc.loc[b, 'scaled'])})"
                                                            if sc is not None and b in sc.index else MISSING)
                rows.append(row)
            out.append({"setup": setup, "setup_label": g["setup_label"].iloc[0], "set": s, "configuration": lab,
                        "common": len(common), "left_out": len(left), "table": pd.DataFrame(rows)})
    return out
