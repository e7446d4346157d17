"""Declarative tables: a section describes a table as data, :func:`build_table` builds it.

A :class:`TableSpec` names the row key (frame columns), an optional pivot column whose values become
columns, and :class:`Measure` s (value column, aggregation, formatter, optional paper value shown
beside ours).  :class:`ExtraRow` s (baselines, references, a paper's rows) are aggregated over every
cell of a column rather than one row key, and :class:`Summary` columns are computed from a row's
values across the pivot (an average, a count of wins).

Aggregations by name (each over the cells ``Measure.cells`` selects, finite values only):
``mean``, ``median``, ``std``, ``mean_std`` (``(mean, std, count)``), ``count``, ``kinds``
(distinct strings), ``ok_units`` (``k/n`` over the independent units), ``references`` (the reference kinds with their accuracy, one name per reference), ``ok_total`` (``k/n`` over all cells of the group), ``instance_mean`` /
``instance_mean_std`` / ``instances`` (over the first value of each distinct instance).  A callable
``agg(cells, group, value, key)`` receives the selected cells, all cells of the group, the value
column and the key (row key columns and the pivot value, by column name).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np
import pandas as pd

from psdbench.report.measures import aggregate as agg
from .blocks import Table
from .fmt import fmt_num

Key = Mapping[str, Any]
AggFn = Callable[[pd.DataFrame, pd.DataFrame, "str | None", Key], Any]

def _references(cells: pd.DataFrame, group: pd.DataFrame, value: str | None, key: Key) -> str:
    """The reference kinds of the cells with their accuracy (:func:`psdbench.report.measures.analysis.reference_text`)."""
    from psdbench.report.measures.analysis import reference_text

    have = cells[np.isfinite(pd.to_numeric(cells["reference_objective"], errors="coerce").astype(float))] \
        if "reference_objective" in cells.columns else cells.iloc[0:0]
    return reference_text(have)


AGGREGATIONS: dict[str, AggFn] = {
    "references": _references,
    "mean": lambda cells, group, value, key: agg.mean(cells[value]),
    "median": lambda cells, group, value, key: agg.median(cells[value]),
    "std": lambda cells, group, value, key: agg.std(cells[value]),
    "mean_std": lambda cells, group, value, key: agg.mean_std(cells[value]),
    "count": lambda cells, group, value, key: len(cells) if value is None else len(agg.finite(cells[value])),
    "kinds": lambda cells, group, value, key: agg.kinds(cells[value]),
    "instance_mean": lambda cells, group, value, key: agg.mean(agg.per_instance(cells, value)),
    "instance_mean_std": lambda cells, group, value, key: agg.mean_std(agg.per_instance(cells, value)),
    "instances": lambda cells, group, value, key: len(agg.per_instance(cells, value)),
}


@dataclass(frozen=True)
class Measure:
    """One value per row (and pivot value).

    Attributes
    ----------
    label : str
        Column header; with a pivot, ``"<label> <pivot label>"`` (the pivot label alone for ``""``).
    value : str, optional
        The frame column aggregated.
    agg : str or callable
        A name of :data:`AGGREGATIONS`, ``"ok_total"``, or ``agg(cells, group, value, key)``.
    fmt : callable
        Turns the aggregated value (or ``(ours, paper)`` with ``paper``) into the cell string.
    cells : str or tuple of str
        ``"ok"``, ``"all"`` or the statuses aggregated (:func:`psdbench.report.measures.aggregate.select_cells`).
    paper : callable, optional
        ``paper(key) -> float``: a reference value (a paper's) shown in the same cell.
    """

    label: str
    value: str | None = None
    agg: str | AggFn = "mean"
    fmt: Callable[[Any], str] = fmt_num
    cells: str | tuple[str, ...] = "ok"
    paper: Callable[[Key], float] | None = None

    def compute(self, group: pd.DataFrame, key: Key) -> Any:
        """The aggregated value over ``group`` (all cells of the row and pivot value)."""
        if self.agg == "ok_total":
            out: Any = agg.ok_total(group, self.value, self.cells)
        elif self.agg == "ok_units":
            out = agg.ok_units(group, self.value, self.cells)
        else:
            fn = AGGREGATIONS[self.agg] if isinstance(self.agg, str) else self.agg
            out = fn(agg.select_cells(group, self.cells), group, self.value, key)
        return (out, self.paper(key)) if self.paper is not None else out


@dataclass(frozen=True)
class ExtraRow:
    """A row aggregated over every cell of a column (baselines, a reference, a paper's values).

    ``measures`` maps the label of a spec measure to how this row fills it (other cells are blank);
    ``when(values)`` (the row's numeric values by column) decides whether the row is shown.
    """

    label: str | Callable[[pd.DataFrame], str]
    measures: Mapping[str, Measure]
    when: Callable[[dict[str, Any]], bool] | None = None
    shaded: bool = True


@dataclass(frozen=True)
class RowView:
    """What a :class:`Summary` sees of one row: its label, whether it is a data row, its numeric values
    by pivot value (first measure), every row's such values by label, and its cells."""

    label: str
    data: bool
    values: pd.Series
    table: Mapping[str, pd.Series]
    group: pd.DataFrame


@dataclass(frozen=True)
class Summary:
    """A column computed from a row's values across the pivot: ``func(row) -> str``."""

    label: str
    func: Callable[[RowView], str]


@dataclass(frozen=True)
class TableSpec:
    """A table as data; :func:`build_table` builds it.

    Attributes
    ----------
    name, title, note : str
        CSV stem, heading and the paragraph under it.
    measures : tuple of Measure
    rows : tuple of str
        Frame columns forming the row key; one row per distinct key.
    row_headers : tuple of str or None, optional
        Headers of the key columns (default: the column names); ``None``: a key column not shown.
    pivot : str, optional
        Frame column whose values become columns (measure-major: every pivot value of the first
        measure, then of the second, ...).
    pivot_label, pivot_order : callable
        Header text of a pivot value; order of the pivot values (default sorted).
    row_order : callable, optional
        Sort key of a row key tuple (default: the key).
    fill_rows : tuple of tuple
        Row keys shown even without cells (their values come from ``paper`` only).
    extra_rows : tuple of ExtraRow
    summaries : tuple of Summary
    checks : callable, optional
        ``checks(frame) -> list of str``: bullet lines under the table.
    keep_row : callable, optional
        ``keep_row(values)``: whether a data row is shown, from its numeric values by column header.
    """

    name: str
    title: str
    measures: tuple[Measure, ...]
    rows: tuple[str, ...] = ("solver_label",)
    row_headers: tuple[str | None, ...] | None = None
    pivot: str | None = None
    pivot_label: Callable[[Any], str] = str
    pivot_order: Callable[[Iterable[Any]], list[Any]] = sorted
    row_order: Callable[[tuple], Any] | None = None
    fill_rows: tuple[tuple, ...] = ()
    extra_rows: tuple[ExtraRow, ...] = ()
    summaries: tuple[Summary, ...] = ()
    note: str = ""
    checks: Callable[[pd.DataFrame], list[str]] | None = None
    keep_row: Callable[[dict[str, float]], bool] | None = None


def _number(v: Any) -> float:
    v = v[0] if isinstance(v, tuple) and v else v
    try:
        return float(v)
    except (TypeError, ValueError):
        return float("nan")


def _headers(spec: TableSpec, pivots: list[Any]) -> tuple[list[tuple[Measure, Any, str]], dict[Any, str]]:
    labels: dict[Any, str] = {}
    for p in pivots:  # distinct headers: a repeated label gets the value in brackets
        lab = spec.pivot_label(p)
        labels[p] = lab if lab not in labels.values() else f"{lab} ({p})"
    cols = []
    for m in spec.measures:
        if spec.pivot is None:
            cols.append((m, None, m.label))
        else:
            cols += [(m, p, f"{m.label} {labels[p]}" if m.label else labels[p]) for p in pivots]
    return cols, labels


def build_table(spec: TableSpec, frame: pd.DataFrame) -> Table | None:
    """Build the :class:`~psdbench.report.blocks.Table` a spec describes (``None`` for an empty frame)."""
    if frame.empty:
        return None
    pivots = spec.pivot_order(frame[spec.pivot].unique()) if spec.pivot else [None]
    cols, _ = _headers(spec, pivots)
    heads = list(spec.row_headers or spec.rows)
    keys = list(dict.fromkeys(frame[list(spec.rows)].itertuples(index=False, name=None)))
    keys = sorted(keys, key=spec.row_order) if spec.row_order else sorted(keys, key=lambda k: tuple(map(str, k)))
    keys += [k for k in spec.fill_rows if k not in keys]
    first = spec.measures[0].label

    rows: list[dict[str, str]] = []
    views: list[tuple[str, bool, pd.DataFrame, dict[str, Any]]] = []
    by_row = frame.groupby(list(spec.rows), sort=False, dropna=False) if len(frame) else None
    groups = {k if isinstance(k, tuple) else (k,): g for k, g in by_row} if by_row is not None else {}
    for k in keys:
        g = groups.get(k, frame.iloc[0:0])
        r: dict[str, str] = {h: str(v) for h, v in zip(heads, k) if h is not None}
        nums: dict[str, Any] = {}
        by_head: dict[str, float] = {}
        for m, p, head in cols:
            sub = g if p is None else g[g[spec.pivot] == p]
            key = {**dict(zip(spec.rows, k)), **({spec.pivot: p} if spec.pivot else {})}
            v = m.compute(sub, key)
            r[head] = m.fmt(v)
            by_head[head] = _number(v)
            if m.label == first:
                nums[p] = _number(v)
        if spec.keep_row is not None and not spec.keep_row(by_head):
            continue
        rows.append(r)
        views.append((str(k[-1]), True, g, nums))
    shaded = []
    for extra in spec.extra_rows:
        label = extra.label(frame) if callable(extra.label) else extra.label
        r = {h: "" for h in heads if h is not None}
        r[heads[-1]] = label
        nums, shown = {}, {}
        for m, p, head in cols:
            fill = extra.measures.get(m.label)
            if fill is None:
                r[head] = ""
                continue
            sub = frame if p is None else frame[frame[spec.pivot] == p]
            v = fill.compute(sub, {spec.pivot: p} if spec.pivot else {})
            r[head] = fill.fmt(v)
            shown[head] = _number(v)
            if m.label == first:
                nums[p] = _number(v)
        if extra.when is not None and not extra.when(shown):
            continue
        rows.append(r)
        views.append((label, False, frame, nums))
        if extra.shaded:
            shaded.append(label)
    table = {lab: pd.Series(n, dtype=float) for lab, _, _, n in views}
    for s in spec.summaries:
        for r, (lab, data, g, _) in zip(rows, views):
            r[s.label] = s.func(RowView(lab, data, table[lab], table, g))
    columns = [h for h in heads if h is not None] + [h for _, _, h in cols] + [s.label for s in spec.summaries]
    out = pd.DataFrame(rows, columns=columns).fillna("")
    checks = spec.checks(frame) if spec.checks else []
    return Table(spec.name, spec.title, out, spec.note, tuple(shaded), checks)


def any_finite(values: Mapping[str, Any]) -> bool:
    """``ExtraRow.when`` helper: the row has at least one finite value."""
    return any(isinstance(v, float) and math.isfinite(v) for v in values.values())


def row_mean(row: RowView) -> float:
    """Mean of a row's finite values across the pivot (NaN if none)."""
    v = row.values[np.isfinite(row.values)] if len(row.values) else row.values
    return float(v.mean()) if len(v) else float("nan")


def build_tables(specs: Sequence[TableSpec], frame: pd.DataFrame) -> list[Table]:
    """:func:`build_table` of each spec, empty results dropped."""
    return [t for t in (build_table(s, frame) for s in specs) if t is not None]


__all__ = ["AGGREGATIONS", "ExtraRow", "Measure", "RowView", "Summary", "TableSpec", "any_finite", "build_table",
           "build_tables", "row_mean"]


def reached_measure(options: Mapping[str, Any], label: str = "") -> Measure:
    """A measure ``k1 · k2 · k3 of n``: of the ``n`` units of a group (instances, folds; seeds only where
    they change the result: :func:`psdbench.report.measures.units.unit_keys`), how many reached each target
    accuracy (report option ``tolerances``) by the rules every generic table applies
    (:func:`psdbench.report.measures.analysis.reach_times`, :mod:`psdbench.report.rules`), so a family table and
    the winners and profiles agree cell by cell; ``n.r.`` where the target is tighter than the
    instance set's resolution (its reference's accuracy or verification floor: not resolved)."""
    from psdbench.report.measures import analysis as an
    from . import rules

    tols = tuple(options.get("tolerances", rules.TOLERANCES))
    allowance = float(options.get("gap_floor", rules.DEFAULT_ALLOWANCE))

    def fn(cells: pd.DataFrame, group: pd.DataFrame, value: str | None, key: Key) -> str:
        t = an.reach_times(group, tols, allowance)
        res = rules.resolution(t["resolution"]) if len(t) else float("nan")
        n = group["unit"].nunique() if "unit" in group.columns else len(group)
        # a unit reached a target when its (median) time is finite
        return " · ".join(str(int(np.isfinite(t[f"t_{x:g}"].astype(float)).sum())) if rules.resolves(x, res)
                          else "n.r." for x in tols) + f" of {n}"

    return Measure(label or "reached at " + " · ".join(f"{x:g}" for x in tols), agg=fn, fmt=str, cells="all")
