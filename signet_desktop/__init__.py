"""Signet Desktop: a local-first memory service for AI coding agents."""

import os

# The native embedder runs its own batch threads; BLAS threads on top of them oversubscribe a
# small machine (single-query p95 went from ~12 ms to ~800 ms under load). Must precede numpy.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")

__version__ = "0.1.0"
