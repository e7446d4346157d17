"""Median wall time versus instance size, log-log, one panel per problem, dataset and setting."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.ticker import NullLocator

from psdbench.api import problem_size_param
from psdbench.report.blocks import Figure, SectionContext, Text
from psdbench.report.plot import colours, log_axes, panel_grid, panel_title, shared_legend, to_png

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
        panels = sorted(ok.groupby(keys, dropna=False).groups, key=lambda k: tuple(map(str, k)))
        labels = sorted(set(ok["solver_label"]) | set(short["solver_label"]))
        col_of = colours(labels)
        fig, axes = panel_grid(len(panels))
        for ax, key in zip(axes, panels):
            mask = pd.Series(True, index=ok.index)
            for c, v in zip(keys, key):
                mask &= ok[c].astype(str) == str(v)
            sub = ok[mask]
            for lab, g in sub.groupby("solver_label"):
                med = g.groupby("size")["wall_time_s"].median().sort_index()
                ax.plot(med.index, med.values, marker="o", color=col_of[lab], label=lab)
            smask = pd.Series(True, index=short.index)
            for c, v in zip(keys, key):
                smask &= short[c].astype(str) == str(v)
            for lab, g in short[smask & (short["size"] > 0)].groupby("solver_label"):
                med = g.groupby("size")["wall_time_s"].median()
                ax.plot(med.index, med.values, linestyle="none", marker="o", markerfacecolor="none",
                        color=col_of[lab])
            log_axes(ax)
            sizes = sorted(set(sub["size"]) | set(short[smask]["size"].dropna()))
            ax.set_xticks(sizes, [f"{v:g}" for v in sizes])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xlabel(f"size {col[2:]}")
            ax.set_ylabel("median wall time (s)")
            extra = ", ".join(f"{c[2:]}={v}" for c, v in zip(vary, key[2:]))
            ax.set_title(panel_title(key[0], key[1], extra), fontsize=10)
        handles = [axes[0].plot([], [], marker="o", color=col_of[lab])[0] for lab in labels]
        png = to_png(fig, shared_legend(fig, handles, labels))
        split = f"; panels split by {', '.join(c[2:] for c in vary)}" if vary else ""
        return [Figure(f"time_vs_size_{context.family}", "Median wall time versus size", png,
                       f"Median wall time over `ok` cells at each size `{col[2:]}`, log-log; one panel per problem "
                       f"and dataset{split}; one line per solver configuration. Hollow markers: median time of cells "
                       f"that ended without an accepted answer ({', '.join(UNFINISHED)}): time spent, not a time "
                       f"to solution.")]
