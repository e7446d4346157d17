"""Shared kernels: PSD checks, certified eigenvalue bounds (certify.py), Lanczos estimates (lanczos.py), GDPA scalars with warm-started LOBPCG, LP helpers."""
