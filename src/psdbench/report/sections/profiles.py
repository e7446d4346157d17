"""Dolan-More performance profiles of a family: time to reach a gap tolerance, and final gap."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd

from psdbench.report import profiles as pp
from psdbench.report.blocks import Figure, SectionContext, Table, Text
from psdbench.report.fmt import fmt_finite
from psdbench.report.plot import colours, panel_grid, shared_legend, to_png


def costs(frame: pd.DataFrame, tol: float, floor: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Cost tables (instances x solver configurations) of the two profiles.

    Only instances with a reference objective count.  (a) Seconds until the relative gap reaches
    ``tol`` (:func:`psdbench.report.profiles.time_to_tolerance`); (b) the final relative gap of a
    verified point, floored at ``floor``.  ``inf``: not reached / not verified / not run.
    """
    f = frame[np.isfinite(frame["reference_objective"].astype(float))]
    labels = sorted(frame["solver_label"].unique())
    t_rows: dict[str, dict[str, float]] = {}
    g_rows: dict[str, dict[str, float]] = {}
    for r in f.itertuples(index=False):
        final = float(r.gap) if bool(r.verified) and math.isfinite(r.gap) else math.inf
        t = pp.time_to_tolerance(r.curve, float(r.reference_objective), r.sense, tol, float(r.wall_time_s),
                                 final, bool(r.verified))
        t_rows.setdefault(r.instance_key, {})[r.solver_label] = min(t, t_rows.get(r.instance_key, {}).get(
            r.solver_label, math.inf))
        g_rows.setdefault(r.instance_key, {})[r.solver_label] = min(max(final, floor), g_rows.get(
            r.instance_key, {}).get(r.solver_label, math.inf))
    as_frame = lambda d: pd.DataFrame.from_dict(d, orient="index").reindex(columns=labels).astype(float)  # noqa: E731
    return as_frame(t_rows), as_frame(g_rows)


def _draw(ax: Any, r: pd.DataFrame, col_of: dict[str, Any], title: str) -> list[Any]:
    fin = r.to_numpy()[np.isfinite(r.to_numpy())]
    top = max(float(np.log2(fin.max())) if fin.size else 0.0, 1.0) * 1.05
    taus = np.concatenate([[1.0], np.sort(np.unique(fin[fin >= 1.0])), [2.0 ** top]])
    rho = pp.profile(r, taus)
    handles = []
    for lab in r.columns:
        (h,) = ax.step(np.log2(taus), rho[lab].to_numpy(), where="post", color=col_of[lab], linewidth=1.8)
        handles.append(h)
    ax.set_xlim(0, top)
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("log2 τ (ratio to the best on the instance)")
    ax.set_ylabel("ρ(τ): fraction of instances")
    ax.set_title(title, fontsize=10)
    ax.grid(True, alpha=0.3)
    return handles


class PerformanceProfiles:
    """Profiles on (a) time to reach the ``gap_tol`` option (default 1e-4) and (b) final gap."""

    name = "performance-profiles"
    title = "Performance profiles"
    family = "*"
    order = 40

    def render(self, context: SectionContext) -> list[Any]:
        tol = float(context.options.get("gap_tol", 1e-4))
        floor = float(context.options.get("gap_floor", 1e-12))
        t_cost, g_cost = costs(context.frame, tol, floor)
        if t_cost.empty:
            return [Text("No cell has a reference objective: no profile.")]
        rt, rg = pp.ratios(t_cost, floor=1e-9), pp.ratios(g_cost, floor=floor)
        labels = list(t_cost.columns)
        col_of = colours(labels)
        fig, axes = panel_grid(2, ncol=2, width=6.2, height=4.4)
        handles = _draw(axes[0], rt, col_of, f"(a) time to reach relative gap ≤ {tol:g}")
        _draw(axes[1], rg, col_of, "(b) final relative gap")
        png = to_png(fig, shared_legend(fig, handles, labels))
        st, sg = pp.summary(rt), pp.summary(rg)
        run = {lab: int(context.frame.loc[context.frame["solver_label"] == lab, "instance_key"].nunique())
               for lab in labels}
        pct = lambda x: fmt_finite(x, ".1f", scale=100.0)  # noqa: E731
        rows = [{"solver": lab, "instances run": str(run[lab]), f"reached {tol:g} (%)": pct(st.loc[lab, "solved"]),
                 "time: ρ(1) (%)": pct(st.loc[lab, "rho(1)"]), "time: area": fmt_finite(st.loc[lab, "area"], ".3f"),
                 "gap: ρ(1) (%)": pct(sg.loc[lab, "rho(1)"]), "gap: area": fmt_finite(sg.loc[lab, "area"], ".3f"),
                 "verified (%)": pct(sg.loc[lab, "solved"])} for lab in labels]
        n = len(t_cost)
        caption = (f"Dolan-Moré profiles over the {n} instance(s) of this family with a reference objective; "
                   "ρ(τ) is the fraction of instances on which a configuration's cost is within a factor τ of the "
                   "best configuration's.  (a) cost: seconds until the gap `s (objective - reference) / "
                   f"max(|reference|, 1)` first reaches {tol:g}, from the re-scored curve, else the wall time if the verified "
                   "final point reaches it; (b) cost: the final relative gap of a verified point, floored at "
                   f"{floor:g}.  Not reached, not verified or not run on an instance: never within any τ.")
        note = ("`reached`: share of the instances where the gap tolerance was reached; `ρ(1)`: share where the "
                "configuration is the best (ties count for each); `area`: mean of ρ over log2 τ from 0 to the "
                "largest finite log2 ratio of the profile (1 = best everywhere); `verified`: share with a "
                "verified final point.  Percentages of all instances of the profile, including those a "
                "configuration did not run on (`instances run`).")
        return [Figure(f"profiles_{context.family}", "Performance profiles", png, caption),
                Table(f"profiles_{context.family}", "Performance profile summary", pd.DataFrame(rows), note)]
