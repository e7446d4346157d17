"""The asv settings of a suite and the direction of every tracked value: one home, imported one way.

:mod:`psdbench.harness.grid.expand` checks a suite's ``[asv]`` table here while it expands the suite;
:mod:`psdbench.asvbench.tracked` (which expands the suites asv tracks through the grid) and
:mod:`psdbench.report.compare` read the table's declarations from here.  Nothing here imports the grid
or the tracked values, so imports run one way: ``grid -> asvspec <- tracked -> grid``.

The one rule for direction
--------------------------
A task metric has a direction only where it is declared, never from its name:

* a suite's ``[asv]`` table (keys :data:`psdbench.api.ASV_SUITE_KEYS`): ``metric`` and
  ``metric_best`` (default 0); the tracked cost is ``|metric - metric_best|``, 0 at best, and a
  rise of that cost is worse, for asv (``track_metric_from_best``) and for ``psdbench compare``
  alike (``max_err`` on ``sdp-generated``: a rise is worse);
* a family's ranking metric (:class:`psdbench.api.RankingMetric` of its report section): sense
  ``max`` (a drop is worse) or ``min`` (a rise is worse), where no tracked suite declares it.

Both are read by :func:`declared_directions` for every problem of the family; a metric declared
nowhere is shown by ``psdbench compare`` and never flagged.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from psdbench.api import ASV_SUITE_KEYS, PsdbenchError
from .limits import echo

if TYPE_CHECKING:  # pragma: no cover
    from psdbench.registry import Registry


def asv_settings(spec: dict[str, Any], name: str, seeds: Sequence[int]) -> dict[str, Any] | None:
    """The checked ``[asv]`` table of a parsed suite (``None``: asv does not track it).

    ``seeds`` are the suite's own (``[run] seeds``); asv runs the table's ``seeds``, else the first
    of them.  Raises a one-line :class:`PsdbenchError` on anything malformed.

    Returns
    -------
    dict or None
        ``seeds`` (list), ``metric`` (str or None), ``metric_best`` (float, 0 unless declared).
    """
    table = spec.get("asv")
    if table is None:
        return None
    if not isinstance(table, dict) or set(table) - set(ASV_SUITE_KEYS):
        raise PsdbenchError(f"grid {name}: [asv] must be a table of {', '.join(sorted(ASV_SUITE_KEYS))}")
    chosen = table.get("seeds", list(seeds)[:1])
    if not isinstance(chosen, list) or not chosen or not all(
            isinstance(s, int) and not isinstance(s, bool) and 0 <= s < 2**32 for s in chosen):
        raise PsdbenchError(f"grid {name}: [asv] seeds must be a non-empty list of integers >= 0, not {echo(chosen)}")
    metric = table.get("metric")
    if metric is not None and (not isinstance(metric, str) or not metric):
        raise PsdbenchError(f"grid {name}: [asv] metric must be the name of a metric, not {echo(metric)}")
    best = table.get("metric_best", 0)
    if isinstance(best, bool) or not isinstance(best, (int, float)) or not math.isfinite(best):
        raise PsdbenchError(f"grid {name}: [asv] metric_best must be a finite number (the metric's best value), "
                            f"not {echo(best)}")
    if "metric_best" in table and metric is None:
        raise PsdbenchError(f"grid {name}: [asv] metric_best needs a metric")
    return {"seeds": list(dict.fromkeys(chosen)), "metric": metric, "metric_best": float(best)}


@dataclass(frozen=True)
class Direction:
    """How a metric's value becomes a cost (0 or lower is better; a rise is worse).

    ``best`` set: the cost is ``|value - best|`` (a suite's ``[asv] metric_best``); else ``sense``
    ``"max"``: ``-value``, ``"min"``: ``value`` (a family's ranking metric).  ``source`` names the
    declaration, for messages.
    """

    best: float | None = None
    sense: str = "min"
    source: str = ""

    def cost(self, value: float) -> float:
        """The value as a cost (NaN stays NaN)."""
        if self.best is not None:
            return abs(value - self.best)
        return -value if self.sense == "max" else value


def declared_directions(reg: Registry) -> dict[tuple[str, str], Direction]:
    """``(problem, metric) -> Direction`` for every registered problem whose family declares a
    direction for the metric (module docstring: the tracked suites' ``[asv]`` tables first, then
    the family's ranking metric).  Suites that do not parse are left out (``run --suite`` names them).
    """
    from psdbench.api import problem_family, ranking_metric

    family_of: dict[str, str] = {}
    for pname in reg.problems:
        try:
            family_of[pname] = problem_family(reg.problem(pname))
        except Exception:  # a broken plugin: `psdbench list` names it
            continue
    by_family: dict[tuple[str, str], Direction] = {}
    for section in dict(getattr(reg, "reports", {}) or {}).values():
        rm = ranking_metric(section)
        fam = getattr(section, "family", "*")
        if rm is not None and fam != "*":
            by_family[(fam, rm.metric)] = Direction(None, rm.sense, f"family {fam}'s ranking metric")
    for name in reg.suite_names():
        try:
            spec = reg.read_suite(name)
            run = spec.get("run", {}) if isinstance(spec.get("run", {}), dict) else {}
            settings = asv_settings(spec, name, run.get("seeds", [0]))
        except PsdbenchError:
            continue
        if settings is None or settings["metric"] is None:
            continue
        for p in spec.get("problems", []) or []:
            fam = family_of.get(p.get("name", "")) if isinstance(p, dict) else None
            if fam is not None:
                by_family[(fam, settings["metric"])] = Direction(settings["metric_best"], "min",
                                                                 f"suite {name}'s [asv] table")
    return {(pname, metric): d for pname, fam in family_of.items()
            for (f, metric), d in by_family.items() if f == fam}
