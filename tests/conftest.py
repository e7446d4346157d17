import contextlib
import os
from pathlib import Path

import numpy as np
import pytest

from psdbench.registry import discover

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


@pytest.fixture(autouse=True)
def _reference_cache(tmp_path_factory, monkeypatch):
    """Every test gets a reference cache of its own in a temporary folder (never the user's):
    runs in one test share it, no two tests do (harness/store/refcache.py)."""
    monkeypatch.setenv("PSDBENCH_REF_CACHE", str(tmp_path_factory.mktemp("ref-cache")))
    # runs skip the second of calibration kernels (harness/calibration.py), but in its own tests
    monkeypatch.setenv("PSDBENCH_CALIBRATION", "off")


@pytest.fixture(scope="session")
def registry():
    return discover()


@pytest.fixture(scope="session")
def wdbc(registry):
    return registry.load_dataset("sklearn/breast-cancer")


@pytest.fixture
def data_dir():
    value = os.environ.get("PSDBENCH_DATA") or (str(SHARED) if SHARED.is_dir() else None)
    if not value:
        pytest.skip("PSDBENCH_DATA not set and ../shared/datasets absent")
    return Path(value)


def random_instance(registry, wdbc, n=30, graph="knn", seed=0, k=5):
    return registry.problem("graph-classification").build(wdbc, {"n": n, "graph": graph, "k": k}, seed)


# Offline installs of the plugin packages the tests build (tests never reach a package index).
PIP_OFFLINE = ("install", "--no-index", "--no-build-isolation", "--no-deps", "-q")


def pip_install_offline(package_dir, work_dir, target):
    """Run ``pip install --no-index --no-build-isolation --no-deps --target target`` on a copy of
    ``package_dir``.

    The copy keeps the build's ``*.egg-info`` / ``build/`` out of the checkout.  Building without
    isolation needs ``bdist_wheel`` in this interpreter: setuptools >= 70.1, which the ``test``
    extra requires.  Returns the completed process.
    """
    import shutil
    import subprocess
    import sys

    copy = Path(work_dir) / Path(package_dir).name
    shutil.copytree(package_dir, copy, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    return subprocess.run([sys.executable, "-m", "pip", *PIP_OFFLINE, "--target", str(target), str(copy)],
                          capture_output=True, text=True)


@contextlib.contextmanager
def installed(package_dir, dist, work_dir):
    """``dist`` (built from ``package_dir``) importable while inside, with its entry points, in
    this process and the processes it starts: installed offline into a folder of ``work_dir`` put
    first on ``sys.path`` and ``PYTHONPATH``, never into the environment, so that test runs
    sharing the environment (two copies of the suite, pytest-xdist's workers) never see each
    other's copy appear or vanish.  An environment that already holds ``dist`` (a user's plugin)
    is used as it is."""
    import importlib
    import importlib.metadata as md
    import sys

    try:
        md.distribution(dist)
        yield
        return
    except md.PackageNotFoundError:
        pass
    target = Path(work_dir) / "site-packages"
    res = pip_install_offline(package_dir, work_dir, target)
    assert res.returncode == 0, f"offline build/install (pip --no-index) failed:\n{res.stdout}\n{res.stderr}"
    old_env, old_path, old_modules = os.environ.get("PYTHONPATH"), list(sys.path), set(sys.modules)
    os.environ["PYTHONPATH"] = os.pathsep.join([str(target), *([old_env] if old_env else [])])
    sys.path.insert(0, str(target))
    importlib.invalidate_caches()
    try:
        yield
    finally:
        if old_env is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = old_env
        sys.path[:] = old_path
        for name in set(sys.modules) - old_modules:  # the plugin's modules go with it
            if str(getattr(sys.modules[name], "__file__", "") or "").startswith(str(target)):
                del sys.modules[name]
        importlib.invalidate_caches()
