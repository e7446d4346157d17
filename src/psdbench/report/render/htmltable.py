"""HTML tables of the report: escaped cells, in-page links, sortable headers and cells coloured
against the best of their row or column (:attr:`psdbench.report.blocks.Table.best`)."""

from __future__ import annotations

import math
import re
from typing import Any, Iterable

import pandas as pd

from psdbench.report.fmt import MISSING, inline_html

_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
#: Background of verdict cells.
VERDICT_CLASS = {"holds": "v-holds", "does not hold": "v-fails", "within the spread": "v-spread",
                 "not measured in this run": "v-none"}


def cell_html(value: Any) -> str:
    """One cell: escaped, ``code`` spans and ``[text](#anchor)`` / ``[text](file.csv)`` links kept."""
    return inline_html(MISSING if value is None or (isinstance(value, float) and math.isnan(value)) else str(value))


def leading_number(value: Any) -> float:
    """The number a cell starts with (``"1.2 [1.0-1.4]"`` gives 1.2); NaN when it starts with none."""
    m = _NUMBER.match(str(value)) if value is not None else None
    if not m:
        return math.nan
    try:
        return float(m.group(1))
    except ValueError:  # pragma: no cover - the pattern only matches numbers
        return math.nan


def shades(frame: pd.DataFrame, best: str) -> dict[tuple[int, int], float]:
    """Per numeric cell (row, column index; the first column is the row label), a strength in [0, 1]:
    1 for the best of its row / column, falling linearly to 0 at twice the best (or half of it).

    ``best``: ``"row-min"``, ``"row-max"``, ``"col-min"`` or ``"col-max"``; only positive numbers count.
    """
    if not best or frame.empty:
        return {}
    axis, sense = best.split("-")
    vals = frame.iloc[:, 1:].apply(lambda c: c.map(leading_number)).to_numpy(float)
    out: dict[tuple[int, int], float] = {}
    lines = range(vals.shape[0]) if axis == "row" else range(vals.shape[1])
    for i in lines:
        v = vals[i, :] if axis == "row" else vals[:, i]
        pos = v[(v > 0) & (v == v) & (v != math.inf)]
        if len(pos) < 2:
            continue
        b = pos.min() if sense == "min" else pos.max()
        for j, x in enumerate(v):
            if x > 0 and x == x and x != math.inf:
                ratio = x / b if sense == "min" else b / x
                strength = max(0.0, 2.0 - ratio)
                out[(i, j + 1) if axis == "row" else (j, i + 1)] = strength
    return out


def html_table(df: pd.DataFrame, shaded: Iterable[str] = (), best: str = "", verdicts: str | None = None) -> str:
    """A sortable HTML table inside a horizontal scroll container.

    Rows whose first cell is in ``shaded`` get ``class="baseline"``; numeric cells are coloured by
    :func:`shades`; cells of the column ``verdicts`` get the class of their verdict.
    """
    shaded = set(shaded)
    strength = shades(df, best)
    head = "".join(f"<th>{cell_html(c)}</th>" for c in df.columns)
    rows = []
    vcol = list(df.columns).index(verdicts) if verdicts in df.columns else -1
    for i, r in enumerate(df.itertuples(index=False, name=None)):
        cells = []
        for j, v in enumerate(r):
            attr = ""
            if (i, j) in strength:
                s = strength[(i, j)]
                attr = f' style="background: rgba(44,160,44,{0.36 * s:.2f})"' + (
                    ' class="best"' if s >= 0.999 else "")
            elif j == vcol and str(v) in VERDICT_CLASS:
                attr = f' class="{VERDICT_CLASS[str(v)]}"'
            elif j and len(str(v)) <= 24 and not math.isnan(leading_number(v)):
                attr = ' class="num"'
            cells.append(f"<td{attr}>{cell_html(v)}</td>")
        cls = ' class="baseline"' if r and str(r[0]) in shaded else ""
        rows.append(f"<tr{cls}>{''.join(cells)}</tr>")
    return (f'<div class="scroll"><table class="sortable"><thead><tr>{head}</tr></thead>'
            f"<tbody>{''.join(rows)}</tbody></table></div>")
