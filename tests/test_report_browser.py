"""The HTML report in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

Loads a generated store's ``report.html`` from disk with every network request refused, and checks:
no console or page error, the winners on the first screen of a page at most 15,000 px tall, every
family's charts drawn when its section (a tab) is opened, each chosen in its one chart area, no
"no data" panel, no request leaves the file, changing a selector changes the traces drawn, clicking
a legend entry hides a trace and the log / linear toggle changes an axis without showing it again,
and no table is wider than an 800 px page.
Skipped when Playwright or Chromium is missing (``.ci/run`` installs both).
"""

import shutil
from pathlib import Path

import pytest

from psdbench.report import write_report

from .test_report_sections import _cell, _store_with_curves

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")

DRAWN = """() => Array.from(document.querySelectorAll('div.chart')).map(c => ({
  panels: c.querySelectorAll('.panel').length,
  plots: c.querySelectorAll('.js-plotly-plot').length,
  empty: c.querySelectorAll('.panel > p.empty').length,
  traces: Array.from(c.querySelectorAll('.js-plotly-plot')).map(p => p.data.filter(t => t.visible !== 'legendonly')
            .map(t => t.name + ':' + (t.x ? t.x.length : 0)).join('|')).join('#'),
  ytype: Array.from(c.querySelectorAll('.js-plotly-plot')).map(p => p._fullLayout.yaxis.type).join(',')}))"""


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    if CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    pytest.importorskip("playwright.sync_api")
    tmp = tmp_path_factory.mktemp("browser")
    store = _store_with_curves(tmp / "c.sqlite")
    # a second instance set of one family (n = 80), run by one configuration only: its panel and the
    # pooled one differ, and the pooled profile leaves these instances out
    for seed in (0, 1):
        row, pts = _cell("graph-classification", "fast-solver", seed, 2.0)
        store.write_result({**row, "instance_params": {"n": 80}, "cell_key": f"n80-{seed}",
                            "instance_key": f"n80-{seed}", "curve": pts})
    return write_report(store, tmp / "out")["html"]


def _open(pw, html: Path, width: int):
    browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
    page = browser.new_page(viewport={"width": width, "height": 900})
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))

    def route(r):
        if r.request.url.startswith(("file:", "data:", "blob:")):
            return r.continue_()
        requests.append(r.request.url)
        return r.abort()

    page.route("**/*", route)
    page.goto(html.as_uri())
    page.wait_for_load_state("load")
    return browser, page, errors, requests


def _open_all(page):
    """Open every family's <details> (the page's tabs), as a reader's clicks would, and wait for the plots."""
    for det in page.locator("details.family").all():
        if not det.evaluate("d => d.open"):
            det.locator("summary").first.click()
    page.wait_for_function("document.querySelectorAll('div.chart .panel').length > 0")
    page.wait_for_timeout(500)


@pytest.mark.slow
def test_report_in_chromium(report):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser, page, errors, requests = _open(pw, report, 1400)
        try:
            # the first screen names the winners; the page is short, the details are a click away
            top = page.evaluate("() => document.querySelector('table.sortable').getBoundingClientRect().top")
            assert top < 900, top
            assert page.evaluate("() => document.documentElement.scrollHeight") <= 15000
            assert page.locator("div.chart .panel").count() == 0  # nothing drawn in a closed section

            # a tab: opening one family draws its charts
            page.locator("details.family > summary").first.click()
            page.wait_for_function("document.querySelectorAll('div.chart .panel').length > 0")
            page.wait_for_timeout(500)
            _open_all(page)
            # the chart selector of each family's one chart area: every chart draws when chosen, and
            # shows plots only (no "no data" panel)
            n_charts = 0
            for area in page.locator("div.chart-area").all():
                kind = area.locator("select.chart-kind")
                for k in range(kind.locator("option").count()):
                    kind.select_option(index=k)
                    page.wait_for_timeout(400)
                    chart = area.locator(":scope > .chart-slot").nth(k).locator("div.chart")
                    if not chart.count():
                        continue
                    panels = chart.locator(".panel").count()
                    assert panels >= 1 and chart.locator(".js-plotly-plot").count() == panels
                    assert chart.locator(".panel > p.empty").count() == 0
                    n_charts += 1
            assert n_charts >= 7

            # an instance-set selector changes the panels and traces drawn
            area = next(a for a in page.locator("div.chart-area").all()
                        if a.locator(".chart-slot select[data-dim]").count())
            kind = area.locator("select.chart-kind")
            k = next(i for i, slot in enumerate(area.locator(":scope > .chart-slot").all())
                     if slot.locator("select[data-dim]").count())
            kind.select_option(index=k)
            page.wait_for_timeout(400)
            chart = area.locator(":scope > .chart-slot").nth(k).locator("div.chart")
            idx = page.evaluate("c => Array.from(document.querySelectorAll('div.chart')).indexOf(c)",
                                chart.element_handle())
            before = page.evaluate(DRAWN)[idx]["traces"]
            chart.locator("select[data-dim]").first.select_option(index=1)
            page.wait_for_timeout(300)
            assert page.evaluate(DRAWN)[idx]["traces"] != before

            # a legend entry hides its trace(s) ...
            before = page.evaluate(DRAWN)[idx]["traces"]
            chart.locator(".legendtoggle").first.click()
            page.wait_for_timeout(1200)  # plotly waits out its double-click delay first
            hidden = page.evaluate(DRAWN)[idx]["traces"]
            assert hidden != before and len(hidden.split("|")) < len(before.split("|"))

            # ... and stays hidden when an axis toggle redraws the chart
            ytype = page.evaluate(DRAWN)[idx]["ytype"]
            chart.locator("button[data-toggle=logY]").click()
            page.wait_for_timeout(300)
            assert page.evaluate(DRAWN)[idx]["ytype"] != ytype
            assert page.evaluate(DRAWN)[idx]["traces"] == hidden

            # a table header sorts its rows
            first_col = "() => Array.from(document.querySelectorAll('table.sortable'))[1].tBodies[0].rows[0].cells[0].textContent"
            top = page.evaluate(first_col)
            page.locator("table.sortable").nth(1).locator("th").first.click()
            page.locator("table.sortable").nth(1).locator("th").first.click()
            assert page.evaluate(first_col) != top or page.evaluate(
                "() => document.querySelectorAll('table.sortable')[1].tBodies[0].rows.length") == 1
            assert not errors, errors
            assert not requests, requests
        finally:
            browser.close()


@pytest.mark.slow
def test_report_fits_800px(report):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser, page, errors, _ = _open(pw, report, 800)
        try:
            _open_all(page)
            wide = page.evaluate("() => document.documentElement.scrollWidth")
            assert wide <= 800, wide  # wide tables scroll inside their container, the page does not
            assert not errors, errors
        finally:
            browser.close()
