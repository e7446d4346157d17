"""A folder written as a unit (``outdir.replace_folder``), stopped by SIGTERM or SIGKILL at every
step of its writing: after each file, and before and after each step of the swap.

The kill points are deterministic: a forked child installs an audit hook (:func:`sys.addaudithook`)
that counts the file system operations under the test's folder (every file opened for writing,
every rename, removal and folder made) and :data:`psdbench.system.outdir.AUDIT_EVENT` (the swap's steps),
and sends itself the signal at the ``k``-th, for every ``k`` until a child runs to the end.  After
each, the folder holds exactly one of the two complete reports (same file list, same bytes, same
digest file), and once :func:`psdbench.system.outdir.recover` ran (the next write does) nothing else is
left beside it.  No verdict depends on time.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import signal
import sys
from pathlib import Path
from typing import Callable

import pytest

from psdbench.system import outdir
from psdbench.system.outdir import AUDIT_EVENT, MARKER, leftovers, recover, replace_folder
from psdbench.system.signals import exit_status, stops_gracefully

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="the kill points run in forked children")

DIGEST = ".psdbench-report-digest"
#: Two reports whose file lists differ both ways (the issue's case: five names shared, others not).
OLD = {"report.html": "<p>old</p>", "report.md": "# old", "results.csv": "a\n1\n", "failures.csv": "a\n",
       "old_table.csv": "t\n1\n", "old_figure.png": "PNG old", DIGEST: "old-digest\n"}
NEW = {"report.html": "<p>new</p>", "report.md": "# new", "results.csv": "a\n2\n", "failures.csv": "a\nx\n",
       "run_details.csv": "r\n2\n", "new_chart.png": "PNG new", "new_table.csv": "t\n2\n", DIGEST: "new-digest\n"}


def _writer(files: dict[str, str]) -> Callable[[Path], dict[str, Path]]:
    def write(folder: Path) -> dict[str, Path]:
        paths = {}
        for name, text in files.items():
            paths[name] = folder / name
            paths[name].write_text(text)
        return paths
    return write


def _snapshot(folder: Path) -> dict[str, str] | None:
    """Every file of ``folder`` (no sub-folder expected) with its SHA-256, the time a report states it
    was generated left out (two writes of one store's report differ by it only); None when absent."""
    if not folder.exists():
        return None
    return {p.name: hashlib.sha256(re.sub(rb"Generated: [0-9T:+-]+", b"Generated:", p.read_bytes())).hexdigest()
            if p.is_file() else "dir" for p in folder.iterdir()}


def _counts(parent: str) -> Callable[[str, tuple], bool]:
    """Whether an audit event is a kill point: a step of the swap, or a write, rename, removal or
    new folder under ``parent`` (``shutil.rmtree`` removes by name relative to an open folder)."""
    writing = os.O_WRONLY | os.O_RDWR | os.O_CREAT

    def counts(event: str, args: tuple) -> bool:
        if event == AUDIT_EVENT:
            return True
        if event == "open":
            path, mode, flags = args
            if not isinstance(path, (str, bytes, os.PathLike)) or not os.fsdecode(path).startswith(parent):
                return False
            return bool(set(mode or "") & set("wax+")) if mode else bool((flags or 0) & writing)
        if event in ("os.rename", "os.replace", "os.mkdir", "shutil.rmtree"):
            return os.fsdecode(args[0]).startswith(parent)
        if event in ("os.remove", "os.rmdir"):
            return os.fsdecode(args[0]).startswith(parent) or args[1] not in (None, -1)
        return False
    return counts


def _stopped_at(k: int, sig: int, run: Callable[[], object], parent: Path, exchange: bool = True) -> tuple[bool, int]:
    """Run ``run()`` in a forked child that sends itself ``sig`` at its ``k``-th kill point; whether
    the point was reached and the child's exit status (``-signum`` when a signal ended it)."""
    reached_r, reached_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        code = 1
        try:
            os.close(reached_r)
            if not exchange:  # a file system without RENAME_EXCHANGE: the two-rename path
                outdir._exchange = lambda a, b: False
            counts, seen = _counts(str(parent)), [0]

            def hook(event: str, args: tuple) -> None:
                if counts(event, args):
                    seen[0] += 1
                    if seen[0] == k:
                        os.write(reached_w, b"k")
                        os.kill(os.getpid(), sig)

            sys.addaudithook(hook)
            with stops_gracefully():
                run()
            code = 0
        except KeyboardInterrupt as exc:
            code = exit_status(exc)
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(reached_w)
    _, status = os.waitpid(pid, 0)
    with os.fdopen(reached_r, "rb") as r:
        reached = r.read() == b"k"
    return reached, (-os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status))


def _sweep(tmp_path: Path, sig: int, write_old: Callable[[Path], object], run_new: Callable[[Path], object],
           exchange: bool = True) -> tuple[list[str], dict[str, str], dict[str, str], list[int]]:
    """For k = 1, 2, ...: the previous report in ``tmp_path/rep``, a child writing the new one stopped
    at kill point k; the checks of the module's docstring.  Returns the outcome per k (``old`` / ``new``),
    both reports' snapshots and the points where the folder was absent until :func:`recover` ran."""
    rep = tmp_path / "rep"
    write_old(rep)
    old = _snapshot(rep)
    outcomes: list[str] = []
    absent: list[int] = []
    new = None
    for k in range(1, 500):
        reached, status = _stopped_at(k, sig, lambda: run_new(rep), tmp_path, exchange)
        if not reached:  # past the last kill point: the child ran to the end
            assert status == 0
            new = _snapshot(rep)
            break
        assert status == (-signal.SIGKILL if sig == signal.SIGKILL else 128 + sig), (k, status)
        after = _snapshot(rep)
        if sig == signal.SIGTERM:  # stopped gracefully: nothing left beside the report, no repair needed
            assert leftovers(rep) == [], k
            assert after is not None, k
        elif exchange:  # the report is whole at every instant, before any repair
            assert after is not None, k
        if after is None:
            absent.append(k)
        recover(rep)  # what the next write does first
        assert leftovers(rep) == [] and sorted(p.name for p in tmp_path.iterdir()) == ["rep"], k
        repaired = _snapshot(rep)
        assert repaired is not None and (after is None or repaired == after), k
        outcomes.append("old" if repaired == old else repaired)  # type: ignore[arg-type]
        write_old(rep)  # the next k starts from the previous report again
        assert _snapshot(rep) == old
    assert new is not None and new != old and MARKER in new
    outcomes = [o if o == "old" else ("new" if o == new else "neither") for o in outcomes]
    assert "neither" not in outcomes, outcomes
    assert outcomes == sorted(outcomes, key=lambda o: o == "new"), outcomes  # once in place, never undone
    return outcomes, old, new, absent  # type: ignore[return-value]


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "two-renames"])
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_folder_stopped_at_any_point_is_the_old_one_or_the_new_one(tmp_path, sig, exchange):
    outcomes, old, new, absent = _sweep(tmp_path, sig, lambda rep: replace_folder(rep, _writer(OLD)),
                      lambda rep: replace_folder(rep, _writer(NEW)), exchange)
    # every file of the new report and every step of the swap is a kill point
    assert new == {**{n: hashlib.sha256(t.encode()).hexdigest() for n, t in NEW.items()}, MARKER: new[MARKER]}
    assert len(outcomes) >= len(NEW) + 4 and outcomes.count("old") >= len(NEW)
    if sig == signal.SIGKILL:  # killed after the swap, before the previous folder was removed: the new one stays
        assert "new" in outcomes
    # only a kill -9 between the two renames finds no folder, and recover() repaired it (the new one)
    if sig == signal.SIGKILL and not exchange:  # after the first rename, and at the second (before it is done)
        assert len(absent) == 2 and all(outcomes[k - 1] == "new" for k in absent), (absent, outcomes)
    else:
        assert absent == []


def test_the_exchange_kill_points_include_each_file_and_each_swap_step(tmp_path):
    """The sweep's points, named: every file written, then the steps, in the order they happen."""
    steps: list[str] = []
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            counts = _counts(str(tmp_path))

            def hook(event: str, args: tuple) -> None:
                if counts(event, args):
                    name = args[0] if event == AUDIT_EVENT else f"{event} {Path(os.fsdecode(args[0])).name}"
                    os.write(w, (name + "\n").encode())

            sys.addaudithook(hook)
            replace_folder(tmp_path / "rep", _writer(NEW))
        finally:
            os._exit(0)
    os.close(w)
    os.waitpid(pid, 0)
    with os.fdopen(r) as f:
        steps = f.read().splitlines()
    opened = [s.split(" ", 1)[1] for s in steps if s.startswith("open ")]
    assert opened == [*NEW, MARKER]
    assert [s for s in steps if " " not in s or s == "moved aside"] == ["written", "synced", "swap", "swapped",
                                                                        "cleaned"]


def test_leftovers_of_a_live_writer_or_another_host_are_left_alone(tmp_path):
    rep = tmp_path / "rep"
    replace_folder(rep, _writer(OLD))
    mine = tmp_path / f".rep.tmp-{os.getpid()}-{outdir._host_tag()}-0000abcd"  # this process: alive
    other = tmp_path / ".rep.old-1-ffffffff-0000abcd"  # another host's tag: cannot be checked
    unrelated = tmp_path / ".rep.tmp-notours"
    for d in (mine, other, unrelated):
        d.mkdir()
    recover(rep)
    assert {p.name for p in tmp_path.iterdir()} == {"rep", mine.name, other.name, unrelated.name}
    assert [x.path for x in leftovers(rep)] == sorted([mine, other])


def test_a_target_moved_aside_is_rolled_back_when_the_new_folder_is_gone(tmp_path):
    """Two renames, killed between them, and the new folder lost too: the previous one comes back."""
    rep = tmp_path / "rep"
    replace_folder(rep, _writer(OLD))
    old = _snapshot(rep)
    dead = 2 ** 22 + 12345  # above the default pid_max: no such process
    os.rename(rep, tmp_path / f".rep.old-{dead}-{outdir._host_tag()}-0000abcd")
    recover(rep)
    assert _snapshot(rep) == old and sorted(p.name for p in tmp_path.iterdir()) == ["rep"]


@pytest.mark.slow  # about 35 kill points, each a report written in a child
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["SIGTERM", "SIGKILL"])
def test_a_real_report_replacing_another_stores_report_is_one_report(tmp_path, sig):
    """The issue's case: ``rep`` holds the report of one store and the report of another is written
    over it: stopped at any point, ``rep`` holds one store's report, its files and its digest."""
    from psdbench.harness.grid.inputs import ReadOnlyStore
    from psdbench.harness.store.results import CellResult
    from psdbench.harness.store.db import Store
    from psdbench.cli.preflight import write_report_whole
    from psdbench.registry import discover

    reg = discover()

    def store(path: Path, status: str, dataset: str) -> Path:
        st = Store(path)
        st.write_many([CellResult(run_id="r0", cell_key=f"k{i}", instance_key=f"i{i}", problem="graph-classification",
                                  dataset=dataset, instance_params={"n": 30}, solver="gdpa-lp", status=status,
                                  message="" if status == "ok" else "boom", wall_time_s=0.1,
                                  objective=float(i), feasible=1) for i in range(3)])
        st.close()
        return path

    stores = tmp_path / "stores"
    stores.mkdir()
    a = store(stores / "a.sqlite", "ok", "sklearn/breast-cancer")
    b = store(stores / "b.sqlite", "error", "sklearn/wine")
    work = tmp_path / "out"
    work.mkdir()
    write_report_whole(ReadOnlyStore(a), str(tmp_path / "a-report"), registry=reg)

    def restore_a(rep: Path) -> None:  # store a's report, as written (copied: quicker than a rewrite)
        shutil.rmtree(rep, ignore_errors=True)
        shutil.copytree(tmp_path / "a-report", rep)

    outcomes, old, new, _ = _sweep(work, sig, restore_a,
                                lambda rep: write_report_whole(ReadOnlyStore(b), str(rep), registry=reg))
    assert set(old) ^ set(new) and {"report.html", "results.csv", DIGEST} <= set(old) & set(new)
    assert old[DIGEST] != new[DIGEST]
    assert outcomes.count("old") >= len(new) - 1  # a kill point per file of the new report (its marker: the last)
