"""Run metric-learn 0.7 on a scikit-learn that renamed ``force_all_finite``.

Why a compatibility layer and not a pin
---------------------------------------
metric-learn 0.7.0 (its latest release) passes ``force_all_finite=`` to scikit-learn's
``check_array`` and ``check_X_y`` (``metric_learn/_util.py``; ``itml.py`` and ``scml.py`` import
``check_array`` too).  scikit-learn 1.6 renamed the argument ``ensure_all_finite`` and 1.8 removed
the old name, so on scikit-learn 1.9.1 (what ``pip install -e .`` resolves today) every
``LMNN().fit`` and ``ITML_Supervised().fit`` raises::

    TypeError: check_X_y() got an unexpected keyword argument 'force_all_finite'

(from ``metric_learn._util.check_input``, before any learning).  With the argument renamed, both
fit and give their usual results: nothing else in the paths psdbench uses breaks.  A pin
(``scikit-learn<1.8`` in the ``peers`` extra) would downgrade scikit-learn for the whole
environment, so the ``peers`` extra would change the datasets, splits and k-NN of every other
solver's cells (scikit-learn is a core dependency); a rename of one keyword, applied only while a
peer fits, changes nothing else.  Hence this layer.

What it does
------------
:func:`sklearn_validation_compat` is a context manager.  If scikit-learn's ``check_array`` still
accepts ``force_all_finite`` it does nothing.  Otherwise, for every loaded module under the given
package prefix (``metric_learn``) whose global ``check_array`` / ``check_X_y`` *is* scikit-learn's
function, it replaces that global with a wrapper that renames ``force_all_finite`` to
``ensure_all_finite`` (:func:`translate_finite_kwarg`), and restores the originals on exit.
scikit-learn itself is never modified.  A lock serialises users within a process (the harness runs
one cell per worker process; :func:`psdbench.testing.check_solver` may use threads).
"""

from __future__ import annotations

import functools
import inspect
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Iterator

#: the scikit-learn validation functions metric-learn 0.7 imports by name
PATCHED_NAMES: tuple[str, ...] = ("check_array", "check_X_y")
OLD, NEW = "force_all_finite", "ensure_all_finite"

_LOCK = threading.RLock()


def needs_translation() -> bool:
    """Whether the installed scikit-learn's ``check_array`` lacks ``force_all_finite`` (>= 1.8)."""
    from sklearn.utils import validation

    return OLD not in inspect.signature(validation.check_array).parameters


def translate_finite_kwarg(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``kwargs`` with ``force_all_finite`` renamed ``ensure_all_finite``.

    Parameters
    ----------
    kwargs : dict
        Keyword arguments of a ``check_array`` / ``check_X_y`` call.

    Returns
    -------
    dict
        The same arguments; the value of ``force_all_finite`` (``True``, ``False`` or
        ``"allow-nan"``, same meaning under both names) now under ``ensure_all_finite``.

    Raises
    ------
    TypeError
        When both names are given.
    """
    out = dict(kwargs)
    if OLD in out:
        if NEW in out:
            raise TypeError(f"both {OLD} and {NEW} given")
        out[NEW] = out.pop(OLD)
    return out


def _wrap(func: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **translate_finite_kwarg(kwargs))

    wrapper.__psdbench_compat__ = func  # type: ignore[attr-defined]
    return wrapper


@contextmanager
def sklearn_validation_compat(prefix: str = "metric_learn") -> Iterator[list[tuple[str, str]]]:
    """Translate ``force_all_finite`` in the modules under ``prefix`` while the block runs.

    Parameters
    ----------
    prefix : str
        Top-level package whose already imported modules are patched (import it first).

    Yields
    ------
    list of (str, str)
        The ``(module, name)`` globals replaced (empty when scikit-learn needs no translation).
    """
    from sklearn.utils import validation

    with _LOCK:
        patched: list[tuple[Any, str, Any]] = []
        if needs_translation():
            originals = {name: getattr(validation, name) for name in PATCHED_NAMES}
            for modname, module in list(sys.modules.items()):
                if module is None or not (modname == prefix or modname.startswith(prefix + ".")):
                    continue
                for name, func in originals.items():
                    if getattr(module, name, None) is func:
                        patched.append((module, name, func))
                        setattr(module, name, _wrap(func))
        try:
            yield [(m.__name__, name) for m, name, _ in patched]
        finally:
            for module, name, func in patched:
                setattr(module, name, func)
