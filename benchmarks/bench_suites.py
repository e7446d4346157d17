"""asv benchmarks of every tracked suite: shipped in the package (:mod:`psdbench.asvbench.suites`)."""

from psdbench.asvbench.suites import *  # noqa: F401,F403
