"""The one renderer: blocks of every section to Markdown, self-contained HTML and CSV / PNG files.

Output files in ``out_dir``: ``report.md``, ``report.html`` (inline CSS, figures as base64 PNG, no
scripts, no external links), one ``<name>.csv`` per :class:`~psdbench.report.blocks.Table` and one
``<name>.png`` per :class:`~psdbench.report.blocks.Figure` (names made unique in order of appearance).
"""

from __future__ import annotations

import base64
import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import pandas as pd

from .blocks import Figure, Section, Table, Text
from .fmt import MISSING, inline_html, markdown_table

CSS = """
body { font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; margin: 2em; color: #222; max-width: 1500px; }
h1 { font-size: 1.6em; } h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05em; margin-top: 1.4em; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.88em; }
th, td { border: 1px solid #bbb; padding: 3px 8px; text-align: right; }
th { background: #eee; } td:first-child, th:first-child { text-align: left; }
tr.baseline td { color: #555; font-style: italic; background: #fafafa; }
.meta { color: #555; font-size: 0.9em; } img { max-width: 100%; } .error { color: #a00; }
figure { margin: 0.8em 0; } figcaption { color: #444; font-size: 0.9em; max-width: 1100px; }
"""


@dataclass
class Document:
    """A whole report: a title, header lines (plain text) and sections in order."""

    title: str
    header: list[str]
    sections: list[Section] = field(default_factory=list)


def html_table(df: pd.DataFrame, shaded: Iterable[str] = ()) -> str:
    """An escaped HTML table; rows whose first cell is in ``shaded`` get ``class="baseline"``."""
    text = df.to_html(index=False, escape=True, na_rep=MISSING, border=0)
    for lab in shaded:
        text = text.replace(f"<tr>\n      <td>{html.escape(lab)}</td>",
                            f'<tr class="baseline">\n      <td>{html.escape(lab)}</td>')
    return text


def _unique(name: str, taken: set[str], ext: str) -> str:
    out, i = name, 2
    while f"{out}.{ext}" in taken:
        out, i = f"{name}_{i}", i + 1
    taken.add(f"{out}.{ext}")
    return out


def _block(b: Any, out: Path, paths: dict[str, Path], taken: set[str]) -> tuple[list[str], list[str]]:
    if isinstance(b, Table):
        name = _unique(b.name, taken, "csv")
        paths[name] = out / f"{name}.csv"
        b.frame.to_csv(paths[name], index=False)
        md = [f"### {b.title}", ""] + ([b.note, ""] if b.note else []) + [markdown_table(b.frame), ""]
        hb = [f"<h3>{html.escape(b.title)}</h3>"] + ([f'<p class="meta">{inline_html(b.note)}</p>'] if b.note else [])
        hb.append(html_table(b.frame, b.shaded))
        if b.checks:
            md += [f"- {c}" for c in b.checks] + [""]
            hb.append("<ul>" + "".join(f"<li>{inline_html(c)}</li>" for c in b.checks) + "</ul>")
        return md, hb
    if isinstance(b, Figure):
        name = _unique(b.name, taken, "png")
        paths[f"{name}_png"] = out / f"{name}.png"
        paths[f"{name}_png"].write_bytes(b.png)
        md = [f"### {b.title}", "", f"![{b.title}]({name}.png)", ""] + ([b.caption, ""] if b.caption else [])
        b64 = base64.b64encode(b.png).decode("ascii")
        hb = [f"<h3>{html.escape(b.title)}</h3>", "<figure>",
              f'<img src="data:image/png;base64,{b64}" alt="{html.escape(b.title)}">']
        hb += [f"<figcaption>{inline_html(b.caption)}</figcaption>"] if b.caption else []
        return md, hb + ["</figure>"]
    if isinstance(b, Text):
        return [b.text, ""], [f"<p>{inline_html(b.text)}</p>"]
    raise TypeError(f"not a report block: {type(b).__name__}")


def render(doc: Document, out_dir: str | Path) -> dict[str, Path]:
    """Write ``report.md``, ``report.html`` and every table's CSV and figure's PNG; return the paths by name.

    CSV paths are keyed by the (unique) table name, PNG paths by ``<name>_png``; ``markdown`` and
    ``html`` are the reports.
    """
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths: dict[str, Path] = {}
    taken = {"results.csv", "failures.csv"}
    md = [f"# {doc.title}", ""] + [f"{line}  " for line in doc.header] + [""]
    hb = [f"<h1>{html.escape(doc.title)}</h1>",
          '<p class="meta">' + "<br>".join(html.escape(line) for line in doc.header) + "</p>"]
    for sec in doc.sections:
        md += [f"## {sec.title}", ""] + ([sec.intro, ""] if sec.intro else [])
        hb += [f"<h2>{html.escape(sec.title)}</h2>"] + ([f"<p>{inline_html(sec.intro)}</p>"] if sec.intro else [])
        for b in sec.blocks:
            m, h = _block(b, out, paths, taken)
            md += m
            hb += h
    paths["markdown"] = out / "report.md"
    paths["markdown"].write_text("\n".join(md) + "\n", encoding="utf-8")
    paths["html"] = out / "report.html"
    page = ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(doc.title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(hb) + "\n</body>\n</html>\n")
    paths["html"].write_text(page, encoding="utf-8")
    return paths
