"""The data layout and compiled inner loop of ``sdp-burer-monteiro`` (SDPLR's L-BFGS inner solve).

:class:`SplitData` holds, for the PSD blocks of an :class:`.data.SdpData` stacked by rows (block
``j``'s ``n_j`` rows of ``R``, as :mod:`.factored`), each data matrix in one of SDPLR 1.03's two
storage types (its ``datamat`` of type ``'s'`` sparse or ``'l'`` low-rank, ``structures.h``):

* low rank: a matrix with at least a quarter of its block's entries stored whose rank is at most
  :data:`LOWRANK_MAX` is kept as ``V diag(d) V'`` (theta's ``C = -J``, gpp's ``<J, X> = 0``), so
  ``<A_i, R R'> = sum_l d_l ||V_l' R||^2`` and ``A_i R = V diag(d) (V' R)`` cost ``O(n r)``;
  SDPLR reads such matrices only from its own input format (user guide, "SDPLR format"), from
  SDPA files it keeps them sparse (``readdata.c``), so here they are detected, and the
  factorisation checked to ``1e-12`` relative in Frobenius norm;
* sparse: everything else, on the union pattern of the block's remaining matrices, upper
  triangle (:func:`.factored._pattern`): ``<A_i, R R'>`` from one row dot per pattern position
  (``Aoper`` in SDPLR's ``dataoper.c``), ``S R`` as a symmetric sparse product (``Stimesmat``).

Facial reduction (ours, not SDPLR's): a constraint ``<A_i, X> = 0`` whose ``A_i`` is all low rank
with weights ``d`` of one sign (psd or nsd) holds for a psd ``X = R R'`` exactly when ``V_i' R = 0``
(``<A_i, X> = sum_l d_l ||V_l' R||^2``).  Such a constraint (gpp's ``<J, X> = 0``, i.e. ``X 1 = 0``,
which leaves no strictly feasible ``X``) is "faced": the gradient is projected off ``V_i`` (one pass
per column), so ``R`` stays on the face from a projected start and the constraint's residual is
rounding; :func:`.burer_monteiro` sets its multiplier for the bound.

:func:`inner_solve` is SDPLR's minor-iteration loop (``sdplrlib.c`` lines 189-252) compiled with
numba: limited-memory BFGS (``lbfgs.c``: two-loop recursion, ``H_0 = I``), the exact line search on
the quartic ``L(R + a D)`` (``linesearch.c``), until the gradient test, the feasibility test, the
end of a slice of iterations (the caller checks its deadline and calls again with the same
history: a slice is a pause, never the end of the solve) or a line search that finds no decrease
along steepest descent (the subproblem is stationary at working precision).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any

import numpy as np
import scipy.sparse as sp

from psdbench.families.sdp.data import SdpData
from psdbench.families.sdp.lowrank.factored import _pattern

#: a data matrix goes to the low-rank storage when its rank is at most this (and it is dense enough)
LOWRANK_MAX = 8
#: ... and when at least this share of its block's n^2 entries is stored (and the block is small
#: enough to densify it once: :data:`LOWRANK_ORDER_MAX`)
LOWRANK_DENSITY = 0.25
LOWRANK_ORDER_MAX = 3000

# inner_solve's exit statuses
GRADIENT, FEASIBLE, SLICE, NO_DECREASE = 0, 1, 2, 3


def _lowrank(B: np.ndarray, qmax: int) -> tuple[np.ndarray, np.ndarray] | None:
    """``(V, d)`` with ``B = V diag(d) V'`` (orthonormal ``V``) when the symmetric ``B`` has rank at most
    ``qmax``, checked to ``1e-12 ||B||_F``; else ``None``.  A seeded range sketch, then the eigenvalues
    of the compressed ``Q' B Q``."""
    n = B.shape[0]
    k = min(n, qmax + 4)
    Q, _ = np.linalg.qr(B @ np.random.default_rng(0).standard_normal((n, k)))
    w, U = np.linalg.eigh(Q.T @ B @ Q)
    nb = float(np.linalg.norm(B))
    keep = np.abs(w) > 1e-13 * nb
    if nb == 0.0 or int(keep.sum()) > qmax:
        return None
    V, d = Q @ U[:, keep], w[keep]
    if float(np.linalg.norm(B - (V * d) @ V.T)) > 1e-12 * nb:
        return None
    return np.ascontiguousarray(V), d


def _csr(M: sp.spmatrix) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    M = sp.csr_matrix(M)
    M.sort_indices()
    return M.indptr.astype(np.int64), M.indices.astype(np.int64), M.data.astype(float)


@dataclass
class SplitData:
    """The PSD blocks of one data set in SDPLR's two storage types (module docstring), as flat arrays.

    ``rows, cols`` (k,): pattern positions ``p <= q`` in the stacked rows of ``R``; ``w``: 2 off the
    diagonal, 1 on it; ``c`` (k,): ``C``'s symmetric part there, ``cw = w c``; ``M`` (k x m CSR):
    the symmetric parts of the ``A_i``; ``T`` (m x k CSR): ``w``-weighted ``M'``, so the sparse part of
    ``A(R R')`` is ``T @ (R_p . R_q)_k``.  Low-rank columns ``l`` (Q of them): rows ``row0[l] ..
    row0[l] + length[l]`` of the stacked ``R``, values ``vals[ptr[l]:ptr[l + 1]]``, weight ``d[l]``,
    owner ``own[l]`` (0: ``C``, ``i + 1``: ``A_i``).  ``starts``/``sizes``: each PSD block's rows.
    """

    m: int
    n_psd: int
    starts: np.ndarray
    sizes: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    w: np.ndarray
    c: np.ndarray
    cw: np.ndarray
    M: tuple[np.ndarray, np.ndarray, np.ndarray]
    T: tuple[np.ndarray, np.ndarray, np.ndarray]
    row0: np.ndarray
    length: np.ndarray
    ptr: np.ndarray
    vals: np.ndarray
    d: np.ndarray
    own: np.ndarray
    face: np.ndarray
    faced: np.ndarray
    constraints_per_block: np.ndarray

    @classmethod
    def of(cls, data: SdpData) -> "SplitData":
        """The split of ``data`` (cached on it)."""
        if "bm_split" not in data._cache:
            data._cache["bm_split"] = cls._build(data)
        return data._cache["bm_split"]

    @classmethod
    def _build(cls, data: SdpData) -> "SplitData":
        m, off = data.m, data.offsets
        psd = [j for j, s in enumerate(data.block_sizes) if s > 0]
        sizes = np.array([data.block_sizes[j] for j in psd], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        rows, cols, w, c, Ms, per_block = [], [], [], [], [], []
        row0, length, vals, d, own = [], [], [], [], []
        for j, s0 in zip(psd, starts):
            s = int(data.block_sizes[j])
            Ab = data.A[:, off[j]:off[j + 1]].tocsr()
            cb = data.c[:, off[j]:off[j + 1]].tocsr()
            per_block.append(int(np.count_nonzero(np.diff(Ab.indptr))))
            dense_enough = max(LOWRANK_DENSITY * s * s, 2 * s + 1)
            moved: list[int] = []
            candidates = [(-1, cb)] + [(i, Ab[i]) for i in np.flatnonzero(np.diff(Ab.indptr) >= dense_enough)]
            for i, row in candidates:
                if s > LOWRANK_ORDER_MAX or row.nnz < dense_enough:
                    continue
                B = row.toarray().reshape(s, s)
                f = _lowrank((B + B.T) / 2, min(LOWRANK_MAX, max(1, s // 4)))
                if f is None:
                    continue
                for col, dl in zip(f[0].T, f[1]):
                    row0.append(s0); length.append(s); vals.append(col); d.append(dl); own.append(i + 1)
                moved.append(i)
            if -1 in moved:
                cb = sp.csr_matrix((1, s * s))
            keep = [i for i in moved if i >= 0]
            if keep:
                mask = np.ones(m)
                mask[keep] = 0.0
                Ab = sp.csr_matrix(sp.diags(mask) @ Ab)
                Ab.eliminate_zeros()
            P = _pattern(SdpData(block_sizes=(s,), A=Ab, b=np.zeros(m), c=cb), 0)
            rows.append(P.rows + s0); cols.append(P.cols + s0); w.append(P.weight.astype(float))
            c.append(P.c.astype(float)); Ms.append(P.M)  # (an empty C's bincount is int64)
        M = sp.vstack(Ms).tocsr() if Ms else sp.csr_matrix((0, m))
        w_all = np.concatenate(w) if w else np.zeros(0)
        c_all = np.concatenate(c) if c else np.zeros(0)
        T = sp.csr_matrix(M.multiply(w_all[:, None])).T.tocsr() if M.shape[0] else sp.csr_matrix((m, 0))
        ptr = np.concatenate([[0], np.cumsum(length)]).astype(np.int64) if length else np.zeros(1, np.int64)
        # facial reduction: <A_i, X> = 0 with A_i psd (or nsd), all of it low rank, forces A_i X = 0,
        # i.e. V_i' R = 0 (gpp's <J, X> = 0: X 1 = 0); R is kept in that subspace
        own_a, d_a = np.asarray(own, np.int64), np.asarray(d, float)
        sparse_rows = np.diff(M.tocsc().indptr) if M.shape[0] else np.zeros(m, np.int64)
        faced = [i for i in np.unique(own_a[own_a > 0]) - 1
                 if data.b[i] == 0 and sparse_rows[i] == 0
                 and (np.all(d_a[own_a == i + 1] > 0) or np.all(d_a[own_a == i + 1] < 0))]
        face = np.isin(own_a, np.asarray(faced, np.int64) + 1).astype(np.int64)
        return cls(m=m, n_psd=int(sizes.sum()), starts=starts, sizes=sizes,
                   rows=np.concatenate(rows).astype(np.int64) if rows else np.zeros(0, np.int64),
                   cols=np.concatenate(cols).astype(np.int64) if cols else np.zeros(0, np.int64),
                   w=w_all, c=c_all, cw=w_all * c_all, M=_csr(M), T=_csr(T),
                   row0=np.asarray(row0, np.int64), length=np.asarray(length, np.int64), ptr=ptr,
                   vals=np.concatenate(vals) if vals else np.zeros(0), d=np.asarray(d, float),
                   own=own_a, face=face, faced=np.asarray(faced, np.int64),
                   constraints_per_block=np.asarray(per_block, np.int64))

    @property
    def n_lowrank(self) -> int:
        return int(self.d.size)

    def _slack_parts(self) -> tuple[Any, list[tuple]]:
        """Built once: ``M`` as a scipy matrix, and per block its pattern positions and low-rank columns."""
        if not hasattr(self, "_parts"):
            Mp, Mi, Mv = self.M
            Msp = sp.csr_matrix((Mv, Mi, Mp), shape=(self.rows.size, self.m))
            blocks = []
            for s0, n in zip(self.starts, self.sizes):
                sel = np.flatnonzero((self.rows >= s0) & (self.rows < s0 + n))
                mine = [l for l in np.flatnonzero(self.row0 == s0)]
                F = [self.vals[self.ptr[l]:self.ptr[l + 1]] for l in mine if self.face[l]]
                Lm = (np.stack([self.vals[self.ptr[l]:self.ptr[l + 1]] for l in mine], axis=1) if mine
                      else np.zeros((n, 0)))
                Vq = np.linalg.qr(np.stack(F, axis=1))[0] if F else None
                blocks.append((int(n), sel, self.rows[sel] - s0, self.cols[sel] - s0, mine, Lm, Vq))
            object.__setattr__(self, "_parts", (Msp, blocks))
        return self._parts

    def slack_matrices(self, y: np.ndarray, faced: bool = False, dense_max: int = 1200) -> list[Any]:
        """``S = C - A*(y)`` of each PSD block (the stopping test's eigenvalue estimate): a dense array up
        to order ``dense_max``, else a symmetric ``LinearOperator`` (sparse part plus ``V diag(.) V'``).
        ``faced``: the faced constraints' terms left out and ``S`` compressed to the face,
        ``P S P + (||S||_F + 1) (I - P)`` with ``P`` the projector off the faced subspaces (their
        multipliers taken to infinity)."""
        from scipy.sparse.linalg import LinearOperator

        Msp, blocks = self._slack_parts()
        s = self.c - Msp @ y
        out = []
        for n, sel, p, q, lr, L, Vq in blocks:
            cf = np.array([0.0 if faced and self.face[l] else
                           self.d[l] * (1.0 if self.own[l] == 0 else -y[self.own[l] - 1]) for l in lr])
            Vq = Vq if faced else None
            if n <= dense_max:
                Z = (L * cf) @ L.T if lr else np.zeros((n, n))
                Z[p, q] += s[sel]
                off = p != q
                Z[q[off], p[off]] += s[sel][off]
                if Vq is not None:
                    ZV = Z @ Vq
                    big = float(np.linalg.norm(Z)) + 1.0
                    Z = Z - ZV @ Vq.T - Vq @ ZV.T + Vq @ (Vq.T @ ZV) @ Vq.T + big * (Vq @ Vq.T)
                out.append(Z)
                continue
            off = p != q
            vals = s[sel]
            Ssp = sp.csr_matrix((np.concatenate([vals, vals[off]]), (np.concatenate([p, q[off]]),
                                 np.concatenate([q, p[off]]))), shape=(n, n))
            big = float(sp.linalg.norm(Ssp)) + float(np.abs(cf).sum()) + 1.0

            def mv(x, Ssp=Ssp, L=L, cf=cf, Vq=Vq, big=big):
                x = np.asarray(x, dtype=float).reshape(Ssp.shape[0], -1)
                if Vq is None:
                    return Ssp @ x + L @ (cf[:, None] * (L.T @ x))
                xp = x - Vq @ (Vq.T @ x)
                z = Ssp @ xp + L @ (cf[:, None] * (L.T @ xp))
                return z - Vq @ (Vq.T @ z) + big * (x - xp)

            out.append(LinearOperator((n, n), matvec=mv, matmat=mv, dtype=float))
        return out


# ---------------------------------------------------------------------------------- kernels
_JIT: dict[str, Any] = {}


def csr_mv(ptr, idx, val, x, out):  # pragma: no cover - compiled
    for i in range(ptr.size - 1):
        acc = 0.0
        for t in range(ptr[i], ptr[i + 1]):
            acc += val[t] * x[idx[t]]
        out[i] = acc


def pattern_dots(rows, cols, R, out):  # pragma: no cover - compiled
    r = R.shape[1]
    for k in range(rows.size):
        p, q = rows[k], cols[k]
        acc = 0.0
        for j in range(r):
            acc += R[p, j] * R[q, j]
        out[k] = acc


def lr_proj(row0, length, ptr, vals, R, W):  # pragma: no cover - compiled
    r = R.shape[1]
    for l in range(row0.size):
        for j in range(r):
            W[l, j] = 0.0
        a, r0 = ptr[l], row0[l]
        for p in range(length[l]):
            vv = vals[a + p]
            for j in range(r):
                W[l, j] += vv * R[r0 + p, j]


def values(x, W, b, cw, Tp, Ti, Tv, d, own, v):  # pragma: no cover - compiled
    """v = A(RR') - b from the pattern values x and the low-rank projections W; returns <C, RR'>."""
    csr_mv(Tp, Ti, Tv, x, v)
    cval = 0.0
    for k in range(x.size):
        cval += cw[k] * x[k]
    for l in range(d.size):
        t = 0.0
        for j in range(W.shape[1]):
            t += W[l, j] * W[l, j]
        if own[l] == 0:
            cval += d[l] * t
        else:
            v[own[l] - 1] += d[l] * t
    for i in range(v.size):
        v[i] -= b[i]
    return cval


def grad(R, W, ytil, rows, cols, c, Mp, Mi, Mv, row0, length, ptr, vals, d, own, face, mask, use_mask,
         svals, G):  # pragma: no cover - compiled
    """G = 2 S R with S = C - A*(ytil) (SDPLR's ``gradient``, dataoper.c:265-283), masked columns zero,
    projected off the faced subspaces (G <- G - V_l (V_l' G), one pass)."""
    r = R.shape[1]
    csr_mv(Mp, Mi, Mv, ytil, svals)
    G[:, :] = 0.0
    for k in range(rows.size):
        p, q = rows[k], cols[k]
        s = c[k] - svals[k]
        if p == q:
            for j in range(r):
                G[p, j] += s * R[p, j]
        else:
            for j in range(r):
                G[p, j] += s * R[q, j]
                G[q, j] += s * R[p, j]
    for l in range(d.size):
        coef = d[l] if own[l] == 0 else -d[l] * ytil[own[l] - 1]
        a, r0 = ptr[l], row0[l]
        for p in range(length[l]):
            vv = coef * vals[a + p]
            for j in range(r):
                G[r0 + p, j] += vv * W[l, j]
    for p in range(G.shape[0]):
        for j in range(r):
            G[p, j] *= 2.0
    g = np.empty(r)
    for l in range(d.size):
        if face[l] == 0:
            continue
        a, r0 = ptr[l], row0[l]
        g[:] = 0.0
        for p in range(length[l]):
            for j in range(r):
                g[j] += vals[a + p] * G[r0 + p, j]
        for p in range(length[l]):
            for j in range(r):
                G[r0 + p, j] -= vals[a + p] * g[j]
    if use_mask:
        for p in range(G.shape[0]):
            for j in range(r):
                G[p, j] *= mask[p, j]


def line(R, D, W, U, rows, cols, cw, Tp, Ti, Tv, row0, length, ptr, vals, d, own, x1, x2, a1, a2):
    """Pattern values of R D' + D R' and D D' (x1, x2), their A(.) (a1, a2) and <C, .> (returned),
    U = V' D (SDPLR's ``Aoper`` calls in ``linesearch``)."""  # pragma: no cover - compiled
    r = R.shape[1]
    for k in range(rows.size):
        p, q = rows[k], cols[k]
        s1 = 0.0
        s2 = 0.0
        for j in range(r):
            s1 += R[p, j] * D[q, j] + D[p, j] * R[q, j]
            s2 += D[p, j] * D[q, j]
        x1[k] = s1
        x2[k] = s2
    csr_mv(Tp, Ti, Tv, x1, a1)
    csr_mv(Tp, Ti, Tv, x2, a2)
    c1 = 0.0
    c2 = 0.0
    for k in range(rows.size):
        c1 += cw[k] * x1[k]
        c2 += cw[k] * x2[k]
    lr_proj(row0, length, ptr, vals, D, U)
    for l in range(d.size):
        t1 = 0.0
        t2 = 0.0
        for j in range(r):
            t1 += W[l, j] * U[l, j]
            t2 += U[l, j] * U[l, j]
        t1 *= 2.0 * d[l]
        t2 *= d[l]
        if own[l] == 0:
            c1 += t1
            c2 += t2
        else:
            a1[own[l] - 1] += t1
            a2[own[l] - 1] += t2
    return c1, c2


def step(q1, q2, q3, q4, amax):  # pragma: no cover - compiled
    """argmin_{0 < a <= amax} of q1 a + q2 a^2 + q3 a^3 + q4 a^4 through the real roots of its
    derivative (SDPLR's ``linesearch``: gsl_poly_solve_cubic, candidates in (0, max]); 0 when
    no candidate decreases it."""
    cands = np.empty(4)
    nc = 0
    scale = abs(q1) + abs(2 * q2) + abs(3 * q3)
    if 4 * q4 > 1e-14 * scale:
        B, Cc, Dd = 3 * q3 / (4 * q4), 2 * q2 / (4 * q4), q1 / (4 * q4)
        Q = (B * B - 3 * Cc) / 9
        Rr = (2 * B ** 3 - 9 * B * Cc + 27 * Dd) / 54
        if Rr * Rr < Q ** 3:
            th = math.acos(max(-1.0, min(1.0, Rr / math.sqrt(Q ** 3))))
            sq = -2 * math.sqrt(Q)
            cands[0] = sq * math.cos(th / 3) - B / 3
            cands[1] = sq * math.cos((th + 2 * math.pi) / 3) - B / 3
            cands[2] = sq * math.cos((th - 2 * math.pi) / 3) - B / 3
            nc = 3
        else:
            A = -math.copysign((abs(Rr) + math.sqrt(Rr * Rr - Q ** 3)) ** (1.0 / 3.0), Rr)
            cands[0] = A + (Q / A if A != 0 else 0.0) - B / 3
            nc = 1
    elif abs(3 * q3) > 1e-14 * (abs(q1) + abs(2 * q2)):
        disc = 4 * q2 * q2 - 12 * q3 * q1
        if disc >= 0:
            sd = math.sqrt(disc)
            cands[0] = (-2 * q2 + sd) / (6 * q3)
            cands[1] = (-2 * q2 - sd) / (6 * q3)
            nc = 2
    elif q2 > 0:
        cands[0] = -q1 / (2 * q2)
        nc = 1
    if amax < np.inf:
        cands[nc] = amax
        nc += 1
    best, fbest = 0.0, 0.0
    for t in range(nc):
        a = cands[t]
        if not (a > 0) or a > amax:
            continue
        g = q1 + a * (2 * q2 + a * (3 * q3 + a * 4 * q4))  # one Newton polish on the cubic
        h = 2 * q2 + a * (6 * q3 + a * 12 * q4)
        if h > 0:
            a2 = a - g / h
            if a2 > 0 and a2 <= amax:
                a = a2
        f = a * (q1 + a * (q2 + a * (q3 + a * q4)))  # L(a) - L(0): no cancellation against L(0)
        if f < fbest:
            best, fbest = a, f
    return best


def inner_solve(R, W, x, v, lam, sigma, b, G, rows, cols, c, cw, Mp, Mi, Mv, Tp, Ti, Tv, row0, length,
                ptr, vals, d, own, face, mask, use_mask, Sh, Yh, rho, hist, gtol, ftol, max_it, amax, out):
    """SDPLR's minor iterations (module docstring) from ``R`` with ``G = 2 S R`` and ``v`` current.

    ``out`` (3,): in ``out[0]`` the objective ``<C, RR'>`` on entry and exit, ``out[1]`` the
    gradient norm on exit, ``out[2]`` the number of line searches.  Returns the exit status."""
    n, r = R.shape
    nr = n * r
    Rf = R.reshape(nr)
    Gf = G.reshape(nr)
    D = np.empty((n, r))
    Df = D.reshape(nr)
    Gn = np.empty((n, r))
    Gnf = Gn.reshape(nr)
    U = np.empty_like(W)
    x1 = np.empty(x.size)
    x2 = np.empty(x.size)
    a1 = np.empty(v.size)
    a2 = np.empty(v.size)
    ytil = np.empty(v.size)
    svals = np.empty(x.size)
    mem = rho.size
    al = np.empty(mem)
    cval = out[0]
    gnorm = math.sqrt(np.dot(Gf, Gf))
    its = 0
    status = SLICE
    while True:
        if gnorm <= gtol:
            status = GRADIENT
            break
        if its >= max_it:
            status = SLICE
            break
        # direction: D = -H G, the two-loop recursion over the stored pairs, H_0 = I (lbfgs.c dirlbfgs)
        Df[:] = Gf
        cnt, nxt = hist[0], hist[1]
        for t in range(cnt):
            i = (nxt - 1 - t) % mem
            al[i] = rho[i] * np.dot(Sh[i], Df)
            for k in range(nr):
                Df[k] -= al[i] * Yh[i, k]
        for t in range(cnt - 1, -1, -1):
            i = (nxt - 1 - t) % mem
            be = al[i] - rho[i] * np.dot(Yh[i], Df)
            for k in range(nr):
                Df[k] += be * Sh[i, k]
        for k in range(nr):
            Df[k] = -Df[k]
        if np.dot(Df, Gf) >= 0.0:  # no descent: steepest descent (sdplrlib.c:200)
            Df[:] = -Gf
            cnt = 0
        c1, c2 = line(R, D, W, U, rows, cols, cw, Tp, Ti, Tv, row0, length, ptr, vals, d, own, x1, x2, a1, a2)
        # the quartic L(R + a D) = q0 + q1 a + ... + q4 a^4 (linesearch.c:30-49)
        q1 = c1 - np.dot(lam, a1) + sigma * np.dot(v, a1)
        q2 = c2 - np.dot(lam, a2) + sigma * (np.dot(v, a2) + 0.5 * np.dot(a1, a1))
        q3 = sigma * np.dot(a1, a2)
        q4 = 0.5 * sigma * np.dot(a2, a2)
        a = step(q1, q2, q3, q4, amax)
        its += 1
        if a == 0.0:
            if cnt > 0:  # the quasi-Newton direction gave nothing: forget the pairs, steepest descent
                hist[0] = 0
                hist[1] = 0
                continue
            status = NO_DECREASE
            break
        for k in range(nr):
            Rf[k] += a * Df[k]
        for k in range(x.size):
            x[k] += a * (x1[k] + a * x2[k])
        hist[2] += 1
        if hist[2] % 50 == 0:  # the pattern values afresh (the update's rounding does not accumulate)
            pattern_dots(rows, cols, R, x)
            lr_proj(row0, length, ptr, vals, R, W)
        else:
            for l in range(W.shape[0]):
                for j in range(r):
                    W[l, j] += a * U[l, j]
        cval = values(x, W, b, cw, Tp, Ti, Tv, d, own, v)
        for i in range(v.size):
            ytil[i] = lam[i] - sigma * v[i]
        grad(R, W, ytil, rows, cols, c, Mp, Mi, Mv, row0, length, ptr, vals, d, own, face, mask, use_mask, svals, Gn)
        # the new pair s = a D, y = G_new - G (lbfgs.c updatelbfgs1/2), kept when s'y > 0
        if mem > 0:
            sy = a * (np.dot(Df, Gnf) - np.dot(Df, Gf))
            if sy > 0.0:  # (else the oldest pair is kept: the slot is written only for a pair kept)
                i = hist[1]
                for k in range(nr):
                    Sh[i, k] = a * Df[k]
                    Yh[i, k] = Gnf[k] - Gf[k]
                rho[i] = 1.0 / sy
                hist[1] = (i + 1) % mem
                hist[0] = min(hist[0] + 1, mem)
        Gf[:] = Gnf
        gnorm = math.sqrt(np.dot(Gf, Gf))
        if ftol >= 0.0 and math.sqrt(np.dot(v, v)) <= ftol:
            status = FEASIBLE
            break
    out[0] = cval
    out[1] = gnorm
    out[2] = its
    return status


#: the kernels below, in dependency order: plain Python at import (no numba import for the CLI);
#: :func:`kernels` compiles them and rebinds each name to its dispatcher, so the callers call compiled code
#: and numba's disk cache keys them by this module
_KERNEL_NAMES = ("csr_mv", "pattern_dots", "lr_proj", "values", "grad", "line", "step", "inner_solve")


def kernels() -> dict[str, Any]:
    """The compiled kernels (numba, cached on disk; compiled or loaded once per worker in ``warm_up``)."""
    if not _JIT:
        from numba import njit

        g = globals()
        for name in _KERNEL_NAMES:
            g[name] = njit(cache=True, nogil=True)(g[name])
            _JIT[name] = g[name]
    return _JIT


def warm_kernels() -> None:
    """Compile (or load from numba's cache) every kernel on a tiny problem (untimed warm-up)."""
    from psdbench.families.sdp.data import from_blocks

    d = from_blocks((2,), [np.eye(2)], [[np.array([[1.0, 0.0], [0.0, 0.0]])], [np.ones((2, 2))]], [1.0, 1.0])
    ops = Operators(SplitData._build(d), np.asarray(d.b, float), ranks=np.array([2]))
    R = np.ones((2, 2))
    st = ops.state(R, np.zeros(2), 1.0)
    ops.inner(st, np.zeros(2), 1.0, gtol=1e-3, ftol=-1.0, max_it=3, memory=2)
    ops.step(ops.quartic(st, np.ones((2, 2)), np.zeros(2), 1.0))  # the escape's calls from Python


class Operators:
    """``A(R R')``, ``<C, R R'>``, ``2 S R`` and the quartic on a :class:`SplitData`, with the per-block
    rank of SDPLR (``R``'s columns past a block's rank held at zero by a mask)."""

    def __init__(self, split: SplitData, b: np.ndarray, ranks: np.ndarray) -> None:
        # writeable copies: the harness freezes an instance's arrays (its cached split too), and numba
        # compiles a read-only array as another type, i.e. again, inside the timed solve
        fresh = {f.name: (tuple(np.array(a) for a in v) if isinstance(v, tuple) else np.array(v))
                 for f in fields(split) if isinstance(v := getattr(split, f.name), (np.ndarray, tuple))}
        self.s, self.b = replace(split, **fresh), np.array(b, dtype=float)
        self.r = int(max(ranks))
        self.mask = np.ones((split.n_psd, self.r))
        for s0, n, rk in zip(split.starts, split.sizes, ranks):
            self.mask[s0:s0 + n, int(rk):] = 0.0
        self.use_mask = bool((self.mask == 0).any())
        self.K = kernels()
        self.hist = np.zeros(3, np.int64)  # pairs stored, next slot, line searches so far
        self.Sh = self.Yh = self.rho = None

    def state(self, R: np.ndarray, lam: np.ndarray, sigma: float) -> dict[str, Any]:
        """``x`` (pattern values), ``W`` (low-rank projections), ``v``, ``<C, RR'>`` and ``G`` at ``R``, exactly."""
        K, s = self.K, self.s
        R = np.ascontiguousarray(R)
        x = np.empty(s.rows.size)
        K["pattern_dots"](s.rows, s.cols, R, x)
        W = np.empty((s.n_lowrank, R.shape[1]))
        K["lr_proj"](s.row0, s.length, s.ptr, s.vals, R, W)
        v = np.empty(s.m)
        cval = K["values"](x, W, self.b, s.cw, *s.T, s.d, s.own, v)
        st = {"R": R, "x": x, "W": W, "v": v, "cval": float(cval)}
        st["G"] = self.gradient(st, lam - sigma * v)
        st["gnorm"] = float(np.linalg.norm(st["G"]))
        return st

    def gradient(self, st: dict[str, Any], ytil: np.ndarray) -> np.ndarray:
        s = self.s
        G = np.empty_like(st["R"])
        self.K["grad"](st["R"], st["W"], np.ascontiguousarray(ytil), s.rows, s.cols, s.c, *s.M, s.row0, s.length,
                       s.ptr, s.vals, s.d, s.own, s.face, self.mask, self.use_mask, np.empty(s.rows.size), G)
        return G

    def quartic(self, st: dict[str, Any], D: np.ndarray, lam: np.ndarray, sigma: float) -> tuple[float, ...]:
        """``(q1, q2, q3, q4)`` of ``L(R + a D) - L(R)``."""
        s, v = self.s, st["v"]
        x1, x2 = np.empty(s.rows.size), np.empty(s.rows.size)
        a1, a2 = np.empty(s.m), np.empty(s.m)
        U = np.empty_like(st["W"])
        c1, c2 = self.K["line"](st["R"], np.ascontiguousarray(D), st["W"], U, s.rows, s.cols, s.cw, *s.T, s.row0,
                                s.length, s.ptr, s.vals, s.d, s.own, x1, x2, a1, a2)
        return (c1 - lam @ a1 + sigma * (v @ a1), c2 - lam @ a2 + sigma * (v @ a2 + 0.5 * (a1 @ a1)),
                sigma * (a1 @ a2), 0.5 * sigma * (a2 @ a2))

    def step(self, q: tuple[float, ...], amax: float = np.inf) -> float:
        return float(self.K["step"](*q, amax))

    def project(self, R: np.ndarray) -> np.ndarray:
        """``R`` masked and moved off the faced subspaces (``V_l' R = 0``), in place."""
        s = self.s
        R *= self.mask
        for l in np.flatnonzero(s.face):
            V = s.vals[s.ptr[l]:s.ptr[l + 1]]
            rows = slice(int(s.row0[l]), int(s.row0[l] + s.length[l]))
            R[rows] -= np.outer(V, V @ R[rows])
        return R

    def reset_memory(self) -> None:
        """Clear the L-BFGS pairs (SDPLR clears them when it raises sigma, sdplrlib.c:330-333)."""
        self.hist[:2] = 0

    def inner(self, st: dict[str, Any], lam: np.ndarray, sigma: float, *, gtol: float, ftol: float, max_it: int,
              memory: int, amax: float = 1.0) -> tuple[int, int]:
        """Run :func:`inner_solve` on the state ``st`` (updated in place); ``(status, line searches)``."""
        s, R = self.s, st["R"]
        if self.Sh is None or self.Sh.shape != (memory, R.size):
            self.Sh, self.Yh = np.zeros((memory, R.size)), np.zeros((memory, R.size))
            self.rho = np.zeros(memory)
            self.hist[:2] = 0
        out = np.array([st["cval"], 0.0, 0.0])
        status = self.K["inner_solve"](R, st["W"], st["x"], st["v"], np.ascontiguousarray(lam), float(sigma), self.b,
                                       st["G"], s.rows, s.cols, s.c, s.cw, *s.M, *s.T, s.row0, s.length, s.ptr,
                                       s.vals, s.d, s.own, s.face, self.mask, self.use_mask, self.Sh, self.Yh, self.rho,
                                       self.hist, float(gtol), float(ftol), int(max_it), float(amax), out)
        st["cval"] = float(out[0])
        st["gnorm"] = float(out[1])
        return int(status), int(out[2])
