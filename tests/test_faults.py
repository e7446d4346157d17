"""Fault injection: one grid of solvers that misbehave in every way we know, run together.

Each fault must come back as a row with the right status and a message saying what happened, the
well-behaved cells of the same grid must be stored, and no process the run started (workers, a
solver's children and grandchildren) may outlive it.
"""

from __future__ import annotations

import textwrap
import uuid

import pytest

from psdbench.harness.store.db import Store
from tests.test_harness import GENEROUS, cli

MARK = f"psdbench-fault-{uuid.uuid4().hex[:10]}"

FAULTS = f'''
import ctypes, os, signal, subprocess, sys, time
import numpy as np
from psdbench.api import Solution

MARK = "{MARK}"
SLEEPER = [sys.executable, "-c", "import time; time.sleep(3600)", MARK]


class _Base:
    kinds = ("graph-classification",)
    default_params = {{}}

    def supports(self, instance):
        return True

    def library_versions(self):
        return {{}}

    def good(self, instance):
        return Solution(variables={{"x": instance.x_true.copy()}})


def _make(name, body):
    return type(name, (_Base,), {{"name": "fault-" + name, "solve": body}})


def _raise(self, instance, budget, **p):
    raise RuntimeError("this solver always fails")


def _hang(self, instance, budget, **p):
    time.sleep(3600)


def _sigkill(self, instance, budget, **p):
    os.kill(os.getpid(), signal.SIGKILL)


def _abort(self, instance, budget, **p):
    os.abort()


def _segfault(self, instance, budget, **p):
    ctypes.string_at(0)


def _exit(self, instance, budget, **p):
    sys.exit(0)


def _nan(self, instance, budget, **p):
    x = instance.x_true.copy(); x[-1] = np.nan
    return Solution(variables={{"x": x}})


def _empty(self, instance, budget, **p):
    return Solution(variables={{}})


def _none(self, instance, budget, **p):
    return None


def _shape(self, instance, budget, **p):
    return Solution(variables={{"M": np.eye(3)}})


def _not_psd(self, instance, budget, **p):
    return Solution(variables={{"M": -np.eye(instance.n + 1)}})


def _fork_die(self, instance, budget, **p):
    if os.fork() == 0:  # the child keeps every inherited descriptor (the result pipe) open
        os.execv(sys.executable, SLEEPER)
    os.kill(os.getpid(), signal.SIGKILL)


def _grandchild(self, instance, budget, **p):
    subprocess.Popen(SLEEPER, start_new_session=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return self.good(instance)


def _bad_trace(self, instance, budget, **p):
    s = self.good(instance)
    s.trace = [{{"t": 0.0, "objective": 1.0, "array": np.arange(3), "set": {{1, 2}}, "obj": object()}}]
    return s


def _memory(self, instance, budget, **p):
    hog = []
    while True:  # address space, untouched: the cap is met at once, however loaded the machine
        hog.append(np.empty(50_000_000))


SOLVERS = {{n: _make(n, f) for n, f in [
    ("raise", _raise), ("hang", _hang), ("sigkill", _sigkill), ("abort", _abort), ("segfault", _segfault),
    ("exit", _exit), ("nan", _nan), ("empty", _empty), ("none", _none), ("shape", _shape),
    ("not-psd", _not_psd), ("fork-die", _fork_die), ("grandchild", _grandchild), ("bad-trace", _bad_trace),
    ("memory", _memory)]}}
'''

#: fault -> (status, a phrase its message must contain)
EXPECTED = {
    "raise": ("error", "RuntimeError: this solver always fails"),
    "hang": ("timeout", ""),
    "sigkill": ("crashed", "signal"),
    "abort": ("crashed", "signal"),
    "segfault": ("crashed", "signal"),
    "exit": ("crashed", "exit code 0"),
    "nan": ("diverged", ""),
    "empty": ("error", "no variables"),
    "none": ("error", "Solution"),
    "shape": ("infeasible", "shape"),  # a point the instance cannot read is rejected, in one line
    "not-psd": ("infeasible", ""),
    "fork-die": ("crashed", "signal"),
    "grandchild": ("ok", ""),
    "bad-trace": ("ok", ""),
    "memory": ("out_of_memory", "out of memory: memoryerror"),
}


@pytest.fixture(scope="module")
def fault_plugin(tmp_path_factory):
    d = tmp_path_factory.mktemp("faults")
    (d / "fault_solvers.py").write_text(FAULTS)
    info = d / "fault_solvers-0.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: fault-solvers\nVersion: 0.0\n")
    lines = ["[psdbench.solvers]"] + [f'fault-{n} = fault_solvers:{"_".join(n.split("-"))}_cls' for n in EXPECTED]
    (info / "entry_points.txt").write_text("\n".join(lines) + "\n")
    with open(d / "fault_solvers.py", "a") as fh:
        for n in EXPECTED:
            fh.write(f'{"_".join(n.split("-"))}_cls = SOLVERS["{n}"]\n')
    return d


def _alive(mark: str) -> list[str]:
    import psutil

    out = []
    for p in psutil.process_iter(["pid", "cmdline"]):
        try:
            if mark in " ".join(p.info["cmdline"] or []):
                out.append(f"{p.info['pid']}: {' '.join(p.info['cmdline'])}")
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
    return out


def _fault_grid(path, faults, timeout, good=True):
    """A grid of the faulty solvers named in ``faults`` (and ``gdpa-lp`` if ``good``)."""
    names = (["gdpa-lp"] if good else []) + [f"fault-{f}" for f in faults]
    solvers = "".join(f'\n[[solvers]]\nname = "{n}"\n' for n in names)
    path.write_text(textwrap.dedent(f"""
    [run]
    seeds = [0]
    timeout = {timeout}
    # the cap: above what a forked worker needs to start (the run's address space, about 3 GB with
    # every plugin and pyarrow through pandas imported, plus 256 MiB; checked when the grid loads),
    # so that the memory hog, which reserves until refused, not the start, meets it
    memory_mb = 5000
    reference = false

    [[problems]]
    name = "graph-classification"
    datasets = ["sklearn/breast-cancer"]
    params = {{ n = [30], graph = ["knn"], k = [5] }}
    """) + solvers)
    return path


def test_every_fault_recorded_rest_stored_nothing_left_running(tmp_path, fault_plugin):
    db = tmp_path / "r.sqlite"
    # every fault but the hang beside the good cells, with a limit no cell comes near however
    # loaded the machine: no verdict here depends on its speed
    g = _fault_grid(tmp_path / "faults.toml", [n for n in EXPECTED if n != "hang"], timeout=GENEROUS)
    out = cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--jobs", "2"], fault_plugin)
    assert out.returncode == 0, out.stderr
    assert not _alive(MARK), "processes of the run still alive:\n" + "\n".join(_alive(MARK))
    # the hang, into the same store: 3 s (+ 2 s grace) for a job that never ends is a timeout on any machine
    g = _fault_grid(tmp_path / "hang.toml", ["hang"], timeout=3, good=False)
    out = cli(["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--jobs", "2"], fault_plugin)
    assert out.returncode == 0, out.stderr
    df = Store(db).results_frame()
    assert len(df) == len(EXPECTED) + 1, sorted(df.solver)  # nothing lost
    got = {s[len("fault-"):]: (st, msg or "") for s, st, msg in zip(df.solver, df.status, df.message)
           if s.startswith("fault-")}
    wrong = {n: (got.get(n), want) for n, want in EXPECTED.items()
             if got.get(n, ("missing", ""))[0] != want[0] or want[1].lower() not in got[n][1].lower()}
    assert not wrong, wrong
    assert df[df.solver == "gdpa-lp"].status.tolist() == ["ok"]
    assert not _alive(MARK), "processes of the run still alive:\n" + "\n".join(_alive(MARK))


def test_changing_a_data_file_invalidates_exactly_its_cells(tmp_path, monkeypatch):
    """The instance key hashes the dataset's content: after one CSV is edited, resume runs the cells
    of that dataset again (new keys) and reuses every other stored cell."""
    import numpy as np

    data = tmp_path / "data" / "binary_classification"
    data.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for stem in ("first", "second"):
        X = rng.normal(size=(40, 3))
        y = np.where(X[:, 0] + 0.3 * rng.normal(size=40) > 0, 1, 2)
        np.savetxt(data / f"{stem}.csv", np.column_stack([X, y]), delimiter=",", fmt="%.6f")
    monkeypatch.setenv("PSDBENCH_DATA", str(tmp_path / "data"))
    g = tmp_path / "g.toml"
    g.write_text(textwrap.dedent("""
    [run]
    seeds = [0, 1]
    timeout = 600
    reference = false

    [[problems]]
    name = "graph-classification"
    datasets = ["uci/first", "uci/second"]
    params = { n = [20], graph = ["knn"], k = [5] }

    [[solvers]]
    name = "gdpa-lp-elim"
    """))
    db = tmp_path / "r.sqlite"
    args = ["run", "--grid", str(g), "--db", str(db), "--report", "", "--quiet", "--jobs", "1"]
    assert cli(args).returncode == 0
    before = Store(db).results_frame().set_index("cell_key")
    assert len(before) == 4
    text = (data / "first.csv").read_text().splitlines()
    row = text[3].split(",")
    row[1] = f"{float(row[1]) + 0.5:.6f}"
    (data / "first.csv").write_text("\n".join(text[:3] + [",".join(row)] + text[4:]) + "\n")
    assert cli(args).returncode == 0
    after = Store(db).results_frame()
    second = after[after.dataset == "uci/second"].set_index("cell_key")
    first = after[after.dataset == "uci/first"]
    assert set(second.index) <= set(before.index)  # same keys, not run again
    assert (second.run_id == before.loc[second.index, "run_id"]).all()
    new_first = first[~first.cell_key.isin(before.index)]
    assert len(new_first) == 2 and new_first.run_id.nunique() == 1  # the edited set's two cells ran again
    assert new_first.run_id.iloc[0] not in set(before.run_id)
    # the report keeps the newest row of each cell description: the old content's cells drop out
    from psdbench.report.frame import drop_superseded

    shown = drop_superseded(after)
    assert len(after) == 6 and len(shown) == 4
    assert set(shown[shown.dataset == "uci/first"].cell_key) == set(new_first.cell_key)
