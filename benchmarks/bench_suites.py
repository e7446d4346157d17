"""asv benchmarks of every family, from the suites the families mark with an ``[asv]`` table.

Two classes per family and tracked suite, built at import from the registry: a family installed
in the environment (built in or a plugin) is tracked as soon as one of its suites has an ``[asv]``
table (``psdbench.api.ASV_SUITE_KEYS``), with no asv code of its own.  Parameters: the instance
set (the report's: problem, dataset and the parameters that are not replicates) and the solver
configuration (the report's label); a pair the suite does not run is skipped (``n/a``).  The
instances of a set are those of the asv seeds (the ``[asv]`` table's, else the suite's first).

``<Family>_<Suite>.time_solve`` / ``.peakmem_solve``
    every instance of the set solved once in this process, as the harness's worker does (the
    instance built and the solver warmed up untimed; the suite's timeout as the budget); BLAS on
    one thread
``<Family>_<Suite>Quality.track_gap``
    the worst ``ranked_gap`` over the set (the relative gap the report ranks by, 0 for a tie with
    the reference); fails when a cell did not verify, has no reference or lies below it beyond its
    floor
``<Family>_<Suite>Quality.track_unverified``
    the share of the set's cells (those that ran) whose final point did not verify
``<Family>_<Suite>Quality.track_metric_from_best``
    ``|metric - metric_best|`` of the suite's declared task metric (``[asv] metric``,
    ``metric_best``), mean over the set, its unit says which; fails when a cell lacks the metric;
    absent from a suite that declares no metric

Direction: every ``track_`` value is a cost, 0 at best, so ``asv compare`` (a regression is a rise
beyond its factor) reads each the right way; the rule and its reasons are stated once, in
:mod:`psdbench.harness.tracked`.  What ``asv compare`` shows (asv 0.6, ``commands/compare.py``):

* a value lost (a point no longer verifies, a metric missing, the suite's run broken): the
  benchmark raises a one-line reason, asv records a failure, ``asv compare`` flags a value followed
  by a failure as "introduced a failure" (``!``, red) and the reverse as fixed (``*``, green);
* a value lost in both commits (a case with no reference at all, so no gap in either; an
  infeasible instance, or a solver whose points never pass verification, e.g. SCS's below the
  DIMACS tolerances of ``sdp-generated``): "both failed", shown plain, never flagged (``asv run
  -e`` prints the reason);
* 0 before and above 0 after (a perfect F-measure or share lost): flagged as worse (``+``, red),
  the ratio printed ``n/a`` (asv's ``a < b / factor`` holds for ``a = 0 < b``; its ratio divides by
  zero); 0 in both is unchanged.  No offset is added: asv reads zero as it should;
* a skip (``n/a``: a pair the suite does not run, or whose cells were all skipped, the solver's
  library absent: ``setup`` raises ``NotImplementedError``) is never flagged; a library missing in
  one commit's environment shows as ``n/a`` there, not as a regression.

The ``track_`` values come from one harness run of every tracked suite (``setup_cache``, shared by
the ``Quality`` classes: references, verification and gaps exactly as ``psdbench run`` and the
report compute them; references come from the reference cache when it has them).  asv imports this
module in every process it starts: the expanded suites are kept in a file of the temporary folder,
keyed by the suites' text, the registered plugins and psdbench's version.  Run from the repository
root::

    asv run --python=same --quick --set-commit-hash $(git rev-parse HEAD)
"""

from __future__ import annotations

import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from psdbench.api import Budget, skip_reason, warm_up
from psdbench.harness.tracked import (TrackedCase, case_summary, tracked_cases, tracked_frame, tracked_grid,
                                     case_skip_reason, tracked_suites, tracked_value)
from psdbench.registry import discover

from benchmarks.instances import limit_blas


def _camel(text: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^0-9A-Za-z]+", text) if w)


Tracked = tuple[str, float, str | None, float, dict[tuple[str, str], TrackedCase]]


def _discover() -> dict[str, Tracked]:
    """Class name -> ``(suite, timeout, metric, metric_best, {(set, config): case})``, per tracked suite."""
    import hashlib
    import pickle

    from psdbench import __version__
    from psdbench.plugins import names_of

    reg = discover()
    suites = tracked_suites(reg)
    plugins = [names_of(m) for m in (reg.problems, reg.solvers, reg.collections, reg.single_datasets)]
    h = hashlib.sha256(repr((__version__, plugins, "metric_best")).encode())  # names only; "metric_best": the layout
    for suite in suites:
        h.update(f"{suite}\0{reg.suites[suite].read_text()}\0".encode())
    cache = Path(tempfile.gettempdir()) / f"psdbench-asv-tracked-{h.hexdigest()[:20]}.pkl"
    try:
        return pickle.loads(cache.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError):
        pass
    out: dict[str, Any] = {}
    for suite in suites:
        grid, settings, cases = tracked_cases(suite, reg)
        for case in cases:
            name = f"{_camel(case.family)}_{_camel(suite)}"
            out.setdefault(name, (suite, grid.timeout, settings["metric"], settings["metric_best"], {}))[4][
                (case.instance_set, case.config)] = case
    tmp = cache.with_suffix(f".{os.getpid()}.tmp")
    tmp.write_bytes(pickle.dumps(out))
    os.replace(tmp, cache)
    return out


TRACKED = _discover()


def measure_tracked() -> dict[str, dict[tuple[str, str], dict[str, float]]]:
    """Run every tracked suite once through the harness (a temporary store each) and summarize each case."""
    import pandas as pd

    import psdbench

    reg = discover()
    frames = {}
    with tempfile.TemporaryDirectory(prefix="psdbench-asv-") as tmp:
        for suite in sorted({v[0] for v in TRACKED.values()}):
            spec, _, _ = tracked_grid(suite, reg)
            db = Path(tmp) / f"{suite}.sqlite"
            try:
                psdbench.run(spec, db=db, progress=False)
                frames[suite] = tracked_frame(db, reg)
            except Exception as exc:  # one suite's failure (its data missing) leaves the others measured
                print(f"bench_suites: suite {suite} not measured: {type(exc).__name__}: {exc}", file=sys.stderr)
                frames[suite] = pd.DataFrame()
    return {name: {key: case_summary(frames[suite], case, metric, best) for key, case in cases.items()}
            for name, (suite, _, metric, best, cases) in TRACKED.items()}


class _Solves:
    """Time and peak memory of one tracked suite's solves (subclassed per suite below)."""

    suite = ""
    budget_s = 60.0
    cases: dict[tuple[str, str], TrackedCase] = {}
    params: list[list[str]] = [[], []]
    param_names = ["instance_set", "config"]
    number = 1
    warmup_time = 0.0
    repeat = (1, 3, 30.0)
    timeout = 600

    def setup(self, instance_set: str, config: str) -> None:
        case = self.cases.get((instance_set, config))
        if case is None:
            raise NotImplementedError(f"suite {self.suite} runs no cell of {config} on {instance_set}")
        self._threads = limit_blas()
        reg = discover()
        problem, _, _, _, solver, params = case.cells[0]
        self.solver, self.params = reg.solver(solver), dict(params)
        self.instances = []
        for problem, dataset, iparams, seed, _, _ in case.cells:
            instance = reg.problem(problem).build(reg.load_dataset(dataset), iparams, seed)
            if skip_reason(self.solver, instance) is None:
                self.instances.append(instance)
        if not self.instances:
            raise NotImplementedError(f"{config} skips every instance of {instance_set}")
        warm_up(self.solver, self.instances[0])  # untimed, as the harness's worker does

    def teardown(self, instance_set: str, config: str) -> None:
        threads = getattr(self, "_threads", None)
        if threads is not None:
            threads.unregister()

    def _solve_all(self) -> None:
        for instance in self.instances:
            self.solver.solve(instance, Budget.seconds(self.budget_s), **self.params)

    def time_solve(self, instance_set: str, config: str) -> None:
        self._solve_all()

    def peakmem_solve(self, instance_set: str, config: str) -> None:
        self._solve_all()


class _Quality:
    """Gap, verified share and metric of one tracked suite's cells, each a cost (0 at best), from one
    harness run of every tracked suite (``setup_cache``, shared by every subclass: asv keys it by
    this definition)."""

    suite = ""
    metric: str | None = None
    cases: dict[tuple[str, str], TrackedCase] = {}
    params: list[list[str]] = [[], []]
    param_names = ["instance_set", "config"]
    timeout = 1800  # also setup_cache's

    def setup_cache(self) -> dict[str, Any]:
        return measure_tracked()

    setup_cache.timeout = 1800

    def setup(self, measured: Any, instance_set: str, config: str) -> None:
        if (instance_set, config) not in self.cases:
            raise NotImplementedError(f"suite {self.suite} runs no cell of {config} on {instance_set}")
        why = case_skip_reason(self._summary(measured, instance_set, config))
        if why is not None:
            raise NotImplementedError(why)  # asv's skip (n/a), never flagged

    def _summary(self, measured: Any, instance_set: str, config: str) -> dict[str, float]:
        return measured[type(self).__name__[:-len("Quality")]][(instance_set, config)]

    def _tracked(self, measured: Any, instance_set: str, config: str, what: str) -> float:
        summary = self._summary(measured, instance_set, config)
        return tracked_value(summary, what, self.metric)  # raises with the reason when lost

    def track_gap(self, measured: Any, instance_set: str, config: str) -> float:
        return self._tracked(measured, instance_set, config, "gap")

    track_gap.unit = "worst ranked relative gap (0: at the reference)"

    def track_unverified(self, measured: Any, instance_set: str, config: str) -> float:
        return self._tracked(measured, instance_set, config, "unverified")

    track_unverified.unit = "share of cells not verified"


def _metric_benchmark(metric: str, best: float) -> Any:
    """``track_metric_from_best`` of a suite with a declared metric, its unit naming the metric."""
    def track_metric_from_best(self: _Quality, measured: Any, instance_set: str, config: str) -> float:
        return self._tracked(measured, instance_set, config, "metric_from_best")

    track_metric_from_best.unit = f"|{metric} - {best:g}| (0: its best)"
    return track_metric_from_best


for _name, (_suite, _timeout, _metric, _best, _cases) in TRACKED.items():
    _params = [list(dict.fromkeys(k[0] for k in _cases)), list(dict.fromkeys(k[1] for k in _cases))]
    _family = next(iter(_cases.values())).family
    _what = f"ranked gap, unverified share, |{_metric} - {_best:g}|" if _metric else "ranked gap, unverified share"
    for _cls_name, _base, _doc in ((_name, _Solves, "time and peak memory"), (_name + "Quality", _Quality, _what)):
        _attrs = {"__module__": __name__, "__qualname__": _cls_name, "suite": _suite, "budget_s": _timeout,
                  "cases": _cases, "params": _params, "__doc__": f"Suite {_suite} (family {_family}): {_doc}."}
        if _base is _Quality and _metric:
            _attrs.update(metric=_metric, track_metric_from_best=_metric_benchmark(_metric, _best))
        globals()[_cls_name] = type(_cls_name, (_base,), _attrs)
