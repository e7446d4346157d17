"""A crash or a lost value never fails an asv benchmark; ``psdbench asv continuous`` prints the
losses after asv's table (``psdbench.asvbench.losses``).  No asv run here: a fake ``asv`` program
stands in for it (the slow walk-through, ``tests/test_asv_plugin.py``, runs the real one)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from psdbench.asvbench import losses
from psdbench.system.errors import PsdbenchError
from psdbench.asvbench.tracked import TrackedCase

from .test_cli_bad_input import cli

CASE = TrackedCase("s", "fam", "p: d (n=3)", "boom-solver", (("p", "d", {"n": 3}, 0, "boom", {}),
                                                              ("p", "d", {"n": 3}, 1, "boom", {})))


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def _repo(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "a")
    a = _git(repo, "rev-parse", "HEAD")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "b")
    return repo, a, _git(repo, "rev-parse", "HEAD")


def _fake_asv(tmp_path: Path, status: int, lines: dict[str, list[str]]) -> str:
    """An ``asv`` that prints a table, records ``lines`` per commit as the benchmarks would, exits ``status``."""
    prog = tmp_path / "fake-asv"
    body = "".join(f"os.environ['ASV_COMMIT'] = {c!r}\nrecord({line!r})\n" for c, ls in lines.items() for line in ls)
    prog.write_text(f"#!{sys.executable}\nimport os, sys\nsys.path.insert(0, {str(Path(losses.__file__).parents[2])!r})\n"
                    "from psdbench.asvbench.losses import record\n" + body +
                    "print('| +  | 0 | 1e+12 | n/a | bench.X.track_gap(\\'p\\', \\'boom-solver\\')')\n"
                    f"sys.exit({status})\n")
    prog.chmod(prog.stat().st_mode | stat.S_IEXEC)
    return str(prog)


def test_record_writes_each_commit_s_lines_only_under_the_wrapper(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(losses.LOSSES_ENV, raising=False)
    losses.record("psdbench: lost gap: x")
    assert capsys.readouterr().err == "psdbench: lost gap: x\n" and not list(tmp_path.iterdir())
    monkeypatch.setenv(losses.LOSSES_ENV, str(tmp_path))
    for commit, line in (("c1", "one"), ("c1", "two"), ("c1", "one"), ("c2", "three\nmore")):
        monkeypatch.setenv("ASV_COMMIT", commit)
        losses.record(line)
    assert losses.read_losses(tmp_path, "c1") == ["one", "two"]  # rounds repeat a line: printed once
    assert losses.read_losses(tmp_path, "c2") == ["three more"]
    assert losses.read_losses(tmp_path, "c3") == []


def test_print_losses_marks_a_standing_loss_and_counts_the_new(capsys):
    assert losses.print_losses("a" * 40, "b" * 40, ["old", "gone"], ["old", "new"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "psdbench: 1 new and 1 standing losses at bbbbbbbb (against aaaaaaaa):"
    assert out[2:] == ["old  [standing: also at aaaaaaaa]", "new"]
    assert losses.print_losses("a" * 40, "b" * 40, ["old"], []) == 0
    assert "no value lost at bbbbbbbb" in capsys.readouterr().out


@pytest.mark.parametrize("asv_status, head_lines, expected", [(0, [], 0), (0, ["new loss"], 1), (1, [], 1),
                                                               (2, ["new loss"], 2), (0, ["standing"], 0)])
def test_continuous_prints_head_s_losses_after_asv_s_table(tmp_path, monkeypatch, capfd, asv_status, head_lines,
                                                           expected):
    pytest.importorskip("asv")
    repo, a, b = _repo(tmp_path)
    monkeypatch.chdir(repo)
    prog = _fake_asv(tmp_path, asv_status, {a: ["standing"], b: head_lines})
    assert losses.continuous([a, b], asv=prog) == expected
    out = capfd.readouterr().out.splitlines()
    table = next(i for i, line in enumerate(out) if line.startswith("| +"))
    for line in head_lines:
        assert out.index(line if line != "standing" else f"standing  [standing: also at {a[:8]}]") > table
    assert losses.parse_commits([b]) == (a, b)  # BASE: HEAD's parent, as asv takes it
    assert losses.parse_commits(["-e", "-b", "Toy", "main~1", "main"]) == (a, b)


@pytest.mark.parametrize("args, words", [(["nosuch"], "'nosuch' is not a commit"),
                                         (["--no-such-option", "HEAD"], "unrecognized arguments: --no-such-option"),
                                         ([], "the following arguments are required: branch")])
def test_continuous_bad_input_is_one_line_exit_2_before_asv_runs(tmp_path, monkeypatch, args, words):
    pytest.importorskip("asv")
    repo, _, _ = _repo(tmp_path)
    monkeypatch.chdir(repo)
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "asv").write_text(f"#!/bin/sh\ntouch {tmp_path / 'asv-ran'}\n")
    (bin_ / "asv").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_}{os.pathsep}{os.environ['PATH']}")
    code, out, err = cli(["asv", "continuous", *args])
    assert code == 2 and words in err and err.count("\n") == 1 and out == "", err
    assert not (tmp_path / "asv-ran").exists()


class _Boom:
    name = "boom"

    def supports(self, instance):
        return True

    def solve(self, instance, budget, **params):
        if instance.seed == 1:
            raise ValueError("no convergence\nsecond line")
        return None


def test_a_solver_that_raises_is_skipped_with_its_line_not_a_failed_benchmark(monkeypatch, capsys, tmp_path):
    """The first setup solves each instance once: the crash of seed 1 is asv's skip (n/a), its line recorded."""
    from psdbench.asvbench import suites

    reg = SimpleNamespace(solver=lambda name: _Boom(), load_dataset=lambda name: None,
                          problem=lambda name: SimpleNamespace(build=lambda data, p, seed: SimpleNamespace(seed=seed)))
    monkeypatch.setattr(suites, "discover", lambda: reg)
    monkeypatch.setattr(suites, "limit_blas", lambda: None)
    monkeypatch.setenv(losses.LOSSES_ENV, str(tmp_path))
    monkeypatch.setenv("ASV_COMMIT", "c")
    bench = type("Fam_S", (suites._Solves,), {"suite": "s", "cases": {(CASE.instance_set, CASE.config): CASE}})()
    line = "psdbench: lost solve: boom-solver on p: d (n=3): seed 1: raised ValueError: no convergence"
    for _ in range(2):  # asv re-runs setup before each sample: the same skip, the same line
        with pytest.raises(NotImplementedError) as exc:
            bench.setup(CASE.instance_set, CASE.config)
        assert str(exc.value) == line
    assert capsys.readouterr().err == line + "\n"
    assert losses.read_losses(tmp_path, "c") == [line]


def test_a_solver_that_runs_is_timed_as_before(monkeypatch):
    from psdbench.asvbench import suites

    calls = []
    solver = SimpleNamespace(name="ok", supports=lambda i: True, solve=lambda i, b, **p: calls.append(i.seed))
    reg = SimpleNamespace(solver=lambda name: solver, load_dataset=lambda name: None,
                          problem=lambda name: SimpleNamespace(build=lambda data, p, seed: SimpleNamespace(seed=seed)))
    monkeypatch.setattr(suites, "discover", lambda: reg)
    monkeypatch.setattr(suites, "limit_blas", lambda: None)
    bench = type("Fam_S", (suites._Solves,), {"suite": "s", "cases": {(CASE.instance_set, CASE.config): CASE}})()
    bench.setup(CASE.instance_set, CASE.config)
    assert calls == [0, 1]  # the untimed check, once per process
    bench.setup(CASE.instance_set, CASE.config)
    bench.time_solve(CASE.instance_set, CASE.config)
    assert calls == [0, 1, 0, 1]  # the timed solves only


def test_the_wrapper_needs_asv_and_a_commit_not_a_registry(tmp_path):
    """``losses`` imports no family and no registry: the harness side of asv names no family."""
    text = Path(losses.__file__).read_text()
    assert "registry" not in text and "families" not in text
    with pytest.raises(PsdbenchError, match="not a commit"):
        losses._commit("definitely-not-a-ref-" + tmp_path.name)
