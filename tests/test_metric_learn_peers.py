"""metric-learn peers (ml-lmnn, ml-itml, euclidean), their instance hooks, and the scikit-learn compat layer."""

import os
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

from psdbench.api import Budget, Status
from psdbench.harness.store.db import Store
from psdbench.linalg.psd import scale_to_trace_floor
from psdbench.solvers import metric_learn as peers
from psdbench.solvers.sklearn_compat import (needs_translation, sklearn_validation_compat,
                                             translate_finite_kwarg)
from psdbench.testing import check_solver

from .test_harness import cli

HAVE_ML = peers.import_metric_learn() is not None
needs_ml = pytest.mark.skipif(not HAVE_ML, reason=peers.NOT_INSTALLED)
SOLVERS = [pytest.param("ml-lmnn", marks=needs_ml), pytest.param("ml-itml", marks=needs_ml), "euclidean"]


@pytest.fixture(scope="module")
def wine_instance(registry):
    """metric/mcml, classification protocol, on sklearn/wine (106 training rows x 13 features)."""
    return registry.problem("metric/mcml").build(registry.load_dataset("sklearn/wine"),
                                                 {"protocol": "classification", "test_size": 0.4}, 0)


# ----------------------------------------------------------------------------------- compat layer
def test_translate_finite_kwarg_renames_and_refuses_both():
    assert translate_finite_kwarg({"force_all_finite": "allow-nan", "dtype": None}) == \
        {"ensure_all_finite": "allow-nan", "dtype": None}
    assert translate_finite_kwarg({"copy": False}) == {"copy": False}
    with pytest.raises(TypeError, match="both"):
        translate_finite_kwarg({"force_all_finite": True, "ensure_all_finite": True})


def test_compat_patches_only_the_prefix_and_restores(monkeypatch):
    from sklearn.utils import validation

    fake = types.ModuleType("fakepeer._util")
    fake.check_array = validation.check_array
    other = types.ModuleType("otherpkg")
    other.check_array = validation.check_array
    monkeypatch.setitem(sys.modules, "fakepeer._util", fake)
    monkeypatch.setitem(sys.modules, "otherpkg", other)
    nan = np.array([[1.0, np.nan]])
    with sklearn_validation_compat("fakepeer") as patched:
        if needs_translation():
            assert patched == [("fakepeer._util", "check_array")]
        assert other.check_array is validation.check_array
        # the meaning is kept: False lets NaN through, True rejects it
        assert np.isnan(fake.check_array(nan, force_all_finite=False)).any()
        with pytest.raises(ValueError):
            fake.check_array(nan, force_all_finite=True)
    assert fake.check_array is validation.check_array


@needs_ml
@pytest.mark.skipif(not needs_translation(), reason="this scikit-learn still accepts force_all_finite")
def test_metric_learn_fails_without_the_layer_and_fits_with_it(wine_instance):
    import metric_learn

    X, y = wine_instance.metric_training_data()
    with pytest.raises(TypeError, match="force_all_finite"):
        metric_learn.ITML_Supervised(random_state=0).fit(X, (y > 0).astype(int))
    with sklearn_validation_compat("metric_learn"):
        M = metric_learn.ITML_Supervised(random_state=0).fit(X, (y > 0).astype(int)).get_mahalanobis_matrix()
    assert M.shape == (13, 13)


# ------------------------------------------------------------------------------------- mapping
def test_scale_to_trace_floor_scales_or_shifts_minimally():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((5, 5))
    M = A @ A.T + np.eye(5)
    Mm, a, b = scale_to_trace_floor(M, C=5.0, rho=1e-5)
    assert b == 0.0 and np.isclose(np.trace(Mm), 5.0) and np.allclose(Mm, a * M)
    R = np.outer(A[0], A[0])  # rank one: lambda_min = 0 < rho, so a shift is needed
    Rm, a, b = scale_to_trace_floor(R, C=5.0, rho=1e-3)
    assert b > 0 and np.isclose(np.trace(Rm), 5.0) and np.linalg.eigvalsh(Rm)[0] >= 1e-3 - 1e-12


# --------------------------------------------------------------------------------------- solvers
@pytest.mark.parametrize("name", SOLVERS)
def test_peer_metric_verifies_on_the_instance(registry, wine_instance, name):
    sol = registry.solver(name).solve(wine_instance, Budget())
    assert sol.status in (Status.OK, Status.MAX_ITER)
    feas = wine_instance.verify(sol)
    assert feas.ok and feas.min_eig >= wine_instance.rho - 1e-9
    assert np.isclose(np.trace(sol.variables["M"]), wine_instance.C)
    assert set(sol.info["mapping"]) == {"scale", "shift"}
    assert 0.5 < wine_instance.evaluate(sol)["accuracy"] <= 1.0
    if name != "euclidean":
        assert sol.info["settings"] == registry.solver(name).default_params
        assert sol.info["random_state"] == wine_instance.seed
        assert set(registry.solver(name).library_versions()) == {"metric-learn", "scikit-learn"}


@needs_ml
def test_itml_is_seeded_and_keeps_both_classes(registry, wine_instance):
    itml = registry.solver("ml-itml")
    a = itml.solve(wine_instance, Budget())
    b = itml.solve(wine_instance, Budget())
    assert np.array_equal(a.variables["M"], b.variables["M"])
    assert not any("Only generated" in w for w in a.info["warnings"])  # +-1 labels are recoded 0/1
    assert len(a.info["bounds"]) == 2


@pytest.mark.parametrize("name", SOLVERS)
def test_peer_conforms(registry, wine_instance, name):
    report = check_solver(registry.solver(name), [wine_instance], deadline_s=60.0, grace_s=5.0)
    assert len(report.solutions) == 1


def test_skip_reason_without_metric_learn(registry, wine_instance, monkeypatch):
    monkeypatch.setitem(sys.modules, "metric_learn", None)  # import metric_learn raises ImportError
    for name in ("ml-lmnn", "ml-itml"):
        solver = registry.solver(name)
        assert solver.skip_reason(wine_instance) == peers.NOT_INSTALLED
        assert peers.NOT_INSTALLED.startswith("metric-learn is not installed") and "'psdbench[peers]'" in peers.NOT_INSTALLED
        assert solver.solve(wine_instance, Budget()).status is Status.SKIPPED
    assert registry.solver("euclidean").skip_reason(wine_instance) is None


@needs_ml
def test_skip_reason_without_hooks_or_training_set(registry, wdbc, wine_instance):
    objective_protocol = registry.problem("metric/mcml").build(wdbc, {"fold": 0}, 0)
    assert "no training set" in registry.solver("ml-lmnn").skip_reason(objective_protocol)
    gc = registry.problem("graph-classification").build(wdbc, {"n": 20, "graph": "knn", "k": 5}, 0)
    assert registry.solver("ml-itml").skip_reason(gc) == \
        "graph-classification offers no metric_training_data / metric_from_matrix hook"


# ------------------------------------------------------------------------------------- harness
GRID = """
[run]
seeds = [0]
timeout = 600
reference_timeout = 600

[[problems]]
name = "metric/mcml"
datasets = ["sklearn/wine"]
params = {{ protocol = "classification", test_size = 0.8 }}
{solvers}
"""


def _grid(tmp_path, names):
    body = GRID.format(solvers="".join(f'\n[[solvers]]\nname = "{n}"\n' for n in names))
    path = tmp_path / "peers.toml"
    path.write_text(textwrap.dedent(body))
    return path


@needs_ml
def test_peers_through_the_harness(tmp_path):
    db = tmp_path / "p.sqlite"
    out = cli(["run", "--grid", str(_grid(tmp_path, ["ml-itml", "euclidean"])), "--db", str(db), "--quiet", "--report", ""])
    assert out.returncode == 0, out.stderr
    df = Store(db).results_frame().set_index("solver")
    assert df.loc["ml-itml", "status"] == "ok" and df.loc["euclidean", "status"] == "ok"


def test_cell_is_skipped_without_metric_learn(tmp_path):
    """A fresh ``psdbench run`` process (and its fork server) that cannot import metric_learn."""
    shadow = tmp_path / "shadow" / "metric_learn"
    shadow.mkdir(parents=True)
    (shadow / "__init__.py").write_text('raise ImportError("simulated: metric-learn absent")\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(shadow.parent), os.environ.get("PYTHONPATH", "")])}
    db = tmp_path / "s.sqlite"
    grid = _grid(tmp_path, ["ml-lmnn"])
    grid.write_text(grid.read_text().replace("reference_timeout = 600", "reference = false"))  # a skip needs none
    run = subprocess.run([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(grid),
                          "--db", str(db), "--quiet", "--report", ""], env=env, capture_output=True, text=True,
                         timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    df = Store(db).results_frame()
    assert df.status.tolist() == ["skipped"]
    assert df.message.tolist() == [peers.NOT_INSTALLED]
