"""The reference cache shared by stores: a new store reuses certified references, a corrupted or
stale entry is recomputed (never trusted), writes are atomic, and it can be moved or turned off.

Every test points the cache at a temporary folder (``conftest.py`` sets ``PSDBENCH_REF_CACHE``
per test; the tests below name their own folders), never at the user's cache directory.
"""

from __future__ import annotations

import json
import sqlite3
from importlib.metadata import version
from pathlib import Path

import pytest

from psdbench.harness.store.refcache import ENV, ReferenceCache, default_folder

from .test_harness import cli, grid


def _record(key: str, value: float = 10.0, lower: float = 10.0 - 1e-7, **kw) -> dict:
    return {"instance_key": key, "problem": "p", "dataset": "d", "instance_params": {"n": 3}, "seed": 0,
            "value": value, "lower": lower, "gap": value - lower, "kind": "certified", "solver": "clarabel",
            "solver_version": version("clarabel"), "status": "ok", "wall_time_s": 1.0, "message": "", **kw}


def test_entries_round_trip_and_untrusted_ones_are_rejected(tmp_path):
    cache = ReferenceCache(tmp_path / "c")
    assert cache.get("ab12", "r1") is None and cache.rejected == 0  # absent: not a rejection
    assert cache.put("ab12", "r1", _record("ab12"))
    assert cache.get("ab12", "r1") == _record("ab12") and cache.get("ab12", "r2") is None
    assert not list((tmp_path / "c").rglob(".tmp-*"))  # the temporary file was renamed into place
    assert not cache.put("cd34", "r1", _record("cd34", kind="best_verified"))  # only certified ones are kept

    path = cache.path("ab12", "r1")
    entry = json.loads(path.read_text())
    entry["record"]["value"] = 9.0  # a changed number: the checksum no longer matches
    path.write_text(json.dumps(entry))
    assert cache.get("ab12", "r1") is None and cache.rejected == 1
    path.write_text(path.read_text()[:40])  # truncated
    assert cache.get("ab12", "r1") is None and cache.rejected == 2

    loose = _record("ef56", lower=9.0)  # an interval that is not certified, with a valid checksum
    cache.put("ef56", "r1", {**loose, "kind": "certified"})
    assert cache.get("ef56", "r1") is None
    stale = _record("0a0b", solver_version="0.0.0-not-installed")  # computed by another clarabel
    cache.put("0a0b", "r1", stale)
    assert cache.get("0a0b", "r1") is None and cache.rejected == 4


def test_the_folder_comes_from_the_option_the_environment_or_the_user_cache(tmp_path, monkeypatch):
    monkeypatch.setenv(ENV, str(tmp_path / "env"))
    assert ReferenceCache.resolve(True).folder == tmp_path / "env"
    assert ReferenceCache.resolve(tmp_path / "opt").folder == tmp_path / "opt"
    assert ReferenceCache.resolve(False) is None
    monkeypatch.setenv(ENV, "off")
    assert ReferenceCache.resolve(True) is None
    monkeypatch.delenv(ENV)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_folder() == tmp_path / "xdg" / "psdbench" / "references"


def _refs(db: Path) -> dict[str, tuple]:
    with sqlite3.connect(db) as con:
        return {k: (v, lo, kind, msg) for k, v, lo, kind, msg in
                con.execute("SELECT instance_key, value, lower, kind, message FROM refs")}


def test_a_second_store_reuses_certified_references_and_a_corrupt_entry_is_recomputed(tmp_path):
    g = grid(tmp_path, ["gdpa-lp"], seeds=(0, 1))
    cache = tmp_path / "cache"
    run = ["run", "--grid", g, "--report", "", "--quiet", "--jobs", "2", "--ref-cache", cache]
    first = cli([*run, "--db", tmp_path / "a.sqlite"])
    assert first.returncode == 0, first.stderr
    a = _refs(tmp_path / "a.sqlite")
    assert len(a) == 2 and {r[2] for r in a.values()} == {"certified"} and "reused" not in first.stdout
    entries = sorted(cache.rglob("*.json"))
    assert len(entries) == 2

    second = cli([*run, "--db", tmp_path / "b.sqlite"])
    assert second.returncode == 0 and "2 references reused from cache" in second.stdout, second.stdout
    b = _refs(tmp_path / "b.sqlite")
    assert {k: v[:3] for k, v in b.items()} == {k: v[:3] for k, v in a.items()}
    assert all(v[3].startswith("from the reference cache") for v in b.values())

    entries[0].write_text(entries[0].read_text().replace('"value": ', '"value": 1', 1))  # corrupted
    third = cli([*run, "--db", tmp_path / "c.sqlite"])
    assert third.returncode == 0, third.stderr
    assert "1 references reused from cache" in third.stdout and "1 cached references rejected" in third.stdout
    c = _refs(tmp_path / "c.sqlite")
    assert {k: v[:3] for k, v in c.items()} == {k: v[:3] for k, v in a.items()}  # recomputed, not the corrupt one
    assert sum(not v[3].startswith("from the reference cache") for v in c.values()) == 1
    assert ReferenceCache(cache).get(*entries[0].stem.split("-")) is not None  # rewritten by the recomputation

    off = cli([*run[:-2], "--no-ref-cache", "--db", tmp_path / "d.sqlite"])
    assert off.returncode == 0 and "reused" not in off.stdout


def test_a_ref_cache_that_is_a_file_is_bad_input(tmp_path):
    g = grid(tmp_path, ["gdpa-lp"])
    (tmp_path / "file").write_text("")
    out = cli(["run", "--grid", g, "--db", tmp_path / "r.sqlite", "--report", "", "--ref-cache", tmp_path / "file"])
    assert out.returncode == 2 and "--ref-cache" in out.stderr and not (tmp_path / "r.sqlite").exists()
