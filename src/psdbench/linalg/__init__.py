"""Shared kernels: PSD checks, GDPA scalars with warm-started LOBPCG, LP helpers."""
