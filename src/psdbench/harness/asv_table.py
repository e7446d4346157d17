"""A suite's ``[asv]`` table, checked when the grid is read, and the one rule of a metric's direction.

Apart from :mod:`psdbench.harness.tracked` (which expands the suites asv tracks, through
:mod:`psdbench.harness.grid`) so that the grid can check the table without importing it back:
``tracked -> grid -> asv_table``.  ``psdbench compare`` reads a metric's direction here too.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from ..api import ASV_SUITE_KEYS, PsdbenchError
from .limits import echo

#: Words of a metric's name that say lower is better (``psdbench compare`` flags a rise).
LOWER_BETTER = ("error", "loss")
#: Words of a metric's name that say higher is better (``psdbench compare`` flags a drop).
HIGHER_BETTER = ("accuracy", "f_measure", "f1", "auc")


def asv_settings(spec: dict[str, Any], name: str, seeds: Sequence[int]) -> dict[str, Any] | None:
    """The checked ``[asv]`` table of a parsed suite (``None``: asv does not track it).

    ``seeds`` are the suite's own (``[run] seeds``); asv runs the table's ``seeds``, else the first
    of them.  Raises a one-line :class:`PsdbenchError` on anything malformed.
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
    if metric is not None and metric_direction(metric) > 0 and "metric_best" not in table:
        raise PsdbenchError(f"grid {name}: [asv] metric {metric} is higher-is-better (psdbench compare reads its "
                            "name so): set metric_best to its best value")
    return {"seeds": list(dict.fromkeys(chosen)), "metric": metric, "metric_best": float(best)}


def metric_direction(name: str) -> int:
    """``-1`` if a metric's name says lower is better, ``+1`` higher is better, ``0`` if it does not say.

    The words are :data:`LOWER_BETTER` and :data:`HIGHER_BETTER` (a lower-is-better word wins).
    """
    low = name.lower()
    if any(w in low for w in LOWER_BETTER):
        return -1
    if any(w in low for w in HIGHER_BETTER):
        return 1
    return 0
