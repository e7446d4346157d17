"""What a solver of kind ``"sdp"`` may use of an instance (the family's kind protocol).

:class:`~psdbench.families.sdp.problem.SdpInstance` implements it; the native adapters read
nothing else.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

from psdbench.api import Instance

from .data import SdpData


@runtime_checkable
class SdpKind(Instance, Protocol):
    """A block-diagonal SDP in the DIMACS form (kind ``"sdp"``).

    Attributes
    ----------
    data : SdpData
        ``block_sizes``, the sparse ``A`` (m x N, stacked vec), ``b``, ``c`` and the operators.
    variables : tuple of str
        ``("X", "y", "Z", "y_ray", "X_ray")``: stacked vectors (see :mod:`.problem`).
    """

    data: SdpData
    variables: ClassVar[tuple[str, ...]]
