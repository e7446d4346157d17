"""Reader of the SDPA sparse format (``.dat-s``, also gzipped ``.dat-s.gz``).

The format (SDPA manual; SDPLIB's README)::

    "comment lines start with a double quote or an asterisk
    m                    number of constraint matrices F_1..F_m (text after the number ignored)
    nblocks              number of blocks
    s_1 s_2 ...          block sizes; negative = diagonal (LP) block; braces, parentheses and commas allowed
    c_1 ... c_m          the objective vector (may span lines; punctuation allowed)
    k j r c value        entry (r, c) of block j of F_k (k = 0..m), upper or lower triangle

SDPA's pair is (P) min c'x s.t. sum_i F_i x_i - F_0 = X psd, (D) max <F_0, Y> s.t. <F_i, Y> = c_i,
Y psd.  psdbench's DIMACS form (see :mod:`.data`) takes ``C = -F_0``, ``A_i = F_i``, ``b = c``;
then the file's ``Y`` is our ``X``, ``y = -x`` and ``Z`` is the file's ``X``, and our primal
objective ``<C, X> = -<F_0, Y>`` is the negative of SDPA's dual objective.

Every malformed file is a one-line :class:`~psdbench.api.DataError` naming the file.
"""

from __future__ import annotations

import gzip
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
        Name for messages (default: the file name).

    Raises
    ------
    DataError
        One line naming the file and what is wrong (missing header, bad block sizes, an entry out
        of range, a non-number, an off-diagonal entry of an LP block).
    """
    path = Path(path)
    return parse_sdpa(_open_text(path), name or path.name)


def _header(lines: list[str], where: str) -> tuple[int, int, list[int], np.ndarray, int]:
    """``m``, ``nblocks``, block sizes, ``c`` and the index of the first entry line."""
    i, n = 0, len(lines)

    def next_line() -> str:
        nonlocal i
        while i < n:
            line = lines[i]
            i += 1
            s = line.strip()
            if s and s[0] not in "\"*":
                return _PUNCT.sub(" ", s)
        raise DataError(f"{where}: file ends inside the header")

    def first_int(what: str) -> int:
        tok = next_line().split()
        try:
            return int(float(tok[0])) if tok else -1
        except ValueError:
            raise DataError(f"{where}: {what} is not a number: {tok[0]!r}") from None

    def numbers(count: int, what: str) -> list[str]:
        out: list[str] = []
        while len(out) < count:
            toks = next_line().split()
            if not toks:
                continue
            out.extend(toks)
        if len(out) > count and what == "block sizes":
            out = out[:count]
        return out[:count]

    m = first_int("m (the number of constraints)")
    if m < 0:
        raise DataError(f"{where}: bad m (number of constraints)")
    nb = first_int("the number of blocks")
    if nb < 1:
        raise DataError(f"{where}: the number of blocks must be positive, got {nb}")
    try:
        sizes = [int(float(t)) for t in numbers(nb, "block sizes")]
    except ValueError:
        raise DataError(f"{where}: block sizes are not integers") from None
    if any(s == 0 for s in sizes):
        raise DataError(f"{where}: a block size is 0")
    try:
        c = np.array([float(t.replace("D", "e").replace("d", "e")) for t in numbers(m, "c")], dtype=float) if m else np.zeros(0)
    except ValueError:
        raise DataError(f"{where}: the objective vector c has a non-number") from None
    return m, nb, sizes, c, i


def parse_sdpa(text: str, name: str = "<text>") -> SdpData:
    """Parse the text of an SDPA sparse file (see :func:`read_sdpa`)."""
    lines = text.splitlines()
    m, nb, sizes, c, start = _header(lines, name)
    body = "\n".join(ln for ln in lines[start:] if ln.strip() and ln.lstrip()[0] not in "\"*")
    body = _PUNCT.sub(" ", body)
    try:
        vals = np.array(body.split(), dtype=float)
    except ValueError:
        bad = next(t for t in body.split() if not _is_float(t))
        raise DataError(f"{name}: an entry line holds a non-number {bad!r}") from None
    if vals.size % 5:
        raise DataError(f"{name}: the entry lines hold {vals.size} numbers, not a multiple of 5 "
                        "(matrix, block, row, column, value)")
    E = vals.reshape(-1, 5)
    mat, blk, r, col, v = (E[:, 0], E[:, 1], E[:, 2], E[:, 3], E[:, 4])
    ints = E[:, :4]
    if np.any(ints != np.round(ints)):
        raise DataError(f"{name}: a matrix, block, row or column index is not an integer")
    mat, blk, r, col = (a.astype(np.int64) for a in (mat, blk, r, col))
    if mat.size and (mat.min() < 0 or mat.max() > m):
        raise DataError(f"{name}: a matrix index is outside 0..{m}")
    if blk.size and (blk.min() < 1 or blk.max() > nb):
        raise DataError(f"{name}: a block index is outside 1..{nb}")
    s_arr = np.asarray(sizes, dtype=np.int64)
    dims = np.abs(s_arr)[blk - 1] if blk.size else np.zeros(0, np.int64)
    if r.size and (r.min() < 1 or col.min() < 1 or np.any(r > dims) or np.any(col > dims)):
        k = int(np.flatnonzero((r < 1) | (col < 1) | (r > dims) | (col > dims))[0])
        raise DataError(f"{name}: entry {int(mat[k])} {int(blk[k])} {int(r[k])} {int(col[k])} is outside its block "
                        f"of size {int(dims[k])}")
    lp = s_arr[blk - 1] < 0 if blk.size else np.zeros(0, bool)
    if np.any(lp & (r != col)):
        raise DataError(f"{name}: an off-diagonal entry in a diagonal (negative-size) block")
    widths = np.where(s_arr > 0, s_arr * s_arr, -s_arr)
    off = np.concatenate([[0], np.cumsum(widths)]).astype(np.int64)
    N = int(off[-1])
    r0, c0 = r - 1, col - 1
    hi, lo = np.maximum(r0, c0), np.minimum(r0, c0)
    dim = np.abs(s_arr)[blk - 1] if blk.size else np.zeros(0, np.int64)
    base = off[blk - 1] if blk.size else np.zeros(0, np.int64)
    # SDPA lists each symmetric pair once (either triangle); a repeated (k, block, pair) is refused
    key_pos = np.where(lp, base + r0, base + lo * dim + hi)
    keys = mat * (N + 1) + key_pos
    if keys.size and np.unique(keys).size != keys.size:
        raise DataError(f"{name}: an entry (matrix, block, row, column) is given twice")
    upper = np.where(lp, base + r0, base + lo * dim + hi)
    lower = np.where(lp, -1, base + hi * dim + lo)
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


def _is_float(tok: str) -> bool:
    try:
        float(tok)
    except ValueError:
        return False
    return True


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
