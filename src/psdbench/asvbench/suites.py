"""asv benchmarks of every family, from the suites the families mark with an ``[asv]`` table.

Two classes per family and tracked suite, built at import from the registry: a family installed
in the environment (built in or a plugin) is tracked as soon as one of its suites has an ``[asv]``
table (``psdbench.api.ASV_SUITE_KEYS``), with no asv code of its own.  A repository's benchmark
package re-exports them (``from psdbench.asvbench.suites import *``: psdbench's
``benchmarks/bench_suites.py``, or the stub ``psdbench asv init`` writes).  Parameters: the
instance set (the report's: problem, dataset and the parameters that are not replicates) and the
solver configuration (the report's label); a pair the suite does not run is skipped (``n/a``).

``<Family>_<Suite>.time_solve`` / ``.peakmem_solve``
    every instance of the set solved once in this process, as the harness's worker does (the
    instance built and the solver warmed up untimed; the suite's timeout as the budget; the first
    setup of a process also solves each instance once, untimed, so that a solver that raises is
    found there: the benchmark is then asv's skip, ``n/a``, and its line ``psdbench: lost solve:
    <configuration> on <instance set>: seed <s>: raised <exception>`` is recorded); BLAS on
    one thread; timed by :func:`~psdbench.asvbench.uncontended_timer` (the wall clock less the time
    the thread waited for a CPU held by other jobs: a sleep or I/O of the solver counts, the
    machine's load does not).  Samples: ``rounds = 5`` processes per commit (``asv continuous`` interleaves them
    with the other commit's, so a drift of the machine's load falls on both), ``repeat = (2, 4,
    10.0)`` samples in each, so at least 10 per commit: asv's Mann-Whitney test (``p < 0.002``)
    can then flag a slowdown (with asv's default 2 rounds of 3, its smallest p-value, 0.00216,
    never passes); the rates measured: ``docs/benchmarks.md``
``<Family>_<Suite>Quality.track_gap`` / ``.track_unverified`` / ``.track_metric_from_best`` / ``.track_iterations``
    the values :mod:`psdbench.asvbench.tracked` defines (each a cost, 0 at best; the metric's and
    its best value from the suite's ``[asv]`` table, :mod:`psdbench.harness.asvspec`)

A lost value (a point that no longer verifies, a metric missing) is a value: the benchmark returns
:data:`~psdbench.asvbench.tracked.LOST` (``1e12``, above any cost) and prints one line on standard
error, ``psdbench: lost gap: <configuration> on <instance set> seed <s>: <failed check> = <value>,
needs <= <tolerance> (...)`` (:func:`psdbench.asvbench.losses.record`).  ``asv compare`` / ``asv
continuous`` flag the rise to it as worse (``+``) and print the whole table (a failed benchmark
instead makes ``asv run`` exit 2 and ``asv continuous`` stop before its table: no benchmark here
raises for a crash or a loss); ``-e`` prints the line under the benchmark, ``psdbench asv
continuous`` prints each after the table (:mod:`psdbench.asvbench.losses`).  A value lost in
both commits is unchanged.  A skip (``n/a``: a pair the suite does not run, a solver
whose library is absent, a solver that reports no iterations) is never flagged.

The ``track_`` values come from one harness run of the class's suite (``setup_cache``, one per
suite, so ``-b`` selecting one suite runs that suite only: asv keys a cache by the module and line
of its function, and each suite's function is given a module of its own).  asv imports this module
in every process it starts: the expanded suites are kept in a file of the temporary folder, keyed
by the suites' text, the registered plugins and psdbench's version.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import re
import sys
import tempfile
import types
from pathlib import Path
from typing import Any, Callable

from psdbench.api import Budget, skip_reason, warm_up
from psdbench.asvbench import limit_blas, uncontended_timer
from psdbench.asvbench.losses import record
from psdbench.asvbench.tracked import (LOST, LostValue, TrackedCase, case_skip_reason, case_summary, lost_line,
                                      tracked_cases, tracked_frame, tracked_grid, tracked_suites, tracked_value)
from psdbench.registry import discover

Tracked = tuple[str, float, str | None, float, dict[tuple[str, str], TrackedCase]]


def _camel(text: str) -> str:
    return "".join(w[:1].upper() + w[1:] for w in re.split(r"[^0-9A-Za-z]+", text) if w)


def _discover() -> dict[str, Tracked]:
    """Class name -> ``(suite, timeout, metric, metric_best, {(set, config): case})``, per tracked suite."""
    from psdbench.system.version import psdbench_version
    from psdbench.registry.plugins import names_of

    reg = discover()
    suites = tracked_suites(reg)
    plugins = [names_of(m) for m in (reg.problems, reg.solvers, reg.collections, reg.single_datasets)]
    h = hashlib.sha256(repr((psdbench_version(), plugins, "metric_best")).encode())  # names only; "metric_best": the layout
    for suite in suites:
        h.update(f"{suite}\0{reg.suites[suite].read_text()}\0".encode())
    cache = Path(tempfile.gettempdir()) / f"psdbench-asv-tracked-{h.hexdigest()[:20]}.pkl"
    try:
        return pickle.loads(cache.read_bytes())
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError):  # none, or of other code
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


def measure_tracked(suites: list[str] | None = None) -> dict[str, dict[tuple[str, str], dict[str, Any]]]:
    """Run the tracked suites ``suites`` (default: all) once through the harness (a temporary store
    each) and summarize each of their cases, by class name."""
    import pandas as pd

    import psdbench

    reg = discover()
    wanted = sorted({v[0] for v in TRACKED.values()} if suites is None else set(suites))
    frames = {}
    with tempfile.TemporaryDirectory(prefix="psdbench-asv-") as tmp:
        for suite in wanted:
            spec, _, _ = tracked_grid(suite, reg)
            db = Path(tmp) / f"{suite}.sqlite"
            try:
                psdbench.run(spec, db=db, progress=False)
                frames[suite] = tracked_frame(db, reg)
            except Exception as exc:  # one suite's failure (its data missing) leaves the others measured
                print(f"psdbench: suite {suite} not measured: {type(exc).__name__}: {exc}", file=sys.stderr)
                frames[suite] = pd.DataFrame()
    return {name: {key: case_summary(frames[suite], case, metric, best) for key, case in cases.items()}
            for name, (suite, _, metric, best, cases) in TRACKED.items() if suite in frames}


class _Solves:
    """Time and peak memory of one tracked suite's solves (subclassed per suite below)."""

    suite = ""
    budget_s = 60.0
    cases: dict[tuple[str, str], TrackedCase] = {}
    params: list[list[str]] = [[], []]
    param_names = ["instance_set", "config"]
    number = 1
    warmup_time = 0.0
    timer = staticmethod(uncontended_timer)  # wall time less the time other jobs held the CPU
    rounds = 5  # processes per commit, interleaved with the other commit's (asv continuous)
    repeat = (2, 4, 10.0)  # samples per process: >= 10 per commit (module docstring)
    timeout = 600

    def setup(self, instance_set: str, config: str) -> None:
        case = self.cases.get((instance_set, config))
        if case is None:
            raise NotImplementedError(f"suite {self.suite} runs no cell of {config} on {instance_set}")
        crashed = self.__dict__.get("_crashed")
        if crashed is not None:
            raise NotImplementedError(crashed)
        self._threads = limit_blas()
        reg = discover()
        problem, _, _, _, solver, params = case.cells[0]
        self.solver, self.params = reg.solver(solver), dict(params)
        self.instances = []
        seed = case.cells[0][3]
        try:
            seeds = []
            for problem, dataset, iparams, seed, _, _ in case.cells:
                instance = reg.problem(problem).build(reg.load_dataset(dataset), iparams, seed)
                if skip_reason(self.solver, instance, self.params) is None:
                    self.instances.append(instance)
                    seeds.append(seed)
            if self.instances:
                seed = seeds[0]
                warm_up(self.solver, self.instances[0])  # untimed, as the harness's worker does
                if not self.__dict__.get("_checked"):  # this process's first setup: each solve once, untimed
                    for seed, instance in zip(seeds, self.instances):
                        self.solver.solve(instance, Budget.seconds(self.budget_s), **self.params)
                    self._checked = True
        except Exception as exc:  # a crash is asv's skip (n/a), not a failed benchmark: asv prints its table
            first = f"{type(exc).__name__}: {exc}".split("\n")[0][:300]
            self._crashed = lost_line(case, "solve", f"seed {seed}: raised {first}")
            record(self._crashed)
            raise NotImplementedError(self._crashed) from None
        if not self.instances:
            raise NotImplementedError(f"{config} skips every instance of {instance_set}")

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
    """Gap, verified share, metric and iterations of one tracked suite's cells, each a cost (0 at
    best), from one harness run of the suite (``setup_cache``: one per suite, :func:`_setup_cache`)."""

    suite = ""
    metric: str | None = None
    cases: dict[tuple[str, str], TrackedCase] = {}
    params: list[list[str]] = [[], []]
    param_names = ["instance_set", "config"]
    timeout = 1800  # also setup_cache's

    def setup(self, measured: Any, instance_set: str, config: str) -> None:
        if (instance_set, config) not in self.cases:
            raise NotImplementedError(f"suite {self.suite} runs no cell of {config} on {instance_set}")
        why = case_skip_reason(self._summary(measured, instance_set, config))
        if why is not None:
            raise NotImplementedError(why)  # asv's skip (n/a), never flagged

    def _summary(self, measured: Any, instance_set: str, config: str) -> dict[str, Any]:
        return measured[type(self).__name__[:-len("Quality")]][(instance_set, config)]

    def _tracked(self, measured: Any, instance_set: str, config: str, what: str) -> float:
        summary = self._summary(measured, instance_set, config)
        try:
            return tracked_value(summary, what, self.metric)
        except LostValue as exc:
            record(lost_line(self.cases[(instance_set, config)], what, str(exc)))
            return LOST

    def track_gap(self, measured: Any, instance_set: str, config: str) -> float:
        return self._tracked(measured, instance_set, config, "gap")

    track_gap.unit = "worst ranked relative gap (0: at the reference; 1e12: lost)"

    def track_unverified(self, measured: Any, instance_set: str, config: str) -> float:
        return self._tracked(measured, instance_set, config, "unverified")

    track_unverified.unit = "share of cells not verified"

    def track_iterations(self, measured: Any, instance_set: str, config: str) -> float:
        value = self._summary(measured, instance_set, config)["iterations"]
        return float(value)  # NaN (n/a, never flagged) when a cell reports no iterations

    track_iterations.unit = "iterations reported by the solver, summed over the cells"


def _metric_benchmark(metric: str, best: float) -> Callable[..., float]:
    """``track_metric_from_best`` of a suite with a declared metric, its unit naming the metric."""
    def track_metric_from_best(self: _Quality, measured: Any, instance_set: str, config: str) -> float:
        return self._tracked(measured, instance_set, config, "metric_from_best")

    track_metric_from_best.unit = f"|{metric} - {best:g}| (0: its best; 1e12: lost)"
    return track_metric_from_best


def _setup_cache(suite: str) -> Callable[..., Any]:
    """``setup_cache`` of one suite's ``Quality`` class, in a module of its own: asv keys the cache
    by the function's module and first line, so each suite's is run only for its own benchmarks."""
    name = f"{__name__}_cache.{re.sub(r'[^0-9A-Za-z_]', '_', suite)}"
    module = sys.modules.setdefault(name, types.ModuleType(name))

    def setup_cache(self: _Quality) -> dict[str, Any]:
        return measure_tracked([suite])

    setup_cache.__module__ = module.__name__
    setup_cache.timeout = 1800
    return setup_cache


__all__ = ["TRACKED", "benchmarks_of", "measure_tracked"]


def benchmarks_of(suites: list[str] | None = None, builtin: bool = False) -> dict[str, type]:
    """The benchmark classes of the tracked suites ``suites``, by class name (for a repository's stub:
    ``globals().update(benchmarks_of([...]))``).

    ``suites`` None: every tracked suite that psdbench does not ship (a plugin's), or every tracked
    suite with ``builtin``.  Raises :class:`~psdbench.api.PsdbenchError` naming a suite asv does
    not track (not registered, or without an ``[asv]`` table).
    """
    from psdbench.api import PsdbenchError

    reg = discover()
    own = Path(__file__).resolve().parents[1]
    if suites is None:
        wanted = {v[0] for v in TRACKED.values()
                  if builtin or not Path(reg.suites[v[0]]).resolve().is_relative_to(own)}
    else:
        unknown = set(suites) - {v[0] for v in TRACKED.values()}
        if unknown:
            raise PsdbenchError(f"suite(s) {', '.join(sorted(unknown))} not tracked by asv: not registered, or "
                                "without an [asv] table (psdbench list suites)")
        wanted = set(suites)
    g = globals()
    return {n: c for name in sorted(TRACKED) if TRACKED[name][0] in wanted for n, c in
            ((name, g[name]), (name + "Quality", g[name + "Quality"]))}

for _name, (_suite, _timeout, _metric, _best, _cases) in TRACKED.items():
    _params = [list(dict.fromkeys(k[0] for k in _cases)), list(dict.fromkeys(k[1] for k in _cases))]
    _family = next(iter(_cases.values())).family
    _what = f"ranked gap, unverified share, |{_metric} - {_best:g}|" if _metric else "ranked gap, unverified share"
    for _cls_name, _base, _doc in ((_name, _Solves, "time and peak memory"),
                                   (_name + "Quality", _Quality, _what + ", iterations")):
        _attrs = {"__module__": __name__, "__qualname__": _cls_name, "suite": _suite, "budget_s": _timeout,
                  "cases": _cases, "params": _params, "__doc__": f"Suite {_suite} (family {_family}): {_doc}."}
        if _base is _Quality:
            _attrs["setup_cache"] = _setup_cache(_suite)
            if _metric:
                _attrs.update(metric=_metric, track_metric_from_best=_metric_benchmark(_metric, _best))
        globals()[_cls_name] = type(_cls_name, (_base,), _attrs)
        __all__.append(_cls_name)
