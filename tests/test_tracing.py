"""Trace thinning (``psdbench.api.tracing.thin``): a bounded number of points, the first, last and best
kept, a gap's level crossings kept, and the curve's shape unchanged."""

from __future__ import annotations

import numpy as np
import pytest

from psdbench.harness.workers.worker import _thin
from psdbench.api.tracing import MAX_TRACE_POINTS, TraceRecorder, thin


def _run(n: int, seed: int = 0) -> list[dict[str, float]]:
    """A noisy sublinear run: objective -> 1, gap ~ 1/k^2 with wiggles, time growing unevenly."""
    rng = np.random.default_rng(seed)
    k = np.arange(1, n + 1, dtype=float)
    t = np.cumsum(rng.uniform(0.5e-4, 2e-4, n))
    gap = (1.0 / k**2) * (1.0 + 0.3 * np.sin(k / 7.0))
    obj = 1.0 + gap + 1e-3 * rng.standard_normal(n) / k
    return [{"t": float(a), "objective": float(b), "gap": float(c), "epoch": float(i)}
            for i, (a, b, c) in enumerate(zip(t, obj, gap))]


def test_short_trace_unchanged():
    pts = _run(MAX_TRACE_POINTS)
    assert thin(pts) == pts


@pytest.mark.parametrize("n", [MAX_TRACE_POINTS + 1, 5_000, 60_000])
def test_long_trace_bounded_with_first_last_and_best(n):
    pts = _run(n)
    th = thin(pts)
    assert 0.9 * MAX_TRACE_POINTS <= len(th) <= MAX_TRACE_POINTS
    assert th[0] == pts[0] and th[-1] == pts[-1]
    assert [p["epoch"] for p in th] == sorted(p["epoch"] for p in th)  # a sub-sequence, in order
    for key in ("objective", "gap"):
        vals = [p[key] for p in pts]
        kept = [p[key] for p in th]
        assert min(kept) == min(vals) and max(kept) == max(vals)


def test_first_point_below_a_level_is_kept():
    """The first epoch whose gap is below 10^(j/10) is in the thinned trace, for every level j."""
    pts = _run(40_000)
    th = thin(pts)
    gaps = np.array([p["gap"] for p in pts])
    kept = {int(p["epoch"]) for p in th}
    for level in 10.0 ** (np.arange(-90, 1) / 10.0):
        below = np.flatnonzero(np.minimum.accumulate(gaps) < level)
        if below.size:
            assert int(below[0]) in kept, level


def _loglog_error(pts: list[dict[str, float]], th: list[dict[str, float]]) -> np.ndarray:
    """|log10 gap| error of the thinned curve, interpolated on log(epoch), at every original point."""
    e = np.array([p["epoch"] for p in pts]) + 1
    et = np.array([p["epoch"] for p in th]) + 1
    g = np.log10(np.array([p["gap"] for p in pts]))
    gt = np.log10(np.array([p["gap"] for p in th]))
    return np.abs(np.interp(np.log(e), np.log(et), gt) - g)


def test_curve_shape_unchanged():
    """log(gap) against log(epoch), interpolated between the kept points, is the full trace's curve
    within 0.01 decade (a smooth run); on a linear epoch axis no hole is wider than three times the
    even spacing; a wiggly run's kept points in every decade of epochs still span most of its
    wiggles (the band a plot shows)."""
    pts = _run(50_000)
    smooth = [{**p, "gap": 1.0 / (p["epoch"] + 1) ** 2} for p in pts]
    assert _loglog_error(smooth, thin(smooth)).max() < 0.01
    th = thin(pts)
    assert np.diff([p["epoch"] for p in th]).max() <= 3 * len(pts) / MAX_TRACE_POINTS
    scaled = lambda ps: {int(np.log10(p["epoch"] + 1)): [] for p in ps}  # noqa: E731
    full, kept = scaled(pts), scaled(th)
    for ps, out in ((pts, full), (th, kept)):
        for p in ps:
            out[int(np.log10(p["epoch"] + 1))].append(p["gap"] * (p["epoch"] + 1) ** 2)  # the wiggle factor
    for d in range(1, 5):
        assert np.ptp(kept[d]) >= 0.8 * np.ptp(full[d]), d


def test_recorder_bounded_while_recording():
    rec = TraceRecorder()
    for k in range(1, 30_001):
        rec.add(objective=1.0 + 1.0 / k, gap=1.0 / k**2)
        assert len(rec._points) < 8 * MAX_TRACE_POINTS
    pts = rec.points
    assert rec.n_points == 30_000 and len(pts) <= MAX_TRACE_POINTS
    assert pts[0]["gap"] == 1.0 and pts[-1]["gap"] == pytest.approx(1.0 / 30_000**2)
    assert [p["t"] for p in pts] == sorted(p["t"] for p in pts)


def test_worker_thins_every_solver_trace():
    """A trace that did not come from a recorder is thinned all the same; a trace that is not a list
    of points is stored as it came."""
    pts = _run(10_000)
    assert _thin(pts) == thin(pts) and len(_thin(pts)) <= MAX_TRACE_POINTS
    odd = [{"t": 0.0, "objective": 1.0, "array": np.arange(3)}]
    assert _thin(odd) == odd
    assert _thin(None) is None
