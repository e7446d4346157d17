"""What a report section returns: tables, figures and text, rendered to Markdown, HTML and CSV.

A section (:class:`psdbench.api.ReportSection`) builds these from the tidy frame in its
:class:`SectionContext`; :mod:`psdbench.report.render` writes them.  Sections never write files.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

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
    #: How the HTML colours numeric cells against the best of their row / column: ``"row-min"``,
    #: ``"row-max"``, ``"col-min"``, ``"col-max"`` (smaller / larger is better), ``""``: not coloured.
    best: str = ""


@dataclass
class Figure:
    """A PNG figure (embedded in the HTML, a file ``<name>.png`` beside the Markdown)."""

    name: str
    title: str
    png: bytes
    caption: str = ""


@dataclass
class Series:
    """One line (or set of markers) of a :class:`Panel`.

    Attributes
    ----------
    label : str
        Legend entry (e.g. ``"my-solver · 5/6 ok"``).
    x, y : sequence of float
        The points (NaN / inf are gaps).
    colour_key : str
        What picks the colour from the report's one colour map (a solver configuration's label);
        default ``label``.
    mode : str
        ``"lines"``, ``"steps"`` (post-step), ``"markers"`` or ``"lines+markers"``.
    role : str
        ``"main"`` (always drawn), ``"summary"`` (drawn in band mode: a median with ``y_low`` /
        ``y_high`` as its band), ``"seed"`` (one cell's line, drawn in per-seed mode).
    y_low, y_high : sequence of float, optional
        A shaded band (``role="summary"``) or error bars (other roles).
    x_alt : sequence of float, optional
        The same points on the chart's alternative x axis (e.g. iterations).
    marker : str
        Plotly marker symbol (``"circle"``, ``"diamond"``, ``"x"``, ``"circle-open"``...); ``""``: default.
    hover : sequence of str, optional
        One hover line per point.
    legend : bool
        Whether the series has a legend entry (series of one ``colour_key`` share one legend group).
    """

    label: str
    x: Sequence[float]
    y: Sequence[float]
    colour_key: str = ""
    mode: str = "lines"
    role: str = "main"
    y_low: Sequence[float] | None = None
    y_high: Sequence[float] | None = None
    x_alt: Sequence[float] | None = None
    marker: str = ""
    hover: Sequence[str] | None = None
    legend: bool = True


@dataclass
class Panel:
    """One plot of a :class:`Chart`: a title, its series, and what to say when it has none.

    ``key`` places the panel under the chart's selectors (``{"set": "...", "tolerance": "1e-4"}``):
    the HTML shows the panels whose key matches every selector's value; a chart whose panels
    have no key shows them all.
    """

    title: str
    series: list[Series] = field(default_factory=list)
    note: str = ""
    empty: str = "Nothing to draw."
    key: dict[str, str] = field(default_factory=dict)


@dataclass
class Chart:
    """A figure as data, drawn by the renderers: interactive (plotly) in HTML, a PNG in Markdown.

    Attributes
    ----------
    name, title, caption : str
        File stem of the static figure, heading, and the paragraph under it.
    panels : list of Panel
    x_label, y_label : str
    log_x, log_y : bool
        Initial axis scales (the HTML has a log / linear toggle).
    x_alt_label : str
        Label of the alternative x axis the series' ``x_alt`` give (``""``: none).
    y_range : tuple of float, optional
        Fixed y range (linear units), e.g. ``(0, 1)`` for profiles.
    """

    name: str
    title: str
    panels: list[Panel]
    x_label: str = ""
    y_label: str = ""
    log_x: bool = False
    log_y: bool = False
    caption: str = ""
    x_alt_label: str = ""
    y_range: tuple[float, float] | None = None


@dataclass
class Text:
    """A paragraph (Markdown ``code`` and ``**bold**`` allowed)."""

    text: str


#: The four verdicts a :class:`Finding` may carry, in one vocabulary across the report.
VERDICTS: tuple[str, ...] = ("holds", "does not hold", "within the spread", "not measured in this run")


@dataclass
class Finding:
    """One claim of a paper checked by a section, collected into the report's findings table.

    The renderer lists every finding at the top of the report (with a link to the section that
    emitted it) and shows it again where it was emitted.

    Attributes
    ----------
    paper : str
        Short name of the paper (e.g. ``"SGML"``).
    claim : str
        The claim in one sentence, as the paper states it (Markdown ``code`` allowed).
    paper_value : str
        The paper's number (``""`` when the claim is qualitative).
    ours : str
        Our value with its spread over seeds (e.g. ``"8.3x [7.9-8.8]"``, ``"0.031 +/- 0.004"``).
    verdict : str
        One of :data:`VERDICTS`.
    interval : str
        Where the claim compares two methods: the 95 % interval of the paired difference over
        seeds / folds (``""`` otherwise).
    note : str
        Why the verdict, in one line (what was compared, which spread was read).
    """

    paper: str
    claim: str
    paper_value: str
    ours: str
    verdict: str
    interval: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if self.verdict not in VERDICTS:
            raise ValueError(f"Finding verdict {self.verdict!r} is not one of {VERDICTS}")


@dataclass
class DataSource:
    """A data source a section reads besides the store (a paper's table under ``PSDBENCH_DATA``, ...).

    The renderer lists every source in the run details, found or missing, with the sections it
    affects, so a render without the data says what it dropped.

    Attributes
    ----------
    name : str
        What the source is (``"SGML paper, Table II"``).
    path : str
        Where it was looked for.
    found : bool
    affects : str
        What the section shows from it, or drops without it (one line).
    """

    name: str
    path: str
    found: bool
    affects: str = ""


@dataclass
class Section:
    """A titled group of blocks, as returned to the renderer."""

    title: str
    blocks: list[Any]
    intro: str = ""
    family: str = ""


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
        Report options (``tolerances``, ``gap_floor``, ``sgm_shift``, ``time_limit``, ``size_param``,
        ``data_dir``: :data:`psdbench.report.DEFAULT_OPTIONS`)
        and ``colours``: the report's one solver-to-colour map (``solver_label`` to a hex colour),
        for sections that draw their own figures (:func:`psdbench.report.render.plot.colours`).
    runs : DataFrame, optional
        The store's ``runs`` table (machine, versions, command of each run).
    """

    family: str
    frame: pd.DataFrame
    refs: pd.DataFrame
    problems: Mapping[str, Any]
    out_dir: Path
    options: Mapping[str, Any] = field(default_factory=dict)
    runs: pd.DataFrame | None = None
