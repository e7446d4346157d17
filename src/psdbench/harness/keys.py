"""What identifies an instance and a cell: the hashes behind ``instance_key`` and ``cell_key``.

An instance key hashes the problem, dataset name, instance parameters, seed, psdbench's version
and the dataset's content (:func:`dataset_fingerprint`), so a corrected data file gives its
instances new keys and resume runs their cells again; a cell key adds the solver, its parameters
and the versions of the libraries it reports.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .. import __version__


def stable_hash(obj: Any) -> str:
    """SHA-256 (20 hex digits) of ``obj`` as canonical JSON (sorted keys, ``str`` for the rest)."""
    return hashlib.sha256(json.dumps(obj, sort_keys=True, default=str).encode()).hexdigest()[:20]


def instance_key(problem: str, dataset: str, params: dict[str, Any], seed: int, content: str = "") -> str:
    """Key of one instance; ``content`` is the dataset's :func:`dataset_fingerprint`, so that a changed
    data file gives its instances (and their cells) new keys and resume runs them again."""
    return stable_hash(["instance", problem, dataset, params, seed, __version__] + ([content] if content else []))


def _feed(h: Any, v: Any) -> None:
    """Feed ``v`` (arrays, sparse matrices, mappings, sequences, scalars) into the hash ``h``."""
    import numpy as np
    import scipy.sparse as sp

    if sp.issparse(v):
        v = v.tocsr()
        for part in (v.data, v.indices, v.indptr):
            _feed(h, part)
        h.update(repr(v.shape).encode())
    elif isinstance(v, np.ndarray):
        a = np.ascontiguousarray(v)
        h.update(f"{a.dtype.str}{a.shape}".encode())
        h.update(a.tobytes() if a.dtype != object else repr(a.tolist()).encode())
    elif isinstance(v, dict):
        for k in sorted(v, key=str):
            h.update(repr(k).encode())
            _feed(h, v[k])
    elif isinstance(v, (list, tuple)):
        h.update(f"[{len(v)}".encode())
        for x in v:
            _feed(h, x)
    else:
        h.update(repr(v).encode())


def dataset_fingerprint(ds: Any) -> str:
    """SHA-256 (20 hex digits) of a loaded dataset's content: ``X``, ``y`` and ``payload``."""
    h = hashlib.sha256()
    for part in (getattr(ds, "X", None), getattr(ds, "y", None), dict(getattr(ds, "payload", None) or {})):
        _feed(h, part)
    return h.hexdigest()[:20]
