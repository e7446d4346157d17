"""``psdbench site``: a static results site of datasets whose verdicts are the report's, whose every
link (every number's row) resolves, which ranks times within one setup only, whose history compares
builds on their common instances, which carries its data, and which opens in a real browser with no
console error at 1400 and 800 px.  Bad input is one line and exit 2 before anything is written."""

from __future__ import annotations

import json
import re
import shutil
from html.parser import HTMLParser
from pathlib import Path

import pandas as pd
import pytest

import psdbench
from psdbench.harness.grid.inputs import ReadOnlyStore
from psdbench.publish.export import export_dataset
from psdbench.publish.read import read_dataset
from psdbench.publish.site import build_site
from psdbench.report import write_report

from .test_cli_bad_input import cli
from .test_publish import GRID

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def two(tmp_path_factory, request):
    """Two datasets of one grid: one run on one BLAS thread per worker, one on two (two setups)."""
    d = tmp_path_factory.mktemp("site")
    mp = pytest.MonkeyPatch()
    request.addfinalizer(mp.undo)
    out = []
    for name, threads in (("one", "1"), ("two", "2")):
        mp.setenv("PSDBENCH_BLAS_THREADS", threads)
        psdbench.run(GRID, db=d / f"{name}.sqlite", jobs=1, save_solutions=True)
        export_dataset(ReadOnlyStore(d / f"{name}.sqlite"), d / name)
        out.append(d / name)
    mp.delenv("PSDBENCH_BLAS_THREADS")
    return d, out


@pytest.fixture(scope="module")
def site(two):
    """The site of the two datasets, built once for the tests that only read it."""
    d, sources = two
    info = build_site(sources, d / "site")
    return d / "site", info


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if a.get("id"):
            self.ids.add(a["id"])
        for k in ("href", "src"):
            if a.get(k):
                self.hrefs.append(a[k])


def _parse(path: Path) -> _Links:
    p = _Links()
    p.feed(path.read_text(encoding="utf-8"))
    return p


def test_the_winners_of_each_setup_are_the_reports_own(two, site, tmp_path):
    """Per setup, the site's winners tables are the report's of that setup's store, cell for cell
    (the dataset carries the curves and settings the report reads)."""
    d, _ = two
    index = (site[0] / "index.html").read_text()
    for name in ("one", "two"):
        report = write_report(ReadOnlyStore(d / f"{name}.sqlite"), tmp_path / f"rep-{name}")
        per_set = pd.read_csv(report["winners_per_set"], keep_default_na=False)
        for cell in per_set[[c for c in per_set.columns if c.startswith("gap")]].to_numpy().ravel():
            text = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", str(cell))
            assert text.replace("&", "&amp;") in index or text in index, cell
    assert index.count("Winners on setup") == 2


def _check_links(root: Path) -> dict[Path, _Links]:
    """Every href and src of every page of the site ``root`` resolves to a file, and every anchor
    into a page to an id on it; returns the parsed pages."""
    pages = sorted(root.rglob("*.html"))
    parsed = {p.resolve(): _parse(p) for p in pages}
    for page, links in parsed.items():
        for href in links.hrefs:
            assert not re.match(r"^[a-z]+://", href), (page, href)  # offline: no external URL
            target, _, anchor = href.partition("#")
            file = (page.parent / target).resolve() if target else page
            assert file.exists(), (page, href)
            if anchor and "=" not in anchor and file.suffix == ".html":
                assert anchor in parsed[file].ids, (page, href)
    # every row of the dataset is an anchor on its solver's page
    from psdbench.publish.site.model import row_id

    cells = read_dataset(root / "data")["cells"]
    ids = set().union(*(p.ids for p in parsed.values()))
    assert {row_id(k, r) for k, r in zip(cells["cell_key"], cells["run_id"])} <= ids
    return parsed


def test_every_link_resolves_and_every_time_names_its_row(site):
    root, info = site
    parsed = _check_links(root)
    assert len(parsed) == info["pages"]
    set_pages = [links for page, links in parsed.items() if page.parent.name == "sets"]
    assert set_pages and all(any(h.partition("#")[2].startswith("r-") for h in links.hrefs) for links in set_pages)


def test_outside_rows_are_listed_labelled_and_never_ranked(two, tmp_path):
    """benchopt's and asv's rows (psdbench import) beside psdbench's: on their sets' pages, labelled,
    linked to their rows, in no winners table."""
    from psdbench.publish.outside import import_results

    from .test_publish_outside import asv_results, benchopt_frame

    _, sources = two
    bo = tmp_path / "bo.parquet"
    benchopt_frame().to_parquet(bo)
    import_results([bo], "benchopt", tmp_path / "bo")
    import_results([asv_results(tmp_path / "asv")], "asv", tmp_path / "asvds")
    build_site([sources[0], tmp_path / "bo", tmp_path / "asvds"], tmp_path / "site")
    parsed = _check_links(tmp_path / "site")
    index = (tmp_path / "site" / "index.html").read_text()
    assert "read from asv, benchopt" in index and "never ranked" in index
    winners = index[index.index("Winners on setup"):index.index('id="solvers"')]
    assert "benchopt/" not in winners and "asv/" not in winners
    outside_pages = [p for p in parsed if p.parent.name == "sets" and "Rows read from outside formats" in p.read_text()]
    assert outside_pages and all("reported" in p.read_text() for p in outside_pages)


def test_setups_are_never_ranked_together_and_their_calibration_is_shown(site):
    root, info = site
    assert info["setups"] == 2
    index = (root / "index.html").read_text()
    assert "BLAS 1 thread per worker" in index and "BLAS 2 threads per worker" in index
    machines = sorted((root / "machines").glob("*.html"))
    assert len(machines) == 2
    page = machines[0].read_text()
    assert "machine class (fingerprint)" in page and "Calibration" in page


def test_merge_counts_and_the_data_travel_with_the_site(two, tmp_path):
    """Rows in = rows out (the same dataset given twice is kept once), and ``data/`` is a dataset
    (pandas reads it, ``psdbench verify`` re-checks its rows)."""
    _, sources = two
    info = build_site([*sources, sources[0]], tmp_path / "site")
    m = info["merge"]
    n0, n1 = (len(read_dataset(s)["cells"]) for s in sources)
    assert m["rows_in"]["cells"] == 2 * n0 + n1 and m["rows_out"]["cells"] == n0 + n1
    assert m["identical_rows_kept_once"]["cells"] == n0
    data = tmp_path / "site" / "data"
    assert len(pd.read_parquet(data / "cells.parquet")) == len(pd.read_csv(data / "cells.csv")) == n0 + n1
    code, out, err = cli(["verify", data])
    assert code == 0 and "all reproduce" in out, out + err


def test_the_history_compares_builds_on_their_common_instances(two, tmp_path):
    """An older build of one configuration (other solver code, another psdbench commit) that ran
    one instance of two: the history compares the builds on that one instance only."""
    _, sources = two
    tables = read_dataset(sources[0])
    cells, runs = tables["cells"].copy(), tables["runs"].copy()
    old = cells[(cells["solver"] == "gdpa-lp") & (cells["seed"] == 0)].copy()
    old["cell_key"] = old["cell_key"] + "-old"
    old["solver_code"] = "0123456789abcdef"
    old["run_id"] = "older-run"
    old["created_at"] = "2020-01-01T00:00:00"
    run = runs.iloc[[0]].copy()
    run["run_id"] = "older-run"
    versions = json.loads(run["versions"].iloc[0])
    run["versions"] = json.dumps({**versions, "psdbench": "0.0.1", "commit": "feedfacecafe"})
    from psdbench.publish.export import manifest_of, write_dataset

    older = {**tables, "cells": old.reset_index(drop=True), "runs": run.reset_index(drop=True),
             "calibration": tables["calibration"].iloc[:0]}
    write_dataset(tmp_path / "older", older, manifest_of(older, {"test": "older build"}), {})
    build_site([sources[0], tmp_path / "older"], tmp_path / "site")
    history = (tmp_path / "site" / "history.html").read_text()
    assert "psdbench 0.0.1 (feedface), solver code 01234567" in history
    assert "1 instances common to every build" in history and "1 left out" in history


def test_bad_input_is_one_line_and_exit_2_and_writes_nothing(two, tmp_path):
    _, sources = two
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("keep me")
    code, out, err = cli(["site", *sources, "-o", foreign])
    assert code == 2 and err.count("\n") == 1 and "not a psdbench site" in err
    assert sorted(p.name for p in foreign.iterdir()) == ["notes.txt"]
    newer = tmp_path / "newer"
    newer.mkdir()
    (newer / "dataset.json").write_text(json.dumps({"format": "psdbench-dataset", "schema_version": 99}))
    code, out, err = cli(["site", sources[0], newer, "-o", tmp_path / "s"])
    assert code == 2 and "schema version 99" in err and not (tmp_path / "s").exists()
    code, out, err = cli(["site", tmp_path / "none", "-o", tmp_path / "s"])
    assert code == 2 and err.count("\n") == 1 and not (tmp_path / "s").exists()
    code, out, err = cli(["site", sources[0], "-o", tmp_path / "s"])
    assert code == 0 and "site:" in out
    code, out, err = cli(["site", sources[0], "-o", tmp_path / "s"])  # its own site: replaced whole
    assert code == 0 and (tmp_path / "s" / ".psdbench-site").is_file()


@pytest.mark.slow
def test_the_site_in_chromium(site):
    """Every page at 1400 and 800 px: no console or page error, no request leaves the folder, no page
    wider than the window; a solver page's filter is kept in the address and read back from it."""
    if CHROMIUM is None:
        pytest.skip("chromium not installed (apt-get install -y chromium)")
    sync = pytest.importorskip("playwright.sync_api")
    pages = sorted(site[0].rglob("*.html"))
    with sync.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        for width in (1400, 800):
            page = browser.new_page(viewport={"width": width, "height": 900})
            errors, requests = [], []
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.route("**/*", lambda r: r.continue_() if r.request.url.startswith("file:")
                       else (requests.append(r.request.url), r.abort()))
            for p in pages:
                page.goto(p.as_uri())
                page.wait_for_load_state("load")
                assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1"), (width, p.name)
            assert errors == [] and requests == [], (width, errors, requests)
            solver = next(p for p in pages if p.parent.name == "solvers")
            page.goto(solver.as_uri())
            total = page.locator("#rows tbody tr").count()
            setup = page.locator("form.filters select[name=setup] option").nth(1).get_attribute("value")
            page.select_option("form.filters select[name=setup]", setup)
            shown = page.locator("#rows tbody tr:not(.hidden)").count()
            assert 0 < shown < total and f"setup={setup}" in page.url
            page.goto(page.url)  # the link opens the same view
            page.reload()
            assert page.locator("#rows tbody tr:not(.hidden)").count() == shown
            page.close()
        browser.close()
