"""``psdbench asv init [DIR]``: make a plugin's repository trackable by asv against this psdbench.

Writes three files into ``DIR`` (default: the current folder), a git repository of a Python
project (``pyproject.toml`` with ``[project] name``):

``asv.conf.json``
    asv's configuration: the repository's commits (``repo = "."``, its current branch), built
    and installed offline into a virtualenv under ``.asv/env`` (``pip wheel`` / ``pip install``
    with ``--no-index --no-deps --no-build-isolation``) that sees the packages of the environment
    this command runs in (psdbench and its dependencies: :mod:`psdbench.asvbench.envlink`, run by
    this environment's Python, whose path the configuration holds); results, environments and the
    site under ``.asv/``.
``benchmarks/__init__.py``
    one BLAS thread (:func:`psdbench.asvbench.pin_threads`).
``benchmarks/bench_psdbench.py``
    the stub: the benchmarks of the tracked suites (``--suite``, default: every tracked suite
    psdbench does not ship), made by the installed psdbench (:func:`psdbench.asvbench.suites.benchmarks_of`).

Bad input (no such folder, not a git repository, no project name, a file that exists without
``--force``) is a one-line error, exit status 2, before any file is written.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from pathlib import Path

from psdbench.system.errors import PsdbenchError

#: The files :func:`write_asv_files` writes, relative to the repository.
FILES = ("asv.conf.json", "benchmarks/__init__.py", "benchmarks/bench_psdbench.py")

INIT_STUB = '''"""asv benchmarks of this repository (written by `psdbench asv init`): one BLAS thread each."""

from psdbench.asvbench import pin_threads

pin_threads()
'''

BENCH_STUB = '''"""asv benchmarks of {what}, made by the installed psdbench (written by `psdbench asv init`)."""

from psdbench.asvbench.suites import benchmarks_of

globals().update(benchmarks_of({suites!r}))
'''


def _project_name(root: Path) -> str:
    pyproject = root / "pyproject.toml"
    try:
        name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise PsdbenchError(f"asv init: {pyproject} cannot be read ({type(exc).__name__}): a plugin's repository "
                            "has a pyproject.toml with [project] name") from None
    if not isinstance(name, str) or not name:
        raise PsdbenchError(f"asv init: {pyproject} has no [project] name")
    return name


def _branch(root: Path) -> str:
    out = subprocess.run(["git", "-C", str(root), "symbolic-ref", "--short", "-q", "HEAD"], capture_output=True,
                         text=True)
    return out.stdout.strip() or "main"


def asv_config(root: Path, project: str, branch: str, python: str = sys.executable) -> dict[str, object]:
    """asv's configuration for the repository ``root`` (module docstring), as a dict."""
    offline = "PIP_NO_INDEX=1 python -m pip"
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    return {
        "version": 1,
        "project": project,
        "repo": ".",
        "branches": [branch],
        "dvcs": "git",
        "environment_type": "virtualenv",
        "pythons": [version],
        "build_command": [f"{python} -m psdbench.asvbench.envlink {{env_dir}}",
                          f"{offline} wheel --no-deps --no-build-isolation -w {{build_cache_dir}} {{build_dir}}"],
        "install_command": [f"in-dir={{env_dir}} {offline} install --no-deps --force-reinstall {{wheel_file}}"],
        "uninstall_command": ["return-code=any python -m pip uninstall -y {project}"],
        "benchmark_dir": "benchmarks",
        "env_dir": ".asv/env",
        "results_dir": ".asv/results",
        "html_dir": ".asv/html",
        "build_cache_size": 2,
    }


def write_asv_files(root: str | Path = ".", suites: list[str] | None = None, force: bool = False) -> list[Path]:
    """Write the files :data:`FILES` into the repository ``root``; returns their paths.

    Parameters
    ----------
    root : path
        The plugin's repository (a git work tree with a ``pyproject.toml``).
    suites : list of str, optional
        The tracked suites to benchmark (default: every tracked suite psdbench does not ship).
    force : bool
        Overwrite files that exist (otherwise an error names them, and nothing is written).

    Raises
    ------
    PsdbenchError
        One line, before any file is written: no such folder, not a git repository, no project
        name, a malformed suite name, a file that exists without ``force``.
    """
    root = Path(root)
    if not root.is_dir():
        raise PsdbenchError(f"asv init: {root} is not a folder")
    if not (root / ".git").exists():
        raise PsdbenchError(f"asv init: {root} is not a git repository (asv tracks its commits): git init first")
    project = _project_name(root)
    for s in suites or []:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", s):
            raise PsdbenchError(f"asv init: --suite {s!r} is not a suite name (psdbench list suites)")
    paths = [root / f for f in FILES]
    there = [str(p) for p in paths if p.exists()]
    if there and not force:
        raise PsdbenchError(f"asv init: {', '.join(there)} exist(s): pass --force to overwrite")
    if (root / "benchmarks").exists() and not (root / "benchmarks").is_dir():
        raise PsdbenchError(f"asv init: {root / 'benchmarks'} is a file, not a folder")
    (root / "benchmarks").mkdir(exist_ok=True)
    paths[0].write_text(json.dumps(asv_config(root, project, _branch(root)), indent=4) + "\n", encoding="utf-8")
    paths[1].write_text(INIT_STUB, encoding="utf-8")
    what = f"the suites {', '.join(suites)}" if suites else "every tracked suite psdbench does not ship"
    paths[2].write_text(BENCH_STUB.format(what=what, suites=list(suites) if suites else None), encoding="utf-8")
    return paths
