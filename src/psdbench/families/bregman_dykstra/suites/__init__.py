"""Suites of the stochastic Dykstra family (every *.toml here is a suite named by its stem)."""
