"""Optional compiled kernels: the `[jit]` extra (`pip install 'hybridgraph[jit]'`, numba).

A few loops cost several times their memory traffic when written as numpy calls (strided
gathers and scatter-adds of short runs, transforms of small tiles). Where numba is installed
those run compiled (winograd4_jit.py, conv_jit.py); numpy's path stays the reference and runs
without it. Each module's kernels compile on first use (numba caches them on disk where it
can write) and run on the calling thread: threads of their own would compete with the BLAS
threads that still spin after each GEMM (measured: stalls of one 4 ms scheduler tick).

Cost: numba and its LLVM add about 150 MB to the process's resident memory, paid by the first
kernel that runs. HYBRIDGRAPH_JIT=0 turns every compiled kernel off.
"""
from __future__ import annotations

import importlib.util
import os
import warnings
from typing import Callable, TypeVar

K = TypeVar("K")

_built: dict = {}


def enabled() -> bool:
    """HYBRIDGRAPH_JIT=0 turns the compiled kernels off (numpy's paths run instead)."""
    return os.environ.get("HYBRIDGRAPH_JIT", "1") not in ("0", "")


def available() -> bool:
    """Whether compiled kernels can run: numba installed and the switch on (nothing is
    imported or compiled)."""
    return enabled() and importlib.util.find_spec("numba") is not None


def njit(fn: Callable, reassociate: bool = False, inline: bool = False) -> Callable:
    """numba's njit of `fn`: cached on disk, releasing the GIL; `reassociate` lets LLVM
    reorder floating-point sums (vectorised reductions; their results change in the last bits,
    so only for sums no result is bitwise compared on); `inline` inlines it into its callers
    (where constant arguments then simplify it)."""
    import numba
    flags: dict = {"fastmath": {"reassoc"}} if reassociate else {}
    if inline:
        flags["inline"] = "always"
    try:
        return numba.njit(cache=True, nogil=True, **flags)(fn)
    except RuntimeError:    # pragma: no cover - no writable cache directory
        return numba.njit(nogil=True, **flags)(fn)


def kernels(name: str, build: Callable[[], K]) -> K | None:
    """The kernels `build()` makes (once per process, under `name`), or None when numba is
    missing or the switch is off."""
    if not enabled():
        return None
    if name not in _built:
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _built[name] = build()
        except ImportError:
            _built[name] = None
        except Exception as e:  # noqa: BLE001 - a broken numba install must not break convolutions
            _built[name] = None
            warnings.warn(f"hybridgraph: the [jit] extra's {name} kernels could not be built "
                          f"({type(e).__name__}: {e}); numpy's paths run instead "
                          "(HYBRIDGRAPH_JIT=0 silences this)", RuntimeWarning, stacklevel=2)
    return _built[name]
