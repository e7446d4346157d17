"""The two exceptions of the contract, re-exported by :mod:`psdbench.api` (this module imports nothing,
so the command line can catch them before it imports NumPy)."""


class PsdbenchError(Exception):
    """Bad input (configuration, plugin, data).  The command line turns it into exit status 2."""


class DataError(PsdbenchError):
    """A dataset cannot be found or read."""
