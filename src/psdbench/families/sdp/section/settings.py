"""What ran, for the SDP section: the problems' sizes, each configuration's tolerances and its
library's own version, and the CPU model of the runs (:class:`.report.MittelmannTables`)."""

from __future__ import annotations

import json
from typing import Any

import pandas as pd

from psdbench.report.blocks import Table
from psdbench.report.fmt import fmt_int as _int
from psdbench.report.fmt import fmt_spec as _fmt

from psdbench.families.sdp.section.judges import col as _col
from psdbench.families.sdp.section.judges import problem_label

#: solver parameters that are tolerances (shown per configuration)
TOLERANCE_PARAMS = ("epsilonStar", "epsilonDash", "eps", "eps_abs", "eps_rel", "tol_gap_abs", "tol_gap_rel", "tol_feas",
                    "tol_gap", "tol", "abstol", "reltol", "feastol", "gaptol", "axtol", "atytol", "objtol",
                    "RelGap", "FeasTol", "DualTol", "r0", "mpfPrecision")


#: the library versions (the runs' ``versions`` keys) each solver's table row names
_LIBRARIES = {"sdp-sdpa": ("SDPA", "sdpa-python"), "sdp-sdpa-gmp": ("sdpa-multiprecision",), "sdp-cvxopt": ("cvxopt",),
              "sdp-clarabel": ("clarabel",), "sdp-scs": ("scs",), "sdp-csdp": ("coinor-csdp",), "sdp-dsdp": ("dsdp",),
              "sdp-qics": ("qics",), "sdp-copt": ("coptpy",), "scs": ("scs", "cvxpy"), "clarabel": ("clarabel", "cvxpy")}


def _json(v: Any) -> dict[str, Any]:
    """A runs-table JSON column value as a dict (``{}`` when absent or malformed)."""
    if isinstance(v, dict):
        return v
    try:
        out = json.loads(v) if isinstance(v, str) else {}
    except ValueError:
        return {}
    return out if isinstance(out, dict) else {}


def sizes_table(full: pd.DataFrame) -> Table:
    """Per problem: m, n (the order of the block-diagonal matrix) and the number of blocks."""
    d = full.assign(_p=problem_label(full)).drop_duplicates("_p", keep="last")
    out = pd.DataFrame({"problem": d["_p"], "m": _col(d, "metric_m").map(_int),
                        "n": _col(d, "metric_n_total").map(_int), "blocks": _col(d, "metric_blocks").map(_int)})
    return Table("sdp_sizes", "Problem sizes", out.sort_values("problem").reset_index(drop=True),
                 note="m: constraints; n: the order of the block-diagonal matrix (PSD blocks and the LP entries); "
                      "blocks: PSD and LP blocks.  - where no cell recorded it.")

def settings_table(full: pd.DataFrame, runs: pd.DataFrame | None = None) -> Table:
    """Per configuration: its tolerance parameters (the run's values, defaults filled in) and the
    solver library's own version (the cell's record, else the runs' versions); then the CPU model
    of the runs that wrote these cells."""
    shown = set(full["run_id"].dropna().astype(str)) if "run_id" in full.columns else set()
    r = runs[runs["run_id"].astype(str).isin(shown)] if runs is not None and len(runs) and shown else runs
    versions: dict[str, set[str]] = {}
    cpus: set[str] = set()
    for _, row in (r.iterrows() if r is not None and len(r) else []):
        for k, v in _json(row.get("versions")).items():
            versions.setdefault(str(k), set()).add(str(v))
        m = _json(row.get("machine"))
        cpus.add(f"{m.get('processor') or 'CPU model not recorded'} ({m.get('cpus', '?')} CPUs)")
    rows = []
    for label, g in full.groupby("solver_label"):
        tols = [f"{p}={_fmt(g[f's_{p}'].dropna().iloc[0], 'g')}" for p in TOLERANCE_PARAMS
                if f"s_{p}" in g.columns and g[f"s_{p}"].notna().any()]
        lib = g["metrics"].map(lambda m: m.get("solver_library") if isinstance(m, dict) else None).dropna() \
            if "metrics" in g.columns else pd.Series(dtype=object)
        libs = sorted(set(map(str, lib)))
        if not libs and "solver" in g.columns:
            libs = [f"{k} {'/'.join(sorted(v))}" for k, v in sorted(versions.items())
                    if k in _LIBRARIES.get(str(g["solver"].iloc[0]), ())]
        rows.append({"solver": label, "tolerances": ", ".join(tols) or "-", "library": ", ".join(libs) or "-"})
    rows.append({"solver": "(machine)", "tolerances": "-",
                 "library": "; ".join(sorted(cpus)) or "CPU model not recorded"})
    return Table("sdp_settings", "Solver tolerances, library versions and the CPU", pd.DataFrame(rows),
                 note="Tolerances: the configuration's parameters (defaults filled in).  Library: the solver "
                      "library's own version (SDPA's read from its compiled library, not the Python wrapper's; "
                      "else the version the run recorded).  (machine): the CPU model of the runs that wrote these "
                      "cells.")
