"""What a run records of where it ran, beyond the machine's basics: the environment (every installed
distribution and the hash of that list), the GPUs, the BLAS libraries' builds, and the machine class.

:func:`psdbench.harness.runner.machine_info` puts these in the ``runs`` row (JSON columns, no schema
change); the exported dataset lifts the two hashes into columns of its own (``machine_fingerprint``,
``environment_hash``), so runs can be told apart and grouped by machine class without parsing JSON.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from typing import Any, Mapping

__all__ = ["blas_builds", "environment", "gpus", "machine_class"]

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
