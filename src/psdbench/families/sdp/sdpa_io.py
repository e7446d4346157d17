"""Reader of the SDPA sparse format (``.dat-s``, also gzipped ``.dat-s.gz``).

The format (SDPA manual; SDPLIB's README), read strictly::

    "comment lines start with a double quote or an asterisk (anywhere; blank lines too)
    m                    number of constraint matrices F_1..F_m, alone on its line (a comment such as
                         ``=mDIM`` may follow it, a second number may not)
    nblocks              number of blocks, alone on its line likewise
    s_1 s_2 ...          exactly nblocks block sizes on ONE line; negative = diagonal (LP) block
    c_1 ... c_m          exactly m numbers on ONE line (the objective vector)
    k j r c value        one entry per line, exactly five numbers: entry (r, c) of block j of F_k
                         (k = 0..m, j = 1..nblocks, r, c within |s_j|, r = c in an LP block), upper
                         or lower triangle, each symmetric pair at most once

Braces, parentheses and commas count as blanks.  A number is a finite double written as
:data:`NUMBER` says (sign, digits, point, ``e`` exponent; Fortran's ``D`` exponent only between a
mantissa and its exponent digits, ``1.0D+00``): ``nan``, ``inf``, a value that overflows
(``1e400``), underscores (``1_0``, which Python's ``float`` reads as 10), a sign apart from its
digits (``{2, - 1}``) and a ``D`` anywhere else (``1D``, ``D5``, ``1d2d3``) are refused.  Every
count is checked against what follows, and a line with fewer or more numbers than its count says
is an error naming the file and the line (``name:line: what``), one line, never read on into the
next line: a missing block size would otherwise eat ``c``, a missing ``c`` value an entry.  Every
SDPLIB 1.2 file has this layout (tests/test_sdp_reader.py reads all of them).

SDPA's pair is (P) min c'x s.t. sum_i F_i x_i - F_0 = X psd, (D) max <F_0, Y> s.t. <F_i, Y> = c_i,
Y psd.  psdbench's DIMACS form (see :mod:`.data`) takes ``C = -F_0``, ``A_i = F_i``, ``b = c``;
then the file's ``Y`` is our ``X``, ``y = -x`` and ``Z`` is the file's ``X``, and our primal
objective ``<C, X> = -<F_0, Y>`` is the negative of SDPA's dual objective.

Every malformed file is a one-line :class:`~psdbench.api.DataError` naming the file and line.
"""

from __future__ import annotations

import gzip
import math
import re
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from psdbench.api import DataError

from .data import SdpData

_PUNCT = re.compile(r"[{}(),]")


def _open_text(path: Path) -> str:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read SDPA file {path}: {exc.strerror or exc}") from None
    if raw[:2] == b"\x1f\x8b":
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise DataError(f"{path}: corrupt gzip data ({exc})") from None
    try:
        return raw.decode("ascii", errors="strict")
    except UnicodeDecodeError:
        return raw.decode("latin-1")


def read_sdpa(path: str | Path, name: str | None = None) -> SdpData:
    """Read an SDPA sparse file into :class:`SdpData` (``C = -F_0``, ``A_i = F_i``, ``b = c``).

    Parameters
    ----------
    path : str or Path
        A ``.dat-s`` file, plain or gzipped (detected from its first bytes).
    name : str, optional
        The data's name (default: the file name); messages name the file's path.

    Raises
    ------
    DataError
        One line ``path:line: what`` (a count that disagrees with what follows, a missing or
        leftover token, an entry outside the declared matrices or blocks, a token that is not a
        finite number by :data:`NUMBER`, an off-diagonal entry of an LP block, a repeated entry).
    """
    path = Path(path)
    return parse_sdpa(_open_text(path), name or path.name, where=str(path))


#: A number as the reader accepts it: optional sign, digits with an optional point (or a point and
#: digits), an optional exponent ``e`` / ``E`` with optional sign and digits.  Fortran's ``D`` /
#: ``d`` exponent is accepted only in that place (``1.0D+00``, :data:`_FORTRAN`).  Everything else
#: Python's ``float`` would also take is refused: ``nan``, ``inf``, ``infinity``, underscores
#: (``1_0`` is 10 to ``float``), a sign apart from its digits; and a value that overflows double
#: precision (``1e400``).
NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
#: Fortran's exponent: ``D`` or ``d`` between a mantissa with digits and an integer exponent.
_FORTRAN = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)[dD][+-]?\d+")
#: Characters a line of numbers may hold once Fortran exponents are read as ``e``.
_NOT_NUMERIC = re.compile(r"[^0-9eE+\-.\s]")
_FORTRAN_D = re.compile(r"(?<=[0-9.])[dD](?=[+-]?\d)")


def _number(tok: str) -> float | None:
    """``tok`` as a finite double by :data:`NUMBER` (or Fortran's ``D`` exponent); else ``None``."""
    if NUMBER.fullmatch(tok) is None:
        if _FORTRAN.fullmatch(tok) is None:
            return None
        tok = _FORTRAN_D.sub("e", tok)
    v = float(tok)
    return v if math.isfinite(v) else None


def _why(tok: str) -> str:
    """Why ``tok`` is not a number the reader accepts (the tail of a one-line message)."""
    if NUMBER.fullmatch(tok) or _FORTRAN.fullmatch(tok):
        return f"{tok!r} overflows double precision"
    try:
        v = float(tok)
    except ValueError:
        if tok in "+-":
            return f"{tok!r} is not a number (a sign must touch its digits)"
        return f"{tok!r} is not a number"
    if v != v:
        return f"{tok!r} is not a number (nan)"
    if math.isinf(v):
        return f"{tok!r} is not a finite number"
    return f"{tok!r} is not a number in the SDPA format (Python's float reads it as {v!r})"


def _looks_numeric(tok: str) -> bool:
    """A token Python's ``float`` would read (``nan``, ``1_0``, ``1e400`` too): never a comment."""
    try:
        float(_FORTRAN_D.sub("e", tok))
    except ValueError:
        return False
    return True


class _Lines:
    """The file's lines that hold data (comment and blank lines skipped), with their line numbers."""

    def __init__(self, lines: list[str], where: str) -> None:
        self.lines, self.where, self.i = lines, where, 0

    def next(self, what: str) -> tuple[int, list[str]]:
        """The next data line's number (1-based) and tokens (braces, parentheses and commas removed)."""
        while self.i < len(self.lines):
            line = self.lines[self.i]
            self.i += 1
            s = line.strip()
            if s and s[0] not in "\"*":
                return self.i, _PUNCT.sub(" ", s).replace("=", " =").split()
        raise DataError(f"{self.where}:{len(self.lines)}: the file ends before {what}")

    def fail(self, lineno: int, msg: str) -> DataError:
        return DataError(f"{self.where}:{lineno}: {msg}")


def _count(src: _Lines, what: str) -> int:
    """A count on a line of its own (m, the number of blocks): one integer, then only a comment
    such as ``=mDIM``; a second number on the line is an error (a count that is not on its own line)."""
    ln, tok = src.next(what)
    v = _number(tok[0])
    if v is None:
        raise src.fail(ln, f"{what}: {_why(tok[0])}")
    if v != int(v):
        raise src.fail(ln, f"{what} is not an integer: {tok[0]!r}")
    n = int(v)
    extra = [t for t in tok[1:] if _looks_numeric(t)]
    if extra:
        raise src.fail(ln, f"{what} {n} is followed by the number {extra[0]!r} on its line (each count goes on "
                           "a line of its own)")
    return n


def _header(lines: list[str], where: str) -> tuple[int, int, list[int], np.ndarray, int]:
    """``m``, ``nblocks``, block sizes, ``c`` and the index of the first entry line.

    Every count is checked against what follows: the block sizes are exactly ``nblocks`` integers
    on one line, ``c`` exactly ``m`` numbers on one line (SDPA's format; every SDPLIB file).  A line
    that holds fewer or more numbers is an error naming it, never read on into the next line (the
    way a missing block size would eat ``c``, or a missing ``c`` value the first entry).  Every
    token that is to be a number must be one by :data:`NUMBER` (finite, no ``nan``, ``inf`` or
    underscores); after the block sizes, only words (a comment such as ``= bLOCKsTRUCT``) may follow.
    """
    src = _Lines(lines, where)
    m = _count(src, "m (the number of constraint matrices)")
    if m < 1:
        raise src.fail(src.i, f"m (the number of constraint matrices) must be at least 1, got {m}")
    nb = _count(src, "the number of blocks")
    if nb < 1:
        raise src.fail(src.i, f"the number of blocks must be at least 1, got {nb}")
    ln, tok = src.next("the block sizes")
    # the first nb tokens are the sizes; what follows them may only be a comment (no number-like token)
    for k, t in enumerate(tok[:nb]):
        if _number(t) is None:
            if not any(_looks_numeric(u) or u in "+-" for u in tok[k:]):  # a comment: fewer sizes than declared
                raise src.fail(ln, f"{nb} blocks declared but the block-size line holds {_numbers(k)}")
            raise src.fail(ln, f"block size {k + 1} of {nb}: {_why(t)}")
    if len(tok) < nb:
        raise src.fail(ln, f"{nb} blocks declared but the block-size line holds {_numbers(len(tok))}")
    more = [t for t in tok[nb:] if _looks_numeric(t) or t in "+-"]
    if more:
        raise src.fail(ln, f"{nb} blocks declared but the block-size line holds {_numbers(nb + len(more))}")
    vals = [_number(t) for t in tok[:nb]]
    bad = next((t for t, v in zip(tok, vals) if v != int(v)), None)  # type: ignore[arg-type]
    if bad is not None:
        raise src.fail(ln, f"a block size is not an integer: {bad!r}")
    sizes = [int(v) for v in vals]  # type: ignore[arg-type]
    if any(s == 0 for s in sizes):
        raise src.fail(ln, "a block size is 0")
    ln, tok = src.next("the objective vector c")
    c = np.empty(len(tok))
    for k, t in enumerate(tok):
        v = _number(t)
        if v is None:
            raise src.fail(ln, f"the objective vector c, value {k + 1}: {_why(t)}")
        c[k] = v
    if c.size != m:
        raise src.fail(ln, f"m = {m} but the objective-vector line holds {_numbers(c.size)}")
    return m, nb, sizes, c, src.i


def _numbers(k: int) -> str:
    return f"{k} number" + ("" if k == 1 else "s")


def _entries(lines: list[str], start: int, name: str) -> tuple[np.ndarray, np.ndarray]:
    """The entry lines after the header: an ``(E, 5)`` array and each row's line number.

    Every data line holds exactly five numbers (matrix, block, row, column, value); a line with
    fewer or more is an error naming it, and so is a token that is not a finite number by
    :data:`NUMBER` (checked for the whole body at once: only digits, signs, points, exponents and
    blanks may remain once Fortran exponents read as ``e``, and every value parsed must be finite;
    the line is looked up only when one is not).
    """
    rows, nums = [], []
    for k in range(start, len(lines)):
        s = lines[k].strip()
        if not s or s[0] in "\"*":
            continue
        tok = _PUNCT.sub(" ", s).split()
        if len(tok) != 5:
            raise DataError(f"{name}:{k + 1}: an entry line holds {len(tok)} tokens, not 5 (matrix, block, row, "
                            f"column, value): {s[:60]!r}")
        rows.append(k + 1)
        nums.append(" ".join(tok))
    body = "\n".join(nums)
    if "d" in body or "D" in body:
        body = _FORTRAN_D.sub("e", body)
    vals = None
    if _NOT_NUMERIC.search(body) is None:
        try:
            vals = np.array(body.split(), dtype=float).reshape(-1, 5)
        except ValueError:
            vals = None
    if vals is None or not np.isfinite(vals).all():
        for k, ln in enumerate(nums):
            bad = next((t for t in ln.split() if _number(t) is None), None)
            if bad is not None:
                raise DataError(f"{name}:{rows[k]}: an entry line holds a non-number: {_why(bad)}")
        raise DataError(f"{name}: an entry holds a value that is not a finite number")  # not reached
    return vals, np.asarray(rows, dtype=np.int64)


def parse_sdpa(text: str, name: str = "<text>", where: str | None = None) -> SdpData:
    """Parse the text of an SDPA sparse file (see :func:`read_sdpa`); messages start ``where:line:``
    (default ``name``)."""
    lines = text.splitlines()
    where = where or name
    m, nb, sizes, c, start = _header(lines, where)
    E, at = _entries(lines, start, where)

    def fail(mask: np.ndarray, msg: str) -> DataError:
        k = int(np.flatnonzero(mask)[0])
        entry = " ".join(f"{v:g}" for v in E[k, :4])
        return DataError(f"{where}:{int(at[k])}: entry '{entry} ...' {msg}")

    ints = E[:, :4]
    if np.any(ints != np.round(ints)):
        raise fail(np.any(ints != np.round(ints), axis=1), "has a matrix, block, row or column index that is not an integer")
    mat, blk, r, col = (E[:, j].astype(np.int64) for j in range(4))
    v = E[:, 4]
    if np.any((mat < 0) | (mat > m)):
        raise fail((mat < 0) | (mat > m), f"names matrix {int(mat[(mat < 0) | (mat > m)][0])}, outside 0..m = 0..{m}")
    if np.any((blk < 1) | (blk > nb)):
        raise fail((blk < 1) | (blk > nb), f"names block {int(blk[(blk < 1) | (blk > nb)][0])}, outside 1..{nb}")
    s_arr = np.asarray(sizes, dtype=np.int64)
    dims = np.abs(s_arr)[blk - 1]
    out = (r < 1) | (col < 1) | (r > dims) | (col > dims)
    if np.any(out):
        raise fail(out, f"is outside its block of size {int(dims[out][0])}")
    lp = s_arr[blk - 1] < 0
    if np.any(lp & (r != col)):
        raise fail(lp & (r != col), "is off the diagonal of a diagonal (negative-size) block")
    widths = np.where(s_arr > 0, s_arr * s_arr, -s_arr)
    off = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    N = int(off[-1])
    r0, c0 = r - 1, col - 1
    hi, lo = np.maximum(r0, c0), np.minimum(r0, c0)
    base = off[blk - 1]
    # SDPA lists each symmetric pair once (either triangle); a repeated (k, block, pair) is refused
    upper = np.where(lp, base + r0, base + lo * dims + hi)
    keys = mat * (N + 1) + upper
    uniq, first, counts = np.unique(keys, return_index=True, return_counts=True)
    if np.any(counts > 1):
        seen = np.zeros(keys.size, bool)
        seen[first] = True
        dup = np.isin(keys, uniq[counts > 1]) & ~seen
        k = int(np.flatnonzero(dup)[0])
        raise fail(dup, f"repeats the entry of line {int(at[first[np.searchsorted(uniq, keys[k])]])} "
                        "(same matrix, block and symmetric pair)")
    lower = np.where(lp, -1, base + hi * dims + lo)
    off_diag = (~lp) & (hi != lo)
    rows = np.concatenate([mat, mat[off_diag]])
    cols = np.concatenate([upper, lower[off_diag]])
    data = np.concatenate([v, v[off_diag]])
    F = sp.csr_matrix((data, (rows, cols)), shape=(m + 1, N))
    F.eliminate_zeros()
    A = F[1:].tocsr()
    C = (-F[0]).tocsr()
    C.eliminate_zeros()
    return SdpData(block_sizes=tuple(sizes), A=A, b=c, c=C, name=name)


def read_csdp_solution(data: SdpData, path: str | Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A solution file CSDP writes for an SDPA problem, as ``(X, y, Z)`` of :mod:`.data`'s form.

    CSDP solves ``max tr(F_0 X)`` s.t. ``tr(F_i X) = c_i`` (its ``C = F_0``): its first line is its
    ``y`` (ours is ``-y``, as ``C = -F_0``), then ``k block i j value`` lines, matrix 1 its ``Z``
    (``A*(y) - F_0``, ours too) and matrix 2 its ``X`` (ours), one triangle of each.
    """
    lines = Path(path).read_text().split("\n")
    y = -np.array(lines[0].split(), dtype=float)
    mats = {k: [np.zeros((s, s)) if s > 0 else np.zeros(-s) for s in data.block_sizes] for k in (1, 2)}
    for ln in lines[1:]:
        tok = ln.split()
        if not tok:
            continue
        k, b, i, j = (int(t) for t in tok[:4])
        B = mats[k][b - 1]
        if B.ndim == 1:
            B[i - 1] = float(tok[4])
        else:
            B[i - 1, j - 1] = B[j - 1, i - 1] = float(tok[4])
    return data.stack(mats[2]), y, data.stack(mats[1])


def write_sdpa(data: SdpData, path: str | Path) -> None:
    """Write :class:`SdpData` as an SDPA sparse file (``F_0 = -C``, ``F_i = A_i``, ``c = b``; upper triangles)."""
    lines = [f"{data.m}", f"{len(data.block_sizes)}", " ".join(str(s) for s in data.block_sizes),
             " ".join(repr(float(x)) for x in data.b)]
    F = sp.vstack([-data.c, data.A], format="coo")
    off = data.offsets
    for k, col, v in zip(F.row, F.col, F.data):
        j = int(np.searchsorted(off, col, side="right") - 1)
        s, p = data.block_sizes[j], int(col - off[j])
        if s > 0:
            i, jj = divmod(p, s)
            if i > jj:
                continue
        else:
            i = jj = p
        lines.append(f"{int(k)} {j + 1} {i + 1} {jj + 1} {float(v)!r}")
    Path(path).write_text("\n".join(lines) + "\n")
