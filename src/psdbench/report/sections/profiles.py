"""Profiles of a family: Dolan-Moré performance profiles and Moré-Wild data profiles at several
target accuracies, and the scaled shifted geometric mean of the times (Mittelmann's form)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from psdbench.report.measures import analysis as an
from psdbench.report.measures import profiles as pp
from psdbench.report.blocks import Chart, Panel, SectionContext, Series, Table, Text
from psdbench.report.fmt import fmt_num, fmt_ratio

POOLED = "all sets"


def scopes(times: pd.DataFrame) -> list[tuple[str, pd.DataFrame]]:
    """The pooled scope (every set) first, then each comparable instance set."""
    return [(POOLED, times)] + [(s, g) for s, g in sorted(times.groupby("set"), key=lambda kv: an.natural_key(kv[0]))]


def _scope_note(times: pd.DataFrame, common: list[str], left: list[str], short: dict[str, str]) -> str:
    if not left:
        return f"{len(common)} instance(s), every configuration ran each."
    ran = times.groupby("solver_label")["instance_key"].nunique()
    n = times["instance_key"].nunique()
    partial = ", ".join(f"{short[lab]} ran {int(m)}/{n}" for lab, m in ran.items() if m < n)
    return (f"Over the {len(common)} instance(s) every configuration ran; {len(left)} left out ({partial}).")


def performance_panel(cost: pd.DataFrame, title: str, note: str, key: dict[str, str],
                      short: dict[str, str]) -> Panel:
    """ρ_s(τ) against log2 τ for a cost table (instances x configurations; ``inf``: not reached)."""
    if cost.empty:
        return Panel(title, [], note, "No instance that every configuration ran.", key)
    if not np.isfinite(cost.to_numpy(float)).any():
        return Panel(title, [], note, "No configuration reached this accuracy on any instance.", key)
    r = pp.ratios(cost, floor=1e-6)
    fin = r.to_numpy()[np.isfinite(r.to_numpy())]
    top = max(float(np.log2(fin.max())) if fin.size else 0.0, 1.0) * 1.05
    taus = np.concatenate([[1.0], np.sort(np.unique(fin[fin >= 1.0])), [2.0 ** top]])
    rho = pp.profile(r, taus)
    series = []
    for lab in cost.columns:
        k = int(np.isfinite(cost[lab].to_numpy(float)).sum())
        series.append(Series(f"{short[lab]} · {k}/{len(cost)} reached", np.log2(taus), rho[lab].to_numpy(), lab,
                             "steps"))
    return Panel(title, series, note, "", key)


def data_panel(cost: pd.DataFrame, title: str, note: str, key: dict[str, str], short: dict[str, str]) -> Panel:
    """Moré-Wild data profile: fraction of instances reached by each time (log axis)."""
    vals = cost.to_numpy(float)
    fin = vals[np.isfinite(vals) & (vals > 0)]
    if cost.empty or not fin.size:
        return Panel(title, [], note, "No configuration reached this accuracy on any instance." if not cost.empty
                     else "No instance that every configuration ran.", key)
    grid = np.unique(np.concatenate([fin, [fin.min() * 0.9, fin.max() * 1.1]]))
    d = an.data_profile(cost.clip(lower=fin.min() * 0.9), grid)
    series = [Series(f"{short[lab]} · {int(np.isfinite(cost[lab].to_numpy(float)).sum())}/{len(cost)} reached",
                     grid, d[lab].to_numpy(), lab, "steps") for lab in cost.columns]
    return Panel(title, series, note, "", key)


def sgm_frame(times: pd.DataFrame, tols: tuple[float, ...], short: dict[str, str],
              references: dict[str, str] | None = None,
              notes: dict[tuple[str, str], str] | None = None) -> pd.DataFrame:
    """Per instance set and compared configuration (:func:`psdbench.report.measures.analysis.compared`): the scaled
    shifted geometric mean (reached k/n) and the SGM seconds per tolerance, each set on its own
    (:func:`psdbench.report.measures.analysis.set_scores`), with the set's shift."""
    rows = []
    for s, g in sorted(times.groupby("set"), key=lambda kv: an.natural_key(kv[0])):
        labels, inst, left = an.compared(g)
        per = {lab: {"instance set": s, "reference": (references or {}).get(s, ""), "configuration": short[lab]}
               for lab in labels}
        shifts = []
        for tol in tols:
            why = an.unresolved(g, tol)
            if why:  # the target is tighter than the set's reference or floor: no score
                for lab in labels:
                    per[lab][f"gap ≤ {tol:g}: scaled SGM (reached)"] = why
                    per[lab][f"gap ≤ {tol:g}: SGM (s)"] = "n.r."
                continue
            tab, shift = an.set_scores(g, tol)
            shifts.append(shift)
            for lab in labels:
                per[lab][f"gap ≤ {tol:g}: scaled SGM (reached)"] = (
                    f"{fmt_ratio(tab.loc[lab, 'scaled'])} ({int(tab.loc[lab, 'reached'])}/{len(inst)})")
                per[lab][f"gap ≤ {tol:g}: SGM (s)"] = fmt_num(tab.loc[lab, "sgm"])
        for lab in labels:
            per[lab]["shift (s)"] = "/".join(dict.fromkeys(fmt_num(x) for x in shifts))
            per[lab]["limit"] = "recorded" if g["limit_recorded"].all() else "longest wall time (not recorded)"
            per[lab]["note"] = (notes or {}).get((s, lab), "")
        rows += list(per.values())
        rows += [{"instance set": s, "configuration": f"{short[lab]}: left out (ran part of the set)"} for lab in left]
    return pd.DataFrame(rows).fillna("")


class PerformanceProfiles:
    """Performance and data profiles at each target accuracy (option ``tolerances``), per instance set,
    and the shifted geometric mean table of the family."""

    name = "performance-profiles"
    title = "Profiles and shifted geometric means"
    family = "*"
    order = 40

    def render(self, context: SectionContext) -> list[Any]:
        opts = context.options
        metric = (opts.get("ranking_metrics") or {}).get(context.family)
        if metric is not None:
            return [Text(f"This family is ranked by its declared metric, {metric.label or metric.metric} (see the "
                         "winners): its solvers optimise different objectives, so no profile ranks them by gap.")]
        tols = tuple(opts.get("tolerances", an.TOLERANCES))
        times = an.reach_times(context.frame, tols, float(opts.get("gap_floor", an.DEFAULT_ALLOWANCE)))
        if times.empty:
            return [Text("No cell has a reference objective: no profile.")]
        short = an.tolerance_labels(context.frame, an.short_labels(sorted(times["solver_label"].unique())))
        perf, data = [], []
        for scope, t in scopes(times):
            labels = sorted(t["solver_label"].unique())
            for tol in tols:
                # only the sets that resolve the target (their reference and floor no coarser than it)
                ok = t[t["set"].map({s: not an.unresolved(g, tol) for s, g in t.groupby("set")})]
                key = {"instances": scope}
                title = f"{scope}: gap ≤ {tol:g}"
                if ok.empty:
                    why = an.unresolved(t, tol) or "not resolved"
                    perf.append(Panel(title, [], "", why[0].upper() + why[1:] + ".", key))
                    data.append(Panel(title, [], "", why[0].upper() + why[1:] + ".", key))
                    continue
                common, left = an.common_instances(ok)
                note = _scope_note(ok, common, left, short)
                if ok["set"].nunique() < t["set"].nunique():
                    note += f" {t['set'].nunique() - ok['set'].nunique()} set(s) left out: the target is not resolved there."
                cost = an.cost_table(ok, f"t_{tol:g}", labels, common)
                perf.append(performance_panel(cost, title, note, key, short))
                data.append(data_panel(cost, title, note, key, short))
        f = context.frame
        refs = {s: an.reference_text(g) for s, g in f.groupby(an.instance_sets(f))} if len(f) else {}
        frame = sgm_frame(times, tols, short, refs, an.configured_notes(f))
        fam = context.family
        return [
            Chart(f"performance_profiles_{fam}", "Performance profiles (time to reach each accuracy)", perf,
                  "log2 τ (time over the best configuration's on the instance)", "ρ(τ): fraction of instances",
                  y_range=(-0.02, 1.02),
                  caption="Dolan-Moré: ρ(τ) is the fraction of instances on which a configuration reaches the gap "
                          "within τ times the fastest configuration's time.  Only instances every configuration of "
                          "the panel ran; an instance not reached is never within any τ.  Legend: instances "
                          "reached / compared."),
            Chart(f"data_profiles_{fam}", "Data profiles (fraction reached against time)", data,
                  "time since solve start (s)", "fraction of instances reached", log_x=True, y_range=(-0.02, 1.02),
                  caption="Moré-Wild data profiles: the fraction of the panel's instances on which a configuration "
                          "has reached the gap by each time."),
            Table(f"sgm_{fam}", "Shifted geometric mean of the time to reach each accuracy, per instance set", frame,
                  "Each instance set on its own (adding a set changes no other set's score), over the "
                  "configurations that ran every instance of it.  The rules (glossary): SGM = exp(mean log(t + "
                  "shift)) - shift, a target not reached charged at the cell's time limit; shift: the median over "
                  "the set's instances of the fastest time, within [0.001, 10] s; scaled: over the set's best SGM "
                  "(1 = fastest); reached: units reached / compared (instances, folds; seeds only where they "
                  "change the result); `not resolved`: the target is tighter than the set's reference accuracy "
                  "(`known to`) or verification floor.",
                  ),
        ]

