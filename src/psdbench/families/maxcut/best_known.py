"""Best-known cuts of the Gset graphs from the literature, with their source (a table, not a dataset).

The numbers are the best cuts of breakout local search (U. Benlic and J.-K. Hao, "Breakout local
search for the max-cut problem", Eng. Appl. Artif. Intell. 26(3):1162-1173, 2013), in
``paper_values/gset_best_known.csv`` (its header states how they were transcribed and what was left
out).  A best-known cut is a feasible cut's weight, so a lower bound on the graph's max cut: a
certified SDP upper bound below it is an error of the bound, a rounded cut above it a new record.

Only a Gset graph itself has a best-known cut: the graphs of ``gset-class`` are of Gset's classes
and sizes, not Gset's graphs.  :data:`SDPLIB_GRAPHS` names the SDPLIB files that hold a Gset graph
(Benson's relaxations), each with the edge count of the file in ``$PSDBENCH_DATA/sdplib`` as read
here: a file whose graph has another edge count than the published one is not that Gset graph, and
gets no best-known cut.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from pathlib import Path

TABLE = Path(__file__).parent / "paper_values" / "gset_best_known.csv"
SOURCE = ("Benlic and Hao, Breakout local search for the max-cut problem, "
          "Eng. Appl. Artif. Intell. 26(3):1162-1173, 2013")

#: SDPLIB max-cut file -> (Gset graph, edges of the graph in the file as read here)
SDPLIB_GRAPHS: dict[str, tuple[str, int]] = {
    "maxG32": ("G32", 4000),
    "maxG51": ("G51", 5909),
    # the shared maxG55.dat-s holds 14,997 edges (density 0.12 %), Gset's G55 12,498 (0.1 %): not G55
    "maxG55": ("G55", 14997),
    "maxG60": ("G60", 17148),
}


@dataclass(frozen=True)
class BestKnown:
    """One row of the table."""

    graph: str
    nodes: int
    edges: int
    best_cut: float
    source: str = SOURCE


def table() -> dict[str, BestKnown]:
    """Gset graph -> its best-known cut, from ``paper_values/gset_best_known.csv``."""
    with TABLE.open() as fh:
        rows = csv.DictReader(ln for ln in fh if not ln.startswith("#"))
        return {r["graph"]: BestKnown(r["graph"], int(r["nodes"]), int(r["edges"]), float(r["best_cut"]))
                for r in rows}


def for_dataset(dataset: str) -> BestKnown | None:
    """The best-known cut of the Gset graph a dataset holds, or None (generated graphs, other files).

    ``sdplib/maxG32`` -> G32's row when the file's graph has G32's published edge count;
    ``gset/G1`` (a Gset file a user keeps under that collection name) -> G1's row.
    """
    coll, _, name = dataset.partition("/")
    rows = table()
    if coll == "sdplib" and name in SDPLIB_GRAPHS:
        graph, edges = SDPLIB_GRAPHS[name]
        row = rows.get(graph)
        return row if row is not None and row.edges == edges else None
    if coll == "gset":
        return rows.get(name)
    return None
