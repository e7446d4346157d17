"""The browser check: ``benchmarks/scripts/report/report_screenshot.py`` renders a report and screenshots it in Chromium."""

import importlib.util
from pathlib import Path

import pytest

from .test_report_sections import _store_with_curves

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "scripts" / "report" / "report_screenshot.py"


def _script():
    spec = importlib.util.spec_from_file_location("report_screenshot", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
def test_report_screenshot(tmp_path):
    mod = _script()
    if mod.find_chromium(None) is None:
        pytest.skip("chromium not installed")
    _store_with_curves(tmp_path / "c.sqlite")
    out = tmp_path / "shots"
    assert mod.main(["--db", str(tmp_path / "c.sqlite"), "--out", str(out), "--segment", "3000"]) == 0
    shots = sorted(out.glob("screenshot-*.png"))
    assert shots and all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in shots)
    assert not list(out.glob("screenshot-*.html"))  # probe and slice copies are removed


def test_console_error_lines():
    mod = _script()
    log = ("[1:2:INFO:CONSOLE(3)] \"Uncaught ReferenceError: x is not defined\", source: file:///r.html (3)\n"
           "[1:2:INFO:headless_shell.cc] fine\n")
    assert mod.console_errors(log) == [log.splitlines()[0]]
