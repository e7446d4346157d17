"""Wall time versus instance size (median, min-max band), log-log, one panel per problem, dataset and setting."""

from __future__ import annotations

from typing import Any

import pandas as pd

from psdbench.api import problem_size_param
from psdbench.report.measures import analysis as an
from psdbench.report.blocks import Chart, Panel, SectionContext, Series, Text
from psdbench.report.fmt import fmt_num

#: Instance parameters tried as the size, in order, after the ``size_param`` option and the
#: ``size_param`` hooks of the frame's problems (:func:`psdbench.api.problem_size_param`).
SIZE_PARAMS = ("n", "n_nodes")
#: Statuses drawn as hollow markers: the solver ran but its answer was not accepted.
UNFINISHED = ("max_iter", "timeout", "infeasible")
#: Another instance parameter splits the panels when it takes 2 to this many values.
MAX_PANEL_VALUES = 4


class TimeVersusSize:
    """One line per solver configuration: median wall time of ``ok`` cells at each size.

    The size is the first numeric instance parameter that varies among: the ``size_param`` option,
    the size parameters the frame's problems name (their ``size_param`` hook) and
    :data:`SIZE_PARAMS`; other instance parameters with a few values (graph type, scaling, ...)
    split the panels, the others (folds, ...) are aggregated over.
    """

    name = "time-vs-size"
    title = "Time versus size"
    family = "*"
    order = 20

    @staticmethod
    def _hooked(context: SectionContext, frame: pd.DataFrame) -> list[str]:
        """The size parameters named by the problems of ``frame`` (sorted by problem name)."""
        probs = [context.problems.get(p) for p in sorted(frame["problem"].dropna().unique())] if len(frame) else []
        return [n for n in (problem_size_param(p) for p in probs if p is not None) if n]

    def render(self, context: SectionContext) -> list[Any]:
        f = context.frame
        ok = f[(f["status"] == "ok") & (f["wall_time_s"] > 0)]
        # cells that spent their time without an accepted answer: drawn hollow, never joined
        short = f[f["status"].isin(UNFINISHED) & (f["wall_time_s"] > 0)]
        names = dict.fromkeys(str(n) for n in [context.options.get("size_param"), *self._hooked(context, f),
                                               *SIZE_PARAMS] if n)
        col = next((f"p_{n}" for n in names if f"p_{n}" in ok.columns
                    and pd.to_numeric(ok[f"p_{n}"], errors="coerce").nunique() > 1), None)
        if col is None:
            return [Text("No `ok` cells with several sizes (`" + "`, `".join(names) + "`) to plot.")]
        ok = ok.assign(size=pd.to_numeric(ok[col], errors="coerce"))
        ok = ok[ok["size"] > 0]
        short = short.assign(size=pd.to_numeric(short[col], errors="coerce"))  # same columns as ok
        vary = [c for c in ok.columns if c.startswith("p_") and c != col
                and 1 < ok[c].astype(str).nunique() <= MAX_PANEL_VALUES]
        keys = ["problem", "dataset", *vary]
        panels_keys = sorted(ok.groupby(keys, dropna=False).groups, key=lambda k: tuple(map(an.natural_key, k)))
        names_short = an.short_labels(sorted(set(ok["solver_label"]) | set(short["solver_label"])))
        panels = []
        for key in panels_keys:
            mask = pd.Series(True, index=ok.index)
            for c, v in zip(keys, key):
                mask &= ok[c].astype(str) == str(v)
            smask = pd.Series(True, index=short.index)
            fmask = pd.Series(True, index=f.index)
            for c, v in zip(keys, key):
                smask &= short[c].astype(str) == str(v)
                fmask &= f[c].astype(str) == str(v)
            series = []
            for lab, g in ok[mask].groupby("solver_label"):
                st = g.groupby("size")["wall_time_s"].agg(["median", "min", "max", "count"]).sort_index()
                total = int((fmask & (f["solver_label"] == lab)).sum())
                series.append(Series(f"{names_short[lab]} · {len(g)}/{total} ok", st.index, st["median"], lab, "lines+markers",
                                     "summary", st["min"], st["max"],
                                     hover=[f"size {v:g}: median {fmt_num(m)} s [{fmt_num(lo)}-{fmt_num(hi)}] over "
                                            f"{int(n)} cell(s)" for v, m, lo, hi, n in st.itertuples()]))
            for lab, g in short[smask & (short["size"] > 0)].groupby("solver_label"):
                med = g.groupby("size")["wall_time_s"].median()
                series.append(Series(f"{names_short[lab]}: no accepted answer", med.index, med.values, lab, "markers",
                                     marker="circle-open"))
            extra = ", ".join(f"{c[2:]}={v}" for c, v in zip(vary, key[2:]))
            title = f"{key[0]}: {key[1]}" + (f" ({extra})" if extra else "")
            panels.append(Panel(title, series, "", "No `ok` cell in this set.", {"set": title}))
        split = f"; panels split by {', '.join(c[2:] for c in vary)}" if vary else ""
        return [Chart(f"time_vs_size_{context.family}", "Wall time versus size", panels, f"size {col[2:]}",
                      "wall time (s)", log_x=True, log_y=True,
                      caption=f"Median wall time over `ok` cells at each size `{col[2:]}`, shaded from the fastest to "
                              f"the slowest cell; one panel per problem and dataset{split}.  Hollow markers: median "
                              f"time of cells that ended without an accepted answer ({', '.join(UNFINISHED)}): time "
                              "spent, not a time to solution.")]
