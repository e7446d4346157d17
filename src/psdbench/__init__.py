"""psdbench: a pluggable benchmark harness for optimization over the PSD cone in learning problems."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("psdbench")
except PackageNotFoundError:  # running from a source tree without installation
    __version__ = "0.0.0+unknown"
