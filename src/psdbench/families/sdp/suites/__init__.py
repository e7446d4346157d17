"""Suites of the SDP family (every *.toml here is a suite named by its stem)."""
