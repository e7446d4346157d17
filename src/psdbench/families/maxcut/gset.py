"""``gset-class/<name>``: seeded graphs of Gset's classes, at Gset's sizes and up to 10^6 nodes.

Gset (G1-G81) is the max-cut test set of Helmberg and Rendl (C. Helmberg, F. Rendl, "A spectral
bundle method for semidefinite programming", SIAM J. Optim. 10(3):673-696, 2000; ZIB report
SC 97-37, 1997), generated with G. Rinaldi's graph generator ``rudy``; the files are on Y. Ye's
page (web.stanford.edu/~yyye/yyye/Gset/), which this project cannot download.  Its graphs fall into
three classes, each with weights 1 or weights +-1 (each edge +1 or -1 with probability 1/2):

* **random**: ``rudy -rnd_graph n density seed`` draws exactly ``round(density * n (n-1) / 2)``
  edges uniformly among the pairs: G1-G10 (n = 800, 6 %: 19,176 edges), G22-G31 (n = 2,000, 1 %:
  19,990), G43-G47 (n = 1,000, 2 %: 9,990), G55-G56 (n = 5,000, 0.1 %: 12,498), G60-G61
  (n = 7,000, 0.07 %: 17,148), G70 (n = 10,000, 0.02 %: 9,999).  Each count is exactly the
  rounded ``density * n (n-1) / 2``, which is what :func:`random_graph` draws (G(n, m), not G(n, p)).
* **toroidal**: the 2-D toroidal grid, every node of degree 4, 2n edges: G11-G13 (800, +-1),
  G32-G34 (2,000, +-1), G48-G50 (3,000, weights 1), G57 (5,000, +-1), G62 (7,000), G65 (8,000),
  G66 (9,000), G67 and G72 (10,000), G77 (14,000), G81 (20,000: 40,000 edges), all +-1 but G48-G50.
  G32 (read from SDPLIB's ``maxG32``, Benson's relaxation of G32) is a 100 x 20 torus with its
  nodes numbered row by row (node 1's neighbours are 2, 20, 21 and 1981); the other shapes are not
  published, so ``toroidal-<n>`` takes the most nearly square shape ``a x b`` (``a <= b``, both at
  least 3) and ``toroidal-<a>x<b>`` a given one.
* **planar**: the union of two random planar graphs on the same nodes (rudy's ``-planar n 99``
  twice, summed): G14-G21 (n = 800, 4,661-4,694 edges), G35-G42 (2,000, 11,766-11,785),
  G51-G54 (1,000, 5,909-5,916), G58-G59 (5,000, 29,570), G63-G64 (7,000, 41,459); +-1 weights
  for G18-G21, G39-G42, G59, G64.  rudy's planar generator is not described in print; here each
  planar graph is the Delaunay triangulation of n uniform points in the unit square (scipy's
  Qhull) with a uniformly chosen ``round(density * (3n - 6))`` of its edges kept, density 0.99:
  the union then has within 1.5 % of Gset's edge counts (``tests/test_maxcut_gset.py``), which the
  table :data:`GSET` records.

Gset's node and edge counts (:data:`GSET`) are as listed with the best-known cuts of Benlic and
Hao (2013, see :mod:`.best_known`); the counts of G11, G32, G51 and G60 were checked here against
SDPLIB's thetaG11 (m = 2,401 = 1,600 + 800 + 1), maxG32 (4,000), maxG51 (5,909) and maxG60
(17,148) files.  The graphs generated here are of Gset's classes and sizes, not Gset's graphs:
their optimal cuts differ from the published ones (the report shows a best-known cut only for a
Gset graph itself).

Names: ``random-<n>-p<density>`` (density a fraction of the n (n-1) / 2 pairs) or
``random-<n>-d<mean degree>``; ``toroidal-<n>`` or ``toroidal-<a>x<b>``; ``planar-<n>`` (two
planar graphs at density 0.99) or ``planar-<n>-p<density>``; each optionally followed by ``-pm1``
(weights +-1; default 1) and ``-s<seed>`` (default 1).  The dataset's ``payload["graph"]`` is the
symmetric weighted adjacency (``scipy.sparse.csr_matrix``, float64, no diagonal, int32 indices
below 2^31 entries), ``payload["gset_class"]`` its settings.  The view ``<name>:sdp``
(``gset-class/toroidal-2000-pm1:sdp``) gives the same graph's max-cut relaxation in the SDP family's
standard form instead, ``payload["sdp"]`` (:class:`psdbench.families.sdp.data.SdpData`: ``min
<-L/4, X>`` s.t. ``X_ii = 1``, as SDPLIB's maxG files), so the interior-point solvers of ``sdp/standard``
run on the generated graphs too.  Generation is vectorised numpy: a
10^6-node toroidal or random sparse graph takes seconds and memory proportional to its edges.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from importlib import metadata
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench.api import DataError, Dataset

COLLECTION = "gset-class"
#: density of each of rudy's two planar graphs, as a fraction of a planar graph's 3n - 6 edges
PLANAR_DENSITY = 0.99
DEFAULT_SEED = 1


@dataclass(frozen=True)
class GraphSpec:
    """One generator setting: the class, its size and parameter, the weights and the seed."""

    kind: str  # "random", "toroidal" or "planar"
    n: int
    density: float | None = None  # random: fraction of pairs; planar: fraction of 3n - 6
    shape: tuple[int, int] | None = None  # toroidal: rows x columns
    pm1: bool = False
    seed: int = DEFAULT_SEED

    def name(self) -> str:
        """The canonical dataset name (without the collection)."""
        if self.kind == "toroidal":
            a, b = self.shape or torus_shape(self.n)
            base = f"toroidal-{a}x{b}" if self.shape else f"toroidal-{self.n}"
        elif self.kind == "random":
            base = f"random-{self.n}-p{_fmt(self.density)}"
        else:
            base = f"planar-{self.n}" + ("" if self.density == PLANAR_DENSITY else f"-p{_fmt(self.density)}")
        return base + ("-pm1" if self.pm1 else "") + ("" if self.seed == DEFAULT_SEED else f"-s{self.seed}")


def _fmt(x: float | None) -> str:
    return f"{x:.10g}"


#: Gset graph -> (class, n, edges, weights +-1): the published counts (module docstring)
GSET: dict[str, tuple[str, int, int, bool]] = {
    **{f"G{k}": ("random", 800, 19176, k >= 6) for k in range(1, 11)},
    **{f"G{k}": ("toroidal", 800, 1600, True) for k in (11, 12, 13)},
    "G14": ("planar", 800, 4694, False), "G15": ("planar", 800, 4661, False),
    "G16": ("planar", 800, 4672, False), "G17": ("planar", 800, 4667, False),
    "G18": ("planar", 800, 4694, True), "G19": ("planar", 800, 4661, True),
    "G20": ("planar", 800, 4672, True), "G21": ("planar", 800, 4667, True),
    **{f"G{k}": ("random", 2000, 19990, k >= 27) for k in range(22, 32)},
    **{f"G{k}": ("toroidal", 2000, 4000, True) for k in (32, 33, 34)},
    "G35": ("planar", 2000, 11778, False), "G36": ("planar", 2000, 11766, False),
    "G37": ("planar", 2000, 11785, False), "G38": ("planar", 2000, 11779, False),
    "G39": ("planar", 2000, 11778, True), "G40": ("planar", 2000, 11766, True),
    "G41": ("planar", 2000, 11785, True), "G42": ("planar", 2000, 11779, True),
    **{f"G{k}": ("random", 1000, 9990, False) for k in range(43, 48)},
    **{f"G{k}": ("toroidal", 3000, 6000, False) for k in (48, 49, 50)},
    "G51": ("planar", 1000, 5909, False), "G52": ("planar", 1000, 5916, False),
    "G53": ("planar", 1000, 5914, False), "G54": ("planar", 1000, 5916, False),
    "G55": ("random", 5000, 12498, False), "G56": ("random", 5000, 12498, True),
    "G57": ("toroidal", 5000, 10000, True),
    "G58": ("planar", 5000, 29570, False), "G59": ("planar", 5000, 29570, True),
    "G60": ("random", 7000, 17148, False), "G61": ("random", 7000, 17148, True),
    "G62": ("toroidal", 7000, 14000, True),
    "G63": ("planar", 7000, 41459, False), "G64": ("planar", 7000, 41459, True),
    "G65": ("toroidal", 8000, 16000, True), "G66": ("toroidal", 9000, 18000, True),
    "G67": ("toroidal", 10000, 20000, True), "G70": ("random", 10000, 9999, False),
    "G72": ("toroidal", 10000, 20000, True), "G77": ("toroidal", 14000, 28000, True),
    "G81": ("toroidal", 20000, 40000, True),
}


def gset_spec(graph: str, seed: int = DEFAULT_SEED) -> GraphSpec:
    """The generator setting of Gset graph ``graph``'s class and size (``"G1"`` -> random-800-p0.06)."""
    if graph not in GSET:
        raise DataError(f"unknown Gset graph {graph!r} (known: G1-G67, G70, G72, G77, G81)")
    kind, n, m, pm1 = GSET[graph]
    if kind == "random":
        density = _rudy_density(n, m)
        return GraphSpec("random", n, density=density, pm1=pm1, seed=seed)
    if kind == "toroidal":
        return GraphSpec("toroidal", n, shape=(100, 20) if graph == "G32" else None, pm1=pm1, seed=seed)
    return GraphSpec("planar", n, density=PLANAR_DENSITY, pm1=pm1, seed=seed)


def _rudy_density(n: int, m: int) -> float:
    """The density rudy was given: the round percentage whose edge count rounds to ``m``."""
    pairs = n * (n - 1) / 2
    for digits in range(1, 6):
        d = round(m / pairs, digits + 2)
        if round(d * pairs) == m:
            return d
    return m / pairs


_NAME = re.compile(r"^(?P<kind>random|toroidal|planar)-(?:(?P<a>\d+)x(?P<b>\d+)|(?P<n>\d+))"
                   r"(?:-(?P<par>[pd])(?P<val>\d+(?:\.\d+)?(?:e-?\d+)?))?(?P<pm1>-pm1)?(?:-s(?P<seed>\d+))?$")


def parse_name(name: str) -> GraphSpec:
    """The :class:`GraphSpec` of a dataset name (without ``gset-class/``); one-line ``DataError`` if malformed."""
    m = _NAME.match(name)
    bad = f"dataset {COLLECTION}/{name}: "
    if m is None:
        raise DataError(bad + "expected random-<n>-p<density>|-d<degree>, toroidal-<n>|<a>x<b> or planar-<n>, "
                        "then optionally -pm1 and -s<seed> (e.g. toroidal-20000-pm1, random-800-p0.06)")
    kind, par, val = m["kind"], m["par"], m["val"]
    seed = int(m["seed"]) if m["seed"] else DEFAULT_SEED
    pm1 = bool(m["pm1"])
    if m["a"]:
        if kind != "toroidal":
            raise DataError(bad + "a shape a x b is for toroidal grids only")
        a, b = int(m["a"]), int(m["b"])
        if min(a, b) < 3:
            raise DataError(bad + "a toroidal grid needs at least 3 rows and 3 columns")
        if par:
            raise DataError(bad + "a toroidal grid takes no density")
        return GraphSpec("toroidal", a * b, shape=(a, b), pm1=pm1, seed=seed)
    n = int(m["n"])
    if n < 3:
        raise DataError(bad + "n must be at least 3")
    if kind == "toroidal":
        if par:
            raise DataError(bad + "a toroidal grid takes no density")
        torus_shape(n, name)
        return GraphSpec("toroidal", n, pm1=pm1, seed=seed)
    if kind == "random":
        if not par:
            raise DataError(bad + "a random graph needs -p<density> or -d<mean degree>")
        x = float(val)
        density = x / (n - 1) if par == "d" else x
        if not 0 < density <= 1:
            raise DataError(bad + f"density {density:g} outside (0, 1]")
        if par == "d":  # a degree-named graph keeps its name's degree in the canonical name
            density = float(f"{density:.12g}")
        return GraphSpec("random", n, density=density, pm1=pm1, seed=seed)
    if par == "d":
        raise DataError(bad + "a planar graph takes -p<fraction of 3n - 6>, not a degree")
    density = float(val) if par else PLANAR_DENSITY
    if not 0 < density <= 1:
        raise DataError(bad + f"density {density:g} outside (0, 1]")
    return GraphSpec("planar", n, density=density, pm1=pm1, seed=seed)


def torus_shape(n: int, name: str | None = None) -> tuple[int, int]:
    """The most nearly square ``(a, b)``, ``a <= b``, ``a * b = n``, both at least 3."""
    for a in range(math.isqrt(n), 2, -1):
        if n % a == 0:
            return a, n // a
    raise DataError(f"dataset {COLLECTION}/{name or n}: {n} nodes make no toroidal grid with 3 rows and 3 columns "
                    "at least; name a shape (toroidal-<a>x<b>)")


def _index_dtype(n: int, nnz: int) -> type:
    return np.int32 if max(n, nnz) < 2**31 - 1 else np.int64


def _pairs_to_adjacency(n: int, i: np.ndarray, j: np.ndarray, w: np.ndarray) -> sp.csr_matrix:
    """The symmetric CSR adjacency of the undirected edges ``(i, j)`` (``i != j``, no repeats)."""
    idx = _index_dtype(n, 2 * len(i))
    rows = np.concatenate([i, j]).astype(idx, copy=False)
    cols = np.concatenate([j, i]).astype(idx, copy=False)
    A = sp.csr_matrix((np.concatenate([w, w]), (rows, cols)), shape=(n, n))
    A.sort_indices()
    return A


def random_graph(n: int, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``m`` distinct pairs ``i < j`` drawn uniformly among the ``n (n-1) / 2`` (G(n, m))."""
    total = n * (n - 1) // 2
    if m > total:
        raise DataError(f"{m} edges do not fit in {n} nodes")
    if m > total // 2:  # dense: choose the pairs directly
        keys = rng.choice(total, size=m, replace=False)
        i = (n - 2 - np.floor(np.sqrt(-8.0 * keys + 4.0 * n * (n - 1) - 7) / 2.0 - 0.5)).astype(np.int64)
        j = keys + i + 1 - total + (n - i) * ((n - i) - 1) // 2
        return i, j
    keys = np.empty(0, np.int64)
    while len(keys) < m:  # uniform unordered pairs by rejection of loops and repeats
        k = int((m - len(keys)) * 1.05) + 16
        a = rng.integers(0, n, size=k, dtype=np.int64)
        b = rng.integers(0, n, size=k, dtype=np.int64)
        keep = a != b
        lo, hi = np.minimum(a[keep], b[keep]), np.maximum(a[keep], b[keep])
        keys = np.unique(np.concatenate([keys, lo * n + hi]))
    keys = keys[np.sort(rng.choice(len(keys), size=m, replace=False))] if len(keys) > m else keys
    return keys // n, keys % n


def toroidal_graph(a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
    """The ``a x b`` toroidal grid, nodes numbered row by row: each joined to its right and lower neighbour."""
    v = np.arange(a * b, dtype=np.int64)
    r, c = v // b, v % b
    right = r * b + (c + 1) % b
    down = ((r + 1) % a) * b + c
    return np.concatenate([v, v]), np.concatenate([right, down])


def planar_graph(n: int, density: float, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """A random planar graph: the Delaunay triangulation of ``n`` uniform points, ``round(density (3n-6))`` edges kept."""
    from scipy.spatial import Delaunay

    pts = rng.random((n, 2))
    tri = Delaunay(pts).simplices.astype(np.int64)
    e = np.concatenate([tri[:, [0, 1]], tri[:, [1, 2]], tri[:, [0, 2]]])
    e.sort(axis=1)
    keys = np.unique(e[:, 0] * n + e[:, 1])
    keep = min(len(keys), round(density * (3 * n - 6)))
    keys = np.sort(rng.choice(keys, size=keep, replace=False))
    return keys // n, keys % n


def generate(spec: GraphSpec) -> sp.csr_matrix:
    """The symmetric weighted adjacency of ``spec``'s graph (deterministic in the spec and its seed)."""
    rng = np.random.default_rng([spec.seed, sum(map(ord, spec.kind)), spec.n])
    n = spec.n
    if spec.kind == "random":
        i, j = random_graph(n, round(spec.density * n * (n - 1) / 2), rng)
    elif spec.kind == "toroidal":
        i, j = toroidal_graph(*(spec.shape or torus_shape(n)))
    else:
        i1, j1 = planar_graph(n, spec.density, rng)
        i2, j2 = planar_graph(n, spec.density, rng)
        keys = np.union1d(i1 * n + j1, np.minimum(i2, j2) * n + np.maximum(i2, j2))
        i, j = keys // n, keys % n
    w = rng.choice(np.array([-1.0, 1.0]), size=len(i)) if spec.pm1 else np.ones(len(i))
    return _pairs_to_adjacency(n, i, j, w)


#: the names :meth:`GsetClassCollection.names` lists: every Gset class and size, and the 10^6 graphs
MILLION = ("toroidal-1000000-pm1", "toroidal-1000x1000", "random-1000000-d4", "random-1000000-d4-pm1")


class GsetClassCollection:
    """``gset-class/<name>``: seeded graphs of Gset's classes (module docstring); any size by name."""

    def names(self) -> list[str]:
        out = {gset_spec(g).name() for g in GSET}
        return sorted(out) + list(MILLION)

    def check(self, name: str) -> None:
        parse_name(_split(name)[0])

    def stamp(self, name: str) -> str:
        """numpy's and scipy's versions: the generator's output depends on nothing else but this code."""
        return f"numpy {metadata.version('numpy')}, scipy {metadata.version('scipy')}"

    def load(self, name: str) -> Dataset:
        base, view = _split(name)
        spec = parse_name(base)
        A = generate(spec)
        like = sorted((g for g in GSET if gset_spec(g).name() == spec.name()), key=lambda g: int(g[1:]))
        settings: dict[str, Any] = {"class": spec.kind, "n": spec.n, "density": spec.density,
                                    "shape": list(spec.shape or torus_shape(spec.n)) if spec.kind == "toroidal" else None,
                                    "weights": "+-1" if spec.pm1 else "1", "seed": spec.seed}
        meta = {"n": spec.n, "edges": A.nnz // 2, "gset_class_of": like}
        source = f"psdbench.families.maxcut.gset:{spec.name()}"
        if view == "sdp":
            return Dataset(name=f"{COLLECTION}/{name}", source=source, label_coding="", meta=meta,
                           payload={"sdp": maxcut_sdp(A, f"{COLLECTION}/{name}"), "gset_class": settings})
        return Dataset(name=f"{COLLECTION}/{name}", source=source, label_coding="", meta=meta,
                       payload={"graph": A, "gset_class": settings})


def _split(name: str) -> tuple[str, str | None]:
    base, _, view = name.partition(":")
    if view not in ("", "sdp"):
        raise DataError(f"dataset {COLLECTION}/{name}: unknown view {view!r} (known: sdp)")
    return base, view or None


def maxcut_sdp(W: sp.csr_matrix, name: str) -> Any:
    """The max-cut relaxation of ``W`` in the SDP family's form: ``min <-L/4, X>``, ``X_ii = 1`` (sparse, no n x n array)."""
    from psdbench.families.sdp.data import SdpData

    n = W.shape[0]
    L = (sp.diags(np.asarray(W.sum(axis=1)).ravel()) - W).tocoo()
    keep = L.data != 0
    cols = L.row[keep].astype(np.int64) * n + L.col[keep]
    c = sp.csr_matrix((-0.25 * L.data[keep], (np.zeros(keep.sum(), np.int64), cols)), shape=(1, n * n))
    A = sp.csr_matrix((np.ones(n), (np.arange(n), np.arange(n, dtype=np.int64) * (n + 1))), shape=(n, n * n))
    return SdpData(block_sizes=(n,), A=A, b=np.ones(n), c=c, name=name)
