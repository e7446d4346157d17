"""SDPA-GMP (``sdp-sdpa-gmp``): found in its own folder, solves in a child process to the cvxpy
optimum, stops at the deadline without leaving its child, and reaches DIMACS error 1e-6 on SDPLIB
problems where double precision stops short."""

from __future__ import annotations

import os
import time

import numpy as np
import pytest

from psdbench.api import Budget, Dataset, Status
from psdbench.families.sdp.solvers.sdpa import SdpSdpa
from psdbench.families.sdp.problem import SdpStandard
from psdbench.families.sdp.solvers.sdpa_gmp import ENV, SdpSdpaGmp, gmp_dir
from psdbench.testing import check_solver

INSTALLED = SdpSdpaGmp().skip_reason(None) is None
needs_gmp = pytest.mark.skipif(not INSTALLED, reason=f"sdpa-multiprecision not installed in {gmp_dir()}")


def _inst(gen: str, n: int, seed: int, density: float = 0.4):
    return SdpStandard().build(Dataset(name=f"sdp-gen/{gen}", payload={"generator": gen}),
                               {"n": n, "density": density}, seed)


def test_absent_folder_skips_with_the_install_command(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "nowhere"))
    why = SdpSdpaGmp().skip_reason(None)
    assert why and "nowhere" in why and "--no-deps --target" in why and "sdpa-multiprecision" in why
    assert SdpSdpaGmp().library_versions() == {"sdpa-multiprecision": "absent"}
    (tmp_path / "fake" / "sdpap").mkdir(parents=True)  # a folder without the package's metadata
    monkeypatch.setenv(ENV, str(tmp_path / "fake"))
    assert SdpSdpaGmp().skip_reason(None) is not None


@needs_gmp
@pytest.mark.parametrize("gen", ["maxcut", "theta"])
def test_matches_cvxpy_beyond_double_precision_tolerances(gen):
    inst = _inst(gen, 12, 2)
    form = inst.reference_formulation()
    form.problem.solve(solver="CLARABEL")
    sol = SdpSdpaGmp().solve(inst, Budget())
    assert sol.status is Status.OK, sol.message
    feas = inst.verify(sol)
    assert feas.ok and feas.max_residual <= 1e-8, feas.details  # epsilon 1e-10 in 200-bit arithmetic
    assert inst.objective(sol) == pytest.approx(form.problem.value, rel=1e-7, abs=1e-7)
    assert sol.info["mpf_precision"] == 200


@needs_gmp
def test_contract():
    check_solver(SdpSdpaGmp(), lambda: [_inst("maxcut", 8, 0), _inst("theta", 8, 1)], deadline_s=60)


@needs_gmp
def test_stops_at_the_deadline_and_leaves_no_child():
    inst = _inst("theta", 60, 0, density=0.2)
    sol = SdpSdpaGmp().solve(inst, Budget.seconds(0.5))
    # killed at the deadline (its message says so), not waited for
    assert sol.status is Status.TIMEOUT and not sol.variables and "killed" in sol.message
    mine = str(os.getpid())

    def children() -> list[str]:
        out = []
        for pid in os.listdir("/proc"):
            if pid.isdigit():
                try:
                    stat = open(f"/proc/{pid}/stat").read().split()
                    cmd = open(f"/proc/{pid}/cmdline").read()
                except OSError:
                    continue
                if stat[3] == mine and "sdpa_gmp_child" in cmd and stat[2] != "Z":
                    out.append(pid)
        return out

    end = time.monotonic() + 60  # waits for the event (the child gone), not a fixed time
    while children() and time.monotonic() < end:
        time.sleep(0.05)
    assert not children(), "the child outlived its deadline"


@pytest.mark.slow  # SDPLIB hinf1, hinf3, qap6: double precision stops between 1.2e-6 and 8.3e-5
@needs_gmp
@pytest.mark.parametrize("name", ["hinf1", "hinf3", "qap6"])
def test_reaches_1e6_where_double_precision_stops_short(data_dir, monkeypatch, name):
    from psdbench.families.sdp.datasets import SdplibCollection
    from psdbench.families.sdp.section.report import _digits_agree

    monkeypatch.setenv("PSDBENCH_DATA", str(data_dir))
    inst = SdpStandard().build(SdplibCollection().load(name), {}, 0)
    sol = SdpSdpaGmp().solve(inst, Budget())
    assert inst.verify(sol).max_residual <= 1e-6, inst.verify(sol).details
    assert _digits_agree(inst.objective(sol), inst.published, inst.published_digits)
    if SdpSdpa().skip_reason(inst) is None:  # the same method in double precision, any tolerance tried
        errs = [inst.verify(SdpSdpa().solve(inst, Budget(), epsilonStar=e, epsilonDash=e)).max_residual
                for e in (1e-7, 1e-8, 1e-9, 1e-10)]
        assert min(errs) > 1e-6, errs
        assert np.isfinite(errs).all()


def test_the_run_records_a_version_reported_from_outside_the_environment(tmp_path):
    """sdpa-multiprecision is not in this environment's metadata: the run's versions take what the
    solver reports (its folder's), not "absent"; a library nobody reports stays absent."""
    from psdbench.harness.runner import machine_info
    from psdbench.session import prepare

    _, versions, _ = machine_info(["no-such-dist-xyz", "other-missing-dist"], {"no-such-dist-xyz": "1.2"})
    assert versions["no-such-dist-xyz"] == "1.2" and versions["other-missing-dist"] == "absent"
    spec = {"run": {"seeds": [0], "reference": False},
            "problems": [{"name": "sdp/standard", "datasets": ["sdp-gen/theta"], "params": {"n": 6}}],
            "solvers": [{"name": "sdp-sdpa-gmp"}]}
    grid = prepare(spec, db=tmp_path / "r.sqlite").grid
    _, versions, _ = machine_info(grid.libraries, grid.reported_versions)
    assert versions["sdpa-multiprecision"] == SdpSdpaGmp().library_versions()["sdpa-multiprecision"]
    if INSTALLED:
        assert versions["sdpa-multiprecision"] != "absent"
