"""An entry point added without reinstalling: "unknown solver" says which installed distribution
declares it and how to register it (real ``importlib.metadata`` discovery over folders put on
``sys.path``; no package index)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from psdbench.api import PsdbenchError
from psdbench.registry import discover

from .test_cli_bad_input import cli


def _dist_info(where: Path, name: str, entry_points: str, editable_root: Path | None = None) -> Path:
    info = where / f"{name.replace('-', '_')}-0.1.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text(entry_points)
    if editable_root is not None:
        (info / "direct_url.json").write_text(json.dumps({"dir_info": {"editable": True},
                                                          "url": editable_root.as_uri()}))
    return info


def test_editable_project_declaring_an_unregistered_solver(tmp_path, monkeypatch):
    project = tmp_path / "my project"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "my-solvers"\n\n[project.entry-points."psdbench.solvers"]\n'
                                            'old-one = "my_solvers:Old"\nnew-one = "my_solvers:New"\n')
    site = tmp_path / "site"
    _dist_info(site, "my-solvers", "[psdbench.solvers]\nold-one = my_solvers:Old\n", editable_root=project)
    monkeypatch.syspath_prepend(str(site))
    with pytest.raises(PsdbenchError) as err:
        discover().solver("new-one")
    line = str(err.value)
    assert line.startswith("unknown solver 'new-one' (known: ")
    assert f"{project / 'pyproject.toml'} declares it (distribution 'my-solvers')" in line
    assert line.endswith(f"has not registered it: reinstall with `pip install -e {project}`")
    with pytest.raises(PsdbenchError) as err:  # a name declared nowhere gets no hint
        discover().solver("nowhere")
    assert "reinstall" not in str(err.value)

    code, out, err_text = cli(["run", "--suite", "smoke", "--db", tmp_path / "s.sqlite", "--report", "", "-s", "new-one"])
    assert code == 2 and out == "" and len(err_text.strip().splitlines()) == 1
    assert f"pip install -e {project}" in err_text and not (tmp_path / "s.sqlite").exists()


def test_metadata_on_disk_shadowed_by_the_registered_copy(tmp_path, monkeypatch):
    """Two copies of one distribution's metadata on ``sys.path`` (a stale install and a source tree's
    egg-info): importlib.metadata registers the first; the name only the second declares is named."""
    first, second = tmp_path / "first", tmp_path / "second"
    _dist_info(first, "twice-installed", "[psdbench.problems]\na/old = twice:Old\n")
    info = _dist_info(second, "twice-installed", "[psdbench.problems]\na/old = twice:Old\na/new = twice:New\n")
    monkeypatch.syspath_prepend(str(second))
    monkeypatch.syspath_prepend(str(first))
    with pytest.raises(PsdbenchError) as err:
        discover().problem("a/new")
    line = str(err.value)
    assert f"'twice-installed' declares it in {info}/entry_points.txt" in line
    assert "registers another copy of 'twice-installed' without it: reinstall it" in line
