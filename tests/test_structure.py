"""Layering: every package imports only the layers below it, and the generic harness and report
code name no plugin and import no family.

``docs/architecture.md`` draws the layers; :data:`LAYERS` states them (and :data:`ROOMS` the order
of the rooms inside the harness and the report).  Every problem, solver and dataset reaches ``psdbench.harness`` and
``psdbench.report`` through entry points; so no entry-point name of psdbench's own distribution may
appear in their source (comments and docstrings included), and none of their modules may import
``psdbench.families``.
"""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
from pathlib import Path

import pytest

import psdbench

SRC = Path(psdbench.__file__).resolve().parent
GENERIC = [SRC / "harness", SRC / "report"]
GROUPS = ("psdbench.problems", "psdbench.solvers", "psdbench.datasets")

# A name is a word whose characters include "-" and "/": "gdpa-lp" is not found in "gdpa-lp-elim",
# "clime" is not found in "balanced-clime", "metric/mcml" is found in "problem metric/mcml.".
_EDGE_L, _EDGE_R = r"(?<![\w/-])", r"(?![\w/-])"


def own_entry_point_names() -> tuple[list[str], list[str]]:
    """(whole-word names, collection prefixes) from psdbench's own distribution."""
    words, prefixes = [], []
    for ep in md.distribution("psdbench").entry_points:
        if ep.group not in GROUPS:
            continue
        if ep.group == "psdbench.datasets" and "/" not in ep.name:
            prefixes.append(ep.name + "/")  # a collection ("sklearn", "obs"): only "obs/..." counts
        else:
            words.append(ep.name)
    return sorted(words), sorted(prefixes)


def name_pattern(words: list[str], prefixes: list[str]) -> re.Pattern:
    alts = [_EDGE_L + re.escape(w) + _EDGE_R for w in sorted(words, key=len, reverse=True)]
    alts += [_EDGE_L + re.escape(p) for p in prefixes]
    return re.compile("|".join(alts))  # case-sensitive, as entry-point names are


def generic_modules() -> list[Path]:
    return sorted(p for d in GENERIC if d.is_dir() for p in d.rglob("*.py"))


def _module_name(path: Path, root: Path) -> str:
    rel = path.relative_to(root.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(path: Path, root: Path = SRC) -> list[tuple[int, str]]:
    """Every module ``path`` (a file of the package at ``root``) imports, with line numbers.

    Relative imports are resolved.

    Includes imports inside functions and ``importlib.import_module("...")`` / ``__import__("...")``
    with a literal name.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    module = _module_name(path, root)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.append((node.lineno, mod))
            found += [(node.lineno, f"{mod}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            fn = node.func
            fname = fn.attr if isinstance(fn, ast.Attribute) else getattr(fn, "id", "")
            if fname in ("import_module", "__import__"):
                found.append((node.lineno, node.args[0].value))
    return found


def _rel(path: Path) -> str:
    return path.relative_to(SRC).as_posix()


def violations() -> dict[str, list[str]]:
    words, prefixes = own_entry_point_names()
    pat = name_pattern(words, prefixes)
    out: dict[str, list[str]] = {}
    for path in generic_modules():
        bad = []
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            bad += [f"{_rel(path)}:{i}: names {m.group(0)!r}" for m in pat.finditer(line)]
        for lineno, mod in imported_modules(path):
            if mod == "psdbench.families" or mod.startswith("psdbench.families."):
                bad.append(f"{_rel(path)}:{lineno}: imports {mod}")
        if bad:
            out[_rel(path)] = bad
    return out


# ------------------------------------------------------------------------------ the checker itself
def test_the_checker_sees_what_it_should():
    words, prefixes = own_entry_point_names()
    # psdbench's own entry points, read from the installed distribution
    assert {"graph-classification", "metric/mcml", "signed-graph", "gdpa-lp", "clarabel", "sgml",
            "balanced-clime", "clime", "synthetic/balanced-gmrf"} <= set(words)
    assert {"sklearn/", "uci/", "synthetic/", "obs/"} <= set(prefixes)
    pat = name_pattern(words, prefixes)
    hits = lambda s: [m.group(0) for m in pat.finditer(s)]  # noqa: E731
    assert hits("# run gdpa-lp first") == ["gdpa-lp"]
    assert hits("gdpa-lp-elim") == ["gdpa-lp-elim"]
    assert hits("balanced-clime or clime.") == ["balanced-clime", "clime"]
    assert hits('"metric/mcml"') == ["metric/mcml"]
    assert hits("mosek licence") == ["mosek"]
    assert hits("a synthetic graph from sklearn, obs") == []  # collections count only as prefixes
    assert hits("datasets = ['uci/sonar', 'obs/x.csv']") == ["uci/", "obs/"]
    assert hits("scs_options, gdpa_lp, metric_error") == []
    assert generic_modules(), "no module found under harness/ or report/"


def test_the_import_check_resolves_relative_imports(tmp_path):
    fake = tmp_path / "psdbench" / "harness" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("from ..families.signed_graph import data\n"
                    "def f():\n    from psdbench.families import x\n"
                    "import importlib\nimportlib.import_module('psdbench.families.mahalanobis.report')\n"
                    "from . import store\nfrom ..api import Budget\n")
    mods = [m for _, m in imported_modules(fake, tmp_path / "psdbench")]
    assert "psdbench.families.signed_graph" in mods and "psdbench.families" in mods
    assert "psdbench.families.mahalanobis.report" in mods
    assert "psdbench.harness.store" in mods and "psdbench.api" in mods


# ------------------------------------------------------------------------------ the rule
def test_generic_code_names_no_plugin_and_imports_no_family():
    found = violations()
    assert not found, "\n".join(v for f in sorted(found) for v in found[f])


# ------------------------------------------------------------------------------ the layers
#: psdbench's packages from the lowest layer up.  Packages of one rank may import each other; a
#: module never imports a package of a higher rank.  The root ``psdbench/__init__.py`` (the Python
#: API's three functions, importing lazily) is above them all.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("system",),                          # OS, signals, output folders, the contract's exceptions
    ("api",),                             # the contracts
    ("linalg", "datasets"),               # shared kernels, dataset loaders
    ("registry",),                        # entry-point discovery
    ("harness",),                         # grid, workers, store, references and gaps
    ("report",),                          # the tidy frame, verdict rules, sections, renderer, compare
    ("publish",),                         # results that leave the machine: the dataset
    ("solvers", "families"),              # the plugins psdbench ships
    ("session", "testing", "asvbench"),   # Python API, conformance kit, asv benchmarks
    ("cli",),                             # the command line
)
#: Packages of data only (the built-in suites' TOML files, read through ``importlib.resources``).
DATA_PACKAGES = ("suites",)
#: The same order inside the two largest layers: ``{package: ranks of its modules and rooms}``.
ROOMS: dict[str, tuple[tuple[str, ...], ...]] = {
    "harness": (("__init__", "floor", "limits", "progress", "fingerprint", "calibration"), ("store", "asvspec"), ("reference",),
                ("grid", "workers"), ("runner",)),
    "report": (("rules", "blocks", "fmt"), ("measures", "render", "glossary"),
               ("frame", "tables", "findings", "summary"), ("__init__", "compare"), ("sections",)),
}


def _ranks(order: tuple[tuple[str, ...], ...]) -> dict[str, int]:
    return {name: i for i, names in enumerate(order) for name in names}


def _place(module: str) -> tuple[str, str] | None:
    """``(layer, room)`` of a ``psdbench.*`` module; ``None`` for the root and for non-modules."""
    parts = module.split(".")
    if parts[0] != "psdbench" or len(parts) < 2:
        return None
    room = parts[2] if len(parts) > 2 else "__init__"
    return parts[1], room


def layer_violations() -> list[str]:
    """Every import of a higher layer (or, inside harness and report, of a higher room)."""
    layer_rank = _ranks(LAYERS)
    room_rank = {pkg: _ranks(order) for pkg, order in ROOMS.items()}
    modules = {_module_name(p, SRC) for p in SRC.rglob("*.py")}
    bad = []
    for path in sorted(SRC.rglob("*.py")):
        here = _place(_module_name(path, SRC))
        if here is None:
            continue
        found = imported_modules(path)
        for lineno, mod in found:
            there = _place(mod)
            if there is None or mod not in modules:
                continue  # a name imported from a module, or another distribution
            if any(m.startswith(mod + ".") and m in modules for n, m in found if n == lineno):
                continue  # `from psdbench.report import rules`: the import is of the submodule
            if layer_rank[there[0]] > layer_rank[here[0]]:
                bad.append(f"{_rel(path)}:{lineno}: {here[0]}/ imports {mod} (a higher layer)")
            elif there[0] == here[0] and here[0] in room_rank and here[1] != there[1]:
                ranks = room_rank[here[0]]
                if ranks[there[1]] > ranks[here[1]]:
                    bad.append(f"{_rel(path)}:{lineno}: {here[0]}/{here[1]} imports {mod} (a higher room)")
    return bad


def test_every_package_has_a_layer():
    packages = {p.name for p in SRC.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert all(not any(p.suffix == ".py" and p.name != "__init__.py" for p in (SRC / d).iterdir()) for d in DATA_PACKAGES)
    assert packages - set(DATA_PACKAGES) == set(_ranks(LAYERS)), "a package without a layer, or a layer without a package"
    for pkg, order in ROOMS.items():
        rooms = {p.stem for p in (SRC / pkg).iterdir() if p.suffix == ".py" or (p / "__init__.py").exists()}
        assert rooms == set(_ranks(order)), f"{pkg}/: a module without a rank, or a rank without a module"
    assert [p.name for p in SRC.glob("*.py")] == ["__init__.py"], "a module beside the layers"


def test_the_root_imports_nothing_when_imported():
    tree = ast.parse((SRC / "__init__.py").read_text(encoding="utf-8"))
    top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    assert all(getattr(n, "module", "") == "typing" for n in top)  # the three functions import lazily


def test_the_layer_check_sees_an_import_up(tmp_path):
    fake = tmp_path / "psdbench" / "api" / "probe.py"
    fake.parent.mkdir(parents=True)
    fake.write_text("def f():\n    from psdbench.report.rules import floor\n")
    assert [m for _, m in imported_modules(fake, tmp_path / "psdbench")] == [
        "psdbench.report.rules", "psdbench.report.rules.floor"]
    assert _place("psdbench.report.rules") == ("report", "rules")
    assert _ranks(LAYERS)["report"] > _ranks(LAYERS)["api"]
    assert _ranks(ROOMS["harness"])["runner"] > _ranks(ROOMS["harness"])["store"]


def test_no_module_imports_a_layer_above_its_own():
    found = layer_violations()
    assert not found, "\n".join(found)


def test_no_package_holds_more_than_a_dozen_modules_side_by_side():
    """About a dozen at most (13: graph classification's folder, held beside its paper), families too."""
    crowded = {d.relative_to(SRC).as_posix() or ".": n for d in [SRC, *SRC.rglob("*")] if d.is_dir()
               if (n := len([p for p in d.glob("*.py") if p.name != "__init__.py"])) > 13}
    assert not crowded, crowded
