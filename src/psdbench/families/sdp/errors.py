"""The six DIMACS error measures and the infeasibility certificate checks, from the data.

DIMACS errors (Mittelmann 2003, Section 2; the norms are the ones psdbench uses, stated because
implementations differ: ``||b||_inf`` is the largest absolute entry of ``b``, ``||C||_inf`` the
largest absolute entry of ``C``, ``||.||_2`` the Euclidean norm, ``||.||_F`` the Frobenius norm of
the block-diagonal matrix)::

    err1 = ||A(X) - b||_2 / (1 + ||b||_inf)
    err2 = max(0, -lambda_min(X) / (1 + ||b||_inf))
    err3 = ||A*(y) + Z - C||_F / (1 + ||C||_inf)
    err4 = max(0, -lambda_min(Z) / (1 + ||C||_inf))
    err5 = (<C, X> - b'y) / (1 + |<C, X>| + |b'y|)
    err6 = <X, Z> / (1 + |<C, X>| + |b'y|)

``lambda_min`` is the smallest eigenvalue over all blocks (an LP block's smallest entry).  When a
solver returns no ``Z``, ``Z = C - A*(y)`` and err3 is 0.  err5 and err6 may be negative; the
largest error is taken over their absolute values.  Mittelmann's flags: ``a`` when the largest
error exceeds 1e-4, ``f`` (failed) when it exceeds 1e-2.

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
        """The largest of the six (absolute values of err5, err6)."""
        return float(max(abs(e) for e in self.err))

    @property
    def flag(self) -> str:
        """Mittelmann's flag: ``"f"`` above 1e-2, ``"a"`` above 1e-4, else ``""``."""
        e = self.max_err
        return "f" if e > FLAG_F else ("a" if e > FLAG_A else "")

    def as_dict(self) -> dict[str, float]:
        return {**{f"err{k + 1}": float(v) for k, v in enumerate(self.err)}, "max_err": self.max_err,
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
        err3 = float(np.linalg.norm(aty + z - c)) / (1.0 + data.norm_C_inf())
    nb = 1.0 + data.norm_b_inf()
    pobj, dobj = float(c @ x), float(data.b @ y)
    lx = float(data.min_eigs(x).min(initial=np.inf))
    lz = float(data.min_eigs(z).min(initial=np.inf))
    scale = 1.0 + abs(pobj) + abs(dobj)
    err = (float(np.linalg.norm(data.A_op(x) - data.b)) / nb,  # err1
           max(0.0, -lx / nb),  # err2
           err3,
           max(0.0, -lz / (1.0 + data.norm_C_inf())),  # err4
           (pobj - dobj) / scale,  # err5
           float(x @ z) / scale)  # err6
    return DimacsErrors(err=err, primal_obj=pobj, dual_obj=dobj, min_eig_X=lx, min_eig_Z=lz)


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
