"""What a run records of where it ran, beyond the machine's basics: the environment (every installed
distribution and the hash of that list), the GPUs, the BLAS libraries' builds, and the machine class.

:func:`psdbench.harness.runner.machine_info` puts these in the ``runs`` row (JSON columns, no schema
change); the exported dataset lifts the two hashes into columns of its own (``machine_fingerprint``,
``environment_hash``), so runs can be told apart and grouped by machine class without parsing JSON.
"""

from __future__ import annotations

import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any, Mapping

__all__ = ["blas_builds", "cpu_model", "environment", "gpus", "machine_class", "machine_record", "recorded_class"]

#: The machine's keys that define its class: the same CPU, cores, memory and OS architecture.
CLASS_KEYS = ("processor", "cpus", "memory_gb", "system", "architecture")


def environment() -> dict[str, Any]:
    """``{"distributions": {name: version}, "hash": sha256 of the sorted "name==version" lines}``
    of every distribution installed in this environment (names normalised, lowercase)."""
    from importlib.metadata import distributions

    dists: dict[str, str] = {}
    for d in distributions():
        name = (d.metadata.get("Name") or "").strip().lower().replace("_", "-")
        if name and name not in dists:  # the first one found is the one Python imports
            dists[name] = d.version or ""
    lines = "\n".join(f"{k}=={v}" for k, v in sorted(dists.items()))
    return {"distributions": dict(sorted(dists.items())), "hash": hashlib.sha256(lines.encode()).hexdigest()[:20]}


def gpus(timeout: float = 5.0) -> list[str]:
    """The GPUs ``nvidia-smi -L`` lists (one line each); empty where there is none or no driver."""
    exe = shutil.which("nvidia-smi")
    if exe is None:
        return []
    try:
        out = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=timeout)
    except (OSError, subprocess.SubprocessError):
        return []
    return [ln.strip() for ln in out.stdout.splitlines() if ln.strip()] if out.returncode == 0 else []


def blas_builds(pools: list[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Each thread pool threadpoolctl sees (BLAS, LAPACK, OpenMP): its API, library, version, build
    (threading layer, architecture), file and threads."""
    keys = ("user_api", "internal_api", "version", "threading_layer", "architecture", "filepath", "num_threads")
    return [{k: p.get(k) for k in keys if p.get(k) is not None} for p in pools]


def machine_class(machine: Mapping[str, Any]) -> str:
    """A hash of the machine's class (:data:`CLASS_KEYS`): two runs with the same one ran on machines
    of the same CPU model, cores, memory and architecture, whose times compare."""
    return hashlib.sha256(json.dumps({k: machine.get(k) for k in CLASS_KEYS}, sort_keys=True,
                                     default=str).encode()).hexdigest()[:16]


def recorded_class(machine: Mapping[str, Any]) -> str | None:
    """The class hash of a run's recorded machine: its ``fingerprint``, else (a run recorded before
    fingerprints) :func:`machine_class` of its processor, CPUs and memory with the system and
    architecture read back from its ``platform`` (``platform.platform()``: ``System-release-...-arch-with-libc``
    on Linux); None where the record does not hold them all."""
    if machine.get("fingerprint"):
        return str(machine["fingerprint"])
    plat = str(machine.get("platform") or "")
    head = plat.split("-with-", 1)[0].split("-")
    if not all(machine.get(k) is not None for k in ("processor", "cpus", "memory_gb")) or len(head) < 3 \
            or "-with-" not in plat:
        return None
    return machine_class({**machine, "system": head[0], "architecture": head[-1]})


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``'s "model name"), else :func:`platform.processor`."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.lower().startswith("model name") and ":" in line:
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor()


def machine_record(distributions: bool = True) -> dict[str, Any]:
    """This machine as a run records it: OS, CPU model and count, memory, Python, GPUs, its class's
    hash (``fingerprint``) and the environment (with ``distributions=False`` its hash only, as a
    Dask worker's record keeps it)."""
    import psutil

    machine: dict[str, Any] = {
        "platform": platform.platform(), "processor": cpu_model(), "cpus": os.cpu_count(),
        "memory_gb": round(psutil.virtual_memory().total / 2**30, 1), "python": sys.version.split()[0],
        "system": platform.system(), "architecture": platform.machine(), "gpus": gpus()}
    machine["fingerprint"] = machine_class(machine)
    env = environment()
    machine["environment"] = env if distributions else {"hash": env["hash"], "count": len(env["distributions"])}
    return machine
