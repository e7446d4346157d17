"""The plugin keeps psdbench's contracts (run with ``pytest`` after ``pip install -e .``)."""

from psdbench.families.graph_classification.contract import GraphClassificationKind
from psdbench.registry import discover
from psdbench.testing import check_problem, check_solver

from psdbench_example_plugin import HarmonicSolver


def test_harmonic_solver_conforms():
    reg = discover()
    wdbc = reg.load_dataset("sklearn/breast-cancer")
    problem = reg.problem("graph-classification")
    instances = [check_problem(problem, wdbc, {"n": n, "graph": "knn", "k": 5}, seed=s, kind=GraphClassificationKind)
                 for n, s in ((30, 0), (60, 1))]
    report = check_solver(HarmonicSolver(), instances, deadline_s=5.0, grace_s=2.0)
    assert len(report.solutions) == 2
