"""The max-cut suites parse, name datasets that load, and expand into the cells they promise."""

from __future__ import annotations

import pytest

from psdbench.harness.grid.expand import expand, read_suite
from psdbench.registry import discover

SUITES = ("sdp-large", "maxcut-million")


@pytest.mark.parametrize("suite", SUITES)
def test_suite_datasets_check_without_loading(suite, data_dir):
    reg = discover()
    spec, _ = read_suite(suite, reg)
    names = {d for p in spec["problems"] for d in p["datasets"]}
    for d in names:
        reg.check_dataset(d)  # gset-class names parse; the SDPLIB files exist
    if suite == "maxcut-million":
        assert spec["run"]["memory_mb"] == 8192 and spec["run"]["timeout"] == 900
        assert all("1000000" in d or "1000x1000" in d for d in names)


def _needs(reg, names):
    missing = [n for n in names if n not in reg.problems and n not in reg.solvers]
    if missing:
        pytest.skip(f"not registered in this environment yet: {', '.join(missing)}")


def test_sdp_large_expands_with_interior_point_solvers_on_the_ladder_only(data_dir):
    reg = discover()
    _needs(reg, ["maxcut/sdp", "maxcut-mixing", "maxcut/boxqp", "boxqp-mixing", "sdp-burer-monteiro",
                "sdp-sketchycgal"])
    spec, name = read_suite("sdp-large", reg)
    grid = expand(spec, name, reg)
    by = {}
    for c in grid.cells:
        by.setdefault(c.solver, set()).add((c.problem, c.dataset))
    assert {p for p, _ in by["sdp-sdpa"]} == {"sdp/standard"}
    assert ("sdp/standard", "gset-class/toroidal-20000-pm1:sdp") in by["sdp-csdp"]
    assert {p for p, _ in by["maxcut-mixing"]} == {"maxcut/sdp"}
    assert len({d for p, d in by["maxcut-mixing"]}) == 29 + 4
    assert by["boxqp-mixing"] == {("maxcut/boxqp", "sdplib/qpG51")}  # qpG51 in its graph form
