"""Runs that overlap, are interrupted or killed: each cell computed and stored once, nothing of a
killed cell stored, the store consistent, no process of a run left behind."""

from __future__ import annotations

import os
import random
import re
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time

import psutil
import pytest

from psdbench.harness.store import claims
from psdbench.harness.store.results import CellResult
from psdbench.harness.store.db import Store

from .test_harness import ENTRY_POINTS as FAULTY_ENTRY_POINTS
from .test_harness import FAULTY, GENEROUS

PLUGIN = FAULTY + '''

class _Nap(_Base):
    nap = 0.0

    def solve(self, instance, budget, **params):
        import numpy as np
        time.sleep(self.nap)
        return Solution(variables={"x": np.asarray(instance.x_true, dtype=float).copy()})


class NapA(_Nap):
    name = "nap-a"
    nap = 0.3


class NapB(_Nap):
    name = "nap-b"
    nap = 0.3
'''


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory):
    """The faulty solvers and two napping ones, as module ``nap_solvers`` (the in-process CLI of
    other test modules may already have imported ``faulty_solvers``)."""
    d = tmp_path_factory.mktemp("naps")
    (d / "nap_solvers.py").write_text(PLUGIN)
    info = d / "nap_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: nap-solvers\nVersion: 0.0\n")
    eps = "".join(line.replace("faulty_solvers:", "nap_solvers:") + "\n"
                  for line in FAULTY_ENTRY_POINTS.splitlines() if "missing_module" not in line)
    (info / "entry_points.txt").write_text(eps + "nap-a = nap_solvers:NapA\nnap-b = nap_solvers:NapB\n")
    return d


#: The hung cells' limit in the Ctrl-C tests: the run must stop on the signal, long before it.
HANG_LIMIT = 3600 + GENEROUS


def _grid(tmp_path, solvers, seeds, timeout=GENEROUS, reference=False):
    body = textwrap.dedent(f"""
    [run]
    seeds = {list(seeds)}
    timeout = {timeout}
    reference = {str(reference).lower()}

    [[problems]]
    name = "graph-classification"
    datasets = ["sklearn/breast-cancer"]
    params = {{ n = [30], graph = ["knn"], k = [5] }}
    """)
    body += "".join(f'\n[[solvers]]\nname = "{s}"\n' for s in solvers)
    p = tmp_path / "g.toml"
    p.write_text(body)
    return p


def _as_at_a_terminal() -> None:
    """SIGINT and SIGTERM at their defaults, as for a command typed at a terminal: a test runner
    started in the background of a non-interactive shell ignores SIGINT, and a child inherits that."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_DFL)


def _start(plugin_path, g, db, jobs=1, terminal=False):
    env = dict(os.environ, PYTHONPATH=str(plugin_path) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.Popen([sys.executable, "-m", "psdbench.cli", "run", "--grid", str(g), "--db", str(db),
                             "--report", "", "--quiet", "--jobs", str(jobs)], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=_as_at_a_terminal if terminal else None)


def _where(pid: int) -> str:
    """Where a stuck process is (signal masks, each thread's kernel wait channel), for a failure message."""
    def read(path: str) -> str:
        try:
            with open(path) as fh:
                return fh.read().strip()
        except OSError as exc:
            return f"? ({exc})"

    sig = [line for line in read(f"/proc/{pid}/status").splitlines() if line.startswith(("SigBlk", "SigIgn", "SigCgt"))]
    threads = {t: (read(f"/proc/{pid}/task/{t}/comm"), read(f"/proc/{pid}/task/{t}/wchan"))
               for t in sorted(os.listdir(f"/proc/{pid}/task"))} if os.path.isdir(f"/proc/{pid}/task") else {}
    return f"{sig} {threads}"


def _session_left(sid: int, wait: float = 120.0) -> list[str]:
    """Processes of session ``sid`` (a run and everything it started) still alive after ``wait`` s
    (returns as soon as none is: a generous bound for a loaded machine costs nothing)."""
    end = time.time() + wait
    while True:
        left = []
        for p in psutil.process_iter(["pid", "cmdline", "status"]):
            try:
                if os.getsid(p.pid) == sid and p.info["status"] != psutil.STATUS_ZOMBIE:
                    left.append(" ".join(p.info["cmdline"] or []))
            except (ProcessLookupError, PermissionError, psutil.Error):
                pass
        if not left or time.time() > end:
            return left
        time.sleep(0.2)


def _consistent(db) -> sqlite3.Connection:
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    assert con.execute("SELECT count(*) FROM claims").fetchone()[0] == 0  # every claim released
    return con


# ---- claims, at the store level

def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_claims_refuse_live_holders_and_stored_cells_and_take_over_dead_ones(tmp_path):
    store = Store(tmp_path / "s.sqlite")
    assert store.claim(["a", "b"], "run-1") == {}
    assert store.claim(["a", "b", "c"], "run-2") == {"a": claims.HELD, "b": claims.HELD}  # run-1's pid is alive
    assert store.claim(["a"], "run-1") == {}  # a run's own claim is its own
    con = sqlite3.connect(tmp_path / "s.sqlite")
    con.execute("UPDATE claims SET pid=? WHERE cell_key='a'", (_dead_pid(),))  # its run was kill -9'ed
    con.execute("UPDATE claims SET host='elsewhere' WHERE cell_key='b'")  # cannot be checked: alive
    con.commit()
    assert store.claim(["a", "b"], "run-3") == {"b": claims.HELD}
    assert con.execute("SELECT run_id FROM claims WHERE cell_key='a'").fetchone()[0] == "run-3"
    store.write_many([CellResult(run_id="run-3", cell_key="a", instance_key="i", status="ok")], release="run-3")
    assert con.execute("SELECT count(*) FROM claims WHERE cell_key='a'").fetchone()[0] == 0  # released with its row
    assert store.claim(["a"], "run-4") == {"a": claims.STORED}  # stored meanwhile: not run again
    seq = store.last_seq()
    assert store.claim(["a"], "run-5", since_seq=seq) == {}  # --force: only rows stored after the start count
    store.release_run("run-1")
    store.release_run("run-2")
    assert dict(con.execute("SELECT cell_key, run_id FROM claims").fetchall()) == {"a": "run-5"}
    store.close()


def test_a_recycled_pid_is_not_the_claims_holder():
    # this process started before the claim: it holds it; a claim older than the process: a recycled pid
    assert claims.holder_alive(os.getpid(), claims.host(), "2999-01-01T00:00:00+00:00")
    assert not claims.holder_alive(os.getpid(), claims.host(), "2000-01-01T00:00:00+00:00")
    assert not claims.holder_alive(_dead_pid(), claims.host(), "2999-01-01T00:00:00+00:00")


# ---- whole runs

def test_two_concurrent_runs_compute_each_cell_once(tmp_path, plugin_path):
    db = tmp_path / "r.sqlite"
    Store(db).close()  # both runs open an existing store
    g = _grid(tmp_path, ["nap-a", "nap-b"], seeds=range(10))
    procs = [_start(plugin_path, g, db), _start(plugin_path, g, db)]
    outs = [p.communicate(timeout=240) for p in procs]
    for p, (out, err) in zip(procs, outs):
        assert p.returncode == 0, err
    con = _consistent(db)
    counts = dict(con.execute("SELECT cell_key, count(*) FROM history GROUP BY cell_key").fetchall())
    assert len(counts) == 20 and set(counts.values()) == {1}  # every cell stored exactly once
    ran = [int(re.search(r"\((\d+) run now, (\d+) left to another run", out).group(1)) for out, _ in outs]
    assert sum(ran) == 20, outs  # no cell computed by both runs
    per_run = dict(con.execute("SELECT run_id, count(*) FROM history GROUP BY run_id").fetchall())
    assert sorted(per_run.values()) == sorted(r for r in ran if r)


@pytest.mark.parametrize("sig, code, word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated"),
                                             (signal.SIGHUP, 129, "hung up"), (signal.SIGQUIT, 131, "quit")])
def test_ctrl_c_or_sigterm_kills_running_cells_stores_none_of_them_and_exits_130_or_143(sig, code, word, tmp_path,
                                                                                      plugin_path):
    """Ctrl-C (SIGINT, as a terminal sends it), SIGTERM (a scheduler's stop), SIGHUP (a closed
    terminal) and SIGQUIT (Ctrl-\\) end the run the same way: one line, no traceback (of the run or
    of a worker), claims released, the run stamped."""
    db = tmp_path / "r.sqlite"
    g = _grid(tmp_path, ["nap-a", "faulty-hang"], seeds=(0, 1), timeout=HANG_LIMIT)
    proc = _start(plugin_path, g, db, jobs=2, terminal=True)
    end = time.time() + GENEROUS  # the events below; generous for a loaded machine
    while time.time() < end and proc.poll() is None:  # both nap-a cells stored: the hangs are running
        try:
            if sqlite3.connect(db).execute("SELECT count(*) FROM history").fetchone()[0] >= 2:
                break
        except sqlite3.OperationalError:
            pass
        time.sleep(0.1)
    while time.time() < end and proc.poll() is None:  # the hangs claimed, i.e. sent to their workers
        try:
            if sqlite3.connect(db).execute("SELECT count(*) FROM claims").fetchone()[0] >= 1:
                break
        except sqlite3.OperationalError:
            pass
        time.sleep(0.05)
    assert proc.poll() is None
    if sig in (signal.SIGHUP, signal.SIGQUIT):  # as a terminal sends them: to the foreground group (fork server too)
        os.killpg(proc.pid, sig)
    else:
        proc.send_signal(sig)
    try:
        out, err = proc.communicate(timeout=GENEROUS)  # the event; an hour below the hangs' own limit
    except subprocess.TimeoutExpired:
        state = _where(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail(f"the run did not stop on SIGINT before its cells' timeout; its threads: {state}")
    assert proc.returncode == code
    lines = err.strip().splitlines()
    assert len(lines) == 1 and word in lines[0] and "Traceback" not in err
    con = _consistent(db)
    rows = con.execute("SELECT solver, status FROM history").fetchall()
    assert sorted(rows) == [("nap-a", "ok"), ("nap-a", "ok")]  # the killed hangs are not results
    assert con.execute("SELECT finished_at IS NOT NULL FROM runs").fetchone()[0] == 1
    assert _session_left(proc.pid) == []  # workers and the hanging solvers are gone


def _history_count(db) -> int:
    try:
        return sqlite3.connect(db).execute("SELECT count(*) FROM history").fetchone()[0]
    except sqlite3.OperationalError:  # no store yet, or killed before the schema was created
        return 0


@pytest.mark.slow
def test_kill_9_at_ten_random_moments_then_resume_loses_and_duplicates_nothing(tmp_path, plugin_path):
    db = tmp_path / "r.sqlite"
    g = _grid(tmp_path, ["nap-a", "nap-b"], seeds=range(20))
    rng = random.Random(16)
    stored = []
    for i in range(10):
        proc = _start(plugin_path, g, db, jobs=2)
        if i % 2 == 0:  # a random moment of the whole run, start-up (imports, schema, workers) included
            time.sleep(rng.uniform(0.2, 4.0))
        else:  # a random moment once this run has stored a cell, so the kill lands among running cells
            before, end = _history_count(db), time.time() + 60
            while proc.poll() is None and _history_count(db) <= before and time.time() < end:
                time.sleep(0.02)
            time.sleep(rng.uniform(0.0, 0.6))
        proc.kill()
        proc.communicate()
        assert _session_left(proc.pid) == []  # its workers end on their own
        stored.append(_history_count(db))
    print("history rows after each kill -9:", stored)
    assert any(0 < s < 40 for s in stored), stored  # some kills landed while cells were running
    proc = _start(plugin_path, g, db, jobs=2)
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err
    con = _consistent(db)
    counts = dict(con.execute("SELECT cell_key, count(*) FROM history GROUP BY cell_key").fetchall())
    assert len(counts) == 40 and set(counts.values()) == {1}, stored  # 0 lost, 0 duplicated


# ---- the progress line

class _Tty:
    """A terminal-like stream (what tqdm draws on)."""

    def __init__(self):
        self.parts = []

    def write(self, s):
        self.parts.append(s)

    def flush(self):
        pass

    def isatty(self):
        return True


class _Log(_Tty):
    def isatty(self):
        return False


def test_progress_counts_solver_cells_only_and_max_iter_apart_from_failures():
    from psdbench.harness.progress import Progress

    tty = _Tty()
    prog = Progress(4, refs=2, file=tty)
    prog.reference()
    prog.reference()  # references are not cells
    for status in ("ok", "max_iter", "timeout"):
        prog.cell(status)
    prog.skip(claims.HELD)
    shown = "".join(tty.parts)
    assert "4/4" in shown and "refs=2/2" in shown and "6/" not in shown
    last = shown.rsplit("4/4", 1)[1]
    assert "max_iter=1" in last and "failed=1" in last and "ok=1" in last and "elsewhere=1" in last
    prog.close()
    assert prog.summary() == {"ran": 3, "elsewhere": 1, "status": {"ok": 1, "max_iter": 1, "timeout": 1}}


def test_progress_on_a_log_is_plain_lines_in_the_pages_words():
    """Not a terminal: no \r updates, but plain lines (the first event, then at most one per
    PLAIN_EVERY s, and the last), so a run piped to a log shows it is alive."""
    from psdbench.harness.progress import Progress

    log = _Log()
    prog = Progress(3, refs=1, file=log)
    prog.reference()
    for word in ("ok", "rejected", "inaccurate"):
        prog.cell(word)
    prog.close()
    text = "".join(log.parts)
    assert "\r" not in text
    lines = text.splitlines()
    assert lines[0].startswith("psdbench: 0/3 cells (refs 1/1)")  # the first reference
    assert lines[1].startswith("psdbench: 1/3 cells (1 ok; refs 1/1)")  # the first cell
    assert lines[-1].startswith("psdbench: 3/3 cells (1 inaccurate, 1 ok, 1 rejected; refs 1/1), ")  # the last
    assert len(lines) == 3  # the one between fell within PLAIN_EVERY s


def test_a_run_not_on_a_terminal_ends_with_one_summary_line(tmp_path, plugin_path):
    from .test_harness import cli

    g = _grid(tmp_path, ["nap-a", "faulty-raise"], seeds=(0, 1), reference=True)
    out = cli(["run", "--grid", str(g), "--db", str(tmp_path / "r.sqlite"), "--report", ""], plugin_path)
    assert out.returncode == 0, out.stderr
    assert "\r" not in out.stderr + out.stdout
    lines = out.stdout.strip().splitlines()
    assert len(lines) == 1 and "4 cells" in lines[0] and "2 error, 2 ok" in lines[0] and "(4 run now" in lines[0]
