"""What ``psdbench info`` / ``list`` print for a solver's author, and how plugins are found without
importing them (:mod:`psdbench.registry.plugins`, :mod:`psdbench.cli.describe`)."""

from __future__ import annotations

import importlib.metadata as md
import inspect
import subprocess
import sys

import pytest

from psdbench.api import problem_description, problem_offers, problem_sense, solver_returns
from psdbench.cli.describe import facts, info_lines, pairing_solvers
from psdbench.registry.plugins import PluginMap, StaticReader
from psdbench.registry import discover

from .test_cli_bad_input import cli

BUILTIN_PROBLEMS = ["graph-classification", "metric/mcml", "metric/deml", "metric/lsml", "metric/lmnn", "metric/glr",
                    "signed-graph", "metric/triplet-margin", "metric/bregman-pairs"]


def _instance_class(problem):
    """The class ``problem.build`` returns, from its return annotation (no instance built)."""
    ann = inspect.signature(problem.build).return_annotation
    return sys.modules[type(problem).__module__].__dict__[ann.strip("'\"")] if isinstance(ann, str) else ann


@pytest.mark.parametrize("name", BUILTIN_PROBLEMS)
def test_every_builtin_problem_states_its_problem_and_every_variable(registry, name):
    p = registry.problem(name)
    text = problem_description(p)
    assert text != inspect.cleandoc(type(p).__doc__)  # its own text, not the docstring default
    assert "Paper:" in text and ("minimize" in text or "maximize" in text) and "subject to" in text
    assert "Variables a solution carries" in text or "Variables a solution may carry" in text
    for var in _instance_class(p).variables:  # every variable the instance accepts is explained
        assert f"  {var} " in text or f"  {var}," in text or f", {var}" in text, (name, var)
    formula = next(ln.split()[0] for ln in text.splitlines() if ln.startswith("    ") and ln.split()[0] in
                   ("minimize", "maximize"))
    assert formula == {"min": "minimize", "max": "maximize"}[problem_sense(p)]


def test_info_graph_classification_shows_the_sdp_the_layout_of_M_and_the_contract(registry):
    code, out, err = cli(["info", "graph-classification"])
    assert code == 0, err
    assert "M = [[X, x], [x', 1]]  is PSD" in out and "(size N + 1)" in out
    assert "homogenising node is the LAST" in out and "M[N, N] = 1" in out
    # the kind protocol with its types: what a solver may read
    assert "GraphClassificationKind" in out and "L: np.ndarray" in out
    assert "reduced_sdp() -> tuple[np.ndarray, float]" in out and "xhat: np.ndarray  (property)" in out
    assert "objective sense: minimised" in out and "'lower' is a lower bound" in out
    assert "sklearn/breast-cancer" in out.split("datasets in the registered suites:")[1].splitlines()[0]
    runs = out.split("solvers that run on it:")[1].splitlines()[0]
    assert "gdpa-lp" in runs and "scs" in runs
    assert "ml-lmnn" not in runs and "euclidean" not in runs  # the peers would only be skipped


def test_a_maximised_problem_says_the_lower_key_holds_the_upper_bound():
    code, out, _ = cli(["info", "metric/triplet-margin"])
    assert code == 0
    assert "objective sense: maximised" in out and "the key 'lower' holds" in out and "UPPER bound" in out


def test_info_lists_only_solvers_that_would_run(registry):
    """A solver requiring an instance member the problem does not offer is not listed: the peers
    for non-metric problems, the conic solvers where the problem has no conic form."""
    for name in BUILTIN_PROBLEMS:
        p = registry.problem(name)
        listed = set(pairing_solvers(registry, p))
        for s in listed:
            assert set(getattr(registry.solvers[s], "requires", ())) <= problem_offers(p)
    assert "ml-itml" in pairing_solvers(registry, registry.problem("metric/mcml"))
    assert "scs" not in pairing_solvers(registry, registry.problem("signed-graph"))
    assert "scs" not in pairing_solvers(registry, registry.problem("metric/lsml"))
    assert "ml-itml" not in pairing_solvers(registry, registry.problem("signed-graph"))


def test_info_solver_prints_kinds_parameters_and_what_it_returns(registry):
    out = "\n".join(info_lines(registry, "gdpa-lp"))
    assert "kinds: graph-classification" in out and "returns: " in out and "psdbench info graph-classification" in out
    assert "parameters:" in out
    out = "\n".join(info_lines(registry, "ml-lmnn"))
    assert "reads beyond Instance: metric_training_data, metric_from_matrix" in out


def test_list_without_a_type_lists_everything_and_verbose_works():
    code, out, err = cli(["list"])
    assert code == 0, err
    for header in ("problems:", "solvers:", "datasets:", "suites:"):
        assert header in out.splitlines()
    assert "gdpa-lp\tgraph-classification\t" in out and "sklearn/wine" in out and "default" in out
    code, out, err = cli(["list", "-v"])
    assert code == 0, err
    assert "eps_abs" in out.split("\nscs\t", 1)[1] and "conic_max_n" in out


def test_list_describes_every_problem_and_solver_in_its_own_line():
    """Each entry's line says what it is, not where to read it (issue 40: two said "see the module docstring")."""
    code, out, err = cli(["list", "problems"])
    assert code == 0, err
    code, more, err = cli(["list", "solvers"])
    assert code == 0, err
    lines = (out + more).strip().splitlines()
    assert len(lines) > 20
    for line in lines:
        name, doc = line.split("\t", 1)[0], line.rsplit("\t", 1)[-1]
        assert "docstring" not in doc and len(doc.split()) >= 4, line
    assert any(line.startswith("signed-graph\t") and "Laplacian" in line for line in lines)
    assert any(line.startswith("balanced-clime\t") and "column LPs" in line for line in lines)


def test_list_imports_no_plugin_and_no_scientific_stack():
    """``list`` finds the plugins' modules (their parent packages are imported, no module itself)."""
    code = ("import sys, contextlib, io\nfrom psdbench.cli.commands import main\nfrom psdbench.registry import discover\n"
            "with contextlib.redirect_stdout(io.StringIO()): main(['list', 'solvers']); main(['list', 'problems'])\n"
            "reg = discover()\n"
            "mods = {ep.module for m in (reg.problems, reg.solvers) for ep in m.entry_points.values()}\n"
            "print(sorted(m for m in sys.modules if m in mods or m.startswith(('sklearn', 'scipy', 'cvxpy', "
            "'pandas'))))")
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and res.stdout.strip() == "[]", res.stdout + res.stderr


def test_static_reading_agrees_with_the_imported_plugins():
    """Where the source states a plugin's docstring and kinds, they equal the imported object's."""
    reg, reader = discover(), StaticReader()
    checked = 0
    for plugins in (reg.problems, reg.solvers):
        for name in plugins.names():
            static = reader.entry_point_attrs(plugins.entry_points[name], ("__doc__", "kinds", "kind", "requires"))
            obj = plugins[name]
            if static is None:
                continue
            checked += 1
            assert (static.get("__doc__") or "") == inspect.cleandoc(type(obj).__doc__ or ""), name
            for attr in ("kinds", "kind", "requires"):
                if attr in static:
                    assert tuple(static[attr]) == tuple(getattr(obj, attr)) if attr != "kind" else \
                        static[attr] == obj.kind, (name, attr)
    assert checked >= 20


def test_plugin_map_imports_on_first_use_and_records_broken_plugins(tmp_path, monkeypatch):
    (tmp_path / "good_plugin.py").write_text("class Solver:\n    '''A fine solver.'''\n    kinds = ('x',)\n")
    (tmp_path / "bad_plugin.py").write_text("raise RuntimeError('broken on purpose')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    eps = {"good": md.EntryPoint("good", "good_plugin:Solver", "psdbench.solvers"),
           "bad": md.EntryPoint("bad", "bad_plugin:Solver", "psdbench.solvers")}
    broken: dict[str, str] = {}
    plugins = PluginMap("solvers", eps, broken, [])
    assert plugins.names() == ["bad", "good"] and "good_plugin" not in sys.modules
    assert facts(plugins, "good", ("__doc__", "kinds")) == {"__doc__": "A fine solver.", "kinds": ("x",)}
    assert "good_plugin" not in sys.modules  # read from the source
    assert "good" in plugins and plugins["good"].kinds == ("x",) and "good_plugin" in sys.modules
    assert "bad" not in plugins and broken == {"solvers:bad": "RuntimeError: broken on purpose"}
    assert sorted(plugins) == ["good"] and len(plugins) == 1
    with pytest.raises(KeyError):
        plugins["bad"]


def test_a_loaded_plugin_imports_its_preload_modules_unless_only_described(tmp_path, monkeypatch):
    """A run's process imports what a plugin's cells need with it (workers fork from it); the
    describing commands (``list``, ``info``) do not."""
    (tmp_path / "pre_plugin.py").write_text("class Solver:\n    kinds = ('x',)\n    preload = ('pre_extra_a',)\n")
    (tmp_path / "pre_extra_a.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    ep = {"pre": md.EntryPoint("pre", "pre_plugin:Solver", "psdbench.solvers")}
    assert PluginMap("solvers", ep, {}, [], preload=False)["pre"] is not None
    assert "pre_extra_a" not in sys.modules
    assert PluginMap("solvers", ep, {}, [], preload=True)["pre"] is not None
    assert "pre_extra_a" in sys.modules


@pytest.mark.parametrize("name", BUILTIN_PROBLEMS)
def test_info_from_the_source_equals_info_from_the_imported_problem(name):
    """``info PROBLEM`` reads the problem from its source where the source states everything (then
    the problem's module, and scikit-learn, SciPy, are not imported): the text is the same."""
    from psdbench.cli.describe import _static_problem

    fresh, loaded = discover(preload=False), discover(preload=False)
    assert loaded.problems[name] is not None
    assert info_lines(fresh, name) == info_lines(loaded, name)
    if name == "graph-classification":  # the example of the issue: answered from the source
        assert _static_problem(discover(preload=False).problems, name) is not None


def test_each_family_solver_says_what_it_returns_in_its_problems_variables(registry):
    """``returns`` names only variables the instances of its kind accept (``Instance.variables``)."""
    import re

    for name in registry.solvers.names():
        s = registry.solvers[name]
        if "*" in s.kinds:
            continue
        text = solver_returns(s)
        if text is None:  # a plugin without the hook (an external package installed beside)
            continue
        problems = [registry.problem(p) for p in registry.problems.names() if registry.problem(p).kind in s.kinds]
        accepted = set().union(*(_instance_class(p).variables for p in problems))
        for part in text.split(";"):
            names = re.sub(r"\([^)]*\)", "", part.split(":")[0]).replace("with balancing,", "").split(",")
            for var in (n.strip().split()[0] for n in names if n.strip() and n.strip() != "too"):
                assert var in accepted, (name, var, accepted)
