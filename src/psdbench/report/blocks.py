"""What a report section returns: tables, figures and text, rendered to Markdown, HTML and CSV.

A section (:class:`psdbench.api.ReportSection`) builds these from the tidy frame in its
:class:`SectionContext`; :mod:`psdbench.report.render` writes them.  Sections never write files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import pandas as pd


@dataclass
class Table:
    """A table of display strings (one CSV file ``<name>.csv`` beside the report).

    Attributes
    ----------
    name : str
        CSV stem (made unique by the renderer).
    title : str
    frame : DataFrame
        Cells as display strings; the first column labels the rows.
    note : str
        One paragraph under the title (Markdown ``code`` and ``**bold**`` allowed).
    shaded : tuple of str
        Row labels drawn as reference rows (a paper's values, baselines).
    checks : list of str
        Bullet lines under the table (e.g. a paper's claim and whether it holds here).
    """

    name: str
    title: str
    frame: pd.DataFrame
    note: str = ""
    shaded: tuple[str, ...] = ()
    checks: list[str] = field(default_factory=list)


@dataclass
class Figure:
    """A PNG figure (embedded in the HTML, a file ``<name>.png`` beside the Markdown)."""

    name: str
    title: str
    png: bytes
    caption: str = ""


@dataclass
class Text:
    """A paragraph (Markdown ``code`` and ``**bold**`` allowed)."""

    text: str


@dataclass
class Section:
    """A titled group of blocks, as returned to the renderer."""

    title: str
    blocks: list[Any]
    intro: str = ""


@dataclass
class SectionContext:
    """Everything a section may read.

    Attributes
    ----------
    family : str
        The family whose rows ``frame`` holds.
    frame : DataFrame
        The tidy frame of this family's latest cells (:func:`psdbench.report.frame.tidy_frame`):
        one row per cell, instance and solver parameters as columns ``p_<name>`` / ``s_<name>``
        with each problem's defaults filled in, metrics as ``metric_<name>``, ``solver_label``.
    refs : DataFrame
        The store's reference optima (one row per instance).
    problems : dict
        Problem name to problem object (for ``sense``, defaults, ...).
    out_dir : Path
        Where the report is written (read-only for sections).
    options : dict
        Report options (e.g. ``gap_tol`` for the performance profile).
    """

    family: str
    frame: pd.DataFrame
    refs: pd.DataFrame
    problems: Mapping[str, Any]
    out_dir: Path
    options: Mapping[str, Any] = field(default_factory=dict)
