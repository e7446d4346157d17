"""Render a results store as a self-contained HTML report, a Markdown report and CSV tables.

Entry point: :func:`write_report`.  Output files (in ``out_dir``):

``report.html``        self-contained (plots embedded as base64 PNG, inline CSS, no JS, no external links)
``report.md``          the same tables as Markdown (own formatter; ``tabulate`` is not required)
``results.csv``        every cell, one row each (dict columns JSON-encoded, ``trace`` omitted)
``table_<slug>.csv``   one per (problem, dataset, graph, scaling, n) group: the per-solver table
                       (not for ``metric/*`` problems, which get the tables below instead)
``table_metric_*.csv`` the metric-learning tables in the SGML paper's layout (:mod:`.report_metric`)
``failures.csv``       every cell whose status is not ``ok``
``time_vs_n.png``      the time-versus-N plot (also embedded in the HTML), when there is data for it

Statistics (error rate, objective, gap, time, ...) are computed over cells with status ``ok`` only;
the ``cells`` column shows ``ok/total`` so that failed cells remain visible.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
import re
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

import numpy as np
import pandas as pd

if TYPE_CHECKING:  # pragma: no cover
    from psdbench.harness.store import Store

GROUP_KEYS = ["problem", "dataset", "graph", "scaling", "n"]
PARAM_KEYS = ("n", "graph", "scaling", "k")
MISSING = "-"

_CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.88em; }
th, td { border: 1px solid #bbb; padding: 3px 8px; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
tr.baseline td { color: #555; font-style: italic; background: #fafafa; }
.meta { color: #555; font-size: 0.9em; } img { max-width: 100%; }
"""


# ----------------------------------------------------------------------------------------- formatting
def _isnum(x: Any) -> bool:
    try:
        return x is not None and not isinstance(x, bool) and math.isfinite(float(x))
    except (TypeError, ValueError):
        return False


def fmt_finite(x: Any, spec: str, missing: str = MISSING, scale: float = 1.0) -> str:
    """``format(scale * x, spec)`` for a finite number, ``missing`` for NaN, None or non-numbers."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return missing
    return format(scale * v, spec) if math.isfinite(v) else missing


def fmt_num(x: Any) -> str:
    """3 significant digits; integers below 1e6 verbatim; NaN/None as ``-``."""
    if not _isnum(x):
        return MISSING
    x = float(x)
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.3g}"


def fmt_pct(mean: Any, std: Any = None) -> str:
    """A fraction as a percentage with one decimal, optionally ``± std``."""
    if not _isnum(mean):
        return MISSING
    s = f"{100 * float(mean):.1f}"
    if _isnum(std):
        s += f" ± {100 * float(std):.1f}"
    return s


def _first_line(msg: Any, limit: int = 200) -> str:
    if not isinstance(msg, str) or not msg.strip():
        return ""
    line = msg.strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def markdown_table(df: pd.DataFrame) -> str:
    """A GitHub-flavoured Markdown table from a DataFrame of (string) cells."""
    def cell(v: Any) -> str:
        s = MISSING if v is None or (isinstance(v, float) and math.isnan(v)) else str(v)
        return s.replace("|", "\\|").replace("\n", " ")

    cols = [cell(c) for c in df.columns]
    rows = [[cell(v) for v in r] for r in df.itertuples(index=False, name=None)]
    widths = [max([len(c)] + [len(r[i]) for r in rows]) for i, c in enumerate(cols)]
    numeric = [i > 0 and all(re.match(r"^[-+]?[\d.]", r[i]) or r[i] in ("", MISSING) for r in rows)
               for i in range(len(cols))]
    out = ["| " + " | ".join(c.ljust(w) for c, w in zip(cols, widths)) + " |",
           "|" + "|".join(("-" * (w + 1) + ":" if num else ":" + "-" * (w + 1)) for num, w in zip(numeric, widths)) + "|"]
    for r in rows:
        out.append("| " + " | ".join(v.ljust(w) for v, w in zip(r, widths)) + " |")
    return "\n".join(out)


def _html_table(df: pd.DataFrame, baseline_labels: Iterable[str] = ()) -> str:
    text = df.to_html(index=False, escape=True, na_rep=MISSING, border=0)
    for lab in baseline_labels:
        text = text.replace(f"<tr>\n      <td>{html.escape(lab)}</td>", f'<tr class="baseline">\n      <td>{html.escape(lab)}</td>')
    return text


def _slug(*parts: Any) -> str:
    s = "_".join(str(p) for p in parts if p not in (None, MISSING, ""))
    return re.sub(r"[^A-Za-z0-9.=-]+", "-", s).strip("-") or "table"


# ----------------------------------------------------------------------------------------- data prep
def _prepare(df: pd.DataFrame) -> pd.DataFrame:
    df = df.copy()
    for c in ("run_id", "cell_key", "instance_key", "problem", "dataset", "solver", "status", "message",
              "reference_kind", "seed", "instance_params", "metrics"):
        if c not in df.columns:
            df[c] = None
    for c in ("wall_time_s", "iterations", "objective", "reference_objective", "gap_rel", "seed",
              "metric_error_rate", "metric_majority_error", "metric_labelprop_error", "metric_lower_bound",
              "metric_lambda_min_Hbar"):
        if c not in df.columns:
            df[c] = np.nan
        df[c] = pd.to_numeric(df[c], errors="coerce")
    params = df["instance_params"].map(lambda d: d if isinstance(d, dict) else {})
    for k in PARAM_KEYS:
        df[k] = params.map(lambda d, k=k: d.get(k))
    df["n"] = pd.to_numeric(df["n"], errors="coerce")
    for k in ("problem", "dataset", "graph", "scaling", "k", "solver", "status"):
        df[k] = df[k].map(lambda v: MISSING if v is None or (isinstance(v, float) and math.isnan(v)) else str(v))
    df["instance_key"] = df["instance_key"].fillna(df["cell_key"]).fillna("")
    df["solver"] = [_solver_label(name, sp) for name, sp in zip(df["solver"], df.get("solver_params", [None] * len(df)))]
    return df


def _solver_label(name: str, params: Any) -> str:
    """``scs (formulation=reduced, eps_abs=1e-06)``: one table row per solver configuration."""
    if not isinstance(params, dict) or not params:
        return name
    return f"{name} (" + ", ".join(f"{k}={params[k]}" for k in sorted(params)) + ")"


def _per_instance_mean(sub: pd.DataFrame, col: str) -> tuple[float, float, int]:
    """Mean and std over distinct instances of an instance-level quantity (first finite value each)."""
    vals = sub.dropna(subset=[col]).groupby("instance_key")[col].first()
    if vals.empty:
        return float("nan"), float("nan"), 0
    std = float(vals.std(ddof=1)) if len(vals) > 1 else float("nan")
    return float(vals.mean()), std, len(vals)


def _ref_kinds(sub: pd.DataFrame) -> str:
    kinds = sorted({str(k) for k in sub["reference_kind"].dropna() if str(k)})
    return ", ".join(kinds) if kinds else MISSING


def _mean(s: pd.Series) -> float:
    s = pd.to_numeric(s, errors="coerce").dropna()
    return float(s.mean()) if len(s) else float("nan")


def _group_table(sub: pd.DataFrame, refs: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """The per-solver table for one (problem, dataset, graph, scaling, n) group."""
    rows: list[dict[str, str]] = []
    has_lb = sub["metric_lower_bound"].notna().any()
    has_hbar = sub["metric_lambda_min_Hbar"].notna().any()
    for solver, g in sorted(sub.groupby("solver", sort=False), key=lambda t: t[0]):
        ok = g[g["status"] == "ok"]
        err = ok["metric_error_rate"].dropna()
        pstar = ok["reference_objective"]
        row = {
            "solver": solver,
            "cells ok/total": f"{len(ok)}/{len(g)}",
            "error rate (%)": fmt_pct(err.mean() if len(err) else None, err.std(ddof=1) if len(err) > 1 else None),
            "objective": fmt_num(_mean(ok["objective"])),
            "p*": fmt_num(_mean(pstar)),
            "ref kind": _ref_kinds(ok),
            "gap_rel": fmt_num(_mean(ok["gap_rel"])),
        }
        if has_lb:
            lb = ok["metric_lower_bound"]
            ratio = lb / pstar.where(pstar != 0)
            row["lower bound"] = fmt_num(_mean(lb))
            row["LB/p*"] = fmt_num(_mean(ratio))
            row["p* − LB"] = fmt_num(_mean(pstar - lb))
        if has_hbar:
            row["λmin(H̄)"] = fmt_num(_mean(ok["metric_lambda_min_Hbar"]))
        wt = ok["wall_time_s"].dropna()
        row["median time (s)"] = fmt_num(float(wt.median()) if len(wt) else None)
        row["iterations"] = fmt_num(_mean(ok["iterations"]))
        rows.append(row)

    cols = list(rows[0].keys()) if rows else ["solver"]
    blank = {c: "" for c in cols}
    baselines = []
    for label, col in (("majority class", "metric_majority_error"), ("label propagation", "metric_labelprop_error")):
        m, s, cnt = _per_instance_mean(sub, col)
        if cnt:
            rows.append({**blank, "solver": label, "error rate (%)": fmt_pct(m, s)})
            baselines.append(label)
    # SDP optimum: per instance, the reference objective recorded on the cells, else the refs table.
    inst = sub.dropna(subset=["reference_objective"]).groupby("instance_key")["reference_objective"].first()
    kinds = sub.dropna(subset=["reference_objective"])
    if not refs.empty and "instance_key" in refs.columns and "value" in refs.columns:
        r = refs[refs["instance_key"].isin(set(sub["instance_key"])) & ~refs["instance_key"].isin(set(inst.index))]
        r = r.assign(value=pd.to_numeric(r["value"], errors="coerce")).dropna(subset=["value"])
        if len(r):
            inst = pd.concat([inst, r.groupby("instance_key")["value"].first()])
            kinds = pd.concat([kinds[["reference_kind"]], r[["kind"]].rename(columns={"kind": "reference_kind"})])
    if len(inst):
        label = "SDP optimum (reference)"
        rows.append({**blank, "solver": label, "objective": fmt_num(inst.mean()), "p*": fmt_num(inst.mean()),
                     "ref kind": _ref_kinds(kinds), "cells ok/total": f"{len(inst)} inst."})
        baselines.append(label)
    return pd.DataFrame(rows, columns=cols), baselines


def inline_html(text: str) -> str:
    """Escape for HTML; Markdown ``code`` spans become <code>, ``**bold**`` becomes <strong>."""
    s = re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(text))
    return re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)


def render_tables(title: str, intro: str, tables: Iterable[Any], out: Path) -> tuple[list[str], list[str], dict[str, Path]]:
    """A report section: Markdown and HTML lines plus one CSV per table (names made unique).

    Each table has ``name`` (CSV stem), ``title``, ``table`` (a frame of string cells), ``note``, and
    optionally ``baselines`` (row labels to shade) and ``checks`` (items with a ``text()`` line).
    """
    md = [f"## {title}", "", intro, ""]
    hb = [f"<h2>{html.escape(title)}</h2>", f"<p>{inline_html(intro)}</p>"]
    paths: dict[str, Path] = {}
    for t in tables:
        name, i = t.name, 2
        while name in paths:
            name, i = f"{t.name}_{i}", i + 1
        paths[name] = out / f"{name}.csv"
        t.table.to_csv(paths[name], index=False)
        md += [f"### {t.title}", ""] + ([t.note, ""] if t.note else []) + [markdown_table(t.table), ""]
        hb += [f"<h3>{html.escape(t.title)}</h3>"] + ([f'<p class="meta">{inline_html(t.note)}</p>'] if t.note else [])
        hb.append(_html_table(t.table, getattr(t, "baselines", ())))
        checks = getattr(t, "checks", [])
        if checks:
            md += [f"- {c.text()}" for c in checks] + [""]
            hb.append("<ul>" + "".join(f"<li>{inline_html(c.text())}</li>" for c in checks) + "</ul>")
    return md, hb, paths


def _failures(df: pd.DataFrame) -> pd.DataFrame:
    f = df[df["status"] != "ok"]
    out = pd.DataFrame({
        "solver": f["solver"], "problem": f["problem"], "dataset": f["dataset"], "graph": f["graph"],
        "n": f["n"].map(fmt_num), "seed": f["seed"].map(fmt_num), "status": f["status"],
        "message": f["message"].map(_first_line),
    })
    return out.sort_values(["status", "solver", "dataset"], kind="stable").reset_index(drop=True)


# ----------------------------------------------------------------------------------------- plots
def _time_vs_n_png(df: pd.DataFrame) -> bytes | None:
    ok = df[(df["status"] == "ok") & df["n"].notna() & (df["n"] > 0) & df["wall_time_s"].notna() & (df["wall_time_s"] > 0)]
    if ok.empty:
        return None
    from matplotlib.figure import Figure  # no pyplot: Agg canvas, no global backend state
    from matplotlib.ticker import NullLocator

    panels = sorted(ok.groupby(["problem", "dataset", "graph"]).groups.keys())
    multi_scaling = ok.groupby(["problem", "dataset", "graph"])["scaling"].nunique().max() > 1
    ncol = min(3, len(panels))
    nrow = math.ceil(len(panels) / ncol)
    fig = Figure(figsize=(4.6 * ncol, 3.6 * nrow))
    axes = fig.subplots(nrow, ncol, squeeze=False)
    # one colour per solver configuration across every panel
    palette = [f"C{i}" for i in range(10)]
    colours = {lab: palette[i % 10] for i, lab in enumerate(sorted(ok["solver"].unique()))}
    for ax, key in zip(axes.flat, panels):
        sub = ok[(ok["problem"] == key[0]) & (ok["dataset"] == key[1]) & (ok["graph"] == key[2])]
        line_keys = ["solver", "scaling"] if multi_scaling else ["solver"]
        for lk, g in sub.groupby(line_keys):
            lk = lk if isinstance(lk, tuple) else (lk,)
            med = g.groupby("n")["wall_time_s"].median().sort_index()
            ax.plot(med.index, med.values, marker="o", label=" / ".join(map(str, lk)), color=colours[lk[0]])
        ax.set_xscale("log")
        ax.set_yscale("log")
        ns = sorted(sub["n"].unique())
        ax.set_xticks(ns, [f"{int(v)}" for v in ns])
        ax.xaxis.set_minor_locator(NullLocator())
        ax.set_xlabel("N")
        ax.set_ylabel("median wall time (s)")
        ax.set_title(f"{key[1]} ({key[2]})" if key[0] == MISSING else f"{key[0]}: {key[1]} ({key[2]})", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    for ax in list(axes.flat)[len(panels):]:
        ax.set_visible(False)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110)
    return buf.getvalue()


# ----------------------------------------------------------------------------------------- main
def _results_csv(df: pd.DataFrame) -> pd.DataFrame:
    out = df.drop(columns=[c for c in ("trace",) if c in df.columns]).copy()
    for c in ("instance_params", "solver_params", "metrics"):
        if c in out.columns:
            out[c] = out[c].map(lambda v: json.dumps(v, sort_keys=True, default=str) if v is not None else "")
    return out


def write_report(store: "Store", out_dir: str | Path) -> dict[str, Path]:
    """Write out_dir/report.html (self-contained: plots embedded as base64 PNG, no external CSS/JS),
    out_dir/report.md and out_dir/results.csv (+ one CSV per table). Returns the paths written by name."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    raw = store.results_frame()
    try:
        refs = store.references_frame()
    except Exception:  # pragma: no cover - an old store without refs
        refs = pd.DataFrame()
    generated = datetime.now(timezone.utc).isoformat(timespec="seconds")

    md: list[str] = ["# psdbench report", ""]
    hb: list[str] = ["<h1>psdbench report</h1>"]

    # results.csv (always written, possibly empty with header only)
    paths["results_csv"] = out / "results.csv"
    _results_csv(raw).to_csv(paths["results_csv"], index=False)

    if raw.empty:
        msg = "There are no results in this store."
        md += [f"Generated: {generated}  ", f"Store: `{store.path}`", "", msg, ""]
        hb += [f'<p class="meta">Generated: {html.escape(generated)}<br>Store: {html.escape(str(store.path))}</p>',
               f"<p>{msg}</p>"]
    else:
        df = _prepare(raw)
        # 1. header
        counts = df["status"].value_counts()
        status_str = ", ".join(f"{k}: {v}" for k, v in counts.items())
        run_ids = sorted({str(r) for r in df["run_id"].dropna()})
        md += [f"Generated: {generated}  ", f"Store: `{store.path}`  ", f"Cells: {len(df)}  ",
               f"Status counts: {status_str}  ", f"Run ids: {', '.join(run_ids) or MISSING}", ""]
        hb.append('<p class="meta">' + "<br>".join(html.escape(s) for s in (
            f"Generated: {generated}", f"Store: {store.path}", f"Cells: {len(df)}",
            f"Status counts: {status_str}", f"Run ids: {', '.join(run_ids) or MISSING}")) + "</p>")

        # 2. per-group tables (metric/* problems have their own section, 4)
        order = df.loc[~(df["problem"].str.startswith("metric/") | (df["problem"] == "signed-graph")), GROUP_KEYS].drop_duplicates()
        if len(order):
            md += ["## Results by dataset", "",
                   "Statistics over cells with status `ok`; error rate is mean ± std over seeds (%). "
                   "Baseline rows average over distinct instances.", ""]
            hb += ["<h2>Results by dataset</h2>",
                   "<p>Statistics over cells with status <code>ok</code>; error rate is mean ± std over seeds (%). "
                   "Baseline rows average over distinct instances.</p>"]
        order = order.assign(_n=order["n"].fillna(-1)).sort_values(["problem", "dataset", "graph", "scaling", "_n"])
        for _, key in order.iterrows():
            mask = ((df["problem"] == key["problem"]) & (df["dataset"] == key["dataset"]) & (df["graph"] == key["graph"])
                    & (df["scaling"] == key["scaling"]) & ((df["n"] == key["n"]) | (df["n"].isna() & pd.isna(key["n"]))))
            sub = df[mask]
            table, baselines = _group_table(sub, refs)
            nseeds = sub["seed"].nunique()
            title = (f"{key['problem']} / {key['dataset']} — graph={key['graph']}, scaling={key['scaling']}, "
                     f"N={fmt_num(key['n'])}")
            sub_meta = f"{sub['instance_key'].nunique()} instance(s), {nseeds} seed(s), {len(sub)} cell(s)"
            slug = _slug(key["problem"], key["dataset"], key["graph"], key["scaling"],
                         f"n{fmt_num(key['n'])}" if _isnum(key["n"]) else None)
            name = f"table_{slug}"
            i = 2
            while name in paths:
                name = f"table_{slug}_{i}"
                i += 1
            paths[name] = out / f"{name}.csv"
            table.to_csv(paths[name], index=False)
            md += [f"### {title}", "", sub_meta, "", markdown_table(table), ""]
            hb += [f"<h3>{html.escape(title)}</h3>", f'<p class="meta">{html.escape(sub_meta)}</p>',
                   _html_table(table, baselines)]

        # 3. time versus N
        png = _time_vs_n_png(df)
        md += ["## Time versus N", ""]
        hb.append("<h2>Time versus N</h2>")
        if png is None:
            md += ["No `ok` cells with a size N and a wall time to plot.", ""]
            hb.append("<p>No <code>ok</code> cells with a size N and a wall time to plot.</p>")
        else:
            paths["time_vs_n_png"] = out / "time_vs_n.png"
            paths["time_vs_n_png"].write_bytes(png)
            md += ["Median wall time over `ok` cells, log-log.", "", "![time versus N](time_vs_n.png)", ""]
            b64 = base64.b64encode(png).decode("ascii")
            hb += ["<p>Median wall time over <code>ok</code> cells, log-log.</p>",
                   f'<img src="data:image/png;base64,{b64}" alt="time versus N">']

        # 4. metric learning in the SGML paper's layout (nothing without metric/* rows)
        from psdbench.families.mahalanobis.report import metric_section  # lazy: report_metric imports this module

        m_md, m_hb, m_paths = metric_section(raw, out, refs)
        md += m_md
        hb += m_hb
        paths.update(m_paths)

        # 4b. signed-graph learning in the BSGL paper's Table II layout (nothing without signed-graph rows)
        from psdbench.families.signed_graph.report import signed_section  # lazy: report_signed imports this module

        s_md, s_hb, s_paths = signed_section(raw, out, refs)
        md += s_md
        hb += s_hb
        paths.update(s_paths)

        # 5. failures
        fails = _failures(df)
        paths["failures_csv"] = out / "failures.csv"
        fails.to_csv(paths["failures_csv"], index=False)
        md += ["## Failures", ""]
        hb.append("<h2>Failures</h2>")
        if fails.empty:
            md += ["No failed cells.", ""]
            hb.append("<p>No failed cells.</p>")
        else:
            md += [f"{len(fails)} cell(s) with status other than `ok`.", "", markdown_table(fails), ""]
            hb += [f"<p>{len(fails)} cell(s) with status other than <code>ok</code>.</p>", _html_table(fails)]

    paths["markdown"] = out / "report.md"
    paths["markdown"].write_text("\n".join(md) + "\n", encoding="utf-8")
    paths["html"] = out / "report.html"
    doc = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>psdbench report</title>\n"
           f"<style>{_CSS}</style>\n</head>\n<body>\n" + "\n".join(hb) + "\n</body>\n</html>\n")
    paths["html"].write_text(doc, encoding="utf-8")
    return paths
