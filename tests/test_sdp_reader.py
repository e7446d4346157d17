"""SDPA sparse reader: every shared SDPLIB file against the published table, the format's corners,
one-line errors, and (where the optional sdpa extra is installed) sdpap's own reader."""

from __future__ import annotations

import csv
import gzip
import importlib.util

import numpy as np
import pytest
import scipy.sparse as sp

from psdbench.api import DataError
from psdbench.families.sdp.datasets import SdpaDirCollection, SdplibCollection, significant_digits
from psdbench.families.sdp.sdpa_io import parse_sdpa, read_sdpa, write_sdpa


def _table(data_dir):
    with (data_dir / "sdplib" / "sdplib_optimal_values.csv").open() as fh:
        return {r["problem"]: r for r in csv.DictReader(ln for ln in fh if not ln.startswith("#"))}


def test_every_shared_file_matches_the_table(data_dir):
    files = sorted((data_dir / "sdplib").glob("*.dat-s"))
    assert len(files) >= 40
    table = _table(data_dir)
    for f in files:
        d = read_sdpa(f)
        row = table[f.name[: -len(".dat-s")]]
        assert d.m == int(row["m"]), f.name
        assert d.n == int(row["n"]), f.name
        assert d.A.shape == (d.m, d.N) and d.b.shape == (d.m,)
        # every A_i and C symmetric within each PSD block
        for j, s in enumerate(d.block_sizes):
            if s > 0:
                Cj = d.C_blocks()[j]
                assert np.array_equal(Cj, Cj.T), f.name


def test_block_sizes_of_known_files(data_dir):
    assert read_sdpa(data_dir / "sdplib" / "arch0.dat-s").block_sizes == (161, -174)
    assert read_sdpa(data_dir / "sdplib" / "hinf1.dat-s").block_sizes == (4, 4, 6)
    assert read_sdpa(data_dir / "sdplib" / "truss1.dat-s").block_sizes == (2, 2, 2, 2, 2, 2, 1)


def test_braces_commas_and_gzip_read_the_same(data_dir, tmp_path):
    src = data_dir / "sdplib" / "mcp100.dat-s"  # its c line is written in braces with commas
    plain = read_sdpa(src)
    gz = tmp_path / "mcp100.dat-s.gz"
    gz.write_bytes(gzip.compress(src.read_bytes()))
    zipped = read_sdpa(gz)
    assert (plain.A != zipped.A).nnz == 0 and np.array_equal(plain.b, zipped.b)
    assert np.array_equal(plain.b, np.ones(100))


TWO_BLOCK = """"a two-block example, a PSD 2x2 block and a diagonal block of 2
* comments of both kinds
2 =mdim
2 =nblocks
{2, -2}
{1.5, -2.0}
0 1 1 1 1.0
0 1 1 2 0.5
0 2 2 2 3.0
1 1 1 1 1.0
1 1 2 2 1.0
1 2 1 1 1.0
2 1 1 2 1.0
2 2 2 2 -1.0
"""


def test_two_block_mapping_by_hand():
    """C = -F_0, A_i = F_i, b = c; both triangles of an off-diagonal entry; LP blocks as vectors."""
    d = parse_sdpa(TWO_BLOCK, "two-block")
    assert d.block_sizes == (2, -2) and d.m == 2 and d.N == 4 + 2
    C1, C2 = d.C_blocks()
    assert np.array_equal(C1, -np.array([[1.0, 0.5], [0.5, 0.0]]))
    assert np.array_equal(C2, -np.array([0.0, 3.0]))
    assert np.array_equal(d.A_block(0, 0).toarray(), np.eye(2))
    assert np.array_equal(d.A_block(0, 1).toarray(), np.diag([1.0, 0.0]))
    assert np.array_equal(d.A_block(1, 0).toarray(), np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert np.array_equal(d.A_block(1, 1).toarray(), np.diag([0.0, -1.0]))
    assert np.array_equal(d.b, [1.5, -2.0])
    # SDPA's pair at a point x (its primal) and Y (its dual) maps to ours: y = -x, Z = its X, X = its Y
    x = np.array([0.7, -0.3])
    F = [np.array([[1.0, 0.5], [0.5, 0.0]]), np.eye(2), np.array([[0.0, 1.0], [1.0, 0.0]])]
    Fl = [np.array([0.0, 3.0]), np.array([1.0, 0.0]), np.array([0.0, -1.0])]
    sdpa_X = (F[1] * x[0] + F[2] * x[1] - F[0], Fl[1] * x[0] + Fl[2] * x[1] - Fl[0])
    y = -x
    Z = d.c_dense() - d.At_op(y)
    Zb = d.split(Z)
    assert np.allclose(Zb[0], sdpa_X[0]) and np.allclose(Zb[1], sdpa_X[1])
    Y = (np.array([[2.0, 0.3], [0.3, 1.0]]), np.array([0.5, 0.25]))
    Xs = d.stack(list(Y))
    # SDPA dual objective <F_0, Y> = -<C, X>; SDPA primal objective c'x = -b'y
    assert np.isclose(np.sum(F[0] * Y[0]) + Fl[0] @ Y[1], -(d.c_dense() @ Xs))
    assert np.isclose(np.array([1.5, -2.0]) @ x, -(d.b @ y))
    # SDPA's constraints <F_i, Y> = c_i are A(X) = b
    assert np.allclose(d.A_op(Xs), [np.sum(F[i] * Y[0]) + Fl[i] @ Y[1] for i in (1, 2)])


def test_write_then_read_round_trip(tmp_path):
    d = parse_sdpa(TWO_BLOCK, "two-block")
    write_sdpa(d, tmp_path / "t.dat-s")
    e = read_sdpa(tmp_path / "t.dat-s")
    assert e.block_sizes == d.block_sizes and (e.A != d.A).nnz == 0 and (e.c != d.c).nnz == 0


_E = "0 1 1 1 1.0\n1 1 1 1 1.0\n"  # two well-formed entry lines

#: (what is wrong, the file's text, the whole one-line message)
MALFORMED = [
    ("2 blocks declared, one size given (would eat c)", "1\n2\n2\n1.0\n" + _E,
     "bad.dat-s:3: 2 blocks declared but the block-size line holds 1 number"),
    ("m one larger than the c values given (would eat an entry)", "2\n1\n2\n1.0\n" + _E,
     "bad.dat-s:4: m = 2 but the objective-vector line holds 1 number"),
    ("one block size too many", "1\n1\n2 3\n1.0\n" + _E,
     "bad.dat-s:3: 1 blocks declared but the block-size line holds 2 numbers"),
    ("one c value too many", "1\n1\n2\n1.0 2.0\n" + _E,
     "bad.dat-s:4: m = 1 but the objective-vector line holds 2 numbers"),
    ("a leftover token on an entry line", "1\n1\n2\n1.0\n0 1 1 1 1.0 7\n",
     "bad.dat-s:5: an entry line holds 6 tokens, not 5 (matrix, block, row, column, value): '0 1 1 1 1.0 7'"),
    ("a token missing on an entry line", "1\n1\n2\n1.0\n0 1 1 1\n1 1 1 1 1.0\n",
     "bad.dat-s:5: an entry line holds 4 tokens, not 5 (matrix, block, row, column, value): '0 1 1 1'"),
    ("m and the block count on one line", "1 1\n2\n1.0\n" + _E,
     "bad.dat-s:1: m (the number of constraint matrices) 1 is followed by the number '1' on its line "
     "(each count goes on a line of its own)"),
    ("an empty file", "", "bad.dat-s:0: the file ends before m (the number of constraint matrices)"),
    ("the file ends in the header", '"a comment\n1\n1\n2\n', "bad.dat-s:4: the file ends before the objective vector c"),
    ("m not a number", "x\n1\n2\n1.0\n", "bad.dat-s:1: m (the number of constraint matrices): 'x' is not a number"),
    ("m not an integer", "1.5\n1\n2\n1.0\n", "bad.dat-s:1: m (the number of constraint matrices) is not an integer: '1.5'"),
    ("m = 0", "0\n1\n2\n\n", "bad.dat-s:1: m (the number of constraint matrices) must be at least 1, got 0"),
    ("no blocks", "1\n0\n\n1.0\n", "bad.dat-s:2: the number of blocks must be at least 1, got 0"),
    ("a block of size 0", "1\n1\n0\n1.0\n", "bad.dat-s:3: a block size is 0"),
    ("a block size not an integer", "1\n1\n2.5\n1.0\n", "bad.dat-s:3: a block size is not an integer: '2.5'"),
    ("a non-number in c", "1\n1\n2\nq\n", "bad.dat-s:4: the objective vector c, value 1: 'q' is not a number"),
    ("a matrix number above m", "1\n1\n2\n1.0\n2 1 1 1 1.0\n",
     "bad.dat-s:5: entry '2 1 1 1 ...' names matrix 2, outside 0..m = 0..1"),
    ("a negative matrix number", "1\n1\n2\n1.0\n-1 1 1 1 1.0\n",
     "bad.dat-s:5: entry '-1 1 1 1 ...' names matrix -1, outside 0..m = 0..1"),
    ("a block number above nblocks", "1\n1\n2\n1.0\n0 2 1 1 1.0\n",
     "bad.dat-s:5: entry '0 2 1 1 ...' names block 2, outside 1..1"),
    ("a row outside its block", "1\n1\n2\n1.0\n0 1 3 1 1.0\n", "bad.dat-s:5: entry '0 1 3 1 ...' is outside its block of size 2"),
    ("an off-diagonal entry of an LP block", "1\n1\n-2\n1.0\n0 1 1 2 1.0\n",
     "bad.dat-s:5: entry '0 1 1 2 ...' is off the diagonal of a diagonal (negative-size) block"),
    ("one symmetric pair twice (both triangles)", "1\n1\n2\n1.0\n0 1 1 2 1.0\n\n0 1 2 1 1.0\n",
     "bad.dat-s:7: entry '0 1 2 1 ...' repeats the entry of line 5 (same matrix, block and symmetric pair)"),
    ("a non-number value", "1\n1\n2\n1.0\n0 1 1 1 abc\n", "bad.dat-s:5: an entry line holds a non-number: 'abc' is not a number"),
    ("a fractional index", "1\n1\n2\n1.0\n0 1 1.5 1 1.0\n",
     "bad.dat-s:5: entry '0 1 1.5 1 ...' has a matrix, block, row or column index that is not an integer"),
]


#: (what, the file's text, the whole one-line message): tokens Python's float reads but that are not
#: finite numbers in the SDPA format, in every place a number goes
NON_NUMBERS = [
    ("nan in c", "1\n1\n2\nnan\n" + _E, "bad.dat-s:4: the objective vector c, value 1: 'nan' is not a number (nan)"),
    ("inf in c", "2\n1\n2\n1.0 -inf\n" + _E, "bad.dat-s:4: the objective vector c, value 2: '-inf' is not a finite number"),
    ("infinity in c", "1\n1\n2\nInfinity\n" + _E,
     "bad.dat-s:4: the objective vector c, value 1: 'Infinity' is not a finite number"),
    ("overflow in c", "1\n1\n2\n1e400\n" + _E,
     "bad.dat-s:4: the objective vector c, value 1: '1e400' overflows double precision"),
    ("underscore in c", "1\n1\n2\n1_0\n" + _E,
     "bad.dat-s:4: the objective vector c, value 1: '1_0' is not a number in the SDPA format (Python's float reads it as 10.0)"),
    ("nan as an entry's value", "1\n1\n2\n1.0\n0 1 1 1 1.0\n1 1 1 1 nan\n",
     "bad.dat-s:6: an entry line holds a non-number: 'nan' is not a number (nan)"),
    ("inf as an entry's value", "1\n1\n2\n1.0\n0 1 1 1 inf\n",
     "bad.dat-s:5: an entry line holds a non-number: 'inf' is not a finite number"),
    ("overflow as an entry's value", "1\n1\n2\n1.0\n0 1 1 1 1.0\n\n1 1 1 1 -1e400\n",
     "bad.dat-s:7: an entry line holds a non-number: '-1e400' overflows double precision"),
    ("overflow in Fortran form", "1\n1\n2\n1.0\n0 1 1 1 1.0D+400\n",
     "bad.dat-s:5: an entry line holds a non-number: '1.0D+400' overflows double precision"),
    ("underscore in an entry's value", "1\n1\n2\n1.0\n0 1 1 1 1_0\n",
     "bad.dat-s:5: an entry line holds a non-number: '1_0' is not a number in the SDPA format (Python's float reads it as 10.0)"),
    ("underscore in an index", "1\n1\n2\n1.0\n0 1 1_0 1 1.0\n",
     "bad.dat-s:5: an entry line holds a non-number: '1_0' is not a number in the SDPA format (Python's float reads it as 10.0)"),
    ("inf as an index", "1\n1\n2\n1.0\n0 1 inf 1 1.0\n",
     "bad.dat-s:5: an entry line holds a non-number: 'inf' is not a finite number"),
    ("a block size -inf", "1\n1\n-inf\n1.0\n" + _E, "bad.dat-s:3: block size 1 of 1: '-inf' is not a finite number"),
    ("nblocks nan", "1\nnan\n2\n1.0\n" + _E, "bad.dat-s:2: the number of blocks: 'nan' is not a number (nan)"),
    ("m 1e400", "1e400\n1\n2\n1.0\n" + _E, "bad.dat-s:1: m (the number of constraint matrices): '1e400' overflows double precision"),
    ("m 1_0", "1_0\n1\n2\n1.0\n" + _E,
     "bad.dat-s:1: m (the number of constraint matrices): '1_0' is not a number in the SDPA format (Python's float reads it as 10.0)"),
    ("a sign apart from its block size", "1\n2\n{2, - 1}\n1.0\n" + _E,
     "bad.dat-s:3: block size 2 of 2: '-' is not a number (a sign must touch its digits)"),
    ("a sign apart from a c value", "2\n1\n2\n1.0 - 2.0\n" + _E,
     "bad.dat-s:4: the objective vector c, value 2: '-' is not a number (a sign must touch its digits)"),
    ("nan after a count", "1 nan\n1\n2\n1.0\n" + _E,
     "bad.dat-s:1: m (the number of constraint matrices) 1 is followed by the number 'nan' on its line (each count goes on a line of its own)"),
    ("nan after the block sizes", "1\n1\n2 nan\n1.0\n" + _E,
     "bad.dat-s:3: 1 blocks declared but the block-size line holds 2 numbers"),
    ("a Fortran D without exponent digits", "1\n1\n2\n1D\n" + _E, "bad.dat-s:4: the objective vector c, value 1: '1D' is not a number"),
    ("a Fortran D without mantissa", "1\n1\n2\n1.0\n0 1 1 1 D5\n", "bad.dat-s:5: an entry line holds a non-number: 'D5' is not a number"),
    ("two exponents", "1\n1\n2\n1.0\n0 1 1 1 1d2d3\n", "bad.dat-s:5: an entry line holds a non-number: '1d2d3' is not a number"),
    ("an exponent in E and D", "1\n1\n2\n1E2D3\n" + _E, "bad.dat-s:4: the objective vector c, value 1: '1E2D3' is not a number"),
    ("hexadecimal", "1\n1\n2\n0x1D\n" + _E, "bad.dat-s:4: the objective vector c, value 1: '0x1D' is not a number"),
]


@pytest.mark.parametrize("what, text, message", NON_NUMBERS, ids=[w for w, _, _ in NON_NUMBERS])
def test_every_non_number_is_refused_with_file_and_line(what, text, message):
    with pytest.raises(DataError) as exc:
        parse_sdpa(text, "bad.dat-s")
    assert str(exc.value) == message


def test_a_file_names_its_path_and_line(tmp_path):
    p = tmp_path / "sub" / "x.dat-s"
    p.parent.mkdir()
    p.write_text("1\n1\n2\n1.0\n0 1 1 1 1_0\n")
    with pytest.raises(DataError) as exc:
        read_sdpa(p, name="sdpa-dir/sub/x")
    assert str(exc.value).startswith(f"{p}:5: an entry line holds a non-number: '1_0'")
    assert len(str(exc.value).splitlines()) == 1


def test_numbers_the_format_allows():
    """Signs, points at either end, exponents in e, E, d and D, tiny values (rounding to 0)."""
    d = parse_sdpa("2\n1\n{-2}\n+1. -.5\n0 1 1 1 1.5d-1\n1 1 1 1 -2E+0\n2 1 2 2 1e-400\n2 1 1 1 .25D1\n", "ok")
    assert d.block_sizes == (-2,) and list(d.b) == [1.0, -0.5]
    assert d.c_dense()[0] == -0.15 and d.A.toarray()[0, 0] == -2.0 and d.A.toarray()[1, 0] == 2.5
    assert d.A[1, 1] == 0.0


@pytest.mark.parametrize("what, text, message", MALFORMED, ids=[w for w, _, _ in MALFORMED])
def test_malformed_files_give_one_line_errors(what, text, message):
    with pytest.raises(DataError) as exc:
        parse_sdpa(text, "bad.dat-s")
    assert str(exc.value) == message


def test_malformed_variants_are_many_and_distinct():
    assert len(MALFORMED) >= 15 and len({m for _, _, m in MALFORMED}) == len(MALFORMED)


def test_the_format_s_allowances_still_read():
    """Comments after the counts (SDPA's own examples), punctuation, Fortran exponents, blank and
    comment lines between entries."""
    d = parse_sdpa('"ex\n2 =mDIM\n2 = nBLOCK\n{2, -1} = bLOCKsTRUCT\n{1.0, 2D0}\n0 1 1 1 1.0\n\n*c\n1 1 1 1 1.0D0\n'
                   "2 2 1 1 1\n", "ok")
    assert d.block_sizes == (2, -1) and list(d.b) == [1.0, 2.0] and d.A.nnz == 2


def test_missing_and_corrupt_gzip(tmp_path):
    with pytest.raises(DataError, match="cannot read"):
        read_sdpa(tmp_path / "nope.dat-s")
    bad = tmp_path / "bad.dat-s.gz"
    bad.write_bytes(b"\x1f\x8b" + b"junk")
    with pytest.raises(DataError, match="corrupt gzip"):
        read_sdpa(bad)


def test_collections(data_dir, monkeypatch, tmp_path):
    monkeypatch.setenv("PSDBENCH_DATA", str(data_dir))
    col = SdplibCollection()
    assert {"theta1", "mcp100", "arch0"} <= set(col.names())
    ds = col.load("theta1")
    assert ds.payload["published"] == pytest.approx(23.0) and ds.payload["published_digits"] == 7
    with pytest.raises(DataError, match="leaves"):
        col.check("../sgml_example_subsets/x")
    with pytest.raises(DataError, match="missing SDPA file"):
        col.check("nope")
    monkeypatch.delenv("PSDBENCH_SDPA_DIR", raising=False)
    with pytest.raises(DataError, match="PSDBENCH_SDPA_DIR"):
        SdpaDirCollection().names()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "two.dat-s").write_text(TWO_BLOCK)
    monkeypatch.setenv("PSDBENCH_SDPA_DIR", str(tmp_path))
    user = SdpaDirCollection()
    assert user.names() == ["mine/two"]
    assert user.load("mine/two").payload["sdp"].block_sizes == (2, -2)
    with pytest.raises(DataError, match="leaves"):
        user.check("../etc/passwd")


def test_significant_digits():
    assert significant_digits("-4.360e+02") == 4
    assert significant_digits("2e-1") == 1
    assert significant_digits("2.300000e+01") == 7


@pytest.mark.skipif(importlib.util.find_spec("sdpap") is None, reason="optional sdpa extra not installed")
@pytest.mark.parametrize("name", ["truss1", "hinf1", "control1", "arch0", "theta1", "qap5"])
def test_against_sdpap_fromsdpa(data_dir, name):
    """sdpap reads the same file into SeDuMi arrays: the same A_i = F_i and b = c, block by block.

    ``sdpap.fromsdpa`` (``importsdpa(flipsign=False)``) keeps ``F_0`` itself as the SeDuMi cost:
    its ``c`` is ``F_0 = -C`` (solving those arrays as given is min <F_0, Y>, not SDPA's
    max <F_0, Y>; on truss1 SDPA then reports pUNBD).  So its ``c`` is compared with ``-C``.
    """
    import sdpap

    A, b, c, K, J = sdpap.fromsdpa(str(data_dir / "sdplib" / f"{name}.dat-s"))
    d = read_sdpa(data_dir / "sdplib" / f"{name}.dat-s")
    lp = [np.arange(o, o + -s) for o, s in zip(d.offsets, d.block_sizes) if s < 0]
    ps = [np.arange(o, o + s * s) for o, s in zip(d.offsets, d.block_sizes) if s > 0]
    perm = np.concatenate(lp + ps)
    assert np.allclose(np.asarray(b.todense() if sp.issparse(b) else b).ravel(), d.b)
    Aref = sp.csr_matrix(A)
    assert Aref.shape == (d.m, d.N)
    assert abs(Aref - d.A[:, perm]).max() < 1e-12
    cref = np.asarray(sp.csr_matrix(c).todense()).ravel()
    assert np.allclose(cref, -d.c_dense()[perm])
