"""The lowest layer: what touches the operating system and the process, importing nothing numerical.

* :mod:`~psdbench.system.errors`: the contract's two exceptions (re-exported by :mod:`psdbench.api`),
  here so that the command line catches them before it imports NumPy.
* :mod:`~psdbench.system.oserrors`: one line and one exit status for any ``OSError`` or SQLite error.
* :mod:`~psdbench.system.signals`: SIGTERM, SIGHUP and SIGQUIT stop a command as Ctrl-C does.
* :mod:`~psdbench.system.outdir`: folders written as a unit (a report), swapped in whole.

Nothing here imports another psdbench package (``tests/test_structure.py``).
"""
