"""`hybridgraph doctor`: what sets this machine's speed for hybridgraph, and what to change.

Most of a model's time is spent in numpy's BLAS and in the `[jit]` extra's compiled passes, so
the settings that decide speed lie outside hybridgraph: which kernel set OpenBLAS picked for the
CPU, how many threads it runs, whether numba is installed. None of them shows in a traceback or
a result -- only in the time -- so this reports each and says where one leaves speed unused.

The costliest found so far: OpenBLAS running its AVX2 kernels (its "Haswell" core) on a CPU
with AVX-512, forced by OPENBLAS_CORETYPE or picked by an OpenBLAS older than the CPU. On a
2-core AMD Zen 5 VM its SkylakeX kernels ran float32 GEMMs twice as fast (190 against 380
GFLOP/s at 4096x4096), which took a ResNet-18 training step at batch 8 from 501 to 374 ms
(`benchmarks/train_vs_torch.py`); on CPUs that split AVX-512 into two 256-bit halves (Zen 4)
the gain is small. `--gemm` measures it on this machine, each kernel set in a fresh process.
"""
from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import subprocess
import sys
from dataclasses import dataclass

#: OpenBLAS kernel sets that use AVX-512 (core names as openblas_get_corename spells them)
AVX512_CORES = frozenset({"skylakex", "cooperlake", "sapphirerapids"})

#: the kernel set to suggest on an AVX-512 CPU (OPENBLAS_CORETYPE's spelling)
AVX512_CORE = "SkylakeX"


@dataclass(frozen=True)
class Facts:
    """What `hints` judges, gathered by `gather` (or given, in tests)."""

    numpy_version: str
    blas: str                       # numpy's BLAS: name and version as numpy reports them
    cores: tuple[str, ...]          # OpenBLAS kernel sets loaded (empty: not OpenBLAS)
    coretype_env: str | None        # OPENBLAS_CORETYPE as set
    avx512: bool                    # the CPU runs AVX-512 F/CD/BW/DQ/VL (what SkylakeX needs)
    cpus: int                       # CPUs this process may run on
    blas_threads: int
    threads_from: str | None        # the variable blas_threads came from (None: the CPU count)
    numba: str | None               # numba's version, None when not installed
    jit_on: bool                    # HYBRIDGRAPH_JIT is not 0
    cupy: bool                      # cupy installed (GPU contexts)


def _numpy_blas() -> str:
    import numpy as np
    try:
        deps = np.show_config(mode="dicts")["Build Dependencies"]
        blas = deps["blas"]
        return f"{blas.get('name', '?')} {blas.get('version', '')}".strip()
    except (TypeError, KeyError, AttributeError):    # numpy < 1.25 prints its config only
        return "unknown"


def _avx512() -> bool:
    from hybridgraph.runtime import _cpu_features
    return bool(_cpu_features().get("AVX512_SKX"))


def _cpus() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:      # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def gather() -> Facts:
    """The facts of this process (loads numpy, not numba or cupy)."""
    import numpy as np

    from hybridgraph.nd.ops import blas, jit
    threads, source = blas.blas_threads_and_source()
    return Facts(numpy_version=np.__version__, blas=_numpy_blas(), cores=tuple(blas.openblas_cores()),
                 coretype_env=os.environ.get("OPENBLAS_CORETYPE") or None, avx512=_avx512(),
                 cpus=_cpus(), blas_threads=threads, threads_from=source, numba=_version("numba"),
                 jit_on=jit.enabled(), cupy=importlib.util.find_spec("cupy") is not None)


def hints(f: Facts) -> list[str]:
    """What to change, one sentence each, most costly first; empty when nothing is found."""
    out = []
    slow = [c for c in f.cores if c.lower() not in AVX512_CORES]
    if f.avx512 and slow:
        why = (f"OPENBLAS_CORETYPE={f.coretype_env} forces them" if f.coretype_env
               else "this OpenBLAS does not recognise the CPU")
        out.append(f"OpenBLAS runs its {slow[0]} (256-bit) kernels on a CPU with AVX-512 ({why}). Its "
                   f"{AVX512_CORE} kernels ran GEMMs up to 2x faster on CPUs with full-width AVX-512: "
                   f"compare them here with `hybridgraph doctor --gemm`, then start Python with "
                   f"OPENBLAS_CORETYPE={AVX512_CORE}" + (" (or unset it)" if f.coretype_env else "") + ".")
    if f.blas_threads > f.cpus:
        out.append(f"The BLAS may run {f.blas_threads} threads ({f.threads_from or 'the CPU count'}) on "
                   f"{f.cpus} available CPUs: its threads wait for each other's cores on every GEMM. "
                   f"Set OMP_NUM_THREADS={f.cpus}.")
    if f.numba is None:
        out.append("The [jit] extra is not installed (pip install 'hybridgraph[jit]'): convolutions, "
                   "BatchNorm, pooling and optimizer updates run as numpy passes (measured: ResNet-18 "
                   "inference at batch 8 in 252 instead of 197 ms, a LeNet training step in 23 instead "
                   "of 17 ms).")
    elif not f.jit_on:
        out.append("HYBRIDGRAPH_JIT=0 turns the [jit] extra's compiled kernels off.")
    return out


def blas_line(f: Facts) -> str:
    """numpy's BLAS, the kernel set it runs and its threads, in one line (benchmarks print it
    beside their ratios: the kernel set alone can halve a GEMM's time)."""
    blas = f.blas + (f", kernels: {', '.join(f.cores)}" if f.cores else "")
    if f.coretype_env:
        blas += f" (OPENBLAS_CORETYPE={f.coretype_env})"
    return f"numpy {f.numpy_version}; BLAS {blas}; {f.blas_threads} BLAS thread(s)"


def report(f: Facts) -> str:
    """The facts as lines of text, then the hints."""
    lines = [
        blas_line(f),
        f"CPU: {f.cpus} available, AVX-512 {'yes' if f.avx512 else 'no'}; BLAS threads from "
        f"{f.threads_from or 'the CPU count'}",
        "compiled kernels ([jit] extra): " + (("numba " + f.numba + ("" if f.jit_on else ", off (HYBRIDGRAPH_JIT=0)"))
                                              if f.numba else "not installed"),
        "GPU: cupy " + ("installed" if f.cupy else "not installed"),
    ]
    found = hints(f)
    lines += ["", "hints:" if found else "no hints: nothing found that leaves speed unused"]
    lines += [f"  - {h}" for h in found]
    return "\n".join(lines)


_GEMM_PROBE = """
import time, numpy as np
from hybridgraph.nd.ops import blas
n = {size}
a = np.random.default_rng(0).random((n, n), dtype=np.float32)
a @ a
best = float("inf")
for _ in range(3):
    t = time.perf_counter(); a @ a; best = min(best, time.perf_counter() - t)
print(",".join(blas.openblas_cores()) or "-", 2 * n ** 3 / best / 1e9)
"""


def gemm_rates(f: Facts, size: int = 2048) -> list[tuple[str, str, float | str]]:
    """(setting, kernel set run, float32 GEMM GFLOP/s) of a size x size product, each setting
    in a fresh process: as set now, OpenBLAS's own choice, and on AVX-512 CPUs its SkylakeX
    kernels. A setting whose process fails gives "-" and its last error line instead."""
    if size < 1:
        raise ValueError(f"hybridgraph doctor --gemm: the GEMM size must be a positive integer, got {size}")
    settings: list[tuple[str, str | None]] = [("as set", f.coretype_env)]
    if f.coretype_env:
        settings.append(("OPENBLAS_CORETYPE unset", None))
    if f.avx512 and (f.coretype_env or "").lower() != AVX512_CORE.lower():
        settings.append((f"OPENBLAS_CORETYPE={AVX512_CORE}", AVX512_CORE))
    rows: list[tuple[str, str, float | str]] = []
    for label, core in settings:
        env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_CORETYPE"}
        if core:
            env["OPENBLAS_CORETYPE"] = core
        proc = subprocess.run([sys.executable, "-c", _GEMM_PROBE.format(size=size)], env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        fields = proc.stdout.split()
        if proc.returncode == 0 and len(fields) == 2:
            rows.append((label, fields[0], float(fields[1])))
        else:
            last = (proc.stderr.strip().splitlines() or [f"exit status {proc.returncode}"])[-1]
            rows.append((label, "-", f"failed: {last}"))
    return rows
