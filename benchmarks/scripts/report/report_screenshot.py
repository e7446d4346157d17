"""Render a report from a results store and screenshot ``report.html`` in headless Chromium.

Usage::

    python benchmarks/scripts/report/report_screenshot.py --db results.sqlite --out /tmp/report-shots

Runs no benchmark: it writes the report of ``--db`` into ``--out`` (``psdbench.report.write_report``),
opens ``report.html`` in headless Chromium, and writes full-page screenshots
``screenshot-01.png``, ``screenshot-02.png``, ... (the page cut into segments of ``--segment``
pixels) beside it.  A probe copy of the page (with one more script) measures the page
height and counts images that failed to decode.  Exit status: 0 on success, 1 when Chromium logs a
console error or an image does not decode, 2 on bad input (no store, no Chromium).

Chromium: ``/usr/bin/chromium`` or ``--chromium PATH`` (Debian: ``apt-get install -y chromium``).
"""

from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
from pathlib import Path

PROBE = ("<script>window.addEventListener('load', function () {"
         "var bad = 0; for (var i = 0; i < document.images.length; i++) {"
         "if (!document.images[i].complete || document.images[i].naturalWidth === 0) { bad++; } }"
         "document.title = 'PROBE ' + document.documentElement.scrollHeight + ' ' + bad; });</script>")
CONSOLE_ERROR = re.compile(r"(CONSOLE.*(error|Uncaught)|Failed to load resource|Refused to)", re.IGNORECASE)


def find_chromium(path: str | None) -> str | None:
    """The Chromium executable: ``path``, else ``chromium`` / ``chromium-browser`` on PATH."""
    for cand in ([path] if path else []) + ["/usr/bin/chromium", "chromium", "chromium-browser"]:
        found = shutil.which(cand) if cand else None
        if found:
            return found
    return None


def run_chromium(chromium: str, args: list[str], timeout: float = 120.0) -> subprocess.CompletedProcess:
    """Run headless Chromium with console logging on stderr."""
    cmd = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
           "--enable-logging=stderr", "--v=0", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)


def console_errors(stderr: str) -> list[str]:
    """Lines of Chromium's log that report a page error."""
    return [line for line in stderr.splitlines() if CONSOLE_ERROR.search(line)]


def measure(chromium: str, html: Path, width: int) -> tuple[int, int, list[str]]:
    """Page height (px) and the number of broken images, from a probe copy of ``html``; console errors."""
    probe = html.with_name("screenshot-probe.html")
    probe.write_text(html.read_text(encoding="utf-8").replace("</body>", PROBE + "</body>"), encoding="utf-8")
    try:
        res = run_chromium(chromium, [f"--window-size={width},1000", "--virtual-time-budget=5000", "--dump-dom",
                                      probe.resolve().as_uri()])
    finally:
        probe.unlink(missing_ok=True)
    m = re.search(r"<title>PROBE (\d+) (\d+)</title>", res.stdout)
    if not m:
        raise RuntimeError(f"could not measure the page (chromium exit {res.returncode}): {res.stderr[-500:]}")
    return int(m.group(1)), int(m.group(2)), console_errors(res.stderr)


def screenshots(chromium: str, html: Path, out: Path, width: int, height: int, segment: int) -> tuple[list[Path], list[str]]:
    """Screenshots of consecutive ``segment``-pixel slices of the page (a shifted copy per slice)."""
    shots, errors = [], []
    page = html.read_text(encoding="utf-8")
    n = max(1, -(-height // segment))
    for i in range(n):
        h = min(segment, height - i * segment) if n > 1 else height
        shifted = html.with_name(f"screenshot-slice-{i + 1:02d}.html")
        shifted.write_text(page.replace("</head>", f"<style>html {{ overflow: hidden; }} body {{ position: relative; "
                                                   f"top: -{i * segment}px; }}</style></head>"), encoding="utf-8")
        target = out / f"screenshot-{i + 1:02d}.png"
        try:
            res = run_chromium(chromium, [f"--window-size={width},{max(h, 100)}", f"--screenshot={target}",
                                          shifted.resolve().as_uri()])
        finally:
            shifted.unlink(missing_ok=True)
        errors += console_errors(res.stderr)
        if res.returncode != 0 or not target.exists():
            errors.append(f"screenshot {target.name} failed (chromium exit {res.returncode})")
        else:
            shots.append(target)
    return shots, errors


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", required=True, help="results store (SQLite) to render")
    ap.add_argument("--out", default="report-screenshot", help="report and screenshot directory")
    ap.add_argument("--width", type=int, default=1400, help="window width in pixels")
    ap.add_argument("--segment", type=int, default=4000, help="height of one screenshot in pixels")
    ap.add_argument("--chromium", default=None, help="Chromium executable (default: /usr/bin/chromium)")
    args = ap.parse_args(argv)
    if not Path(args.db).is_file():
        print(f"report_screenshot: no store at {args.db}", file=sys.stderr)
        return 2
    chromium = find_chromium(args.chromium)
    if chromium is None:
        print("report_screenshot: chromium not found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    from psdbench.harness.store.db import Store
    from psdbench.report import write_report

    out = Path(args.out)
    paths = write_report(Store(args.db), out)
    height, broken, errors = measure(chromium, paths["html"], args.width)
    shots, shot_errors = screenshots(chromium, paths["html"], out, args.width, height, args.segment)
    errors += shot_errors
    if broken:
        errors.append(f"{broken} image(s) did not decode")
    print(f"report: {paths['html']} ({height} px high); screenshots: " + ", ".join(str(s) for s in shots))
    for e in errors:
        print(f"report_screenshot: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
