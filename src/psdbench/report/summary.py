"""The report's front sections: run details (from the store's ``runs`` table) and the winners matrix."""

from __future__ import annotations

import json
from typing import Any, Mapping

import numpy as np
import pandas as pd

from psdbench.harness.store.results import OUTCOMES, outcome_column
from psdbench.api import RankingMetric
from psdbench.report.measures import analysis as an
from . import rules
from .blocks import Section, Table
from .fmt import MISSING, fmt_num, fmt_ratio


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


def _tie_or_margin(rec: Mapping[str, Any]) -> str:
    if not rec["runner_up"]:
        return "uncontested" if rec.get("configurations", 2) < 2 else "no runner-up reached it"
    ru = f"{rec['short'](rec['runner_up'])} {rec['runner_reached']}/{rec['instances']}"
    shared = rec.get("shared_failures", 0)
    left = f"; {shared} both failed, left out" if shared else ""
    spread = (f" [{fmt_ratio(rec['low'])}-{fmt_ratio(rec['high'])}]" if np.isfinite(rec["low"])
              and rec["low"] != rec["high"] else "")
    if rec.get("won_on"):
        return (f"{rec['won_on']}; runner-up {ru} faster where either reached (x{fmt_ratio(rec['ratio'])}{spread}"
                f"{left})")
    if rec["tie"]:
        return f"tie with {ru} (x{fmt_ratio(rec['ratio'])}{spread}{left})"
    return f"runner-up {ru}, x{fmt_ratio(rec['ratio'])}{spread} slower" + (f" ({left[2:]})" if left else "")


def _gap_cell(rec: Mapping[str, Any]) -> str:
    """One winners cell: the winner with k/n and its median seconds, then the runner-up and the margin."""
    if not rec["instances"]:
        return "no instance every configuration ran"
    if rec.get("unresolved"):
        return rec["unresolved"]
    if not rec["winner"]:
        return f"none reached it (0/{rec['instances']})"
    return (f"**{rec['short'](rec['winner'])}** {rec['reached']}/{rec['instances']}, {fmt_num(rec['median'])} s; "
            + _tie_or_margin(rec))


def metric_winner(g: pd.DataFrame, metric: RankingMetric) -> dict[str, Any]:
    """One instance set ranked by a declared task metric: the best mean over verified cells, the
    runner-up, and their comparison by the one rule (:func:`psdbench.report.rules.paired_verdict`): the
    95 % t interval of the paired difference (winner - runner-up, sense-adjusted) over the independent
    units (:func:`psdbench.report.measures.aggregate.paired`: instances, seeds only where they change the
    metric); the winner is better when the interval is above 0, a tie (within the spread) when it
    straddles 0."""
    from psdbench.report.measures.aggregate import paired, t_interval

    col = f"metric_{metric.metric}"
    v = g[g["verified"].astype(bool)] if col in g.columns else g.iloc[0:0]
    v = v[np.isfinite(pd.to_numeric(v[col], errors="coerce").astype(float))] if len(v) else v
    out: dict[str, Any] = {"winner": "", "runner_up": "", "mean": np.nan, "runner_mean": np.nan, "n": 0,
                           "runner_n": 0, "diff": np.nan, "low": np.nan, "high": np.nan, "units": 0, "tie": False,
                           "verdict": rules.NOT_MEASURED, "configurations": g["solver_label"].nunique()}
    if v.empty:
        return out
    means = v.groupby("solver_label")[col].mean().sort_values(ascending=metric.sense != "max", kind="stable")
    w = str(means.index[0])
    out.update(winner=w, mean=float(means.iloc[0]), n=int((v["solver_label"] == w).sum()))
    if len(means) > 1:
        r = str(means.index[1])
        p = paired(v, col, w, r, cells="all")
        iv = t_interval((p["a"] - p["b"]) * (1 if metric.sense == "max" else -1))
        verdict = rules.paired_verdict(iv.mean, iv.low, iv.high, iv.n, 0.0, ">")
        out.update(runner_up=r, runner_mean=float(means.iloc[1]), runner_n=int((v["solver_label"] == r).sum()),
                   diff=iv.mean, low=iv.low, high=iv.high, units=iv.n, verdict=verdict,
                   tie=verdict != rules.HOLDS)
    return out


def _metric_cell(rec: Mapping[str, Any], metric: RankingMetric, short: Any) -> str:
    name = metric.label or metric.metric
    if not rec["winner"]:
        return f"no verified cell with {name}"
    head = f"by {name}: **{short(rec['winner'])}** {fmt_num(rec['mean'])} ({rec['n']} cells)"
    if not rec["runner_up"]:
        return head + ("; uncontested" if rec.get("configurations", 2) < 2 else "")
    what = {rules.HOLDS: "better than", rules.WITHIN: "tie with (within the spread)",
            rules.FAILS: "not better than"}.get(rec["verdict"], "tie with")
    interval = (f"[{fmt_num(rec['low'])}, {fmt_num(rec['high'])}] (95 %, {rec['units']} units)"
                if np.isfinite(rec["low"]) else f"({rec['units']} unit: no interval)")
    return (f"{head}; {what} {short(rec['runner_up'])} {fmt_num(rec['runner_mean'])}, difference "
            f"{fmt_num(rec['diff'])} {interval}")


#: The winners tables' column for a family ranked by its declared metric (not by a gap target).
METRIC_COLUMN = "by its declared metric"


def _by_metric(metric: RankingMetric) -> str:
    return f"(ranked by {metric.label or metric.metric}, not by gap: see `{METRIC_COLUMN}`)"


def _family_summary(cells: list[str]) -> str:
    """``A: 6 (2 tied, 1 won on reached count); B: 1; none: 1`` of 8 sets: the per-set winners of one
    family and target."""
    won: dict[str, list[int]] = {}
    for c in cells:
        w = c.split("**")[1] if c.count("**") >= 2 else "not resolved" if c.startswith("not resolved") else "none"
        n = won.setdefault(w, [0, 0, 0])
        n[0] += 1
        n[1] += "tie with" in c
        n[2] += "; won on " in c
    parts = sorted(won.items(), key=lambda kv: (kv[0] in ("none", "not resolved"), -kv[1][0], kv[0]))

    def extra(t: int, o: int) -> str:
        words = ([f"{t} tied"] if t else []) + ([f"{o} won on reached count or SGM, runner-up faster"] if o else [])
        return f" ({', '.join(words)})" if words else ""
    return "; ".join(f"{k}: {n}{extra(t, o)}" for k, (n, t, o) in parts)


def winners_section(frame: pd.DataFrame, options: Mapping[str, Any],
                    refs: pd.DataFrame | None = None) -> list[Section]:
    """Per family and target accuracy: the winners of its comparable instance sets, summarised, and
    per set the winner, runner-up, margin, tie, k/n reached and the reference's kind.

    The rules are :mod:`psdbench.report.rules`.  A family whose section declares a ranking metric
    (``options["ranking_metrics"]``, :class:`psdbench.api.RankingMetric`) is ranked by it; no winner is
    declared by gap on a set whose reference is a competitor's own best-verified objective.
    """
    tols = tuple(options.get("tolerances", rules.TOLERANCES))
    allowance = float(options.get("gap_floor", rules.DEFAULT_ALLOWANCE))
    declared: Mapping[str, RankingMetric] = options.get("ranking_metrics") or {}
    fam_rows, set_rows = [], []
    source = an.reference_sources(frame, refs)
    for fam in sorted(frame["family"].unique()):
        f = frame[frame["family"] == fam]
        short_map = an.tolerance_labels(f, an.short_labels(sorted(f["solver_label"].unique())))
        short = short_map.get
        sets = an.instance_sets(f)
        metric = declared.get(fam)
        times = an.reach_times(f, tols, allowance)
        by_set = {s: g for s, g in times.groupby("set")} if len(times) else {}
        cells: dict[float, list[str]] = {t: [] for t in tols}
        metric_cells: list[str] = []
        for s in sorted(sets.unique(), key=an.natural_key):
            idx = sets.index[sets == s]
            kinds = sorted(set(source[idx]))
            row = {"family": fam, "instance set": s, "reference": an.reference_text(f.loc[idx])}
            circular = [k for k in kinds if k.startswith("best verified")]
            if metric is not None:  # ranked by its metric, in its own column: no gap target claims it
                row[METRIC_COLUMN] = _metric_cell(metric_winner(f.loc[idx], metric), metric, short)
                metric_cells.append(row[METRIC_COLUMN])
                for t in tols:
                    row[f"gap ≤ {t:g}"] = _by_metric(metric)
            elif circular:
                for t in tols:
                    row[f"gap ≤ {t:g}"] = "no winner by gap: the reference is a competitor's own objective"
                    cells[t].append("")
            elif s not in by_set:
                for t in tols:
                    row[f"gap ≤ {t:g}"] = "no reference objective"
                    cells[t].append("")
            else:
                for t in tols:
                    rec = {**an.set_winner(by_set[s], t), "short": short}
                    row[f"gap ≤ {t:g}"] = _gap_cell(rec)
                    cells[t].append(row[f"gap ≤ {t:g}"])
            set_rows.append(row)
        by = f", by {metric.label or metric.metric}" if metric else ""
        n_sets = len(metric_cells) if metric else len(cells[tols[0]])
        fam = {"family": f"{fam} ([{n_sets} sets](#s-winners-per-instance-set){by})",
               **{f"gap ≤ {t:g}": _by_metric(metric) if metric else _family_summary(cells[t]) for t in tols}}
        if declared:
            fam[METRIC_COLUMN] = _family_summary(metric_cells) if metric else ""
        fam_rows.append(fam)
    if declared:
        set_rows = [{**r, METRIC_COLUMN: r.get(METRIC_COLUMN, "")} for r in set_rows]
    front = Table("winners", "Winners per family and target accuracy", pd.DataFrame(fam_rows),
                  "Sets won per configuration (of the family's comparable instance sets: problem, dataset, size and "
                  "structure parameters; seeds and folds are replicates), fastest to reach the target gap unless "
                  "the family is ranked by its own metric; `tied`: the runner-up reached the target as fast on "
                  "some unit (by a metric: the paired 95 % interval straddles 0); `not resolved`: the target is "
                  "tighter than the reference's accuracy or the verification floor.  "
                  "Per set: [winners per instance set](#s-winners-per-instance-set); rules: [glossary](#s-glossary).")
    per_set = Table("winners_per_set", "Winners per instance set", pd.DataFrame(set_rows),
                    "Cell: **winner** reached/compared units (instances, folds; seeds only where they change the "
                    "result), its median seconds to reach the target; the runner-up with its reached/compared and "
                    "the margin (runner-up time / winner time, geometric mean [min-max] over the units at least one "
                    "of them reached; units both failed are left out and counted); a tie when the runner-up reached "
                    "the target at least as fast on some unit; `won on reached count` (or `on SGM`): the margin is below 1, "
                    "the runner-up faster where either reached, so both are shown; `uncontested`: the set has one configuration; "
                    "`not resolved`: the target is tighter than the set's reference accuracy (`known to`) or "
                    "verification floor, so no winner is named.  Reference: its one kind name per instance with its "
                    "accuracy (a competitor's best-verified objective: no winner is declared by gap).")
    return [Section("Winners", [front]), Section("Winners per instance set", [per_set])]


def glossary_section(allowance: float = rules.DEFAULT_ALLOWANCE) -> Section:
    """The report's one glossary: the verdict rules (:func:`psdbench.report.glossary.glossary`), the
    reference kinds, the verdicts and the outcome words (:data:`psdbench.harness.store.results.OUTCOMES`)."""
    from .glossary import glossary

    rows = list(glossary(allowance))
    rows += [(f"reference: {k}", v) for k, v in an.REFERENCE_KINDS.items()]
    rows += [(f"verdict: {k}", v) for k, v in rules.VERDICTS.items()]
    rows += [(f"outcome: {k}", v) for k, v in OUTCOMES.items()]
    return Section("Glossary", [Table("glossary", "Rules and words used on this page",
                                      pd.DataFrame(rows, columns=["term", "meaning"]),
                                      "Every table and chart applies these rules (`psdbench.report.rules`); "
                                      "results.csv carries `gap`, `floor`, `ranked_gap`, `outcome`, `reference` and "
                                      "`known_to` per cell.")])
