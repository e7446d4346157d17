"""The one renderer: blocks of every section to Markdown, self-contained HTML and CSV / PNG files.

Output files in ``out_dir``: ``report.md``, ``report.html`` (inline CSS and scripts, plotly.js
embedded from the installed package, figures as base64 PNG, no external URL), one ``<name>.csv``
per :class:`~psdbench.report.blocks.Table` and one ``<name>.png`` per
:class:`~psdbench.report.blocks.Figure` or :class:`~psdbench.report.blocks.Chart` (names made unique
in order of appearance).

Page order: title, table of contents, the front sections (winners first), the findings
against the papers (every :class:`~psdbench.report.blocks.Finding` of every section, linked to its
section), then the sections.  Every :class:`~psdbench.report.blocks.DataSource` is listed in the
run details (found / missing and the sections it affects).  One colour per solver configuration
across every chart (:func:`psdbench.report.render.plot.colour_map`).
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from psdbench.system.outdir import safe_stem
from psdbench.report.blocks import VERDICTS, Chart, DataSource, Figure, Finding, Section, Table, Text
from psdbench.report.render.chart_html import SCRIPT, chart_html, plotly_js
from psdbench.report.render.chart_static import chart_png
from psdbench.report.fmt import inline_html, markdown_table, slug
from psdbench.report.render.htmltable import html_table
from psdbench.report.render.plot import colour_map

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 1.5em auto; color: #222;
       max-width: 1400px; padding: 0 1em; line-height: 1.4; }
h1 { font-size: 1.6em; margin-bottom: 0.2em; } h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.4em; } a { color: #1f5fa8; }
.scroll { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.86em; }
th, td { border: 1px solid #ccc; padding: 3px 7px; text-align: left; vertical-align: top; }
th { background: #eee; } td.num, td[style] { text-align: right; white-space: nowrap; }
td { max-width: 44em; min-width: 2.5em; overflow-wrap: break-word; } td.best { font-weight: 600; }
tr.baseline td { color: #555; font-style: italic; background: #fafafa; }
td.v-holds { background: #d8f0d8; } td.v-fails { background: #f6d5d5; } td.v-spread { background: #fbeec8; }
td.v-none { background: #eee; color: #666; } td[class^="v-"] { white-space: nowrap; }
.glance { background: #eef4fb; border-left: 4px solid #1f5fa8; padding: 0.5em 0.8em; }
.meta { color: #555; font-size: 0.9em; } img { max-width: 100%; } .error { color: #a00; }
figure { margin: 0.8em 0; } figcaption, .caption { color: #444; font-size: 0.9em; max-width: 1100px; }
nav.toc { background: #f7f7f7; border: 1px solid #ddd; padding: 0.4em 1em; font-size: 0.88em; }
nav.toc ul { margin: 0.2em 0; padding-left: 0; list-style: none; } nav.toc li { margin: 0.15em 0; }
nav.toc .fam { font-weight: 600; margin-right: 0.4em; } nav.toc .sep { color: #aaa; margin: 0 0.3em; }
.csv { font-size: 0.8em; font-weight: normal; margin-left: 0.6em; }
.chart .controls { display: flex; flex-wrap: wrap; gap: 0.5em; font-size: 0.85em; margin: 0.3em 0; }
.chart .controls button, .chart .controls select { font-size: 0.95em; }
.chart .panels { display: flex; flex-wrap: wrap; gap: 0.8em; }
.chart .panel { flex: 1 1 440px; max-width: 680px; min-width: 0; } .chart .plot { width: 100%; }
.chart .empty { color: #666; font-style: italic; border: 1px dashed #ccc; padding: 1em; }
.chart .note { color: #555; font-size: 0.82em; margin: 0.2em 0 0; }
details.front > summary h2, details.family > summary .fam-title { display: inline-block; margin: 0.5em 0; }
details.front > summary h2 { border: none; font-size: 1.15em; }
details.family { border-top: 1px solid #ccc; } details.family > summary { cursor: pointer; padding: 0.3em 0; }
details.family > summary .fam-title { font-size: 1.2em; font-weight: 600; }
details.front > summary { cursor: pointer; }
.chart-area { border: 1px solid #ddd; padding: 0.4em 0.8em; margin: 0.6em 0; } .chart-area .kind { font-size: 0.9em; }
@media (max-width: 900px) { body { margin: 0.5em; } }
"""


#: Front sections shown closed in the HTML (their title is the summary); the winners stay open.
COLLAPSED = ("Findings against the papers", "Run details", "Glossary")


@dataclass
class Document:
    """A whole report: a title, header lines (plain text), front sections (run details first) and sections."""

    title: str
    header: list[str]
    sections: list[Section] = field(default_factory=list)
    front: list[Section] = field(default_factory=list)
    #: The solver-to-colour map of every chart (default: :func:`~psdbench.report.render.plot.colour_map` of the
    #: charts' colour keys).
    colours: dict[str, str] = field(default_factory=dict)


def _unique(name: str, taken: set[str], ext: str) -> str:
    name = safe_stem(name)  # a section's name may carry any parameter value (outdir.safe_stem)
    out, i = name, 2
    while f"{out}.{ext}" in taken:
        out, i = f"{name}_{i}", i + 1
    taken.add(f"{out}.{ext}")
    return out


@dataclass
class _Out:
    """What rendering collects: paths written, names taken, the colour map."""

    out: Path
    colours: dict[str, str]
    paths: dict[str, Path] = field(default_factory=dict)
    taken: set[str] = field(default_factory=lambda: {"results.csv", "failures.csv"})
    charts: int = 0
    #: while set, a chart's HTML goes here (title, html) instead of into its section: the family's one chart area
    area: list[tuple[str, str]] | None = None


def findings_frame(items: list[tuple[Finding, str, str]], link: bool) -> pd.DataFrame:
    """The findings table: one row per finding (``items``: finding, section title, section anchor)."""
    rows = []
    for f, title, anchor in items:
        row = {"paper": f.paper, "claim": f.claim, "paper's value": f.paper_value, "ours (spread)": f.ours,
               "verdict": f.verdict, "95 % interval of the difference": f.interval, "why": f.note}
        if link:
            row["section"] = f"[{title}](#{anchor})"
        rows.append(row)
    return pd.DataFrame(rows)


def sources_frame(items: list[tuple[DataSource, str, str]]) -> pd.DataFrame:
    """The data-sources table: found / missing, where looked for, what it affects, which section."""
    return pd.DataFrame([{"data source": d.name, "status": "found" if d.found else "MISSING", "path": d.path,
                          "affects": d.affects, "section": f"[{title}](#{anchor})"} for d, title, anchor in items])


def at_a_glance(findings: list[Finding], sources: list[DataSource]) -> str:
    """One line: how many claims were checked and their verdicts, and the data sources found / missing."""
    counts = {v: sum(f.verdict == v for f in findings) for v in VERDICTS}
    verdicts = ", ".join(f"{n} {v}" for v, n in counts.items() if n)
    out = (f"**{len(findings)} claim(s) of the papers checked**: {verdicts} ([findings](#s-findings)); "
           if findings else "No claim of a paper checked in this report; ")
    missing = [d.name for d in sources if not d.found]
    out += (f"data sources besides the store: {len(sources) - len(missing)} found, {len(missing)} missing"
            + (f" ({'; '.join(missing)})" if missing else "") + "; " if sources else "")
    return out + "fastest configuration per family and accuracy: [winners](#s-winners)."


def _table(b: Table, o: _Out, verdicts: str | None = None) -> tuple[list[str], list[str]]:
    name = _unique(b.name, o.taken, "csv")
    o.paths[name] = o.out / f"{name}.csv"
    b.frame.to_csv(o.paths[name], index=False)
    md = [f"### {b.title}", ""] + ([b.note, ""] if b.note else []) + [markdown_table(b.frame), "",
                                                                      f"([CSV]({name}.csv))", ""]
    hb = [f'<h3>{html.escape(b.title)}<a class="csv" href="{html.escape(name)}.csv">CSV</a></h3>']
    hb += [f'<p class="meta">{inline_html(b.note)}</p>'] if b.note else []
    hb.append(html_table(b.frame, b.shaded, getattr(b, "best", ""), verdicts))
    if b.checks:
        md += [f"- {c}" for c in b.checks] + [""]
        hb.append("<ul>" + "".join(f"<li>{inline_html(c)}</li>" for c in b.checks) + "</ul>")
    return md, hb


def _block(b: Any, o: _Out) -> tuple[list[str], list[str]]:
    if isinstance(b, Table):
        return _table(b, o, "verdict" if "verdict" in b.frame.columns else None)
    if isinstance(b, Chart):
        o.charts += 1
        name = _unique(b.name, o.taken, "png")
        png, left = chart_png(b, o.colours)
        o.paths[f"{name}_png"] = o.out / f"{name}.png"
        o.paths[f"{name}_png"].write_bytes(png)
        cap = " ".join(x for x in (b.caption, left) if x)
        md = [f"### {b.title}", "", f"![{b.title}]({name}.png)", ""] + ([cap, ""] if cap else [])
        hb = [f"<h3>{html.escape(b.title)}</h3>", chart_html(b, o.colours, f"chart-{o.charts}")]
        hb += [f'<p class="caption">{inline_html(b.caption)}</p>'] if b.caption else []
        if o.area is not None:
            o.area.append((b.title, "\n".join(hb[1:])))
            return md, []
        return md, hb
    if isinstance(b, Figure):
        name = _unique(b.name, o.taken, "png")
        o.paths[f"{name}_png"] = o.out / f"{name}.png"
        o.paths[f"{name}_png"].write_bytes(b.png)
        md = [f"### {b.title}", "", f"![{b.title}]({name}.png)", ""] + ([b.caption, ""] if b.caption else [])
        b64 = base64.b64encode(b.png).decode("ascii")
        hb = [f"<h3>{html.escape(b.title)}</h3>", "<figure>",
              f'<img src="data:image/png;base64,{b64}" alt="{html.escape(b.title)}">']
        hb += [f"<figcaption>{inline_html(b.caption)}</figcaption>"] if b.caption else []
        return md, hb + ["</figure>"]
    if isinstance(b, Text):
        return [b.text, ""], [f"<p>{inline_html(b.text)}</p>"]
    if isinstance(b, DataSource):
        return [], []  # listed in the run details
    raise TypeError(f"not a report block: {type(b).__name__}")


def _chart_keys(sections: list[Section]) -> list[str]:
    return [s.colour_key or s.label for sec in sections for b in sec.blocks if isinstance(b, Chart)
            for p in b.panels for s in p.series]


def _anchors(sections: list[Section]) -> list[str]:
    taken: set[str] = set()
    return [_unique("s-" + slug(sec.title).lower(), taken, "a") for sec in sections]


def _section(sec: Section, anchor: str, o: _Out) -> tuple[list[str], list[str]]:
    md = [f'<a id="{anchor}"></a>', "", f"## {sec.title}", ""] + ([sec.intro, ""] if sec.intro else [])
    hb = [f'<h2 id="{anchor}">{html.escape(sec.title)}</h2>'] + ([f"<p>{inline_html(sec.intro)}</p>"]
                                                                 if sec.intro else [])
    findings = [b for b in sec.blocks if isinstance(b, Finding)]
    for b in sec.blocks:
        if isinstance(b, Finding):
            if b is findings[0]:
                t = Table(slug("findings", sec.title).lower(), "Claims checked here",
                          findings_frame([(f, sec.title, anchor) for f in findings], link=False))
                m, h = _block(t, o)
                md, hb = md + m, hb + h
            continue
        m, h = _block(b, o)
        md, hb = md + m, hb + h
    return md, hb


def _toc(sections: list[Section], anchors: list[str]) -> tuple[list[str], str]:
    groups: dict[str, list[tuple[str, str]]] = {}
    for sec, a in zip(sections, anchors):
        groups.setdefault(sec.family or "", []).append((sec.title, a))
    md, hb = ["**Contents**", ""], ['<nav class="toc"><strong>Contents</strong><ul>']
    for fam, items in groups.items():
        items = [(t.removesuffix(f" ({fam})") if fam else t, a) for t, a in items]
        links = [(f"[{t}](#{a})", f'<a href="#{a}">{html.escape(t)}</a>') for t, a in items]
        md.append(f"- {fam + ': ' if fam else ''}" + " · ".join(m for m, _ in links))
        hb.append("<li>" + (f'<span class="fam">{html.escape(fam)}</span>' if fam else "")
                  + '<span class="sep">·</span>'.join(h for _, h in links) + "</li>")
    return md + [""], "".join(hb) + "</ul></nav>"


def _family_html(family: str, body: list[Section], sections_html: list[str], o: _Out) -> list[str]:
    """One family's closed ``<details>``: its one chart area (a ``chart`` selector showing one chart at a
    time; each chart keeps its own instance-set selector and axis toggles), then its sections' tables."""
    titles = [x.title.removesuffix(f" ({family})") for x in body if x.family == family]
    out = [f'<details class="family" id="f-{html.escape(slug(family or "other").lower())}"><summary>'
           f'<span class="fam-title">{html.escape(family or "other")}</span> <span class="meta">'
           f'{len(titles)} section(s): {html.escape(", ".join(titles))}</span></summary>']
    area = o.area or []
    if area:
        opts = "".join(f'<option value="{i}">{html.escape(t)}</option>' for i, (t, _) in enumerate(area))
        out.append(f'<div class="chart-area"><label class="kind">chart <select class="chart-kind">{opts}</select>'
                   "</label>")
        out += [f'<div class="chart-slot"{" hidden" if i else ""}>{h}</div>' for i, (_, h) in enumerate(area)]
        out.append("</div>")
    o.area = []
    return out + sections_html + ["</details>"]


def render(doc: Document, out_dir: str | Path) -> dict[str, Path]:
    """Write ``report.md``, ``report.html`` and every table's CSV and figure's PNG; return the paths by name.

    CSV paths are keyed by the (unique) table name, PNG paths by ``<name>_png``; ``markdown`` and
    ``html`` are the reports.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    body = list(doc.sections)
    anchors = _anchors(list(doc.front) + body)
    front_anchors, body_anchors = anchors[:len(doc.front)], anchors[len(doc.front):]
    findings = [(b, s.title, a) for s, a in zip(body, body_anchors) for b in s.blocks if isinstance(b, Finding)]
    sources = [(b, s.title, a) for s, a in zip(body, body_anchors) for b in s.blocks if isinstance(b, DataSource)]
    front = [Section(s.title, list(s.blocks), s.intro, s.family) for s in doc.front]
    details = next((s for s in front if s.title == "Run details"), front[0] if front else None)
    if details is not None and not sources:
        details.blocks.append(Text("No section read a data source besides the store."))
    if sources and details is not None:
        missing = sum(not d.found for d, _, _ in sources)
        details.blocks.append(Table("data_sources", "Data sources read besides the store", sources_frame(sources),
                                     f"{len(sources) - missing} found, {missing} missing; a missing source drops "
                                     "what its line says from the section it names."))
    if front:  # a report with front matter always says whether any claim was checked
        fsec = Section("Findings against the papers", [Table("findings", "Every claim checked in this report",
                                                             findings_frame(findings, link=True))]
                       if findings else [Text("No section of this report checked a paper's claim.")],
                       "One vocabulary: `holds`, `does not hold`, `within the spread` (the difference is "
                       "inside the spread over seeds / folds), `not measured in this run`.")
        at = front.index(details) if details is not None else 1  # the findings come before the run details
        front.insert(at, fsec)
        front_anchors.insert(at, "s-findings")
    colours = doc.colours or colour_map(_chart_keys(front + body))
    o = _Out(out, colours)
    md = [f"# {doc.title}", ""] + [f"{line}  " for line in doc.header] + [""]
    hb = [f"<h1>{html.escape(doc.title)}</h1>",
          '<p class="meta">' + "<br>".join(html.escape(line) for line in doc.header) + "</p>"]
    if front:
        glance = at_a_glance([f for f, _, _ in findings], [d for d, _, _ in sources])
        md += [glance, ""]
        hb.append(f'<p class="glance">{inline_html(glance)}</p>')
    toc_md, toc_html = _toc(front + body, front_anchors + body_anchors)
    md += toc_md
    if not front:
        hb.append(toc_html)
    family, fam_html = None, []
    for i, (sec, a) in enumerate(zip(front + body, front_anchors + body_anchors)):
        if front and i >= len(front) and sec.family != family:  # each family's sections: one closed <details>
            if family is not None:
                hb += _family_html(family, body, fam_html, o)
            family, fam_html, o.area = sec.family, [], []
        charts_before = len(o.area) if o.area is not None else 0
        m, h = _section(sec, a, o)
        md = md + m
        if front and i >= len(front):
            moved = o.area is not None and len(o.area) > charts_before
            only_heading = len(h) <= 1 + bool(sec.intro)
            fam_html += [f'<a id="{a}" class="moved"></a>'] if moved and only_heading else h  # charts: in the area
            continue
        if sec.title in COLLAPSED:  # details on demand: a click (or a link) opens them
            hb += [f'<details class="front"><summary>{h[0]}</summary>'] + h[1:] + ["</details>"]
        else:
            hb += h
        if i == 0:  # the contents after the winners: the first screen names the winners
            hb.append(toc_html)
    if family is not None:
        hb += _family_html(family, body, fam_html, o)
    o.area = None
    paths = o.paths
    paths["markdown"] = out / "report.md"
    paths["markdown"].write_text("\n".join(md) + "\n", encoding="utf-8")
    paths["html"] = out / "report.html"
    scripts = (f"<script>{plotly_js()}</script>\n" if o.charts else "") + f"<script>{SCRIPT}</script>\n"
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<title>{html.escape(doc.title)}</title>\n<style>{CSS}</style>\n{scripts}</head>\n<body>\n"
            + "\n".join(hb) + "\n</body>\n</html>\n")
    paths["html"].write_text(page, encoding="utf-8")
    return paths
