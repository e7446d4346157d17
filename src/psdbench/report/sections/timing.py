"""Median wall time versus instance size, log-log, one panel per problem and dataset."""

from __future__ import annotations

from typing import Any

import pandas as pd
from matplotlib.ticker import NullLocator

from psdbench.report.blocks import Figure, SectionContext, Text
from psdbench.report.plot import colours, panel_grid, panel_title, shared_legend, to_png


class TimeVersusSize:
    """One line per solver configuration: median wall time of ``ok`` cells at each size.

    The size is the instance parameter named by the ``size_param`` option (default ``n``).
    """

    name = "time-vs-size"
    title = "Time versus size"
    family = "*"
    order = 20

    def render(self, context: SectionContext) -> list[Any]:
        col = f"p_{context.options.get('size_param', 'n')}"
        f = context.frame
        if col not in f.columns:
            return []
        size = pd.to_numeric(f[col], errors="coerce")
        ok = f.assign(size=size)
        ok = ok[(ok["status"] == "ok") & (ok["size"] > 0) & (ok["wall_time_s"] > 0)]
        if ok.empty:
            return [Text(f"No `ok` cells with a size `{col[2:]}` and a wall time to plot.")]
        panels = sorted(ok.groupby(["problem", "dataset"]).groups)
        labels = sorted(ok["solver_label"].unique())
        col_of = colours(labels)
        fig, axes = panel_grid(len(panels))
        for ax, (problem, dataset) in zip(axes, panels):
            sub = ok[(ok["problem"] == problem) & (ok["dataset"] == dataset)]
            for lab, g in sub.groupby("solver_label"):
                med = g.groupby("size")["wall_time_s"].median().sort_index()
                ax.plot(med.index, med.values, marker="o", color=col_of[lab], label=lab)
            ax.set_xscale("log")
            ax.set_yscale("log")
            sizes = sorted(sub["size"].unique())
            ax.set_xticks(sizes, [f"{v:g}" for v in sizes])
            ax.xaxis.set_minor_locator(NullLocator())
            ax.set_xlabel(f"size {col[2:]}")
            ax.set_ylabel("median wall time (s)")
            ax.set_title(panel_title(problem, dataset), fontsize=10)
            ax.grid(True, which="both", alpha=0.3)
        handles = [axes[0].plot([], [], marker="o", color=col_of[lab])[0] for lab in labels]
        png = to_png(fig, shared_legend(fig, handles, labels))
        n_sizes = int(ok["size"].nunique())
        return [Figure(f"time_vs_size_{context.family}", "Median wall time versus size", png,
                       f"Median wall time over `ok` cells at each size `{col[2:]}` ({n_sizes} size(s)), log-log; "
                       "one panel per problem and dataset, one line per solver configuration.")]

