"""Shared kernels: PSD checks, certified eigenvalue bounds (certify.py), GDPA scalars with warm-started LOBPCG, LP helpers."""
