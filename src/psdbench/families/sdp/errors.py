"""The six DIMACS error measures and the infeasibility certificate checks, from the data.

DIMACS errors, as the 7th DIMACS Implementation Challenge defines them (H. D. Mittelmann, "An
independent benchmarking of SDP and SOCP solvers", Math. Prog. 95:407-430, 2003, Section 2
"Computing errors"; the same text is at plato.asu.edu/dimacs/node3.html, which Mittelmann's
benchmark pages cite)::

    err1 = ||A(X) - b||_2 / (1 + |b|_max)
    err2 = max(0, -lambda_min,K(X) / (1 + |b|_max))
    err3 = ||A*(y) + Z - C||_K / (1 + |C|_max)
    err4 = max(0, -lambda_min,K(Z) / (1 + |C|_max))
    err5 = (<C, X> - b'y) / (1 + |<C, X>| + |b'y|)
    err6 = <X, Z> / (1 + |<C, X>| + |b'y|)

The norms, as defined there (the definition writes ``||a||_1`` for what is here ``|a|_max``):

* ``|a|_max``: the absolute value of the largest component of ``a`` (of ``b`` in R^m, of the
  stacked ``C``); not the 1-norm, which some implementations use instead;
* ``||.||_2`` of the m-vector ``A(X) - b``: the Euclidean norm;
* ``||M||_K`` of a block-structured ``M``: the SUM over the PSD blocks of their Frobenius norms,
  plus the Euclidean norm of the LP part (all diagonal-block entries as one vector ``x^l``).  It is
  not the Frobenius norm of the whole block-diagonal matrix, which is up to ``sqrt(blocks)``
  smaller.  CSDP prints err3 with this norm (its ``Knorm``: the sum of the Frobenius norms of its
  blocks; it takes each diagonal block apart, which differs only when a file has several LP blocks);
* ``lambda_min,K``: the smallest eigenvalue over the PSD blocks and the smallest LP entry.

err5 is signed (the definition keeps its sign "so as not to suppress any information"); the
largest error is taken over absolute values.  When a solver returns no ``Z``, ``Z = C - A*(y)``
and err3 is 0 (the definition's rule for codes that do not keep ``Z``).  err6 is defined only when
``X`` and ``Z`` are in the cone, err2 = err4 = 0 ("furthermore, when x and z are both in K ... we
also define err6"); elsewhere it is NaN (not defined) and the largest error is taken over the five
others.  Measured on SDPLIB (docs/families/sdp.md): the interior-point solvers' points are strictly
inside (err2 = err4 = 0, err6 kept); SCS's projected points sit at lambda_min ~ -1e-15 with
``<X, Z>`` at the same rounding level, so dropping their err6 loses nothing.
Mittelmann's flags: ``a`` when the largest error exceeds 1e-4, ``f`` (failed) when it exceeds 1e-2.

Infeasibility certificates (Farkas; theorems of the alternative for (P) and (D)):

* (P) is infeasible when some ``y`` has ``A*(y)`` negative semidefinite and ``b'y > 0``
  (a ray of (D)); checked as ``lambda_max(A*(y)) <= tol * b'y``, after scaling ``b'y = 1``.
* (D) is infeasible when some ``X`` psd has ``A(X) = 0`` and ``<C, X> < 0`` (a ray of (P));
  checked as ``||A(X)||_2 <= tol``, ``lambda_min(X) >= -tol`` after scaling ``<C, X> = -1``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .data import SdpData

FLAG_A = 1e-4
FLAG_F = 1e-2
CERT_TOL = 1e-6


@dataclass(frozen=True)
class DimacsErrors:
    """The six errors of one point, with the quantities they come from."""

    err: tuple[float, float, float, float, float, float]
    primal_obj: float
    dual_obj: float
    min_eig_X: float
    min_eig_Z: float

    @property
    def max_err(self) -> float:
        """The largest of the defined errors (absolute values of err5, err6; err6 may be undefined)."""
        return float(max(abs(e) for e in self.err if e == e))

    @property
    def flag(self) -> str:
        """Mittelmann's flag: ``"f"`` above 1e-2, ``"a"`` above 1e-4, else ``""``."""
        e = self.max_err
        return "f" if e > FLAG_F else ("a" if e > FLAG_A else "")

    def as_dict(self) -> dict[str, float]:
        # an undefined err6 (X or Z outside the cone) is left out rather than stored as NaN
        return {**{f"err{k + 1}": float(v) for k, v in enumerate(self.err) if v == v}, "max_err": self.max_err,
                "flag_a": float(self.max_err > FLAG_A), "flag_f": float(self.max_err > FLAG_F),
                "dual_obj": self.dual_obj, "min_eig_X": self.min_eig_X, "min_eig_Z": self.min_eig_Z}


def dimacs_errors(data: SdpData, x: np.ndarray, y: np.ndarray, z: np.ndarray | None = None) -> DimacsErrors:
    """The six DIMACS errors of ``(X, y, Z)`` (stacked vectors, see :mod:`.data`).

    Parameters
    ----------
    data : SdpData
    x : ndarray of shape (N,)
        The primal point ``X``.
    y : ndarray of shape (m,)
    z : ndarray of shape (N,), optional
        The dual slack; ``C - A*(y)`` when omitted.
    """
    c = data.c_dense()
    aty = data.At_op(y)
    if z is None:
        z = c - aty
        err3 = 0.0
    else:
        err3 = block_norm(data, aty + z - c) / (1.0 + data.norm_C_inf())
    nb = 1.0 + data.norm_b_inf()
    pobj, dobj = float(c @ x), float(data.b @ y)
    lx = float(data.min_eigs(x).min(initial=np.inf))
    lz = float(data.min_eigs(z).min(initial=np.inf))
    scale = 1.0 + abs(pobj) + abs(dobj)
    err2, err4 = max(0.0, -lx / nb), max(0.0, -lz / (1.0 + data.norm_C_inf()))
    err = (float(np.linalg.norm(data.A_op(x) - data.b)) / nb,  # err1
           err2,
           err3,
           err4,
           (pobj - dobj) / scale,  # err5
           float(x @ z) / scale if err2 == 0.0 and err4 == 0.0 else float("nan"))  # err6: X, Z in the cone
    return DimacsErrors(err=err, primal_obj=pobj, dual_obj=dobj, min_eig_X=lx, min_eig_Z=lz)


def block_norm(data: SdpData, v: np.ndarray) -> float:
    """DIMACS's norm of a block-structured quantity: the sum of the Frobenius norms of the PSD blocks
    plus the Euclidean norm of all LP entries together (see the module docstring).

    Parameters
    ----------
    data : SdpData
        The block structure.
    v : ndarray of shape (N,)
        A stacked vector in the layout of :mod:`.data`.
    """
    v = np.asarray(v, dtype=float)
    off = data.offsets
    total, lp_sq = 0.0, 0.0
    for j, s in enumerate(data.block_sizes):
        part = v[off[j]:off[j + 1]]
        if s > 0:
            total += float(np.linalg.norm(part))  # Frobenius norm of the block (its vec's 2-norm)
        else:
            lp_sq += float(part @ part)
    return total + float(np.sqrt(lp_sq))


def primal_infeasibility_holds(data: SdpData, y: np.ndarray, tol: float = CERT_TOL) -> tuple[bool, float]:
    """Whether ``y`` certifies (P) infeasible: ``b'y > 0`` and ``A*(y)`` nsd (after ``b'y = 1``).

    Returns the verdict and the violation ``max(0, lambda_max(A*(y)) / b'y)``.
    """
    by = float(data.b @ y)
    if not by > 0:
        return False, float("inf")
    w = data.At_op(np.asarray(y, dtype=float) / by)
    viol = max(0.0, -float(data.min_eigs(-w).min(initial=np.inf)))  # lambda_max(A*(y)) = -lambda_min(-A*(y))
    return viol <= tol, viol


def dual_infeasibility_holds(data: SdpData, x: np.ndarray, tol: float = CERT_TOL) -> tuple[bool, float]:
    """Whether ``X`` certifies (D) infeasible: ``X`` psd, ``A(X) = 0``, ``<C, X> < 0`` (after ``<C, X> = -1``)."""
    cx = float(data.c_dense() @ x)
    if not cx < 0:
        return False, float("inf")
    xs = np.asarray(x, dtype=float) / -cx
    viol = max(float(np.linalg.norm(data.A_op(xs))), max(0.0, -float(data.min_eigs(xs).min(initial=np.inf))))
    return viol <= tol, viol
