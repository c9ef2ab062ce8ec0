"""How numpy's BLAS runs, and the chunk sizes the convolution kernels derive from it.

numpy has no API for its BLAS's thread count; OpenBLAS and OpenMP read the environment
variables below, so the kernels read them too. A threaded BLAS synchronises its threads
on every call, which costs dearly on small GEMMs (and on a busy machine, where a thread
waits for its core): then the kernels make few, large GEMM calls. A single-threaded one
gains from cache-sized chunks instead: the copy, the GEMM and the epilogue of a chunk run
in the CPU caches.
"""
from __future__ import annotations

import os

import numpy as np


def blas_threads() -> int:
    """Threads numpy's BLAS may use (OPENBLAS_NUM_THREADS, OMP_NUM_THREADS, MKL_NUM_THREADS,
    else the CPU count)."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value)
    return os.cpu_count() or 1


#: whether numpy's BLAS runs several threads (then: few, large GEMMs)
THREADED_BLAS = blas_threads() > 1

#: bytes of the column matrix built and multiplied per chunk (numpy; cupy takes one chunk)
CHUNK_BYTES = (16 << 20) if THREADED_BLAS else (4 << 20)


def chunk_limit(xp, bytes_per_item: int) -> int:
    """How many items (images, rows) of `bytes_per_item` one chunk of CHUNK_BYTES holds
    (>= 1; unbounded for cupy, whose kernels want the whole batch at once)."""
    if xp is not np:
        return 1 << 62
    return max(1, CHUNK_BYTES // max(1, bytes_per_item))
