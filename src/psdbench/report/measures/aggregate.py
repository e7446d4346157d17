"""Aggregations shared by the report sections: over ``ok`` cells, per instance, and paired comparisons.

Every statistic is over finite values only; a group without one gives NaN (printed ``-``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np
import pandas as pd
from scipy import stats

#: Statuses of cells whose final point a solver returned (whether or not it verified).
RETURNED = ("ok", "max_iter", "timeout", "infeasible")


def select_cells(df: pd.DataFrame, cells: str | Sequence[str] = "ok") -> pd.DataFrame:
    """Rows whose ``status`` is ``ok`` (``cells="ok"``), any (``"all"``), or in the given statuses."""
    if cells == "all":
        return df
    wanted = ("ok",) if cells == "ok" else tuple(cells)
    return df[df["status"].isin(wanted)]


def finite(values: Any) -> pd.Series:
    """The finite numbers of ``values`` (coerced), as a float Series."""
    s = pd.to_numeric(pd.Series(values, dtype=object) if not isinstance(values, pd.Series) else values,
                      errors="coerce").astype(float)
    return s[np.isfinite(s)]


def mean(values: Any) -> float:
    """Mean of the finite values (NaN if none)."""
    v = finite(values)
    return float(v.mean()) if len(v) else float("nan")


def std(values: Any) -> float:
    """Sample standard deviation (ddof 1) of the finite values (NaN below two)."""
    v = finite(values)
    return float(v.std(ddof=1)) if len(v) > 1 else float("nan")


def median(values: Any) -> float:
    """Median of the finite values (NaN if none)."""
    v = finite(values)
    return float(v.median()) if len(v) else float("nan")


def mean_std(values: Any) -> tuple[float, float, int]:
    """``(mean, std, count)`` of the finite values."""
    v = finite(values)
    return mean(v), std(v), len(v)


def ok_total(group: pd.DataFrame, value: str | None = None, cells: str | Sequence[str] = "ok") -> str | None:
    """``k/n``: of the ``n`` cells of ``group``, the ``k`` selected by ``cells`` with a finite ``value``.

    ``None`` for an empty group (printed as missing).
    """
    if group.empty:
        return None
    sel = select_cells(group, cells)
    k = len(sel) if value is None else int(np.isfinite(pd.to_numeric(sel[value], errors="coerce")).sum())
    return f"{k}/{len(group)}"


def ok_units(group: pd.DataFrame, value: str | None = None, cells: str | Sequence[str] = "ok") -> str | None:
    """``k/n`` over the independent units of ``group`` (column ``unit``: instances, folds; seeds only
    where they change the result): the ``k`` units every cell of which is selected by ``cells`` with a
    finite ``value``.  :func:`ok_total` for a frame without units; ``None`` for an empty group."""
    if group.empty:
        return None
    if "unit" not in group.columns:
        return ok_total(group, value, cells)
    wanted = ("ok",) if cells == "ok" else None if cells == "all" else tuple(cells)
    ok = group["status"].isin(wanted) if wanted is not None else pd.Series(True, index=group.index)
    if value is not None:
        ok &= np.isfinite(pd.to_numeric(group[value], errors="coerce").astype(float))
    per = ok.groupby(group["unit"]).all()
    return f"{int(per.sum())}/{len(per)}"


def kinds(values: Iterable[Any]) -> str:
    """Distinct non-empty strings (split at commas), sorted and comma-joined (``""`` if none)."""
    out = {k.strip() for v in values if v is not None and not (isinstance(v, float) and math.isnan(v))
           for k in str(v).split(",") if k.strip() and k.strip() != "-"}
    return ", ".join(sorted(out))


def per_instance(df: pd.DataFrame, value: str) -> pd.Series:
    """The first finite ``value`` of each instance (index: ``instance_key``)."""
    v = pd.to_numeric(df[value], errors="coerce")
    have = df[np.isfinite(v.astype(float))]
    return pd.to_numeric(have.groupby("instance_key")[value].first(), errors="coerce").astype(float)


@dataclass(frozen=True)
class Interval:
    """Mean of paired values with their spread.

    Attributes
    ----------
    mean, std : float
    n : int
        Number of pairs.
    low, high : float
        Two-sided t-interval for the mean at ``level`` (NaN below two pairs).
    level : float
    """

    mean: float
    std: float
    n: int
    low: float
    high: float
    level: float = 0.95


def t_interval(values: Any, level: float = 0.95) -> Interval:
    """Mean, sample std and the Student-t interval ``mean ± t_{(1+level)/2, n-1} std / sqrt(n)``."""
    v = finite(values)
    n = len(v)
    m, s = mean(v), std(v)
    if n < 2:
        return Interval(m, s, n, float("nan"), float("nan"), level)
    half = float(stats.t.ppf(0.5 + level / 2, n - 1)) * s / math.sqrt(n)
    return Interval(m, s, n, m - half, m + half, level)


def units(df: pd.DataFrame, values: Sequence[str] = ("objective",), key: str = "instance_key") -> pd.Series:
    """Per row, its independent unit (:func:`psdbench.report.measures.units.unit_keys`: the instance, its seed
    only where the seed changes ``values``); ``key`` where the frame lacks the instance description."""
    from psdbench.report.measures.units import unit_keys

    need = {"problem", "dataset", "instance_params", "seed", "solver_label"}
    if df.empty or not need <= set(df.columns):
        return df[key].astype(str) if key in df.columns else pd.Series([], dtype=str, index=df.index)
    return unit_keys(df, values)


def per_unit(df: pd.DataFrame, value: str, unit: pd.Series) -> pd.Series:
    """The mean finite ``value`` of each unit (index: the unit key)."""
    v = pd.to_numeric(df[value], errors="coerce").astype(float)
    ok = np.isfinite(v)
    return v[ok].groupby(unit[ok]).mean()


def paired(df: pd.DataFrame, value: str, a: str, b: str, by: str = "solver_label", key: str = "instance_key",
           cells: str | Sequence[str] = "ok") -> pd.DataFrame:
    """Per shared unit, ``value`` of configuration ``a`` and of ``b`` (columns ``a``, ``b``).

    The units are :func:`units` of the two configurations' selected cells with a finite value:
    instances (folds included), seeds only where they change ``value``; a unit's value is the mean
    over its cells.  Units where either has no such cell are left out.
    """
    sel = select_cells(df, cells)
    sel = sel[sel[by].isin([a, b]) & np.isfinite(pd.to_numeric(sel[value], errors="coerce").astype(float))]
    if sel.empty:
        return pd.DataFrame({"a": pd.Series(dtype=float), "b": pd.Series(dtype=float)})
    unit = units(sel, (value,), key)
    va = per_unit(sel[sel[by] == a], value, unit[sel[by] == a])
    vb = per_unit(sel[sel[by] == b], value, unit[sel[by] == b])
    both = va.index.intersection(vb.index)
    return pd.DataFrame({"a": va[both], "b": vb[both]})


def log_ratio_interval(ratios: Any, level: float = 0.95) -> Interval:
    """Geometric mean of ratios (one per unit) with the Student-t interval of the mean log ratio,
    exponentiated: the one rule's interval for a claim on a ratio; it is never negative.

    Parameters
    ----------
    ratios : array-like
        One ratio per unit; NaN entries are left out.
    level : float

    Returns
    -------
    Interval
        ``mean``, ``low``, ``high`` on the ratio scale (``std``: of the log ratios); all NaN, with ``n``
        the number of finite ratios, when any of them is not positive: the log scale does not exist
        there, and no interval of a ratio is read on another.
    """
    r = finite(ratios)
    if len(r) and not bool(np.all(r > 0)):
        return Interval(math.nan, math.nan, len(r), math.nan, math.nan, level)
    i = t_interval(np.log(r), level)
    ex = lambda v: float(np.exp(v)) if math.isfinite(v) else math.nan  # noqa: E731
    return Interval(ex(i.mean), i.std, i.n, ex(i.low), ex(i.high), i.level)


def paired_difference(df: pd.DataFrame, value: str, a: str, b: str, by: str = "solver_label",
                      ratio: bool = False, level: float = 0.95) -> Interval:
    """:func:`t_interval` of ``a - b`` over the units both solved; with ``ratio``, :func:`log_ratio_interval`
    of ``a / b`` (the geometric mean and the interval of the mean log ratio)."""
    p = paired(df, value, a, b, by)
    if ratio:
        return log_ratio_interval(p["a"] / p["b"].where(p["b"] != 0), level)
    return t_interval(p["a"] - p["b"], level)
