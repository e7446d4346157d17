"""Every script and asv module under ``benchmarks/`` imports with the current package layout.

They are run by hand or by asv, never by the test command, so a moved module would otherwise go
unnoticed until someone measures.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

BENCHMARKS = sorted((Path(__file__).resolve().parents[1] / "benchmarks").glob("*.py"))


@pytest.mark.parametrize("path", [p for p in BENCHMARKS if p.name != "__init__.py"], ids=lambda p: p.name)
def test_benchmark_module_imports(path):
    spec = importlib.util.spec_from_file_location(f"bench_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # module level only: no measurement runs
    assert module.__doc__, f"{path.name} has no docstring saying what it measures"
