"""Deferred entries of traced iterates: GDPA's labels of kept iterates are computed by the harness,
after the timed solve, and are the labels the solve itself would have computed."""

import pickle
import numpy as np
import pytest

import psdbench.api.tracing as tracing
from psdbench.api import Budget, Deferred, Solution, TraceRecorder, resolve_iterate
from psdbench.families.graph_classification.gdpa_lp_elim import GdpaLpElim
from psdbench.harness.workers.worker import rescore, score, verify_checkpoints
from psdbench.harness.store.results import CellResult

from .conftest import random_instance


def _double(instance, a):
    return 2.0 * a


def test_recorder_keeps_deferred_entries_unevaluated():
    calls = []

    def counted(instance, a):
        calls.append(1)
        return a + instance

    rec = TraceRecorder(ratio=1.0, min_gap_s=0.0)
    a = np.arange(3.0)
    for i in range(4):
        rec.add(objective=float(i), variables={"a": a, "b": Deferred(counted, (a,))})
        a += 1.0  # the solver reuses its buffer: the kept iterate holds a copy
    its = rec.finish()
    assert not calls and all(isinstance(v["b"], Deferred) for _, v in its)
    assert [resolve_iterate(10.0, v)["b"][0] for _, v in its] == [10.0, 11.0, 12.0, 13.0]
    assert len(calls) == len(its)
    back = pickle.loads(pickle.dumps(Deferred(_double, (np.ones(2),))))  # module-level fn: picklable
    np.testing.assert_array_equal(back(None), [2.0, 2.0])


CASES = [
    ("gdpa-lp", {}, False),
    ("gdpa-lp-elim", {"scalars": "gdpa"}, False),
    ("gdpa-lp-elim", {"scalars": "gdpa", "rounding": "slackness"}, False),
    ("gdpa-lp", {}, True),
    ("gdpa-lp-elim", {"scalars": "gdpa"}, True),
]


@pytest.mark.parametrize("solver, params, sparse", CASES)
def test_gdpa_labels_of_kept_iterates_are_deferred_to_scoring(registry, wdbc, monkeypatch, solver, params, sparse):
    """No kept iterate's labels are computed in the solve; computed when scored (in process, or
    from a pickled checkpoint), the last LP's are the returned labels."""
    monkeypatch.setattr(tracing.TraceRecorder.__init__, "__defaults__", (None, 1.0, 0.0, 10**6, 10**6))  # keep all
    inst = registry.problem("graph-classification").build(
        wdbc, {"n": 60, "graph": "knn", "k": 5, **({"dense_n": 0} if sparse else {})}, 1)
    assert inst.is_sparse == sparse
    checkpoints = []
    budget = Budget(checkpoint=lambda t, v: checkpoints.append((t, pickle.loads(pickle.dumps(v)))))
    sol = registry.solver(solver).solve(inst, budget, **params)
    deferred = [v for _, v in sol.iterates if isinstance(v.get("x"), Deferred)]
    assert sol.iterations >= 2 and len(deferred) == sol.iterations  # every LP's iterate kept, labels deferred
    # the last LP's iterate is the returned point: its deferred labels are the returned labels
    np.testing.assert_array_equal(resolve_iterate(inst, deferred[-1])["x"], sol.variables["x"])
    assert len(checkpoints) == len(sol.iterates)
    for (_, mine), (_, sent) in zip(sol.iterates, checkpoints):
        np.testing.assert_array_equal(resolve_iterate(inst, mine)["x"], resolve_iterate(inst, sent)["x"])
    curve = rescore(inst, sol.iterates, None)
    assert [c["objective"] for c in curve] == [score(inst, resolve_iterate(inst, v))["objective"]
                                               for _, v in sol.iterates]


def test_killed_cell_checkpoints_resolve_their_deferred_labels(registry, wdbc):
    """verify_checkpoints (a fresh process's instance) computes the deferred labels before scoring."""
    inst = random_instance(registry, wdbc, n=40, graph="knn", seed=2)
    checkpoints = []
    budget = Budget(checkpoint=lambda t, v: checkpoints.append((t, pickle.loads(pickle.dumps(v)))))
    GdpaLpElim().solve(inst, budget, scalars="gdpa")
    assert any(isinstance(v.get("x"), Deferred) for _, v in checkpoints)
    base = CellResult(problem="graph-classification", dataset=inst.dataset, instance_params=dict(inst.params),
                      seed=inst.seed, solver="gdpa-lp-elim", solver_params={"scalars": "gdpa"}, status="timeout")
    out = verify_checkpoints({"result": base, "checkpoints": checkpoints})
    assert len(out.curve) == len(checkpoints), out.message
    assert [c["objective"] for c in out.curve] == [inst.objective(Solution(variables=resolve_iterate(inst, v)))
                                                   for _, v in checkpoints]
    assert out.objective in [c["objective"] for c in out.curve if c["feasible"]]
