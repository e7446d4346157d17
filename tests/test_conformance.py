"""The conformance kit (psdbench.testing) on every built-in, and on three deliberately broken solvers."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from psdbench.api import Solution, Status
from psdbench.families.graph_classification.contract import GraphClassificationKind
from psdbench.families.mahalanobis.contract import MahalanobisKind
from psdbench.families.signed_graph.contract import SignedGraphKind
from psdbench.testing import (ConformanceError, DeadlineError, InfeasiblePointError, ParamSpecError,
                              VariableNamesError, check_problem, check_solver)


@pytest.fixture(scope="module")
def instances(registry, wdbc):
    """One small instance per family, each passed through check_problem."""
    gc = check_problem(registry.problem("graph-classification"), wdbc, {"n": 20, "graph": "knn", "k": 5},
                       kind=GraphClassificationKind, solve_reference=True)
    mc = check_problem(registry.problem("metric/mcml"), wdbc, {"fold": 0}, kind=MahalanobisKind, solve_reference=True)
    gmrf = registry.load_dataset("synthetic/balanced-gmrf")
    params = {"n_nodes": 10, "n_samples": 100}
    truth = registry.problem("signed-graph").build(gmrf, params, 0)
    sg = check_problem(registry.problem("signed-graph"), gmrf, params,
                       point={"L": truth.L_true, "polarity": truth.polarity_true}, kind=SignedGraphKind)
    return {"graph-classification": gc, "mahalanobis": mc, "signed-graph": sg}


def test_problems_without_a_formulation_need_a_point(registry, wdbc):
    lsml = registry.problem("metric/lsml")  # not convex: no cvxpy formulation
    with pytest.raises(ConformanceError, match="pass point="):
        check_problem(lsml, wdbc, {"fold": 1}, solve_reference=True)
    inst = lsml.build(wdbc, {"fold": 1}, 0)
    assert check_problem(lsml, wdbc, {"fold": 1}, point={"M": inst.identity_start()}).kind == "mahalanobis"
    with pytest.raises(ParamSpecError, match="parameter fold must be"):
        check_problem(lsml, wdbc, {"fold": -1})
    with pytest.raises(InfeasiblePointError, match="min_eig="):
        check_problem(lsml, wdbc, {"fold": 1}, point={"M": -inst.identity_start()})


@pytest.mark.parametrize("name, params", [
    ("gdpa-lp", {}), ("gdpa-lp-elim", {}), ("scs", {}), ("clarabel", {}), ("sgml", {}), ("pgml", {}),
    ("pd-cone", {}), ("balanced-clime", {}),
    # without balancing the baselines return unbalanced graphs, which (by design) do not verify
    ("clime", {"balance": "greedy"}), ("glasso", {"balance": "greedy", "alpha": 0.05}),
])
def test_builtin_solver_conforms(registry, instances, name, params):
    report = check_solver(registry.solver(name), list(instances.values()), params=params, deadline_s=60.0, grace_s=5.0)
    assert {i.kind for i, _, _ in report.solutions} <= set(instances)
    assert report.solutions


def test_mosek_conforms_or_says_why_it_skips(registry, instances):
    mosek = registry.solver("mosek")
    reason = mosek.skip_reason(instances["graph-classification"])
    if reason is not None:
        assert "MOSEK" in reason
        pytest.skip(reason)
    check_solver(mosek, list(instances.values()))


def test_conic_skip_reason_names_the_missing_formulation(registry, instances):
    assert registry.solver("clarabel").skip_reason(instances["signed-graph"]) == \
        "signed-graph offers no cvxpy formulation"
    assert registry.solver("clarabel").skip_reason(instances["mahalanobis"]) is None


# ------------------------------------------------------------------------------ broken solvers
class _Metric:
    kinds = ("mahalanobis",)
    default_params: dict = {}

    def supports(self, instance):
        return instance.kind == "mahalanobis"

    def library_versions(self):
        return {}


class WrongName(_Metric):
    name = "wrong-name"

    def solve(self, instance, budget, **params):
        return Solution(variables={"Mat": instance.identity_start()})


class NotPsd(_Metric):
    name = "not-psd"

    def solve(self, instance, budget, **params):
        return Solution(variables={"M": -instance.identity_start()})


class Sleeper(_Metric):
    """Never looks at the budget: waits for ``release`` (set by the test once it has its verdict),
    then writes ``returned`` in ``marks`` (its pid is in ``marks/pid``)."""

    name = "sleeper"

    def __init__(self, marks: Path) -> None:
        self.marks = marks
        self.release = threading.Event()

    def __getstate__(self):  # to a child process: an event cannot go, and nobody would set it there
        return {"marks": self.marks}

    def solve(self, instance, budget, **params):
        (self.marks / "pid").write_text(str(os.getpid()))
        if hasattr(self, "release"):
            self.release.wait(600.0)
        else:
            time.sleep(600.0)  # in a child process only a kill ends this
        (self.marks / "returned").write_text("")
        return Solution(variables={"M": instance.identity_start()})


class Polite(_Metric):
    name = "polite"

    def solve(self, instance, budget, **params):
        while not budget.expired():
            time.sleep(0.01)
        return Solution(variables={"M": instance.identity_start()}, status=Status.TIMEOUT)


def test_wrong_variable_name_fails_clearly(instances):
    with pytest.raises(VariableNamesError) as err:
        check_solver(WrongName(), [instances["mahalanobis"]])
    assert str(err.value).startswith("solver 'wrong-name' on metric/mcml")
    assert str(err.value).endswith("returned Mat; expected M, colours")


def test_non_psd_output_fails_clearly(instances):
    with pytest.raises(InfeasiblePointError, match=r"solver 'not-psd' returned a point that fails verification .*min_eig=-"
                       ) as err:
        check_solver(NotPsd(), [instances["mahalanobis"]])
    assert "rho - smallest eigenvalue of M = " in str(err.value)  # the failed check, by name, value and tolerance
    assert "asymmetry" not in str(err.value)  # not the checks that hold


class _Lying:
    """An instance whose verify says ok while one of its own checks fails."""

    def __init__(self, inner):
        self._inner = inner

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def verify(self, solution):
        from dataclasses import replace

        from psdbench.api import Check

        return replace(self._inner.verify(solution), ok=True, checks=[Check("made-up bound", 2.0, 1.0)])


def test_verify_that_disagrees_with_its_checks_fails(registry, instances):
    from psdbench.testing import ObjectiveError

    with pytest.raises(ObjectiveError, match=r"verify says ok=True but its checks say made-up bound = 2, needs <= 1 "
                                             r"\(fails\)"):
        check_solver(registry.solver("pd-cone"), [_Lying(instances["mahalanobis"])])


def test_ignored_deadline_fails_clearly(instances, tmp_path):
    sleeper = Sleeper(tmp_path)
    with pytest.raises(DeadlineError, match=r"solver 'sleeper' ignored the deadline .*Budget.seconds\(0.2\)"):
        check_solver(sleeper, [instances["mahalanobis"]], deadline_s=0.2, grace_s=0.3)
    assert not (tmp_path / "returned").exists()  # the watchdog gave up; it did not wait for the sleeper
    sleeper.release.set()
    # a polite solver returns within 10 ms of its deadline; the grace covers a loaded machine's scheduling
    report = check_solver(Polite(), [instances["mahalanobis"]], deadline_s=0.2, grace_s=5.0)
    assert report.solutions[0][1].status is Status.TIMEOUT


def test_process_isolation_kills_the_late_solver(registry, instances, tmp_path):
    with pytest.raises(DeadlineError, match="solver 'sleeper' ignored the deadline"):
        check_solver(Sleeper(tmp_path), [instances["mahalanobis"]], deadline_s=0.2, grace_s=0.3, isolation="process")
    # killed, not waited for: the child that ran it is gone, and it never returned
    assert not (tmp_path / "returned").exists()
    if (tmp_path / "pid").exists():  # killed before it started solving: nothing left either way
        with pytest.raises(ProcessLookupError):
            os.kill(int((tmp_path / "pid").read_text()), 0)
    report = check_solver(registry.solver("pd-cone"), [instances["mahalanobis"]], isolation="process")
    assert report.solutions[0][1].variables["M"].shape == (30, 30)  # the solution came back from the child


def test_inconsistent_param_specs_fail(instances):
    from psdbench import api

    class Drifted(_Metric):
        name = "drifted"
        params = {"tol": api.number(low=0, default=1e-4, doc="tolerance")}
        default_params = {"tol": 1e-5}

        def solve(self, instance, budget, **params):
            return Solution(variables={"M": instance.identity_start()})

    with pytest.raises(ParamSpecError, match=r"default_params\['tol'\] = 1e-05 but params\['tol'\] defaults to 0.0001"):
        check_solver(Drifted(), [instances["mahalanobis"]])
    with pytest.raises(ParamSpecError, match="parameter tol must lie in"):
        check_solver(type("Negative", (Drifted,), {"default_params": {"tol": 1e-4}})(), [instances["mahalanobis"]],
                     params={"tol": -1.0})


def test_unknown_kind_is_not_run(instances):
    report = check_solver(NotPsd(), [instances["graph-classification"], instances["signed-graph"]],
                          require_run=False)
    assert not report.solutions and len(report.skipped) == 2
    with pytest.raises(ConformanceError, match="ran on none of the instances"):
        check_solver(NotPsd(), [instances["graph-classification"]])

