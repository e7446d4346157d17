import os
from pathlib import Path

import numpy as np
import pytest

from psdbench.registry import discover

SHARED = Path(__file__).resolve().parents[2] / "shared" / "datasets"


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
