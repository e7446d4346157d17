"""Suites of the max-cut family."""
