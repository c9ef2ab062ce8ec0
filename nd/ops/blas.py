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


def blas_threads_and_source() -> tuple[int, str | None]:
    """Threads numpy's BLAS may use and the variable that says so (OPENBLAS_NUM_THREADS,
    OMP_NUM_THREADS, MKL_NUM_THREADS; None: the CPU count)."""
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        value = os.environ.get(var, "").strip()
        if value.isdigit() and int(value) > 0:
            return int(value), var
    return os.cpu_count() or 1, None


def blas_threads() -> int:
    """Threads numpy's BLAS may use (blas_threads_and_source's count)."""
    return blas_threads_and_source()[0]


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


#: log2 of the CPU cycles (about 0.3 ms) OpenBLAS's worker threads spin for the next call
#: before they sleep, set by `limit_worker_spin` unless OPENBLAS_THREAD_TIMEOUT is set
WORKER_SPIN_LOG2_CYCLES = 20


def limit_worker_spin() -> bool:
    """Make numpy's OpenBLAS worker threads sleep after ~0.3 ms idle instead of OpenBLAS's
    default 2^28 cycles (~0.1 s); True if it did.

    Between two GEMMs the kernels run numpy and compiled passes on one thread; meanwhile the
    default timeout keeps every idle BLAS worker spinning on a core. That doubled the process
    CPU time of a ResNet-18 training step on 2 cores (and takes cores from other processes)
    without making it faster; with 2^20 cycles the step's CPU time fell by about a third at the
    same wall time, and the gaps of small-GEMM workloads (the MLP step: tens of microseconds)
    stay shorter than the spin, so they do not pay for waking the workers (measured:
    benchmarks/train_vs_torch.py, ../shared/bench). OpenBLAS reads its timeout when it starts
    its threads, so this re-reads the environment and stops them; the next GEMM starts them
    again. A user's OPENBLAS_THREAD_TIMEOUT (4..30; 28 is OpenBLAS's default) is left alone,
    and so are other BLAS libraries (MKL, OpenMP builds: they lack these entry points)."""
    if os.environ.get("OPENBLAS_THREAD_TIMEOUT", "").strip() or blas_threads() < 2:
        return False
    libs = _loaded_openblas()
    if not libs:
        return False
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = str(WORKER_SPIN_LOG2_CYCLES)
    try:
        for lib in libs:
            lib.openblas_read_env()
    finally:
        del os.environ["OPENBLAS_THREAD_TIMEOUT"]      # child processes keep OpenBLAS's default
    for lib in libs:
        lib.blas_thread_shutdown_()
    return True


def _loaded_openblas() -> list:
    """ctypes handles of the OpenBLAS libraries loaded in this process (numpy's; scipy's if it
    came first) with the entry points limit_worker_spin calls (pthreads builds); none for
    other BLAS libraries or without /proc/self/maps."""
    return [lib for lib in _openblas_libraries()
            if all(hasattr(lib, name) for name in ("openblas_read_env", "blas_thread_shutdown_",
                                                   "openblas_thread_timeout"))]


def _openblas_libraries() -> list:
    """ctypes handles of every OpenBLAS library mapped into this process (Linux)."""
    import ctypes
    try:
        with open("/proc/self/maps") as maps:
            paths = {line.split()[-1] for line in maps if "openblas" in line.lower() and ".so" in line}
    except OSError:
        return []
    libs = []
    for path in sorted(paths):
        try:
            libs.append(ctypes.CDLL(path))
        except OSError:
            continue
    return libs


#: the entry point that names OpenBLAS's kernel set, under the prefixes and suffixes of its
#: builds (plain; numpy's scipy-openblas wheels, 64-bit integer interface)
_CORENAME_SYMBOLS = ("openblas_get_corename", "openblas_get_corename64_",
                     "scipy_openblas_get_corename64_", "scipy_openblas_get_corename")


def openblas_cores() -> list[str]:
    """The kernel set ("core": Haswell, SkylakeX, Zen, ...) each loaded OpenBLAS runs, which
    OpenBLAS picks from the CPU at load time unless OPENBLAS_CORETYPE forces one; empty for
    other BLAS libraries. numpy must have been imported (it loads the library)."""
    import ctypes
    cores = []
    for lib in _openblas_libraries():
        for name in _CORENAME_SYMBOLS:
            fn = getattr(lib, name, None)
            if fn is not None:
                fn.restype = ctypes.c_char_p
                cores.append(fn().decode(errors="replace").strip())
                break
    return cores
