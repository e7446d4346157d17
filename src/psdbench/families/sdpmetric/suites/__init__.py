"""Suites of the SDPMetric family (every *.toml here is a suite named by its stem)."""
