"""Layering: the generic harness and report code name no plugin and import no family.

``docs/architecture.md``: api -> registry -> harness / report (generic) -> families as plugins,
with no arrow back up.  Every problem, solver and dataset reaches ``psdbench.harness`` and
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
