"""Findings on the papers' claims: spread over seeds, verdicts in one vocabulary, and the blocks a
family's section returns for them.

A section that checks a claim ("method A's error is not above B's", "at least 5x fewer epochs")
measures it over seeds / folds, then reads the spread:

* :func:`spread` / :func:`fmt_spread`: median [min-max] of values over seeds;
* :func:`paired_interval`: the 95 % Student-t interval of the mean of paired differences over the
  independent units (instances, folds; seeds only where they change the result:
  :func:`psdbench.report.measures.units.unit_keys`, applied by :func:`psdbench.report.measures.aggregate.paired`);
* :func:`verdict`: one of :data:`psdbench.report.blocks.VERDICTS` from the low and high end of that
  interval against the claim's threshold: :func:`psdbench.report.rules.claim_verdict`, the rule the
  winners table applies too;
* :func:`finding_line`: a :class:`~psdbench.report.blocks.Finding` as the bullet line a table's
  ``checks`` shows beside it, worded the same in every family;
* :func:`finding_block` / :func:`source_block`: the :class:`~psdbench.report.blocks.Finding` /
  :class:`~psdbench.report.blocks.DataSource` a section returns among its blocks, for the report's
  findings table and run details.  Each is also a :class:`~psdbench.report.blocks.Text`, so a
  renderer that does not collect findings or sources still shows a data source's line (and a
  finding's, when it is not already a table's check) in place.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Iterable

import numpy as np

from psdbench.report import rules
from psdbench.report.measures.aggregate import Interval, log_ratio_interval, t_interval
from psdbench.report.blocks import DataSource, Finding, Text
from psdbench.report.rules import FAILS, HOLDS, NOT_MEASURED, WITHIN

__all__ = ["FAILS", "HOLDS", "NOT_MEASURED", "WITHIN", "Spread", "finding_block", "finding_line", "fmt_interval",
           "fmt_spread", "interval_verdict", "not_measured", "paired_interval", "ratio_claim", "ratio_interval",
           "source_block", "spread", "verdict"]


@dataclass(frozen=True)
class Spread:
    """Median, minimum and maximum of finite values, and how many there were."""

    median: float
    low: float
    high: float
    n: int


def spread(values: Iterable[Any]) -> Spread:
    """:class:`Spread` of the finite entries of ``values`` (NaN fields when there are none)."""
    v = np.array([float(x) for x in values if x is not None], dtype=float)
    v = v[np.isfinite(v)]
    if not v.size:
        return Spread(math.nan, math.nan, math.nan, 0)
    return Spread(float(np.median(v)), float(v.min()), float(v.max()), int(v.size))


def _fmt(x: float, fmt: str | Callable[[float], str]) -> str:
    return fmt(x) if callable(fmt) else format(x, fmt)


def fmt_spread(s: Spread, fmt: str | Callable[[float], str] = ".3g", unit: str = "", what: str = "seeds") -> str:
    """``"8.3x [7.9-8.8] (3 seeds)"``: median [min-max]; one value without brackets; ``"-"`` for none."""
    if not s.n:
        return "-"
    if s.n == 1:
        return f"{_fmt(s.median, fmt)}{unit} (1 {what.rstrip('s')})"
    return f"{_fmt(s.median, fmt)}{unit} [{_fmt(s.low, fmt)} to {_fmt(s.high, fmt)}] ({s.n} {what})"


def paired_interval(differences: Iterable[Any], level: float = 0.95) -> Interval:
    """Mean of paired differences (one per seed / fold) with its Student-t interval."""
    return t_interval(np.array([float(x) for x in differences], dtype=float), level)


def ratio_interval(ratios: Iterable[Any], level: float = 0.95) -> Interval:
    """Geometric mean of positive ratios (one per unit) with the Student-t interval of the mean log
    ratio, exponentiated: the one rule's interval for a claim on a ratio ("at least 5x fewer epochs");
    :func:`psdbench.report.measures.aggregate.log_ratio_interval` (no interval when a ratio is not positive)."""
    return log_ratio_interval(np.array([np.nan if x is None else float(x) for x in ratios], dtype=float), level)


def ratio_claim(ratios: Iterable[Any], threshold: float, relation: str, what: str = "seeds") -> tuple[str, str, str]:
    """``(ours, interval, verdict)`` of a claim on a ratio over units: the spread (median [min to max]),
    the geometric mean with its 95 % interval (:func:`ratio_interval`) and the verdict read from that
    interval by the one rule (:func:`interval_verdict`)."""
    vals = list(ratios)
    iv = ratio_interval(vals)
    fmt = lambda x: f"{x:.0f}" if abs(x) >= 100 else f"{x:.2g}"  # noqa: E731  (110x, not 1.1e+02x)
    return (fmt_spread(spread(vals), fmt, "x", what), fmt_interval(iv, fmt, "x", what),
            interval_verdict(iv, threshold, relation))


def fmt_interval(i: Interval, fmt: str | Callable[[float], str] = "+.2f", unit: str = "", what: str = "pairs") -> str:
    """``"+0.31 [−0.12, +0.74] (95 %, 3 pairs)"``; ``"-"`` without pairs; the mean alone for one pair."""
    if not i.n:
        return "-"
    if i.n < 2 or not math.isfinite(i.low):
        return f"{_fmt(i.mean, fmt)}{unit} (1 {what.rstrip('s')}: no interval)"
    return (f"{_fmt(i.mean, fmt)}{unit} [{_fmt(i.low, fmt)}, {_fmt(i.high, fmt)}] "
            f"({100 * i.level:g} %, {i.n} {what})")


def verdict(low: float, high: float, threshold: float, relation: str = ">=") -> str:
    """The verdict on a claim ``value relation threshold`` read from an interval ``[low, high]``:
    :func:`psdbench.report.rules.claim_verdict`, the one rule the winners table applies too."""
    return rules.claim_verdict(low, high, threshold, relation)


def interval_verdict(i: Interval, threshold: float, relation: str = ">=") -> str:
    """:func:`verdict` of a paired t interval over units (a single unit: its value, no spread):
    :func:`psdbench.report.rules.paired_verdict`."""
    return rules.paired_verdict(i.mean, i.low, i.high, i.n, threshold, relation)


def not_measured(paper: str, claim: str, paper_value: str = "", why: str = "") -> Finding:
    """A :class:`Finding` for a claim this run has no cells for (``why``: what is missing)."""
    return Finding(paper=paper, claim=claim, paper_value=paper_value, ours="-", verdict=NOT_MEASURED, note=why)


def finding_line(f: Finding) -> str:
    """The bullet line of a table's ``checks`` for a finding, worded alike in every family:
    ``claim: **verdict**; ours ...; paper ...; paired difference ...; note``."""
    parts = [f"{f.claim}: **{f.verdict}**"]
    if f.ours and f.ours != "-":
        parts.append(f"ours {f.ours}")
    if f.paper_value:
        parts.append(f"paper {f.paper_value}")
    if f.interval:
        parts.append(f"paired difference {f.interval}")
    if f.note:
        parts.append(f.note)
    return "; ".join(parts)


@dataclass
class ShownFinding(Finding, Text):
    """A :class:`Finding` that is also a :class:`Text` (``text``: its line where it is shown in place)."""


@dataclass
class ShownDataSource(DataSource, Text):
    """A :class:`DataSource` that is also a :class:`Text` (``text``: the line that says found / missing)."""


def finding_block(f: Finding, in_place: bool = False) -> ShownFinding:
    """``f`` as a block: collected into the findings table; shown in place as its :func:`finding_line`
    only with ``in_place`` (a finding that is already a table's check shows as an empty text)."""
    return ShownFinding(text=finding_line(f) if in_place else "", paper=f.paper, claim=f.claim,
                        paper_value=f.paper_value, ours=f.ours, verdict=f.verdict, interval=f.interval, note=f.note)


def source_block(name: str, path: str, found: bool, affects: str = "") -> ShownDataSource:
    """A data source as a block; its text says whether it was found and what the section drops without it."""
    text = (f"Data: {name} read from `{path}`." if found else
            f"**Data missing**: {name} (looked for `{path}`)" + (f"; without it, {affects}" if affects else "") + ".")
    return ShownDataSource(text=text, name=name, path=path, found=found, affects=affects)
