"""The only numpy/cupy seam: contexts, array modules and dtype tables.

Every kernel receives the array module `xp` chosen here; no other file imports
cupy. cupy is imported lazily, the first time a GPU context is used.
"""
from __future__ import annotations

import contextvars
from typing import Any

import numpy as np

from .errors import MXNetError

_cupy = None
#: the GPU count `num_gpus()` probed (None: not probed yet); a failed cupy import is slow
#: (~1 ms), and MXNet scripts ask every batch (`nd.waitall()`), so the probe runs once
_gpu_count: int | None = None


def _import_cupy():
    """Import cupy on first GPU use, with a clear error when it is missing."""
    global _cupy
    if _cupy is None:
        if _cupy_missing:  # a failed import is not retried (it costs ~1 ms each time)
            raise MXNetError(_NO_CUPY)
        try:
            import cupy  # noqa: PLC0415 - lazy on purpose: numpy-only installs must work
        except ImportError as exc:  # pragma: no cover - depends on the machine
            _set_cupy_missing()
            raise MXNetError(_NO_CUPY) from exc
        _cupy = cupy
    return _cupy


_NO_CUPY = ("a GPU context needs cupy, which is not installed. "
            "Install the 'gpu' extra (pip install hybridgraph[gpu]) or use mx.cpu().")
_cupy_missing = False


def _set_cupy_missing() -> None:
    global _cupy_missing
    _cupy_missing = True


class _DefaultContext:
    """`Context.default_ctx`: the context now in effect (MXNet's class property)."""

    def __get__(self, obj: object, owner: type) -> "Context":
        return current_context()


class _ContextMeta(type):
    """`Context.default_ctx` as a class property, read and assigned per thread as in MXNet
    (`Context.default_ctx = mx.gpu(1)` changes the calling thread's default only)."""

    @property
    def default_ctx(cls) -> "Context":
        return current_context()

    @default_ctx.setter
    def default_ctx(cls, value: "Context") -> None:
        if not isinstance(value, Context):
            raise TypeError(f"Context.default_ctx must be a Context, got {value!r}")
        _current.set(value)


class Context(metaclass=_ContextMeta):
    """A device: `cpu(0)` computes with numpy, `gpu(i)` with cupy on device i."""

    default_ctx = _DefaultContext()

    devtype2str = {1: "cpu", 2: "gpu", 3: "cpu_pinned", 5: "cpu_shared"}
    devstr2type = {v: k for k, v in devtype2str.items()}
    __slots__ = ("device_type", "device_id", "_token")

    def __init__(self, device_type: "str | Context" = "cpu", device_id: int = 0):
        if isinstance(device_type, Context):
            device_type, device_id = device_type.device_type, device_type.device_id
        if device_type not in self.devstr2type:
            raise MXNetError(f"unknown device type {device_type!r}; expected one of "
                             f"{sorted(self.devstr2type)}")
        self.device_type = device_type
        self.device_id = int(device_id)
        self._token = None

    @property
    def device_typeid(self) -> int:
        return self.devstr2type[self.device_type]

    @property
    def xp(self):
        """The array module for this context."""
        if self.device_type == "gpu":
            cp = _import_cupy()
            if cp.cuda.runtime.getDeviceCount() <= self.device_id:
                raise MXNetError(f"gpu({self.device_id}) requested but only "
                                 f"{cp.cuda.runtime.getDeviceCount()} GPU(s) are visible")
            return cp
        return np

    def __eq__(self, other: object) -> bool:
        return self is other or (isinstance(other, Context) and self.device_type == other.device_type
                and self.device_id == other.device_id)

    def __hash__(self) -> int:
        return hash((self.device_type, self.device_id))

    def __repr__(self) -> str:
        return f"{self.device_type}({self.device_id})"

    __str__ = __repr__

    def __enter__(self) -> "Context":
        self._token = _current.set(self)
        return self

    def __exit__(self, *exc) -> None:
        _current.reset(self._token)
        self._token = None

    def empty_cache(self) -> None:
        """Release cached device memory (a no-op on the CPU)."""
        if self.device_type == "gpu":
            _import_cupy().get_default_memory_pool().free_all_blocks()


_CPU0 = Context("cpu", 0)
_current: contextvars.ContextVar[Context] = contextvars.ContextVar("hybridgraph_ctx", default=_CPU0)


def cpu(device_id: int = 0) -> Context:
    """The CPU context (numpy)."""
    return _CPU0 if device_id == 0 else Context("cpu", device_id)


def gpu(device_id: int = 0) -> Context:
    """A GPU context (cupy); cupy is imported when the context is first used."""
    return Context("gpu", device_id)


def cpu_pinned(device_id: int = 0) -> Context:
    return Context("cpu_pinned", device_id)


def current_context() -> Context:
    """The context set by the innermost `with ctx:` block (default cpu(0))."""
    return _current.get()


def num_gpus() -> int:
    """How many GPUs cupy can see (0 when cupy is missing). Probed once per process: cupy
    is imported (lazily) on the first call only, so per-batch calls cost a global read."""
    global _gpu_count
    count = _gpu_count
    if count is None:
        try:
            count = _import_cupy().cuda.runtime.getDeviceCount()
        except Exception:  # noqa: BLE001 - no cupy or no driver both mean zero GPUs
            count = 0
        _gpu_count = count
    return count


def gpus_in_use() -> bool:
    """True once cupy was imported (some GPU context was used): only then can device work be
    pending (`waitall`)."""
    return _cupy is not None


def xp_of(array: Any):
    """The array module an array belongs to (numpy unless it is a cupy array)."""
    if type(array).__module__.startswith("cupy"):
        return _import_cupy()
    return np


def to_numpy(array: Any) -> np.ndarray:
    """Copy an array of any backend to host memory."""
    if type(array).__module__.startswith("cupy"):
        return array.get()
    return np.asarray(array)


# mshadow type flags, as used by .params records and the `__dtype__` attribute.
DTYPE_TO_FLAG = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.float16): 2,
                 np.dtype(np.uint8): 3, np.dtype(np.int32): 4, np.dtype(np.int8): 5,
                 np.dtype(np.int64): 6, np.dtype(np.bool_): 7}
FLAG_TO_DTYPE = {v: k for k, v in DTYPE_TO_FLAG.items()}
SUPPORTED_DTYPES = tuple(DTYPE_TO_FLAG)


def as_dtype(dtype: Any, default: Any = np.float32) -> np.dtype:
    """Normalise a dtype given as a name, numpy type, flag number or None."""
    if dtype is None:
        return np.dtype(default)
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        if int(dtype) not in FLAG_TO_DTYPE:
            raise MXNetError(f"unknown dtype flag {dtype}; expected one of {sorted(FLAG_TO_DTYPE)}")
        return FLAG_TO_DTYPE[int(dtype)]
    try:
        return np.dtype(dtype)
    except TypeError as exc:
        raise MXNetError(f"cannot interpret {dtype!r} as a dtype") from exc
