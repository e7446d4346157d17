"""The report: a tidy frame of the store, sections from plugins, one renderer.

:func:`write_report` builds the tidy frame (:func:`psdbench.report.frame.tidy_frame`), groups its
rows by family, and calls every section registered in the ``psdbench.reports`` entry-point group
whose ``family`` matches (``"*"``: once per family present), sorted by ``order``.  A section returns
blocks (:mod:`psdbench.report.blocks`); one that raises is reported inside the report and never
breaks it.

Before the sections: the run details (:mod:`psdbench.report.summary`), the findings against the
papers (collected by the renderer) and the winners matrix.

Files written in ``out_dir``: ``report.md``, ``report.html`` (self-contained: inline scripts and
plotly.js, no external URL), ``results.csv`` (every cell, without traces and curves),
``failures.csv`` (every cell whose status is not ``ok``), and one CSV per table / PNG per figure
or chart.

Rooms, bottom up (``tests/test_structure.py`` keeps the order): :mod:`~psdbench.report.rules`
(every verdict), :mod:`~psdbench.report.blocks` (what sections return), :mod:`~psdbench.report.fmt`;
:mod:`psdbench.report.measures` (pure computations on the frame: the gap, references, units,
reach times, profiles), :mod:`psdbench.report.render` (Markdown, HTML, CSV, PNG),
:mod:`~psdbench.report.glossary`; :mod:`~psdbench.report.frame`, :mod:`~psdbench.report.tables`,
:mod:`~psdbench.report.summary`, :mod:`~psdbench.report.findings`; this module and
:mod:`~psdbench.report.compare` (``psdbench compare``); :mod:`psdbench.report.sections` (the
generic sections).  ``docs/report.md`` explains the rules.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np
import pandas as pd

from .blocks import Figure, Section, SectionContext, Table, Text
from .fmt import MISSING, first_line
from psdbench.harness.reference import annotate
from psdbench.harness.store.results import outcome_column, solver_word
from . import rules
from psdbench.report.measures.analysis import param_text, stop_tolerances
from .frame import drop_superseded, tidy_frame
from .rules import DEFAULT_ALLOWANCE
from psdbench.api import ranking_metric
from .summary import glossary_section, run_details, winners_section

if TYPE_CHECKING:  # pragma: no cover
    from psdbench.harness.store.db import Store
    from psdbench.registry import Registry

__all__ = ["Figure", "Section", "SectionContext", "Table", "Text", "failures_frame", "results_csv_frame",
           "run_sections", "write_report"]

#: Report options and their defaults (``options`` of :func:`write_report` overrides them).
DEFAULT_OPTIONS: dict[str, Any] = {"gap_floor": DEFAULT_ALLOWANCE, "size_param": None, "data_dir": None,
                                   "tolerances": (1e-2, 1e-4, 1e-6), "sgm_shift": 10.0, "time_limit": None}


#: The report's own columns added to ``results.csv`` (defined in the glossary, :func:`psdbench.report.glossary.glossary`).
RANKED_COLUMNS = ("gap", "floor", "ranked_gap", "outcome", "reference", "known_to")


def results_csv_frame(raw: pd.DataFrame, frame: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every cell, dict columns JSON-encoded, ``trace`` and ``curve`` left out; with the tidy ``frame``
    of the same rows (same order), the report's :data:`RANKED_COLUMNS`: the gap it ranks by, the
    floor, the ranked gap (:func:`psdbench.report.rules.ranked_gap`), the outcome word, the reference's
    one kind name and its accuracy (``known_to``, :mod:`psdbench.report.measures.references`).  ``gap`` and
    ``ranked_gap`` are empty where the store has no gap (``gap_rel``): nothing in the CSV that the
    store does not have."""
    out = raw.drop(columns=[c for c in ("trace", "curve") if c in raw.columns]).copy()
    if frame is not None and len(frame) == len(out):
        # no number the store lacks: a cell the store gives no gap (unverified, or the best-verified
        # reference's own point, measured against itself) has none here either
        stored = pd.to_numeric(out["gap_rel"], errors="coerce").notna().to_numpy() if "gap_rel" in out.columns \
            else np.ones(len(out), bool)
        out["gap"] = np.where(stored, frame["gap"].to_numpy(float), np.nan)
        out["floor"] = frame["floor"].to_numpy()
        out["ranked_gap"] = np.where(stored, frame["ranked_gap"].to_numpy(float), np.nan)
        out["outcome"] = outcome_column(frame).to_numpy()
        if "reference_label" in frame.columns:  # the reference's one kind name and its accuracy
            out["reference"] = frame["reference_label"].to_numpy()
            out["known_to"] = frame["reference_accuracy"].to_numpy()
    for c in ("instance_params", "solver_params", "metrics"):
        if c in out.columns:
            out[c] = out[c].map(lambda v: json.dumps(v, sort_keys=True, default=str) if v is not None else "")
    return out


def failures_frame(frame: pd.DataFrame) -> pd.DataFrame:
    """The cells of a tidy frame whose status is not ``ok``: what happened in the one vocabulary
    (:func:`psdbench.harness.store.results.outcome`: ``rejected``, ``solver infeasible``, ``inaccurate``, ...,
    with ``configured for t`` where the configuration asked for less than verification allows,
    :func:`psdbench.report.rules.configured_for`), the solver's own word beside it
    (:func:`psdbench.harness.store.results.solver_word`) and the first line of the message."""
    f = frame[frame["status"] != "ok"]
    words = outcome_column(f) if len(f) else pd.Series(dtype=str)
    if len(f):
        tols = stop_tolerances(f)
        # only against a tolerance the cell's verification recorded
        allow = [rules.allowance(m.get("tolerances") if isinstance(m, dict) else None, float("inf"))
                 for m in f.get("metrics", pd.Series([{}] * len(f), index=f.index))]
        extra = [rules.configured_for(None if t != t else t, a) if w == "rejected" else ""
                 for w, t, a in zip(words, tols, allow)]
        words = pd.Series([f"{w} ({e})" if e else w for w, e in zip(words, extra)], index=f.index)
    metrics = f["metrics"] if "metrics" in f.columns else pd.Series([{}] * len(f), index=f.index)
    out = pd.DataFrame({
        "solver": f["solver_label"], "problem": f["problem"], "dataset": f["dataset"],
        "params": f["instance_params"].map(param_text),
        "seed": f["seed"].map(lambda s: MISSING if pd.isna(s) else str(int(s))), "outcome": words,
        "solver's word": [solver_word(m, d) or MISSING for m, d in zip(f["message"], metrics)],
        "message": f["message"].map(first_line),
    })
    return out.sort_values(["outcome", "solver", "dataset"], kind="stable").reset_index(drop=True)


def _title(section: Any, name: str) -> str:
    return str(getattr(section, "title", "") or name)


def run_sections(frame: pd.DataFrame, refs: pd.DataFrame, sections: Mapping[str, Any],
                 problems: Mapping[str, Any], out_dir: Path, options: Mapping[str, Any],
                 runs: pd.DataFrame | None = None) -> list[Section]:
    """Call every matching section per family (family order: sorted; section order: ``order``, then name).

    A section's blocks become one :class:`Section` titled by its ``title`` (default: its name; a
    generic section's title gets the family in brackets) unless it returns :class:`Section` s
    itself.  A section that raises gives a section with a one-line error.
    """
    out: list[Section] = []
    ordered = sorted(sections.items(), key=lambda kv: (int(getattr(kv[1], "order", 500)), kv[0]))
    for family in sorted(frame["family"].unique()):
        ctx = SectionContext(family, frame[frame["family"] == family].reset_index(drop=True), refs, problems,
                             out_dir, options, runs)
        for name, sec in ordered:
            fam = getattr(sec, "family", "*")
            if fam not in ("*", family):
                continue
            title = _title(sec, name) + (f" ({family})" if fam == "*" else "")
            try:
                blocks = list(sec.render(ctx) or [])
            except Exception as exc:  # a broken section must never break the report
                msg = first_line(f"{type(exc).__name__}: {exc}") or type(exc).__name__
                out.append(Section(title, [Text(f"**This section failed**: `{msg}`")], family=family))
                continue
            if not blocks:
                continue
            if all(isinstance(b, Section) for b in blocks):
                out += [Section(b.title, b.blocks, b.intro, b.family or family) for b in blocks]
            else:
                out.append(Section(title, [b for b in blocks if not isinstance(b, Section)],
                                   str(getattr(sec, "intro", "") or ""), family))
    return out


def write_report(store: "Store", out_dir: str | Path, registry: "Registry | None" = None,
                 options: Mapping[str, Any] | None = None) -> dict[str, Path]:
    """Write the report of ``store`` into ``out_dir``.

    Parameters
    ----------
    store : Store
        The results store.
    out_dir : str or Path
        Created if needed.
    registry : Registry, optional
        Problems (defaults, family, sense), solvers (defaults) and report sections; default
        :func:`psdbench.registry.discover`.
    options : mapping, optional
        Overrides of :data:`DEFAULT_OPTIONS` (``tolerances``: the target accuracies of the profiles and the winners;
        ``gap_floor``: the smallest gap told apart where an instance has no narrower certificate;
        ``sgm_shift``: the shift (s) of the shifted geometric means; ``time_limit``: the time
        failures are charged at (default: the largest wall time compared); ``size_param``: the instance
        parameter plotted as the size, tried before the problems' own ``size_param`` hooks and
        ``n``, ``n_nodes``; ``data_dir``: where sections look for data files, default
        ``$PSDBENCH_DATA``).

    Returns
    -------
    dict of str to Path
        ``html``, ``markdown``, ``results_csv``, ``failures_csv``, one entry per table (its CSV stem)
        and one per figure (``<name>_png``).
    """
    from psdbench.report.render.plot import colour_map  # matplotlib: imported by the report only, not by the harness's use of rules
    from psdbench.report.render import Document, render

    if registry is None:
        from psdbench.registry import discover

        registry = discover()
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    opts = {**DEFAULT_OPTIONS, **dict(options or {})}
    try:
        refs = store.references_frame()
    except Exception:  # pragma: no cover - an old store without refs
        refs = pd.DataFrame()
    # below_certified, gap_scale, gap_scaled: the read-time columns every read of a store adds
    raw = drop_superseded(annotate(store.results_frame(), refs))
    frame = tidy_frame(raw, refs, registry.problems, registry.solvers, float(opts["gap_floor"]))
    paths = {"results_csv": out / "results.csv", "failures_csv": out / "failures.csv"}
    results_csv_frame(raw, frame).to_csv(paths["results_csv"], index=False)
    failures_frame(frame).to_csv(paths["failures_csv"], index=False)

    header = [f"Generated: {datetime.now(timezone.utc).isoformat(timespec='seconds')}", f"Store: {store.path}"]
    if frame.empty:
        doc = Document("psdbench report", header, [Section("Results", [Text("There are no results in this store.")])])
        return {**paths, **render(doc, out)}
    try:
        runs = store.runs_frame()
    except Exception:  # pragma: no cover - an old store without the runs table
        runs = pd.DataFrame()
    header.append(f"{len(frame)} cells of {frame['family'].nunique()} families; "
                  + ", ".join(f"{k}: {v}" for k, v in outcome_column(frame).value_counts().items()))
    # one solver-to-colour map for the whole report: the renderer's charts, and any section that reads it
    colours = colour_map(frame.sort_values(["family", "solver_label"])["solver_label"])
    opts["colours"] = colours
    opts["store_dir"] = str(Path(store.path).resolve().parent)  # for links to files kept beside the store
    opts["ranking_metrics"] = {getattr(sec, "family", "*"): m for sec in registry.reports.values()
                               if (m := ranking_metric(sec)) is not None}
    front = [*winners_section(frame, opts, refs), run_details(runs, frame, str(store.path)),
             glossary_section(float(opts["gap_floor"]))]
    sections = run_sections(frame, refs, registry.reports, registry.problems, out, opts, runs)
    return {**paths, **render(Document("psdbench report", header, sections, front, colours), out)}
