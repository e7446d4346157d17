"""Formatting helpers shared by every report section and the renderer (the only place they live)."""

from __future__ import annotations

import html
import math
import re
from typing import Any

import pandas as pd

#: What a missing number (NaN, None, not a number) prints as.
MISSING = "-"


def isnum(x: Any) -> bool:
    """Whether ``x`` is a finite real number (``bool`` is not)."""
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
    if not isnum(x):
        return MISSING
    x = float(x)
    if x == int(x) and abs(x) < 1e6:
        return str(int(x))
    return f"{x:.3g}"


def fmt_ratio(x: Any) -> str:
    """A ratio of at least 1 (a scaled score, a margin): two decimals below 100 (``1.00``, ``1.06``), an
    integer above; NaN/None as ``-``."""
    if not isnum(x):
        return MISSING
    x = float(x)
    return f"{x:.2f}" if abs(x) < 100 else f"{x:.0f}"


def fmt_pct(mean: Any, std: Any = None) -> str:
    """A fraction as a percentage with one decimal, optionally ``± std``."""
    if not isnum(mean):
        return MISSING
    s = f"{100 * float(mean):.1f}"
    if isnum(std):
        s += f" ± {100 * float(std):.1f}"
    return s


def fmt_sci(x: Any) -> str:
    """Three significant digits for reading (``0.203``, ``0.00521``, ``8.01``; exponent only below 1e-4 or
    from 1e6, lower case: ``1.2e-05``), never ``E`` notation; NaN/None as ``-``."""
    return fmt_finite(x, ".3g")


def fmt_mean_std(x: Any, fmt: Any = fmt_num) -> str:
    """``mean ± std`` for a ``(mean, std, ...)`` tuple (``mean`` alone when std is missing)."""
    if not isinstance(x, tuple):
        return fmt(x)
    s = fmt(x[0])
    return s + (f" ± {fmt(x[1])}" if s != MISSING and isnum(x[1]) else "")


def fmt_interval(mean: Any, low: Any, high: Any, fmt: Any = fmt_num) -> str:
    """``mean [low, high]``; the bracket is omitted when the interval is undefined."""
    s = fmt(mean)
    if s != MISSING and isnum(low) and isnum(high):
        s += f" [{fmt(low)}, {fmt(high)}]"
    return s


def first_line(msg: Any, limit: int = 200) -> str:
    """The first line of a message, cut at ``limit`` characters (``""`` for none)."""
    if not isinstance(msg, str) or not msg.strip():
        return ""
    line = msg.strip().splitlines()[0]
    return line if len(line) <= limit else line[: limit - 1] + "…"


def slug(*parts: Any) -> str:
    """A file-name-safe stem from ``parts`` (empty and missing parts skipped)."""
    s = "_".join(str(p) for p in parts if p not in (None, MISSING, ""))
    return re.sub(r"[^A-Za-z0-9.=-]+", "-", s).strip("-") or "table"


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


def inline_html(text: str) -> str:
    """Escape for HTML; Markdown ``code`` spans become <code>, ``**bold**`` becomes <strong>, ``[text](#anchor)``
    and ``[text](file.csv)`` / ``[text](../relative/path)`` become links."""
    s = re.sub(r"`([^`]*)`", r"<code>\1</code>", html.escape(text))
    s = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", s)
    # links to an anchor or a relative file path only (no scheme: the page has no external URL)
    return re.sub(r"\[([^\]]+)\]\(((?!//)(?:#|\./)?[A-Za-z0-9_.=#/-]+)\)", r'<a href="\2">\1</a>', s)


def fmt_int(x: Any) -> str:
    """An integer as an integer (``20``, not ``20.0``); another number in ``g`` form; NaN as ``-``;
    anything else as it is."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return str(x)
    if not math.isfinite(v):
        return "-"
    return str(int(v)) if v == int(v) else format(v, "g")


def fmt_spec(x: Any, spec: str = ".4g") -> str:
    """A number in format ``spec``; NaN, infinities and non-numbers as ``-``."""
    try:
        v = float(x)
    except (TypeError, ValueError):
        return "-"
    return "-" if not math.isfinite(v) else format(v, spec)
