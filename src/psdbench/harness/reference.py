"""Which reference each instance gets, and the gaps of its cells: computed here and nowhere else.

* Where an instance's cells certify their own points (the ``certified_interval`` hook, recorded
  by the worker in their metrics) within :data:`CERTIFIED_RTOL`, its reference is made of the
  best value and the best bound among them, and no reference is solved
  (:func:`reference_from_cells`; the runner asks once the cells are stored).
* A reference solve (the instance's ``certified_reference`` hook, run by the worker) is
  ``certified`` when its interval ``[lower, value]`` is narrower than :data:`CERTIFIED_RTOL`
  relative to ``max(1, |value|)``; with a wider interval it is an ``interval`` (an exactly feasible
  point and a certified bound); a point with a certified bound on the other side only (the hook's
  ``bound``; SDPLIB's gpp and qap) is a ``bound``, kept in the ``bound`` column; a point without a
  bound is ``best_verified``; without a value it is ``none``.  The hook's ``spread`` (the relative
  spread of its agreeing solves) is kept too.  The report reads how accurately each is known from
  these columns (:mod:`psdbench.report.measures.references`).
* An instance's reference objective is the certified value where there is one; else it is chosen
  among the reference solve's own point and the verified points of the instance's ``ok`` /
  ``max_iter`` cells, marked ``best_verified`` (:func:`choose_reference`): a reference is never
  moved by a verified point that differs from it by less than the floor (the verification
  allowance, :mod:`psdbench.harness.floor`); where points disagree by more, the most accurate ones
  decide (smallest residual; the reference solve counts as the most accurate), and the
  disagreement is listed (:func:`disagreements`).  Else none.
* The gap is how much worse than the reference a verified cell is: ``objective - p*`` when
  minimizing, ``p* - objective`` when maximizing (the problem's ``sense``); ``gap_rel`` divides by
  ``max(|p*|, 1e-12)``.  Rows whose point did not verify get the reference but no gap, and so does
  the row whose own point alone is a best-verified reference (a lone solver is not its own
  reference: its gap comes from a certified value or another point, never from itself).
* Read-time columns (:func:`annotate`): ``below_certified`` (a verified point better than the
  certified bound on the other side of the optimum), and a scale-aware ``gap_scaled`` =
  ``gap_abs / gap_scale`` with ``gap_scale = max(|p*|, |objective at the start|, 1)``, the start
  being the first point of the cell's re-scored curve; ``gap_rel`` keeps its schema definition.

:func:`finalize` reads the latest rows of a set of instances at once and writes every row's
reference columns in one transaction.
"""

from __future__ import annotations

import functools
import json
import math
from typing import Any, Iterable, Mapping

import pandas as pd

from psdbench.harness.floor import CERTIFIED_RTOL, DEFAULT_ALLOWANCE, allowance, repair_allowance
from psdbench.harness.store.db import Store

#: Residuals below this fraction of the floor count as exact when points are compared for accuracy.
EXACT = 1e-2
#: Cell statuses whose verified points may serve as the reference.
REFERENCE_STATUSES = ("ok", "max_iter")
#: How far (relative to ``max(1, |value|)``) cells' best value may lie beyond their best certified
#: bound, by rounding, before the two are taken to contradict each other (:func:`reference_from_cells`).
CROSSING = 1e-12


@functools.lru_cache(maxsize=1)
def _dependency_versions() -> dict[str, str]:
    """Versions of psdbench's own install requirements (not its extras): the libraries the
    built-in reference hooks are written with."""
    import re
    from importlib.metadata import PackageNotFoundError, requires, version

    try:
        reqs = requires("psdbench") or []
    except PackageNotFoundError:
        reqs = []
    out = {}
    for req in reqs:
        m = re.match(r"[A-Za-z0-9_.-]+", req)
        if m is None or "extra ==" in req:
            continue
        try:
            out[m.group(0)] = version(m.group(0))
        except PackageNotFoundError:
            out[m.group(0)] = "absent"
    return out


@functools.lru_cache(maxsize=None)
def reference_key(problem_code: str) -> str:
    """The key of the code that computes an instance's reference (:mod:`psdbench.harness.store.refcache`).

    The reference is the instance's own ``certified_reference`` hook, or its ``certified_interval``
    of its cells' points (:func:`reference_from_cells`), so its code is the problem's
    (``problem_code``, :func:`~psdbench.harness.store.keys.code_hash`, which follows the problem's imports
    of psdbench's shared solvers and kernels); the key adds the versions of psdbench's install
    requirements (the conic modelling and solver libraries references use among them),
    :data:`CERTIFIED_RTOL` and psdbench's version.
    """
    from psdbench.system.version import psdbench_version
    from psdbench.harness.store.keys import stable_hash

    return stable_hash(["reference", problem_code, _dependency_versions(), CERTIFIED_RTOL, psdbench_version()])


def reference_record(instance_key: str, spec: Mapping[str, Any], res: Mapping[str, Any]) -> dict[str, Any]:
    """The ``refs`` row of one instance from the worker's reference result.

    Parameters
    ----------
    instance_key : str
    spec : mapping
        The instance's ``problem``, ``dataset``, ``instance_params`` and ``seed``.
    res : mapping
        What :func:`psdbench.harness.workers.worker.run_reference` returned (``value``, ``lower``, ...).
    """
    value, lower = _finite(res.get("value")), _finite(res.get("lower"))
    bound = _finite(res.get("bound", res.get("lower_one_sided"))) if lower is None else None
    spread = _finite(res.get("spread"))
    kind = "none"
    # ``lower`` is the certified bound on the other side of the optimum (an upper bound when maximizing)
    if value is not None and lower is not None and certified(value, lower):
        kind = "certified"
    elif value is not None and lower is not None:
        kind = "interval"  # an exactly feasible point and a certified bound, the interval not tight
    elif value is not None and bound is not None:
        kind = "bound"  # a point (not exactly feasible) and a certified bound on the other side only
    elif value is not None:
        kind = "best_verified"  # a point without a bound
    return {"instance_key": instance_key, **spec, "value": value, "lower": lower, "bound": bound,
            "spread": None if spread is None else abs(spread),
            "gap": None if value is None or lower is None else value - lower, "kind": kind,
            "solver": res.get("solver"), "solver_version": res.get("solver_version"), "status": res.get("status"),
            "wall_time_s": res.get("wall_time_s"), "message": str(res.get("message", ""))[:4000]}


def certified(value: float, lower: float) -> bool:
    """Whether the interval between ``value`` and ``lower`` is narrower than :data:`CERTIFIED_RTOL`
    relative to ``max(1, |value|)``: the width a ``certified`` reference has."""
    return abs(value - lower) <= CERTIFIED_RTOL * max(1.0, abs(value))


def reference_from_cells(instance_key: str, spec: Mapping[str, Any], rows: Iterable[Mapping[str, Any]],
                         sense: str) -> dict[str, Any] | None:
    """The ``refs`` row of one instance made of its cells' certified points, or ``None``.

    Parameters
    ----------
    instance_key : str
    spec : mapping
        The instance's ``problem``, ``dataset``, ``instance_params`` and ``seed``.
    rows : iterable of mapping
        The latest row of each of its cells: those that verified and recorded the interval their
        point certifies (``metrics["certified_value"]``, ``["certified_lower"]``, from the
        ``certified_interval`` hook) count, whatever their status.
    sense : str
        ``"min"`` or ``"max"``.

    Returns
    -------
    dict or None
        The best value and the best bound among them (from one cell or two, each proven by its own
        point), as :func:`reference_record` makes them, when :func:`certified`: ``solver`` the
        cells' solvers, the message which cells, ``wall_time_s`` 0 (the certificates were timed in
        the cells).  ``None`` otherwise, or when the value lies beyond the bound by more than
        :data:`CROSSING` (a certificate is then wrong, and the reference is solved).
    """
    cands = []
    for r in sorted(rows, key=lambda r: str(r.get("cell_key"))):
        metrics = _metrics(r)
        v, lo = _finite(metrics.get("certified_value")), _finite(metrics.get("certified_lower"))
        if r.get("feasible") == 1 and v is not None and lo is not None:
            cands.append((v, lo, r, str(metrics.get("certified_by") or "")))
    if not cands:
        return None
    sign = 1.0 if sense == "max" else -1.0  # maximizing: the largest value, the smallest (upper) bound
    best = max(cands, key=lambda c: sign * c[0])
    tight = min(cands, key=lambda c: sign * c[1])
    value, lower = best[0], tight[1]
    if sign * (lower - value) < -CROSSING * max(1.0, abs(value)) or not certified(value, lower):
        return None
    cells = [best] if best is tight else [best, tight]
    where = (f"value and bound from cell {best[2]['cell_key']} ({best[2]['solver']})" if best is tight else
             f"value from cell {best[2]['cell_key']} ({best[2]['solver']}), bound from cell {tight[2]['cell_key']} "
             f"({tight[2]['solver']})")
    note = "; ".join(dict.fromkeys(c[3] for c in cells if c[3]))
    res = {"value": value, "lower": lower, "solver": "+".join(dict.fromkeys(str(c[2]["solver"]) for c in cells)),
           "solver_version": "", "status": "ok", "wall_time_s": 0.0,
           "message": f"taken from the cells' certified points, no reference solve: {where}"
                      + (f"; {note}" if note else "")}
    return reference_record(instance_key, spec, res)


def _metrics(row: Mapping[str, Any]) -> Mapping[str, Any]:
    """A row's ``metrics`` as a mapping (stored as JSON text; ``{}`` where it does not parse)."""
    metrics = row.get("metrics")
    if isinstance(metrics, str):
        try:
            metrics = json.loads(metrics)
        except ValueError:
            metrics = {}
    return metrics if isinstance(metrics, Mapping) else {}


def _finite(v: Any) -> float | None:
    """``v`` as a finite float, else ``None``."""
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    return float(v) if math.isfinite(v) else None


def _candidates(ref: Mapping[str, Any] | None, rows: Iterable[Mapping[str, Any]],
                default: float) -> tuple[list[dict[str, Any]], float]:
    """The points a best-verified reference is chosen from, and the instance's floor.

    Each candidate: ``objective``, ``residual`` (the reference solve's own point counts as 0: the
    most accurate), ``source`` (``"reference solve"`` or the row's ``cell_key``) and ``solver``.  The
    floor is the largest verification allowance of the rows (:func:`psdbench.harness.floor.allowance`
    of their recorded tolerances, ``default`` where none recorded one, or their repair allowance
    where it is larger: :func:`psdbench.harness.floor.repair_allowance`).
    """

    out, allow = [], []
    for r in rows:
        if r["feasible"] != 1 or r["objective"] is None or r["status"] not in REFERENCE_STATUSES:
            continue
        metrics = _metrics(r)
        repaired = repair_allowance(metrics, float(r["objective"]))  # its point's own, where its family repairs
        allow.append(max(allowance(metrics.get("tolerances"), default), 0.0 if math.isnan(repaired) else repaired))
        res = r.get("max_residual")
        res = float(res) if isinstance(res, (int, float)) and math.isfinite(res) else allow[-1]
        out.append({"objective": float(r["objective"]), "residual": abs(res), "source": r.get("cell_key"),
                    "solver": r.get("solver")})
    if ref and ref.get("value") is not None:
        out.append({"objective": float(ref["value"]), "residual": 0.0, "source": "reference solve",
                    "solver": ref.get("solver")})
    return out, max(allow, default=default)


def _better(a: float, b: float, sense: str, floor: float) -> bool:
    """Whether objective ``a`` is better than ``b`` by more than ``floor`` (relative to ``max(|b|, 1)``)."""
    d = (a - b) if sense == "max" else (b - a)
    return d > floor * max(abs(b), 1.0)


def _choose(cands: list[dict[str, Any]], sense: str, floor: float) -> tuple[dict[str, Any] | None,
                                                                              list[dict[str, Any]]]:
    """The chosen candidate and the candidates set aside (better than a more accurate point by more
    than ``floor``)."""
    acc = [max(c["residual"], EXACT * floor) for c in cands]  # residuals below EXACT * floor count as exact
    kept = [c for c, a in zip(cands, acc) if not any(b < a and _better(c["objective"], d["objective"], sense, floor)
                                                     for d, b in zip(cands, acc))]
    aside = [c for c in cands if c not in kept]
    if not kept:
        return None, aside
    sign = -1.0 if sense == "max" else 1.0
    best = min(kept, key=lambda c: sign * c["objective"])
    tied = [c for c in kept if not _better(best["objective"], c["objective"], sense, floor)]
    chosen = min(tied, key=lambda c: (max(c["residual"], EXACT * floor), c["source"] != "reference solve",
                                      sign * c["objective"]))
    return chosen, aside


def choose_reference(ref: Mapping[str, Any] | None, rows: Iterable[Mapping[str, Any]], sense: str,
                     default_allowance: float | None = None) -> tuple[float | None, str]:
    """``(value, kind)`` of one instance's reference.

    Parameters
    ----------
    ref : mapping or None
        The instance's stored reference solve (``value``, ``kind``, ``solver``).
    rows : iterable of mapping
        The latest row of each of its cells (``objective``, ``feasible``, ``status``, ``max_residual``,
        ``metrics``, ``cell_key``).
    sense : str
        ``"min"`` or ``"max"``.
    default_allowance : float, optional
        The verification allowance of rows that recorded no tolerance (default
        :data:`psdbench.harness.floor.DEFAULT_ALLOWANCE`).

    Returns
    -------
    tuple
        The certified value where there is one.  Otherwise, among the reference solve's point and the
        verified ``ok`` / ``max_iter`` points: those better than a more accurate point (smaller
        residual, those below :data:`EXACT` times the floor counting as exact; the reference solve's
        counts as 0) by more than the floor are set aside; of the
        rest, those within the floor of the best are ties, and the most accurate of them is the
        reference (the reference solve first), ``best_verified``.  ``(None, "none")`` without one.
    """
    if ref and ref.get("kind") == "certified":
        return ref["value"], "certified"

    cands, floor = _candidates(ref, rows, DEFAULT_ALLOWANCE if default_allowance is None else default_allowance)
    chosen, _ = _choose(cands, sense, floor)
    return (None, "none") if chosen is None else (chosen["objective"], "best_verified")


def disagreements(ref: Mapping[str, Any] | None, rows: Iterable[Mapping[str, Any]], sense: str,
                  default_allowance: float | None = None) -> list[dict[str, Any]]:
    """The verified points of one instance that disagree with its best-verified reference by more than
    the floor, from the better side: each ``objective``, ``residual``, ``source``, ``solver``,
    ``reference`` and ``floor`` (empty for a certified reference, which they are checked against
    as points beyond the bound)."""
    if ref and ref.get("kind") == "certified":
        return []

    cands, floor = _candidates(ref, rows, DEFAULT_ALLOWANCE if default_allowance is None else default_allowance)
    chosen, aside = _choose(cands, sense, floor)
    if chosen is None:
        return []
    return [{**c, "reference": chosen["objective"], "floor": floor} for c in aside]


def gaps(value: float | None, objective: float | None, feasible: int | None,
         sense: str) -> tuple[float | None, float | None]:
    """``(gap_abs, gap_rel)`` of one row against ``value``; ``(None, None)`` unless it verified."""
    if value is None or feasible != 1 or objective is None:
        return None, None
    gap = value - objective if sense == "max" else objective - value
    return gap, gap / max(abs(value), 1e-12)


def reference_updates(rows: Iterable[Mapping[str, Any]], refs: Mapping[str, Mapping[str, Any]],
                      senses: Mapping[str, str]) -> list[tuple[Any, ...]]:
    """``(reference_objective, reference_kind, gap_abs, gap_rel, cell_key, run_id)`` for every row.

    Parameters
    ----------
    rows : iterable of mapping
        The latest row of every cell of the instances (``instance_key``, ``objective``, ...).
    refs : mapping
        Stored references by instance key.
    senses : mapping
        ``"min"`` or ``"max"`` by instance key.
    """
    by_instance: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_instance.setdefault(r["instance_key"], []).append(r)
    out: list[tuple[Any, ...]] = []
    for key, group in by_instance.items():
        sense = senses.get(key, "min")
        value, kind = choose_reference(refs.get(key), group, sense)
        for r in group:
            g = gaps(value, r["objective"], r["feasible"], sense)
            if kind == "best_verified" and not _reached_by_another(value, r, refs.get(key), group, sense):
                g = (None, None)  # the row is its own reference: a gap of 0 against itself says nothing
            out.append((value, kind, *g, r["cell_key"], r["run_id"]))
    return out


def _reached_by_another(value: float | None, row: Mapping[str, Any], ref: Mapping[str, Any] | None,
                        group: Iterable[Mapping[str, Any]], sense: str) -> bool:
    """Whether a best-verified ``value`` comes from a point other than ``row``'s own: another cell's
    verified point or the reference solve's (a row's gap never comes from itself)."""
    others = [r for r in group if r["cell_key"] != row["cell_key"]]
    other_value, _ = choose_reference(ref if ref and ref.get("kind") != "certified" else None, others, sense)
    return other_value is not None and other_value == value


def finalize(store: Store, senses: Mapping[str, str]) -> None:
    """Fill reference and gap columns of the latest row of every cell of these instances.

    Parameters
    ----------
    store : Store
    senses : mapping
        ``"min"`` or ``"max"`` by instance key: the instances to finalize.
    """
    rows = store.latest_rows(senses)
    if rows:
        store.write_reference_columns(reference_updates(rows, store.references(senses), senses))


def _start_objective(curve: Any) -> float | None:
    """The objective of the first point of a re-scored curve, or ``None``."""
    if isinstance(curve, list) and curve and isinstance(curve[0], Mapping):
        v = curve[0].get("objective")
        if isinstance(v, (int, float)) and math.isfinite(v):
            return float(v)
    return None


def annotate(df: pd.DataFrame, refs: pd.DataFrame | None = None) -> pd.DataFrame:
    """Add the read-time columns ``below_certified``, ``gap_scale`` and ``gap_scaled`` to a results frame.

    Parameters
    ----------
    df : DataFrame
        ``Store.results_frame()`` (``curve`` decoded).
    refs : DataFrame, optional
        ``Store.references_frame()``: the certified interval ``[lower, value]`` of each instance.

    Returns
    -------
    DataFrame
        A copy with ``below_certified`` (bool: the verified objective is better than the certified
        reference by more than the certificate's own width, so it beats a proven bound: the point's
        feasibility tolerance or the certificate is wrong), ``gap_scale`` (``max(|p*|, |objective at
        the start|, 1)``) and ``gap_scaled`` (``gap_abs / gap_scale``).
    """
    out = df.copy()
    if not len(out):
        return out.assign(below_certified=pd.Series(dtype=bool), gap_scale=pd.Series(dtype=float),
                          gap_scaled=pd.Series(dtype=float))
    width: dict[str, float] = {}
    if refs is not None and len(refs) and {"instance_key", "value", "lower", "kind"} <= set(refs.columns):
        for r in refs.itertuples():
            if r.kind == "certified" and r.value is not None and r.lower is not None:
                width[r.instance_key] = abs(float(r.value) - float(r.lower))
    below, scale = [], []
    for r in out.itertuples():
        gap, ref = getattr(r, "gap_abs", None), getattr(r, "reference_objective", None)
        certified = getattr(r, "reference_kind", None) == "certified"
        w = width.get(r.instance_key, 0.0)
        tiny = 1e-12 * max(1.0, abs(ref)) if ref is not None and ref == ref else 0.0
        below.append(bool(certified and gap is not None and gap == gap and gap < -(w + tiny)))
        start = _start_objective(getattr(r, "curve", None))
        parts = [1.0] + [abs(x) for x in (ref, start) if x is not None and x == x]
        scale.append(max(parts))
    out["below_certified"] = below
    out["gap_scale"] = scale
    out["gap_scaled"] = pd.to_numeric(out["gap_abs"], errors="coerce") / out["gap_scale"]
    return out
