"""Shared timing helper: median time per call, measured in one process."""
from __future__ import annotations

import statistics
import timeit
from collections.abc import Callable


def median_seconds(fn: Callable[[], object], repeat: int = 7, min_time: float = 0.05) -> float:
    """Median over `repeat` runs of the per-call time, each run lasting >= min_time."""
    timer = timeit.Timer(fn)
    number, _ = timer.autorange()
    number = max(1, int(number * min_time / 0.2))
    return statistics.median(t / number for t in timer.repeat(repeat=repeat, number=number))


def table(rows: list[tuple], header: tuple) -> str:
    widths = [max(len(str(r[i])) for r in [header, *rows]) for i in range(len(header))]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    return "\n".join([fmt.format(*header), fmt.format(*("-" * w for w in widths))]
                     + [fmt.format(*map(str, r)) for r in rows])


def blas_note() -> str:
    """numpy's BLAS, its kernel set and threads (`hybridgraph doctor`'s line): a GEMM's time,
    and so every ratio against MXNet's or PyTorch's own convolution kernels, moves with them
    (OpenBLAS's AVX2 kernels ran GEMMs at half the speed of its AVX-512 ones on a Zen 5 VM)."""
    from hybridgraph import doctor
    return doctor.blas_line(doctor.gather())
