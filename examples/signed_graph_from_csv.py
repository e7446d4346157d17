"""Learn a balanced signed graph from a CSV of observations and print its polarities and edges.

The CSV holds one row per node and one column per observation (comma, semicolon, tab or
whitespace separated; a header row is skipped).  The learner is ``balanced-clime`` (BSGL paper,
sections IV-V) with its defaults::

    python examples/signed_graph_from_csv.py observations.csv
"""

from __future__ import annotations

import argparse

from psdbench.families.signed_graph.data import read_observations
from psdbench.families.signed_graph.balanced_clime import balanced_clime


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv", help="N nodes (rows) x K observations (columns)")
    a = ap.parse_args()
    X = read_observations(a.csv)
    result = balanced_clime(X)
    print(f"{X.shape[0]} nodes, {X.shape[1]} observations; {result.sweeps} sweeps")
    print("polarities:", result.polarity.astype(int))
    for i, j, w in result.edges():
        print(f"  {i} -- {j}  weight {w:+.3f}  ({'positive' if w > 0 else 'negative'})")


if __name__ == "__main__":
    main()
