"""Speed of ``sdpmetric`` against ml-lmnn (Table II sets) and against SCS / Clarabel (digits), in one process.

Usage (BLAS and OpenMP pinned to one thread for the whole run)::

    PSDBENCH_DATA=/work/shared/datasets python benchmarks/scripts/sdpmetric/sdpmetric_speed.py table2 --C validate
    PSDBENCH_DATA=/work/shared/datasets python benchmarks/scripts/sdpmetric/sdpmetric_speed.py digits --cbar 10

Problem ``metric/triplet-margin`` with ``loss = "huber"`` (``h`` 0.5, 3 x 3 triplets per training
sample, the problem's defaults) on every instance.  The loss weight is a *setting* and there may be
several: ``--C`` takes floats and the string ``validate`` (the problem picks C on the validation
split, ``validation.select_C``, when the instance is built; that selection time is printed apart
and is not in sdpmetric's time), ``--cbar`` takes values ``c`` meaning ``C = c / |S|`` per
instance (label ``cbar=c``).  The C used and ``C |S|`` (``C*nS``) are printed for every run.  Wall
times decide the verdicts; process CPU times are printed beside them (in parentheses) because a
shared machine inflates wall time.  Nothing is tuned here: every claim's verdict is what the
numbers say, for each setting given.

``table2``
    For each dataset x ``--scaling`` x seed: ``ml-lmnn`` (metric-learn's LMNN with the settings
    ``psdbench.solvers.metric_learn.MlLmnn`` pins, printed; its time is the whole ``fit``) once,
    then ``sdpmetric`` (``tol`` = ``--tol``, the relative Frank-Wolfe gap; ``max_iter``
    ``--max-iter``; optional deadline ``--sdp-time-limit``) for each C setting.  Times are wall
    times of ``solver.solve`` (``time.perf_counter``).  Per dataset x scaling x setting: the median
    times, ratio lmnn / sdpmetric, mean 3-NN test errors (``instance.evaluate(sol)["test_error"]``),
    sdpmetric's statuses and iterations.  Claim: *sdpmetric's median time at least 5x below
    ml-lmnn's at equal or lower mean test error*; a cell where sdpmetric did not reach ``tol`` has
    a time that is only a lower bound (see :func:`summarize_table2` for the verdict rule).

``digits``
    One instance per seed and setting (``sklearn/digits:multiclass``).  ``f*`` is
    ``instance.certified_reference()`` (Clarabel at 1e-10, its point made feasible, certified by
    the Frank-Wolfe bound; value, bound and wall time printed).  Accuracy target: ``f* - f <= acc
    max(|f*|, 1)`` (maximization).  ``sdpmetric`` runs once (``--tol``, deadline
    ``--sdp-time-limit``); its time to the target is read from its **trace** (``sol.trace``: one
    point per outer iteration with ``t``, ``objective`` = g(X) at the exact rho, ``fw_gap``), the
    first point meeting it; the trace clock starts after the initial vertex (one gradient and one
    eigenvector).  ``scs`` runs directly on ``instance.reference_formulation()`` for each of
    ``--scs-eps`` (``eps_abs = eps_rel``), every solve from scratch (no warm start) on one
    formulation that cvxpy compiles at the first eps and reuses; cvxpy's compile time
    (``problem.compilation_time``) is reported apart, SCS's time is the rest of the call (setup,
    factorization, iterations; SCS's own setup / solve split is in the JSON).  Each SCS point is
    made feasible (``feasible_point``) and scored by the instance; SCS's time to the target is that
    of the loosest eps meeting it (the sequence stops there unless ``--scs-all-eps``).  Claim:
    *sdpmetric at least 20x below SCS*; Clarabel's time is the reference's.
"""

from __future__ import annotations

import os
import sys

if __name__ == "__main__":  # before numpy loads its BLAS; threadpoolctl below covers the rest
    for _v in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[_v] = "1"

import argparse
import json
import platform
import shlex
import statistics
import time
from collections import defaultdict
from importlib.metadata import version
from typing import Any

import numpy as np

from psdbench.api import Budget, PsdbenchError, Solution
from psdbench.registry import discover

PROBLEM = "metric/triplet-margin"
TABLE2 = ["sklearn/wine:multiclass", "uci/breast-cancer:multiclass", "uci/diabetes:multiclass"]
DIGITS = "sklearn/digits:multiclass"


def pin_threads() -> Any:
    """Import the lazily loaded numerical libraries, then limit every thread pool to one thread."""
    import clarabel  # noqa: F401
    import cvxpy  # noqa: F401
    import metric_learn  # noqa: F401
    import scipy.sparse.linalg  # noqa: F401
    import scs  # noqa: F401
    import sklearn.neighbors  # noqa: F401
    from threadpoolctl import threadpool_limits

    return threadpool_limits(1)


def settings_of(args: argparse.Namespace, problem: Any) -> list[tuple[str, Any]]:
    """The C settings: ``("C", 1.0)``, ``("C", "validate")``, ``("cbar", 10.0)``; default validate."""
    out: list[tuple[str, Any]] = []
    for c in args.C or ([] if args.cbar else ["validate"]):
        out.append(("C", c if c == "validate" else float(c)))
    out += [("cbar", float(c)) for c in args.cbar or []]
    if any(v == "validate" for _, v in out):
        why = problem.params["C"].error("validate")
        if why:
            raise PsdbenchError(f"{PROBLEM}: C = 'validate' is not supported by this psdbench ({why}); "
                                "give --C VALUE or --cbar VALUE")
    return out


def label(setting: tuple[str, Any]) -> str:
    """Printed name of a C setting: ``C=1``, ``C=validate``, ``cbar=10``."""
    kind, v = setting
    return f"C={v}" if kind == "C" and isinstance(v, str) else (f"C={v:g}" if kind == "C" else f"cbar={v:g}")


def build(problem: Any, data: Any, base: dict[str, Any], setting: tuple[str, Any], seed: int) -> Any:
    """The instance for one C setting (``cbar``: C = cbar / |S|, |S| from a first build)."""
    kind, v = setting
    if kind == "cbar":
        n = problem.build(data, {**base, "C": 1.0}, seed).n_triplets
        return problem.build(data, {**base, "C": v / n}, seed)
    return problem.build(data, {**base, "C": v}, seed)


def timed(solver: Any, inst: Any, budget: Budget, **params: Any) -> tuple[Solution, float]:
    """``solver.solve`` and its wall time (``perf_counter``); the CPU time goes to ``info["cpu_s"]``."""
    t0, c0 = time.perf_counter(), time.process_time()
    sol = solver.solve(inst, budget, **params)
    sol.info["cpu_s"] = time.process_time() - c0  # the process's CPU time: less sensitive to other load
    return sol, time.perf_counter() - t0


def status_of(sol: Solution) -> str:
    """The status string (``ok``, ``max_iter``, ``timeout``, ...)."""
    return str(getattr(sol.status, "value", sol.status))


def sdp_record(inst: Any, sol: Solution, dt: float) -> dict[str, Any]:
    """One sdpmetric run: times, status, iterations, last relative FW gap, objective, test error, C used."""
    last = sol.trace[-1] if sol.trace else {}
    f = float(last.get("objective", np.nan))
    return {"time_s": dt, "cpu_s": sol.info["cpu_s"], "status": status_of(sol), "iterations": int(sol.iterations or 0),
            "rel_fw_gap": float(last.get("fw_gap", np.nan)) / max(1.0, abs(f)), "objective": inst.objective(sol),
            "test_error": inst.evaluate(sol)["test_error"], "eig_time_s": float(sol.info.get("eig_time_s", 0.0)),
            "C": float(inst.C), "C_S": float(inst.C) * inst.n_triplets, "n_triplets": inst.n_triplets,
            "C_selection_s": (getattr(inst, "selection", None) or {}).get("selection_s")}


def run_table2(args: argparse.Namespace, reg: Any, problem: Any, settings: list) -> dict[str, Any]:
    """Mode ``table2`` (module docstring): run, print the table and the verdicts.

    Returns
    -------
    dict
        ``runs`` (one record per dataset, scaling, seed and setting) and ``summary`` (the table rows).
    """
    lmnn, sdp = reg.solver("ml-lmnn"), reg.solver("sdpmetric")
    sdp_params = {"tol": args.tol, "max_iter": args.max_iter}
    lmnn_params = {} if args.lmnn_max_iter is None else {"max_iter": args.lmnn_max_iter}
    runs: list[dict[str, Any]] = []
    for ds in args.datasets or TABLE2:
        data = reg.load_dataset(ds)
        for scaling in args.scaling or ["standardize", "none"]:
            base = {"loss": "huber", "scaling": scaling, "max_train": args.max_train}
            for seed in args.seeds:
                insts = [build(problem, data, base, s, seed) for s in settings]
                sol, dt = timed(lmnn, insts[0], Budget(), **lmnn_params)  # the training split does not depend on C
                lm = {"time_s": dt, "cpu_s": sol.info["cpu_s"], "status": status_of(sol), "iterations": int(sol.iterations or 0),
                      "test_error": insts[0].evaluate(sol)["test_error"], "settings": sol.info.get("settings")}
                eucl = insts[0].euclidean_errors()["euclidean_test_error"]
                for s, inst in zip(settings, insts):
                    budget = Budget.seconds(args.sdp_time_limit) if args.sdp_time_limit else Budget()
                    sol, dt = timed(sdp, inst, budget, **sdp_params)
                    rec = {"dataset": ds, "scaling": scaling, "seed": seed, "setting": label(s),
                           "sdpmetric": sdp_record(inst, sol, dt), "ml-lmnn": lm, "euclidean_test_error": eucl}
                    runs.append(rec)
                    r = rec["sdpmetric"]
                    print(f"# {ds} {scaling} seed={seed} {label(s)}: C={r['C']:.4g} (C|S|={r['C_S']:.4g}) "
                          f"sdpmetric {r['time_s']:.3f} s {r['status']} it={r['iterations']} "
                          f"gap={r['rel_fw_gap']:.2g} err={r['test_error']:.3f} sel={r['C_selection_s']} | ml-lmnn {lm['time_s']:.3f} s "
                          f"{lm['status']} it={lm['iterations']} err={lm['test_error']:.3f}", file=sys.stderr, flush=True)
    sdp_settings = {"loss": "huber", "tol": args.tol, "max_iter": args.max_iter, "deadline_s": args.sdp_time_limit}
    return {"sdp_settings": sdp_settings, "runs": runs, "summary": summarize_table2(runs, sdp_settings)}


def summarize_table2(runs: list[dict[str, Any]], sdp: dict[str, Any]) -> list[dict[str, Any]]:
    """Print the table and the verdicts of mode ``table2`` from its run records; return the rows.

    The verdict of a cell: ``not met`` when the ratio of medians is below 5 (firm: a run stopped
    short of ``tol`` only makes sdpmetric's true time longer); ``undetermined`` when it is 5 or more
    but so many runs stopped short that sdpmetric's median is itself a lower bound (more than
    ``(n - 1) // 2``; the stopped runs are at the deadline, the longest times); otherwise ``met`` when
    the mean test error is equal or lower, ``not met (test error)`` if not.  Runs stopped short
    enter the mean test error with their last point.
    """
    groups: dict[tuple, list] = defaultdict(list)
    for r in runs:
        groups[r["dataset"], r["scaling"], r["setting"]].append(r)
    rows = []
    for (ds, scaling, setting), rs in groups.items():
        ts = [r["sdpmetric"]["time_s"] for r in rs]
        tl = [r["ml-lmnn"]["time_s"] for r in rs]
        es, el = (statistics.fmean(r[k]["test_error"] for r in rs) for k in ("sdpmetric", "ml-lmnn"))
        n_bad = sum(r["sdpmetric"]["status"] != "ok" for r in rs)
        ratio = statistics.median(tl) / statistics.median(ts)
        cs_, cl_ = (statistics.median(r[k]["cpu_s"] for r in rs) for k in ("sdpmetric", "ml-lmnn"))
        if ratio < 5:
            verdict = "not met"
        elif n_bad > (len(rs) - 1) // 2:
            verdict = f"undetermined ({n_bad}/{len(rs)} short of tol)"
        else:
            verdict = "met" if es <= el else "not met (test error)"
        css = sorted({round(r["sdpmetric"]["C_S"], 3) for r in rs})
        rows.append({"dataset": ds, "scaling": scaling, "setting": setting, "n": len(rs),
                     "C_S": css, "sdp_median_s": statistics.median(ts), "lmnn_median_s": statistics.median(tl),
                     "ratio": ratio, "sdp_cpu_median_s": cs_, "lmnn_cpu_median_s": cl_,
                     "cpu_ratio": cl_ / cs_, "sdp_test_error": es, "lmnn_test_error": el,
                     "euclidean_test_error": statistics.fmean(r["euclidean_test_error"] for r in rs),
                     "sdp_not_ok": n_bad, "sdp_statuses": sorted({r["sdpmetric"]["status"] for r in rs}),
                     "sdp_iter_median": statistics.median(r["sdpmetric"]["iterations"] for r in rs),
                     "sdp_gap_max": max(r["sdpmetric"]["rel_fw_gap"] for r in rs),
                     "lmnn_not_ok": sum(r["ml-lmnn"]["status"] != "ok" for r in rs), "verdict": verdict})
    print(f"sdpmetric: loss huber, tol {sdp['tol']:g} (relative FW gap), max_iter {sdp['max_iter']}, deadline "
          f"{sdp['deadline_s'] or 'none'} s; ml-lmnn settings: {json.dumps(runs[0]['ml-lmnn']['settings'])}, "
          f"random_state = seed\n")
    head = ("| dataset | scaling | setting | C*nS | sdp med s (cpu) | lmnn med s (cpu) | lmnn/sdp (cpu) | sdp err | lmnn err | "
            "eucl err | sdp status (it med, max gap) | claim >=5x, err <= |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for w in rows:
        cs = (f"{w['C_S'][0]:g}" if len(w["C_S"]) == 1 else f"{w['C_S'][0]:g}..{w['C_S'][-1]:g}")
        st = ",".join(w["sdp_statuses"]) + (f" {w['n'] - w['sdp_not_ok']}/{w['n']} ok" if w["sdp_not_ok"] else "")
        print(f"| {w['dataset']} | {w['scaling']} | {w['setting']} | {cs} | {w['sdp_median_s']:.3f} "
              f"({w['sdp_cpu_median_s']:.3f}) | {w['lmnn_median_s']:.3f} ({w['lmnn_cpu_median_s']:.3f}) | {w['ratio']:.2f} "
              f"({w['cpu_ratio']:.2f}) | {w['sdp_test_error']:.4f} | {w['lmnn_test_error']:.4f} | "
              f"{w['euclidean_test_error']:.4f} | {st} ({w['sdp_iter_median']:g}, {w['sdp_gap_max']:.1e}) | "
              f"{w['verdict']} |")
    for w in rows:
        sel = [r["sdpmetric"].get("C_selection_s") for r in groups[w["dataset"], w["scaling"], w["setting"]]]
        w["C_selection_median_s"] = statistics.median(sel) if None not in sel else None
        if w["C_selection_median_s"] is not None:
            print(f"C selection ({w['setting']}, {w['dataset']} {w['scaling']}): median {w['C_selection_median_s']:.2f} s "
                  "per instance at build, not in sdpmetric's time")
    met = sum(w["verdict"] == "met" for w in rows)
    print(f"\nclaim (a) 'sdpmetric median time >= 5x below ml-lmnn at equal or lower mean test error': "
          f"met on {met} of {len(rows)} (dataset, scaling, C setting) cells")
    return rows


def first_hit(trace: list[dict[str, float]], fstar: float, acc: float) -> tuple[float | None, int | None]:
    """(trace time, iteration) of the first point with ``f* - f <= acc max(|f*|, 1)``."""
    for k, p in enumerate(trace, start=1):
        if fstar - p["objective"] <= acc * max(abs(fstar), 1.0):
            return p["t"], k
    return None, None


def run_digits(args: argparse.Namespace, reg: Any, problem: Any, settings: list) -> dict[str, Any]:
    """Mode ``digits`` (module docstring): reference, sdpmetric's trace, the SCS eps sequence, verdicts.

    Returns
    -------
    dict
        ``runs``: one record per dataset, scaling, seed and setting.
    """
    import cvxpy as cp

    from psdbench.families.sdpmetric.instance import feasible_point

    sdp = reg.solver("sdpmetric")
    out = []
    for ds in args.datasets or [DIGITS]:
        data = reg.load_dataset(ds)
        for scaling in args.scaling or ["standardize"]:
            for seed in args.seeds:
                for s in settings:
                    inst = build(problem, data, {"loss": "huber", "scaling": scaling, "max_train": args.max_train},
                                 s, seed)
                    head = (f"{ds} {scaling} seed={seed} {label(s)}: D={inst.D}, n_train={len(inst.y)}, "
                            f"|S|={inst.n_triplets}, C={inst.C:.4g} (C|S|={inst.C * inst.n_triplets:.4g})")
                    print(f"# {head}", file=sys.stderr, flush=True)
                    t0, c0 = time.perf_counter(), time.process_time()
                    ref = inst.certified_reference()
                    ref_wall, ref_cpu = time.perf_counter() - t0, time.process_time() - c0
                    fstar = ref["value"]
                    if fstar is None:
                        print(f"{head}\n  reference failed: {ref}")
                        continue
                    thr = args.acc * max(abs(fstar), 1.0)
                    budget = Budget.seconds(args.sdp_time_limit) if args.sdp_time_limit else Budget()
                    sol, dt = timed(sdp, inst, budget, tol=args.tol, max_iter=args.max_iter)
                    t_hit, k_hit = first_hit(sol.trace, fstar, args.acc)
                    sd = sdp_record(inst, sol, dt)
                    sd.update({"time_to_acc_s": t_hit, "iter_to_acc": k_hit,
                               "rel_err_final": (fstar - sd["objective"]) / max(abs(fstar), 1.0)})
                    print(f"# sdpmetric {dt:.2f} s {sd['status']} it={sd['iterations']} to-acc={t_hit}",
                          file=sys.stderr, flush=True)
                    scs_runs = []
                    form = inst.reference_formulation()  # compiled once: cvxpy caches it for the next eps
                    for eps in args.scs_eps:
                        t0, c0 = time.perf_counter(), time.process_time()
                        form.problem.solve(solver="SCS", eps_abs=eps, eps_rel=eps, max_iters=args.scs_max_iters, warm_start=False,
                                           time_limit_secs=args.scs_time_limit or 0.0)
                        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
                        comp = float(getattr(form.problem, "compilation_time", None) or 0.0)
                        st = form.problem.status
                        info = (form.problem.solver_stats.extra_stats or {}).get("info", {})
                        val = None
                        if st in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE, cp.USER_LIMIT) and form.problem.value is not None:
                            val = inst.value(feasible_point(form.extract()["X"]))
                        rel = None if val is None else (fstar - val) / max(abs(fstar), 1.0)
                        scs_runs.append({"eps": eps, "wall_s": wall, "compile_s": comp, "scs_s": wall - comp, "cpu_s": cpu,
                                         "status": str(st), "iterations": int(form.problem.solver_stats.num_iters or 0),
                                         "scs_setup_ms": info.get("setup_time"), "scs_solve_ms": info.get("solve_time"),
                                         "value": val, "rel_err": rel, "reached": rel is not None and rel <= args.acc})
                        print(f"# scs eps={eps:g}: compile {comp:.2f} s, scs {wall - comp:.2f} s, {st}, "
                              f"rel_err={rel}", file=sys.stderr, flush=True)
                        if scs_runs[-1]["reached"] and not args.scs_all_eps:
                            break  # a tighter eps only takes longer: the time to the target is this one's
                    hit = next((r for r in scs_runs if r["reached"]), None)
                    t_scs = None if hit is None else hit["scs_s"]
                    ratio = None if (t_hit is None or t_scs is None) else t_scs / t_hit
                    if t_hit is None:
                        verdict = "not met (sdpmetric did not reach the target)" if t_scs is not None else \
                            "undetermined (neither reached the target)"
                    else:
                        verdict = ("met" if ratio >= 20 else "not met") if ratio is not None else \
                            "undetermined (SCS never reached the target at these eps)"
                    rec = {"dataset": ds, "scaling": scaling, "seed": seed, "setting": label(s), "D": inst.D,
                           "n_train": len(inst.y), "reference": {**ref, "wall_s": ref_wall, "cpu_s": ref_cpu}, "target": thr,
                           "sdpmetric": sd, "scs": scs_runs, "ratio": ratio, "verdict": verdict}
                    out.append(rec)
                    bound = ref.get("lower")
                    print(f"{head}\n  f* (clarabel, certified) = {fstar:.10g}, FW bound {bound:.10g} "
                          f"(bound - f* = {bound - fstar:.2e}; target f* - f <= {thr:.2e}); clarabel wall "
                          f"{ref_wall:.2f} s, cpu {ref_cpu:.2f} s (formulation + compile + solve at 1e-10 + bound)")
                    tt = "not reached" if t_hit is None else f"{t_hit:.3f} s (iteration {k_hit})"
                    print(f"  sdpmetric: to target {tt}; run {dt:.2f} s, {sd['status']}, {sd['iterations']} it, "
                          f"cpu {sd['cpu_s']:.2f} s, final rel. error {sd['rel_err_final']:.2e}, rel. FW gap {sd['rel_fw_gap']:.2e}, "
                          f"test error {sd['test_error']:.4f}")
                    print("  | scs eps | compile s | scs s (setup + solve) | cpu s (all) | status | iters | (f* - f) / max(|f*|, 1) |")
                    print("  |---|---|---|---|---|---|---|")
                    for r in scs_runs:
                        re = "-" if r["rel_err"] is None else f"{r['rel_err']:.2e}"
                        print(f"  | {r['eps']:g} | {r['compile_s']:.2f} | {r['scs_s']:.2f} | {r['cpu_s']:.2f} | {r['status']} | "
                              f"{r['iterations']} | {re} |")
                    rs = "-" if ratio is None else f"{ratio:.2f}"
                    print(f"  claim (b) 'sdpmetric >= 20x below scs to {args.acc:g}': scs {t_scs} s / sdpmetric "
                          f"{t_hit} s = {rs}: {verdict}\n")
    return {"runs": out}


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=["table2", "digits"])
    ap.add_argument("--datasets", nargs="+", help=f"default: table2 {' '.join(TABLE2)}; digits {DIGITS}")
    ap.add_argument("--scaling", nargs="+", choices=["standardize", "none"],
                    help="default: table2 both, digits standardize")
    ap.add_argument("--seeds", nargs="+", type=int, help="default: table2 0..9, digits 0")
    ap.add_argument("--C", nargs="+", help="loss weights: floats and/or 'validate' (default: validate)")
    ap.add_argument("--cbar", nargs="+", type=float, help="C = CBAR / |S| per instance")
    ap.add_argument("--tol", type=float, default=1e-4, help="sdpmetric: relative FW-gap tolerance")
    ap.add_argument("--max-iter", type=int, default=100000, help="sdpmetric outer iterations")
    ap.add_argument("--sdp-time-limit", type=float, help="sdpmetric deadline per solve, s (status timeout)")
    ap.add_argument("--lmnn-max-iter", type=int, help="ml-lmnn max_iter (default: the adapter's)")
    ap.add_argument("--max-train", type=int, help="problem max_train (small smoke runs)")
    ap.add_argument("--acc", type=float, default=1e-4, help="digits: relative objective accuracy target")
    ap.add_argument("--scs-eps", nargs="+", type=float, default=[1e-2, 1e-3, 1e-4, 1e-5, 1e-6])
    ap.add_argument("--scs-all-eps", action="store_true", help="run every eps, not only up to the first hit")
    ap.add_argument("--scs-max-iters", type=int, default=100000)
    ap.add_argument("--scs-time-limit", type=float, help="seconds per SCS solve")
    ap.add_argument("--json", help="write every run and the summary here")
    ap.add_argument("--summarize", metavar="JSON", help="table2: reprint the table of a saved --json, no runs")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.summarize:
        with open(args.summarize) as fh:
            saved = json.load(fh)
        summarize_table2(saved["runs"], saved["sdp_settings"])
        return 0
    args.seeds = args.seeds if args.seeds is not None else (list(range(10)) if args.mode == "table2" else [0])
    reg = discover()
    problem = reg.problem(PROBLEM)
    try:
        settings = settings_of(args, problem)
    except PsdbenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    limits = pin_threads()  # noqa: F841  (held for the whole run)
    from threadpoolctl import threadpool_info

    pools = threadpool_info()
    t0 = time.perf_counter()
    print(f"command: python {shlex.join(sys.argv if argv is None else ['benchmarks/scripts/sdpmetric/sdpmetric_speed.py', *argv])}")
    print(f"problem {PROBLEM}, settings {[label(s) for s in settings]}, seeds {args.seeds}; threads: "
          + ", ".join(sorted({f"{d['internal_api']}={d['num_threads']}" for d in pools}))
          + f"; python {platform.python_version()}, numpy {version('numpy')}, scipy {version('scipy')}, "
          f"metric-learn {version('metric-learn')}, cvxpy {version('cvxpy')}, scs {version('scs')}, "
          f"clarabel {version('clarabel')}; {platform.machine()}, {os.cpu_count()} CPUs, load "
          f"{os.getloadavg()[0]:.2f}")
    result = (run_table2 if args.mode == "table2" else run_digits)(args, reg, problem, settings)
    wall = time.perf_counter() - t0
    print(f"wall time of the run: {wall:.1f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"argv": sys.argv if argv is None else argv, "wall_s": wall, **result}, fh, indent=1, default=str)
    return 0


if __name__ == "__main__":
    sys.exit(main())
