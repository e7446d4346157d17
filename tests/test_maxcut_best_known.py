"""Best-known Gset cuts: the table, its agreement with the generator's counts and SDPLIB's files, Gset files."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.api import DataError
from psdbench.families.maxcut import best_known
from psdbench.families.maxcut.gset import GSET, GsetClassCollection
from psdbench.families.maxcut.gset_files import GsetFileCollection


def test_table_rows_and_counts_agree_with_the_generator_table():
    rows = best_known.table()
    assert len(rows) == len(GSET) - 2  # every Gset graph but G30 and G31 (transcriptions disagree)
    assert "G30" not in rows and "G31" not in rows
    assert rows["G1"].best_cut == 11624 and rows["G1"].edges == 19176
    assert rows["G81"].nodes == 20000 and rows["G81"].edges == 40000
    for g, r in rows.items():
        assert (r.nodes, r.edges) == GSET[g][1:3]
        assert r.best_cut <= r.edges or GSET[g][3]  # weights 1: a cut cuts at most every edge
    # G48, G49: even tori with weights 1 are bipartite, every edge is cut
    assert rows["G48"].best_cut == rows["G48"].edges == 6000


def test_sdplib_files_hold_the_edge_counts_the_mapping_states(data_dir):
    from psdbench.families.sdp.sdpa_io import read_sdpa

    for name, (_graph, edges) in best_known.SDPLIB_GRAPHS.items():
        c = read_sdpa(data_dir / "sdplib" / f"{name}.dat-s").c.tocsr()
        n = int(round(c.shape[1] ** 0.5))
        r, k = np.divmod(c.indices, n)
        assert int((r < k).sum()) == edges, name


def test_best_known_only_beside_the_gset_graph_itself():
    assert best_known.for_dataset("sdplib/maxG32").best_cut == 1410
    assert best_known.for_dataset("sdplib/maxG60").best_cut == 14176
    assert best_known.for_dataset("sdplib/maxG55") is None  # the shared file is not G55 (14,997 edges)
    assert best_known.for_dataset("gset-class/toroidal-2000-pm1") is None
    assert best_known.for_dataset("gset/G11").best_cut == 564


def _write(path, W):
    T = sp.triu(W, 1).tocoo()
    lines = [f"{W.shape[0]} {T.nnz}"] + [f"{i + 1} {j + 1} {int(w)}" for i, j, w in zip(T.row, T.col, T.data)]
    path.write_text("\n".join(lines) + "\n")


def test_gset_file_collection_reads_and_checks_counts(tmp_path, monkeypatch):
    monkeypatch.setenv("PSDBENCH_DATA", str(tmp_path))
    (tmp_path / "gset").mkdir()
    W = GsetClassCollection().load("toroidal-800-pm1").payload["graph"]
    _write(tmp_path / "gset" / "G11", W)
    coll = GsetFileCollection()
    assert coll.names() == ["G11"]
    ds = coll.load("G11")
    assert (ds.payload["graph"] != W).nnz == 0
    _write(tmp_path / "gset" / "G12.txt", W[:700, :700])  # 700 nodes: not G12
    with pytest.raises(DataError, match="Gset's G12 800 and 1600"):
        coll.load("G12")
    with pytest.raises(DataError, match="missing Gset file"):
        coll.check("G13")
