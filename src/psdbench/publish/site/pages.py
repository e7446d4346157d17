"""The site's pages as template contexts: the overview, one page per solver, per instance set and per
setup (its machine), the history and the rules.

Each function returns a dict a template of ``templates/`` renders; tables are HTML strings made by the
report's own table renderer (:func:`psdbench.report.render.htmltable.html_table`), so the site and the
report show a cell the same way.  Links are relative (``root`` is the way back to the site's top), so
the site works from a folder, offline, and from any static host.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Mapping

import numpy as np
import pandas as pd

from psdbench.publish.site.model import SiteData, calibration_ratios, current_rows, geometric_ratio
from psdbench.publish.site.rankings import history_tables, set_times, setup_winners
from psdbench.report.fmt import MISSING, fmt_num, slug
from psdbench.report.render.htmltable import html_table

__all__ = ["Links", "history_page", "machine_page", "overview_page", "rules_page", "set_page", "solver_page"]


class Links:
    """The site's file names: one per solver, instance set and setup (stable, file-name safe)."""

    @staticmethod
    def _name(text: str) -> str:
        return f"{slug(text)[:60]}-{hashlib.sha256(text.encode()).hexdigest()[:6]}.html"

    def solver(self, name: str) -> str:
        return f"solvers/{self._name(name)}"

    def set(self, name: str) -> str:
        return f"sets/{self._name(name)}"

    def machine(self, setup: str) -> str:
        return f"machines/{setup}.html"

    def row(self, solver: str, row_id: str, root: str = "../") -> str:
        return f"{root}{self.solver(solver)}#{row_id}"


def _num(x: Any) -> str:
    return fmt_num(x) if x is not None and not (isinstance(x, float) and np.isnan(x)) else MISSING


def _dict(v: Any) -> dict[str, Any]:
    if isinstance(v, dict):
        return v
    try:
        d = json.loads(v) if isinstance(v, str) and v else {}
    except ValueError:
        return {}
    return d if isinstance(d, dict) else {}


def overview_page(data: SiteData, options: Mapping[str, Any], links: Links) -> dict[str, Any]:
    """The front page: what the dataset holds, its setups (calibration ratios, never a ranking across
    them), and per setup the report's winners per family and instance set, at each target."""
    f = data.frame
    ratios = calibration_ratios(data.calibration, data.setups)
    setups = []
    first = data.setups["setup"].iloc[0] if len(data.setups) else ""
    for setup, g in data.setups.groupby("setup", sort=False):
        rows = f[f["setup"] == setup]
        r = ratios[ratios["setup"] == setup]
        setups.append({"setup": setup, "label": g["setup_label"].iloc[0], "link": links.machine(setup),
                       "runs": g["run_id"].nunique(), "rows": len(rows),
                       "psdbench": ", ".join(sorted({f"{v} ({c[:8]})" if c else v for v, c in
                                                     zip(g["psdbench_version"], g["commit"])})),
                       "ratio": _num(geometric_ratio(r["ratio"])) if len(r) else "not calibrated"})
    rankings = []
    for s in setups:
        cur = current_rows(f[(f["setup"] == s["setup"]) & (f["provenance"] == "psdbench")])
        if cur.empty:
            continue
        fam, per_set, cap_f, cap_s = setup_winners(cur, options, s["setup"], links.set)
        rankings.append({**s, "families": html_table(fam), "sets": html_table(per_set), "caption_families": cap_f,
                         "caption_sets": cap_s, "shown": len(cur)})
    outside = f[f["provenance"] != "psdbench"]
    families = [{"family": fam, "sets": [{"name": s, "link": links.set(s)} for s in sorted(g["set"].unique())]}
                for fam, g in f.groupby("family", sort=True)]
    solvers = [{"name": n, "link": links.solver(n), "rows": int(c)} for n, c in f["solver"].value_counts().sort_index().items()]
    return {"setups": setups, "base_setup": first, "rankings": rankings, "families": families, "solvers": solvers,
            "outside": int(len(outside)), "outside_formats": sorted(set(outside["provenance"])),
            "merge": data.merge}


#: A solver page's columns: (heading, frame column or function of a row).
ROW_COLUMNS: tuple[tuple[str, Any], ...] = (
    ("configuration", "solver_label"), ("instance", "instance_text"), ("status", "status"), ("outcome", "outcome"),
    ("objective", lambda r: _num(r["objective"])), ("reference", lambda r: _num(r["reference_objective"])),
    ("reference kind", "reference"), ("known to", lambda r: _num(r["known_to"])), ("gap", lambda r: _num(r["gap"])),
    ("floor", lambda r: _num(r["floor"])), ("ranked gap", lambda r: _num(r["ranked_gap"])),
    ("wall s", lambda r: _num(r["wall_time_s"])), ("CPU s", lambda r: _num(r["cpu_time_s"])),
    ("peak MiB", lambda r: _num(r["peak_rss_mb"])), ("limit s", lambda r: _num(r["time_limit_s"])),
    ("iterations", lambda r: _num(r["iterations"])), ("build", "build"), ("from", "provenance"),
    ("point", lambda r: "carried" if isinstance(r.get("point"), str) and r.get("point") else MISSING),
)


def solver_page(data: SiteData, solver: str, links: Links, rows: pd.DataFrame | None = None) -> dict[str, Any]:
    """Every row of one solver, across instances, setups and builds; each row is an anchor (its
    :func:`~psdbench.publish.site.model.row_id`) and can be filtered by setup, instance set and
    outcome (the filter is kept in the page's address, so a view is a link).  ``rows``: the solver's
    rows of ``data.frame`` where the caller has them grouped already."""
    f = data.frame[data.frame["solver"] == solver] if rows is None else rows
    f = f.sort_values(["setup", "set", "solver_label", "instance_text", "created_at"], kind="stable")
    current = set(current_rows(f)["row_id"])
    out = []
    for r in f.to_dict("records"):
        cells = [r.get(c) if isinstance(c, str) else c(r) for _, c in ROW_COLUMNS]
        out.append({"id": r["row_id"], "setup": r["setup"], "setup_link": "../" + links.machine(r["setup"]),
                     "set": r["set"], "set_link": "../" + links.set(r["set"]), "outcome": str(r.get("outcome") or ""),
                     "cells": ["" if c is None or (isinstance(c, float) and np.isnan(c)) else str(c) for c in cells],
                     "current": r["row_id"] in current, "run": r["run_id"], "message": str(r.get("message") or "")})
    return {"solver": solver, "columns": [h for h, _ in ROW_COLUMNS], "rows": out,
            "setups": sorted(set(f["setup"])), "sets": sorted(set(f["set"])),
            "outcomes": sorted({r["outcome"] for r in out}),
            "labels": {s: data.setups.loc[data.setups["setup"] == s, "setup_label"].iloc[0]
                       for s in set(f["setup"]) if (data.setups["setup"] == s).any()}}


def set_page(data: SiteData, name: str, options: Mapping[str, Any], links: Links,
             rows: pd.DataFrame | None = None) -> dict[str, Any]:
    """One instance set: per setup, every configuration's time to each target on each unit (the
    current rows; each time linked to its row), with the report's scores; outside rows listed apart.
    ``rows``: the set's rows of ``data.frame`` where the caller has them grouped already."""
    f = data.frame[data.frame["set"] == name] if rows is None else rows
    tols = tuple(options.get("tolerances", ()))
    allowance = float(options.get("gap_floor"))
    setups = []
    for setup in dict.fromkeys(data.setups["setup"]):
        g = current_rows(f[(f["setup"] == setup) & (f["provenance"] == "psdbench")])
        if g.empty:
            continue
        times = set_times(g, lambda s, r: links.row(s, r), tols, allowance)
        setups.append({"setup": setup, "label": g["setup_label"].iloc[0], "link": "../" + links.machine(setup),
                       "reference": ", ".join(sorted(set(g["reference"].fillna("none")))),
                       "targets": [{"tol": t["tol"], "table": html_table(t["table"]), "note": t["note"]} for t in times],
                       "rows": len(g)})
    outside = f[f["provenance"] != "psdbench"]
    out_tab = pd.DataFrame({"configuration": outside["solver_label"], "instance": outside["instance_text"],
                            "objective (reported)": outside["objective"].map(_num),
                            "seconds (reported)": outside["wall_time_s"].map(_num), "from": outside["provenance"],
                            "row": [f"[row]({links.row(s, r)})" for s, r in zip(outside["solver"], outside["row_id"])]})
    return {"name": name, "family": f["family"].iloc[0] if len(f) else "", "setups": setups,
            "outside": html_table(out_tab) if len(outside) else ""}


def machine_page(data: SiteData, setup: str, links: Links, runs: pd.DataFrame) -> dict[str, Any]:
    """One setup: its machine's fingerprint (from its runs' records), BLAS pools, Dask workers, the
    environment, its runs, and its calibration beside the other setups'."""
    s = data.setups[data.setups["setup"] == setup]
    mine = runs[runs["run_id"].isin(set(s["run_id"]))]
    first = mine.iloc[0] if len(mine) else pd.Series(dtype=object)
    m, t = _dict(first.get("machine")), _dict(first.get("threads"))
    env = m.get("environment") or {}
    facts = [("setup", s["setup_label"].iloc[0] if len(s) else setup),
             ("machine class (fingerprint)", m.get("fingerprint") or MISSING), ("platform", m.get("platform") or MISSING),
             ("CPU", m.get("processor") or MISSING), ("CPUs", m.get("cpus") or MISSING),
             ("memory GB", m.get("memory_gb") or MISSING), ("Python", m.get("python") or MISSING),
             ("GPUs", ", ".join(m.get("gpus") or []) or "none"),
             ("BLAS threads per worker", t.get("worker_blas_threads", MISSING)),
             ("environment hash", env.get("hash") or MISSING),
             ("distributions", len(env.get("distributions") or {}) or env.get("count") or MISSING)]
    pools = pd.DataFrame(t.get("pools") or [])
    workers = pd.DataFrame([{"worker": w.get("address") or w.get("name") or i, "class": w.get("fingerprint"),
                             "CPU": w.get("processor"), "CPUs": w.get("cpus"), "GPUs": ", ".join(w.get("gpus") or []) or "none",
                             "environment": (w.get("environment") or {}).get("hash")}
                            for i, w in enumerate(m.get("workers") or []) if isinstance(w, dict)])
    run_tab = s[["run_id", "started_at", "finished_at", "psdbench_version", "commit", "command"]].copy()
    run_tab["rows"] = run_tab["run_id"].map(data.frame["run_id"].value_counts()).fillna(0).astype(int)
    cal = data.calibration[data.calibration["run_id"].isin(set(s["run_id"]))].copy()
    if len(cal):
        med = pd.to_numeric(cal["median_s"], errors="coerce")
        cal["noise (max-min)/median"] = ((pd.to_numeric(cal["max_s"], errors="coerce")
                                          - pd.to_numeric(cal["min_s"], errors="coerce")) / med).map(_num)
        for c in ("median_s", "min_s", "max_s"):
            cal[c] = pd.to_numeric(cal[c], errors="coerce").map(lambda x: f"{x:.4g}")
        cal = cal.drop(columns=["machine_fingerprint"], errors="ignore")
    ratios = calibration_ratios(data.calibration, data.setups)
    compare = ratios.pivot_table(index="kernel", columns="setup", values="ratio", aggfunc="first") if len(ratios) else None
    if compare is not None:
        compare = compare.map(_num).reset_index()
        compare.columns = ["kernel"] + [f"[{c}]({c}.html)" + (" (this one)" if c == setup else "")
                                        for c in compare.columns[1:]]
    return {"setup": setup, "facts": facts, "pools": html_table(pools) if len(pools) else "",
            "workers": html_table(workers) if len(workers) else "", "runs": html_table(run_tab),
            "calibration": html_table(cal) if len(cal) else "", "compare": html_table(compare) if compare is not None else "",
            "base": data.setups["setup"].iloc[0] if len(data.setups) else "",
            "distributions": sorted((env.get("distributions") or {}).items())}


def history_page(data: SiteData, options: Mapping[str, Any], links: Links) -> dict[str, Any]:
    """Each configuration across its builds (psdbench's version and commit, the solver's code), per
    setup and instance set, on the units every build ran."""
    items = history_tables(data.frame[data.frame["provenance"] == "psdbench"], tuple(options.get("tolerances", ())),
                           float(options.get("gap_floor")))
    builds = (data.frame.groupby(["psdbench_version", "commit"], dropna=False).agg(
        rows=("row_id", "size"), runs=("run_id", "nunique"), setups=("setup", "nunique")).reset_index())
    return {"items": [{**i, "table": html_table(i["table"]), "set_link": links.set(i["set"]),
                       "machine_link": links.machine(i["setup"])} for i in items],
            "versions": html_table(builds) if len(builds) else ""}


def rules_page(options: Mapping[str, Any]) -> dict[str, Any]:
    """The report's glossary and rules, rendered from the report's own section (stated once)."""
    from psdbench.report.summary import glossary_section

    sec = glossary_section(float(options.get("gap_floor")))
    return {"tables": [{"title": b.title, "table": html_table(b.frame), "caption": b.note}
                       for b in sec.blocks if hasattr(b, "frame")]}
