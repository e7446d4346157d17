"""How often asv's verdict fires: a 1.5x slowdown flagged, an unchanged commit not flagged.

Builds a toy plugin repository (``tests/plugin_family``, its suite cut to one ``toy-altproj``
case) with ``psdbench asv init``, commits

* ``a``: the plugin as it is;  ``a2``: an empty commit on ``a`` (same code, built apart);
* ``slow``: the solver sleeps half as long as it solved (1.5x);  ``b``: as long (2x);
* ``c``: the returned point leaves the PSD cone (its points stop verifying);
* ``d``: the solver raises (a crash),

then runs the documented command ``asv continuous BASE HEAD`` (asv's defaults) ``--same`` times
for ``a -> a2`` and ``--slow`` times for ``a -> slow``, and
prints the share flagged of each (a run flags when it exits 1 and names ``time_solve``)::

    python benchmarks/scripts/harness/asv_rates.py --slow 5 --same 10     # about 1 min per run on 2 cores

``make_repo`` is also what ``tests/test_asv_plugin.py`` builds its repository with.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
TEMPLATE = ROOT / "tests" / "plugin_family"

SUITE = '''[run]
name = "toy-suite"
seeds = [0]
timeout = 60
reference_timeout = 60

[asv]
metric = "distance"

[[problems]]
name = "toy/nearest-psd"
datasets = ["toy/noisy-corr"]
params = {{ n = [{n}] }}

[[solvers]]
name = "toy-altproj"
'''

SOLVER = "src/psdbench_toyfamily/altproj.py"


def _git(repo: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True,
                          env=env).stdout.strip()


def _slower(text: str, factor: float) -> str:
    """The solver, sleeping ``factor`` times as long as it solved (its thread's CPU time: what the
    solve takes on an idle core, whatever the machine's load) before it returns."""
    text = text.replace("        p = {**self.default_params, **params}\n",
                        "        import time\n        t0 = time.thread_time()\n"
                        "        p = {**self.default_params, **params}\n", 1)
    return text.replace("        final = unit_diagonal(X)\n",
                        "        final = unit_diagonal(X)\n"
                        f"        time.sleep({factor!r} * (time.thread_time() - t0))\n", 1)


def _unverified(text: str) -> str:
    """The solver, returning a point shifted off the PSD cone (smallest eigenvalue -0.01)."""
    return text.replace("        final = unit_diagonal(X)\n",
                        "        final = unit_diagonal(X) - 0.01 * np.eye(len(X))\n", 1)


def _raising(text: str) -> str:
    """The solver, raising where it would return its point (a crash on every instance)."""
    return text.replace("        final = unit_diagonal(X)\n",
                        "        raise RuntimeError(\"toy-altproj crashed on purpose\")\n", 1)


def make_repo(where: Path, n: int = 40) -> dict[str, str]:
    """The toy plugin repository in ``where/repo`` with ``asv.conf.json`` written by ``psdbench asv
    init``; returns ``{name: commit}`` for ``a``, ``a2``, ``slow``, ``b``, ``c``, ``d`` (each on ``a``)."""
    repo = where / "repo"
    shutil.copytree(TEMPLATE, repo, ignore=shutil.ignore_patterns("*.egg-info", "build", "__pycache__"))
    (repo / "src/psdbench_toyfamily/suites/toy-suite.toml").write_text(SUITE.format(n=n))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "a")
    commits = {"a": _git(repo, "rev-parse", "HEAD")}
    base = (repo / SOLVER).read_text()
    for name, text in (("a2", None), ("slow", _slower(base, 0.5)), ("b", _slower(base, 1.0)), ("c", _unverified(base)),
                       ("d", _raising(base))):
        _git(repo, "checkout", "-q", "-B", name, commits["a"])
        if text is None:
            _git(repo, "commit", "-q", "--allow-empty", "-m", name)
        else:
            (repo / SOLVER).write_text(text)
            _git(repo, "commit", "-qam", name)
        commits[name] = _git(repo, "rev-parse", "HEAD")
    _git(repo, "checkout", "-q", "main")
    out = subprocess.run([str(Path(sys.executable).parent / "psdbench"), "asv", "init", str(repo)], capture_output=True,
                         text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr)
    return commits


def asv_env(where: Path) -> dict[str, str]:
    """The environment the asv commands run in: a machine file of their own (``HOME``), one BLAS thread."""
    home = where / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "HOME": str(home), "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
           "MKL_NUM_THREADS": "1"}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    subprocess.run(["asv", "machine", "--yes", "--machine", "toy"], cwd=where / "repo", env=env, check=True,
                   capture_output=True)
    return env


def continuous(where: Path, env: dict[str, str], base: str, head: str, *extra: str) -> subprocess.CompletedProcess:
    """``asv continuous [extra] base head`` in the toy repository (``extra``: options, e.g. ``-e``)."""
    return subprocess.run(["asv", "continuous", *extra, base, head], cwd=where / "repo", env=env,
                          capture_output=True, text=True, timeout=900)


def flagged(out: subprocess.CompletedProcess) -> bool:
    """Whether the run names ``time_solve`` as worse (its table line starts with ``| +``)."""
    return out.returncode == 1 and any(line.startswith("| +") and ".time_solve(" in line
                                       for line in out.stdout.splitlines())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--slow", type=int, default=5, help="runs of a -> slow (1.5x)")
    ap.add_argument("--same", type=int, default=10, help="runs of a -> a2 (same code)")
    ap.add_argument("--n", type=int, default=40, help="the toy instance's size")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="psdbench-asv-rates-") as tmp:
        where = Path(tmp)
        commits = make_repo(where, args.n)
        env = asv_env(where)
        for label, head, runs in (("same code (a -> a2)", "a2", args.same),
                                  ("1.5x slower (a -> slow)", "slow", args.slow)):
            hits, secs = 0, []
            for i in range(runs):
                t0 = time.perf_counter()
                out = continuous(where, env, commits["a"], commits[head])
                secs.append(time.perf_counter() - t0)
                hit = flagged(out)
                hits += hit
                ratio = [line.split("|")[4].strip() for line in out.stdout.splitlines()
                         if line.startswith("|") and ".time_solve(" in line]
                print(f"{label} run {i + 1}: exit {out.returncode}, time_solve flagged: {hit}, "
                      f"ratio {ratio[0] if ratio else '(not listed: unchanged)'}, {secs[-1]:.0f} s", flush=True)
            print(f"{label}: flagged {hits} of {runs} runs ({sorted(secs)[len(secs) // 2]:.0f} s median per run)",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
