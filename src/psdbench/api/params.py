"""Declarative parameter specifications (:class:`Param`), re-exported by :mod:`psdbench.api`.

Problems and solvers declare ``params = {name: Param(...)}``; the grid checks every value against
its spec when it is loaded (:func:`psdbench.api.validate_params`), so a bad value is exit 2 before
any work starts.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

@dataclass(frozen=True)
class Param:
    """Declarative specification of one problem or solver parameter.

    A grid value is checked against it when the grid is loaded, so that a bad value is exit 2
    before any work starts instead of an ``error`` cell.

    Attributes
    ----------
    default : Any
        The value used when the grid does not set it (``None`` allowed).
    doc : str
        One line for ``psdbench list`` and the docs.
    choices : tuple, optional
        The allowed values (compared with ``==``).
    types : tuple of type, optional
        Allowed Python types (``int`` admits ``bool`` only if listed); ``None`` always passes
        when it is the default.
    low, high : float, optional
        Inclusive numeric bounds for numeric values.
    check : callable, optional
        ``check(value) -> str | None``: an error message for values the other fields cannot
        describe (e.g. ``"all"`` or an integer).
    kind : str, optional
        How ``psdbench info`` names the accepted values when ``check`` decides them (set by
        :func:`either`); otherwise derived from the other fields (:meth:`describe`).
    """

    default: Any = None
    doc: str = ""
    choices: tuple[Any, ...] | None = None
    types: tuple[type, ...] | None = None
    low: float | None = None
    high: float | None = None
    check: Callable[[Any], str | None] | None = None
    kind: str | None = None

    def describe(self) -> str:
        """The accepted values in words, e.g. ``int in [1, inf]`` or ``'knn' or 'complete'``."""
        if self.kind:
            return self.kind
        if self.check is not None:
            return "checked by the plugin"
        if self.choices is None and self.types is None and self.low is None and self.high is None:
            return "any" if self.default is None else type(self.default).__name__
        text = _describe(self)
        return text + (" or None" if self.default is None else "")

    def error(self, value: Any) -> str | None:
        """Why ``value`` is not allowed, or ``None`` if it is."""
        if value is None and self.default is None:
            return None
        if self.check is not None:
            return self.check(value)
        if self.choices is None and self.types is None and self.low is None and self.high is None:
            return _like_default(self.default, value)
        if self.choices is not None and value not in self.choices:
            return f"must be one of {', '.join(repr(c) for c in self.choices)}, not {value!r}"
        if self.types is not None:
            if isinstance(value, bool) and bool not in self.types:
                return f"must be {' or '.join(t.__name__ for t in self.types)}, not {value!r}"
            if not isinstance(value, self.types):
                return f"must be {' or '.join(t.__name__ for t in self.types)}, not {value!r}"
        if (self.low is not None or self.high is not None) and isinstance(value, (int, float)) \
                and not isinstance(value, bool):
            if not math.isfinite(float(value)) or (self.low is not None and value < self.low) \
                    or (self.high is not None and value > self.high):
                lo = "-inf" if self.low is None else f"{self.low:g}"
                hi = "inf" if self.high is None else f"{self.high:g}"
                return f"must lie in [{lo}, {hi}], not {value!r}"
        return None


def _like_default(default: Any, value: Any) -> str | None:
    """For a spec that is only a default (a plugin's plain ``default_params``): the value must be of
    the default's kind (a number for a number, a bool for a bool, a string for a string, a list for
    a list); ``None`` and defaults of other types accept anything."""
    if value is None or default is None:
        return None
    if isinstance(default, bool):
        ok, kind = isinstance(value, bool), "a boolean (true / false)"
    elif isinstance(default, (int, float)):
        ok, kind = isinstance(value, (int, float)) and not isinstance(value, bool), "a number"
    elif isinstance(default, str):
        ok, kind = isinstance(value, str), "a string"
    elif isinstance(default, (list, tuple)):
        ok, kind = isinstance(value, (list, tuple)), "a list"
    else:
        return None
    return None if ok else f"must be {kind} like its default {default!r}, not {value!r}"


def number(low: float | None = None, high: float | None = None, default: Any = None, doc: str = "",
           integer: bool = False) -> Param:
    """A numeric :class:`Param` (``int`` or ``float``; ``integer=True`` for ``int`` only)."""
    return Param(default=default, doc=doc, types=(int,) if integer else (int, float), low=low, high=high)


def choice(*values: Any, default: Any = None, doc: str = "") -> Param:
    """A :class:`Param` taking one of ``values`` (default: the first)."""
    return Param(default=values[0] if default is None else default, doc=doc, choices=tuple(values))


def _describe(alternative: Any) -> str:
    """How :func:`either` names one alternative in its error message."""
    if not isinstance(alternative, Param):
        return repr(alternative)
    if alternative.choices is not None:
        return " or ".join(repr(c) for c in alternative.choices)
    kind = " or ".join(t.__name__ for t in alternative.types) if alternative.types else "a value"
    if alternative.low is None and alternative.high is None:
        return kind
    lo = "-inf" if alternative.low is None else f"{alternative.low:g}"
    hi = "inf" if alternative.high is None else f"{alternative.high:g}"
    return f"{kind} in [{lo}, {hi}]"


def either(*alternatives: Any, default: Any = None, doc: str = "") -> Param:
    """A :class:`Param` for a union: a value passes if one alternative accepts it.

    Each alternative is a :class:`Param` (e.g. :func:`number`) or a literal compared with ``==``
    (``None`` only by identity), e.g. ``either("hqic", "cv", number(low=0), default="hqic")``
    for ``rho = "hqic" | "cv" | number``.
    """

    def check(value: Any) -> str | None:
        for alt in alternatives:
            if isinstance(alt, Param):
                if value is not None and alt.error(value) is None:
                    return None
            elif (value is None and alt is None) or (value is not None and alt is not None and value == alt
                                                     and isinstance(value, bool) == isinstance(alt, bool)):
                return None
        return f"must be {' | '.join(_describe(a) for a in alternatives)}, not {value!r}"

    return Param(default=default, doc=doc, check=check, kind=" | ".join(_describe(a) for a in alternatives))
