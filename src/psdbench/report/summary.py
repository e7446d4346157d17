"""The report's front sections: run details (from the store's ``runs`` table) and the winners matrix."""

from __future__ import annotations

import json
from typing import Any, Mapping

import pandas as pd

from ..harness.results import outcome_column
from . import analysis as an
from .blocks import Section, Table, Text
from .fmt import MISSING, fmt_num


def _json(v: Any) -> dict[str, Any]:
    if isinstance(v, dict):
        return v
    try:
        d = json.loads(v) if isinstance(v, str) else {}
    except ValueError:
        return {}
    return d if isinstance(d, dict) else {}


def _distinct(values: list[str]) -> str:
    vals = list(dict.fromkeys(v for v in values if v))
    return "; ".join(vals) if vals else MISSING


def _blas(threads: dict[str, Any]) -> str:
    pools = threads.get("pools") or []
    parts = [f"{p.get('internal_api')} {p.get('version') or ''}: {p.get('num_threads')}".replace(" :", ":")
             for p in pools if isinstance(p, dict)]
    head = f"{threads['worker_blas_threads']} per worker" if "worker_blas_threads" in threads else ""
    return ", ".join(x for x in [head, "pools " + "; ".join(parts) if parts else ""] if x) or MISSING


def run_details(runs: pd.DataFrame, frame: pd.DataFrame, store_path: str) -> Section:
    """Machine, CPUs, BLAS threads, versions, commit and command of the runs that wrote the shown cells."""
    shown = set(frame["run_id"].dropna().astype(str)) if "run_id" in frame.columns else set()
    r = runs[runs["run_id"].astype(str).isin(shown)] if len(runs) and shown else runs
    machine = [_json(m) for m in r.get("machine", [])]
    versions = [_json(v) for v in r.get("versions", [])]
    threads = [_json(t) for t in r.get("threads", [])]
    libs = _distinct([", ".join(f"{k} {v}" for k, v in sorted(d.items()) if k not in ("psdbench", "commit", "git"))
                      for d in versions])
    cpu = _distinct([f"{m.get('cpus', '?')} CPUs, {m.get('memory_gb', '?')} GB, Python {m.get('python', '?')}"
                     + (f", {m['processor']}" if m.get("processor") else "") for m in machine])
    commit = _distinct([str(v.get("commit") or v.get("git") or "") for v in versions])
    rows = [
        ("machine", f"{_distinct([str(m.get('platform', '')) for m in machine])}; {cpu}"),
        ("BLAS threads", _distinct([_blas(t) for t in threads])),
        ("versions", f"psdbench {_distinct([str(v.get('psdbench', '')) for v in versions])} (commit "
                     f"{commit if commit != MISSING else 'not recorded'}); {libs}"),
        ("command", _distinct([str(c) for c in r.get("command", [])])),
        ("runs", (f"{len(r)}: " + _distinct([f"{i} ({a} to {b or 'unfinished'})" for i, a, b in
                                             zip(r["run_id"], r["started_at"], r["finished_at"])])) if len(r)
         else "no run recorded in the store's `runs` table"),
        ("store", f"{store_path}: {len(frame)} cells shown ("
                  + ", ".join(f"{k}: {v}" for k, v in outcome_column(frame).value_counts().items()) + ")"),
    ]
    t = Table("run_details", "Machine, versions, command", pd.DataFrame(rows, columns=["run", "value"]),
              "From the store's `runs` table, for the runs whose cells this report shows.  Every cell: "
              "[results.csv](results.csv); every cell that is not `ok`: [failures.csv](failures.csv); each "
              "table's CSV is linked beside its title.")
    return Section("Run details", [t], family="")


def _reading(gap_floor: float, shift: float) -> Text:
    return Text("How to read the comparisons: the gap is `s (objective - reference) / max(|reference|, 1)` "
                "(`s = -1` for maximized problems) of the harness's re-scored points; a configuration reaches a "
                "tolerance at the first verified point with gap ≤ tolerance.  Gaps below the instance's floor "
                f"(its certificate's width, at least {gap_floor:g}: the order of the verification tolerances) are "
                "ties.  A point below a certified optimum by more than that floor is beyond the bound: drawn as an "
                "`x`, never counted as reached (the table of points beyond the certified bound lists every point "
                "below it by more than the certificate's width alone).  Fastest: "
                f"the smallest shifted geometric mean of the times (shift {shift:g} s, failures charged at the report "
                "option `time_limit`, else at the longest wall time of the family's cells: the store does not record "
                "the grid's timeout) over the instances every configuration of the family ran.")


def _cell(rec: Any) -> str:
    if not rec.instances:
        return "no instance every configuration ran"
    if not rec.winner:
        return f"none reached it (0/{rec.instances})"
    return (f"{rec.winner}: {rec.reached}/{rec.instances}, median {fmt_num(rec.median)} s "
            f"[{fmt_num(rec.min)}-{fmt_num(rec.max)}]")


#: Instance sets listed in a winners cell when a family has no instance every configuration ran.
MAX_SETS = 3


def winners_section(frame: pd.DataFrame, options: Mapping[str, Any]) -> Section:
    """Per family and target accuracy: the fastest configuration that reaches it, with k/n instances.

    Over the instances every configuration of the family ran; a family without one gets the winner
    of each comparable instance set instead (the first :data:`MAX_SETS`).
    """
    tols = tuple(options.get("tolerances", an.TOLERANCES))
    shift = float(options.get("sgm_shift", 10.0))
    floor = float(options.get("gap_floor", an.GAP_FLOOR))
    rows = []
    for fam in sorted(frame["family"].unique()):
        times = an.reach_times(frame[frame["family"] == fam], tols, floor)
        row: dict[str, str] = {"family": fam}
        if times.empty:
            rows.append({**row, **{f"gap ≤ {t:g}": "no reference objective" for t in tols}})
            continue
        limit = an.time_limit(times, options.get("time_limit"))
        w = an.winners(times, tols, shift, limit)
        left = int(w["left_out"].iloc[0])
        if int(w["instances"].iloc[0]):
            for rec in w.itertuples(index=False):
                row[f"gap ≤ {rec.tol:g}"] = _cell(rec)
            row["instances compared"] = f"{int(w['instances'].iloc[0])}" + (
                f" ({left} left out: not run by every configuration)" if left else "")
        else:  # no common instance: one winner per comparable set
            sets = sorted(times["set"].unique())
            per = {s: an.winners(times[times["set"] == s], tols, shift, limit) for s in sets[:MAX_SETS]}
            for i, tol in enumerate(tols):
                row[f"gap ≤ {tol:g}"] = "; ".join(f"{s}: {_cell(next(w.iloc[[i]].itertuples(index=False)))}"
                                                   for s, w in per.items())
            row["instances compared"] = (f"per instance set (no instance every configuration ran); "
                                         f"{min(len(sets), MAX_SETS)} of {len(sets)} set(s) shown")
        rows.append(row)
    t = Table("winners", "Fastest configuration per family and target accuracy", pd.DataFrame(rows),
              "Cell: the winner, the instances on which it reached the target out of those compared, and its median "
              "[min-max] seconds to reach it over those.  Details, per instance set: each family's "
              "performance profiles and shifted geometric means.")
    return Section("Winners", [t, _reading(floor, shift)])
