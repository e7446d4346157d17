"""The README as a product page, the family pages generated from the code, and the Sphinx site."""

from __future__ import annotations

import importlib.util
import inspect
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
FAMILIES = ["graph_classification", "mahalanobis", "signed_graph", "sdpmetric", "bregman_dykstra", "maxcut"]


def _gen():
    spec = importlib.util.spec_from_file_location("gen_family_pages", ROOT / "docs" / "gen_family_pages.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_readme_is_a_page_of_at_most_200_lines():
    assert len(README.splitlines()) <= 200


def test_readme_opens_with_the_two_setup_commands():
    """Install and run the default suite; install the test extra and run what CI runs first."""
    blocks = re.findall(r"```bash\n(.*?)\n```", README, re.S)
    venv = "python -m venv .venv && . .venv/bin/activate && "
    assert blocks[0].startswith(venv) and blocks[0].endswith(" install -e . && psdbench run")
    tests = 'python -m pytest -q -m "not slow" -n 2'
    assert blocks[1].startswith(venv) and " install -e '.[test]' && " in blocks[1]
    assert blocks[1].endswith("PSDBENCH_DATA=../shared/datasets " + tests)
    assert tests in (ROOT / ".ci" / "run").read_text()  # CI runs the README's test command
    assert "docs/images/report.png" in README  # the picture of the report


def test_readme_links_to_pages_that_exist():
    """Every relative Markdown link of the README names a file or folder of the repository (the
    report picture is produced by benchmarks/scripts/report/report_screenshot.py and checked there)."""
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", README)
    local = [l for l in links if not l.startswith(("http://", "https://")) and not l.endswith(".png")]
    assert {"docs/harness.md", "docs/architecture.md", "docs/benchmarks.md", "CHANGELOG.md"} <= set(local)
    for family in FAMILIES:
        assert f"docs/families/{family}.md" in local
    missing = [l for l in local if not (ROOT / l).exists()]
    assert missing == []


def test_readme_tells_no_history_and_no_stale_claim():
    assert "partly built" not in README and "for the record" not in README
    assert "Earlier figures" in (ROOT / "CHANGELOG.md").read_text()


def test_api_page_is_the_docstrings_and_reads_without_sphinx():
    spec = importlib.util.spec_from_file_location("gen_api_page", ROOT / "docs" / "gen_api_page.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert gen.main(["--check"]) == 0, "run: python docs/gen_api_page.py"
    text = (ROOT / "docs" / "api.md").read_text()
    assert "eval-rst" not in text and "automodule" not in text  # no directive only Sphinx would render
    import psdbench.api
    import psdbench.session
    import psdbench.testing

    for name in psdbench.api.__all__:
        assert f"`{name}" in text, name
    assert inspect.getdoc(psdbench.session.run).splitlines()[0] in text
    assert inspect.getdoc(psdbench.testing.check_solver).splitlines()[0] in text


def test_family_pages_agree_with_psdbench_info():
    """The generated part of each family page is what the code's description hooks say now."""
    gen = _gen()
    assert set(gen.FAMILIES) == set(FAMILIES)
    assert gen.main(["--check"]) == 0, "run: python docs/gen_family_pages.py"
    page = (ROOT / "docs" / "families" / "graph_classification.md").read_text()
    assert "M = [[X, x], [x', 1]]  is PSD" in page and "homogenising node is the LAST" in page


def test_every_script_folder_is_listed_on_its_page():
    """Each family's measurement scripts sit in ``benchmarks/scripts/<family>/`` and its page lists
    them (the harness's and the report's on docs/benchmarks.md): no script without a page."""
    gen = _gen()
    folders = {p.name for p in (ROOT / "benchmarks" / "scripts").iterdir() if p.is_dir() and p.name != "__pycache__"}
    paged = set(gen.FAMILIES) | {f for fs in gen.SCRIPT_PAGES.values() for f in fs}
    families = {p.name for p in (ROOT / "src" / "psdbench" / "families").iterdir() if (p / "__init__.py").exists()}
    assert folders <= paged and folders - {"harness", "report", "publish"} <= families
    assert not list((ROOT / "benchmarks" / "scripts").glob("*.py")), "a script outside a family's folder"
    for folder in folders:
        page = next(pg for pg, fs in gen.SCRIPT_PAGES.items() if folder in fs) if folder not in gen.FAMILIES \
            else ROOT / "docs" / "families" / f"{folder}.md"
        text = page.read_text()
        for script in (ROOT / "benchmarks" / "scripts" / folder).glob("*.py"):
            assert f"benchmarks/scripts/{folder}/{script.name}" in text, (page.name, script.name)
    assert "## Measurement scripts" in gen.script_list(["sdp"]) and "sdp_references.py" in gen.script_list(["sdp"])


@pytest.mark.parametrize("family", FAMILIES)
def test_family_pages_keep_their_findings_with_commands(family):
    page = (ROOT / "docs" / "families" / f"{family}.md").read_text()
    head, findings = page.split("\n## Findings\n", 1)
    assert "Paper:" in head and gen_marker() in head
    assert len(findings.splitlines()) > 20
    assert "psdbench run" in findings or "python benchmarks/scripts/" in findings
    for path in re.findall(r"benchmarks/scripts/([a-z_/]+\.py)", findings):
        assert (ROOT / "benchmarks" / "scripts" / path).is_file(), path


def gen_marker() -> str:
    return "<!-- BEGIN GENERATED"


def test_readme_solver_in_30_lines_keeps_the_contract(registry, wdbc):
    """The README's solver runs through the conformance kit and predicts the labels that the example
    plugin it abridges predicts."""
    from psdbench.testing import check_solver

    code = README.split("```python\nfrom importlib.metadata import version", 1)[1].split("```", 1)[0]
    code = "from importlib.metadata import version" + code
    assert len(code.strip().splitlines()) <= 30
    namespace: dict = {}
    exec(compile(code, "README.md", "exec"), namespace)
    solver = namespace["Harmonic"]()
    inst = registry.problem("graph-classification").build(wdbc, {"n": 40, "graph": "knn", "k": 5}, 0)
    report = check_solver(solver, [inst], deadline_s=60.0, grace_s=5.0)
    assert report.solutions and all(sol.status.value == "ok" for _, sol, _ in report.solutions)
    sys.path.insert(0, str(ROOT / "examples" / "solver-plugin" / "src"))
    try:
        from psdbench_example_plugin import HarmonicSolver
    finally:
        sys.path.pop(0)
    from psdbench.api import Budget

    ours = solver.solve(inst, Budget(time_limit_s=10.0))
    theirs = HarmonicSolver().solve(inst, Budget(time_limit_s=10.0))
    assert np.array_equal(ours.variables["x"], theirs.variables["x"])
    assert inst.verify(ours).ok


@pytest.mark.slow
def test_sphinx_site_builds_without_warnings(tmp_path):
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    res = subprocess.run([sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html", str(ROOT / "docs"),
                          str(tmp_path / "html")], capture_output=True, text=True, timeout=900)
    assert res.returncode == 0, res.stdout[-3000:] + res.stderr[-3000:]
    api = (tmp_path / "html" / "api.html").read_text()
    for name in ("problem_description", "check_solver", "prepare", "Solution"):
        assert name in api
    assert (tmp_path / "html" / "families" / "graph_classification.html").is_file()


def test_family_pages_are_those_of_the_built_ins_beside_an_installed_plugin(tmp_path, monkeypatch):
    """A plugin installed in the environment (a solver for every kind, a suite running a built-in
    problem on its own dataset) adds nothing to the built-in families' pages."""
    (tmp_path / "beside_plugin").mkdir()
    (tmp_path / "beside_plugin" / "__init__.py").write_text(
        'class AnySolver:\n    """Runs on anything."""\n    name = "beside-any"\n    kinds = ("*",)\n'
        "    default_params = {}\n")
    (tmp_path / "beside_plugin" / "suites").mkdir()
    (tmp_path / "beside_plugin" / "suites" / "__init__.py").write_text("")
    (tmp_path / "beside_plugin" / "suites" / "beside.toml").write_text(
        '[[problems]]\nname = "signed-graph"\ndatasets = ["beside/data"]\n\n[[solvers]]\nname = "beside-any"\n')
    info = tmp_path / "beside_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: beside-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[psdbench.solvers]\nbeside-any = beside_plugin:AnySolver\n\n"
                                           "[psdbench.suites]\nbeside = beside_plugin.suites\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    from psdbench.cli.describe import info_lines
    from psdbench.registry import discover

    assert any("beside-any" in line for line in info_lines(discover(preload=False), "signed-graph"))  # installed
    assert _gen().main(["--check"]) == 0  # and yet the pages, of the built-ins, are unchanged
