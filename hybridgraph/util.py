"""`mx.util`: NumPy-semantics switches, environment access and device queries, as in MXNet 1.9.1.

`set_np_shape`/`np_shape`/`use_np_shape` switch NumPy *shape* semantics (``()``
is a scalar's shape and ``0`` a real zero-size dimension rather than
"unknown"); `set_np_array`/`np_array`/`use_np_array` switch NumPy *array*
semantics (Gluon creating `mx.np` arrays). Both are per thread, as in MXNet.
hybridgraph's eager NDArrays are numpy arrays, so zero-dim and zero-size
arrays exist in either mode; the flags are what code (and MXNet's tests) query
and scope with these functions.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from hybridgraph.nd import backend as _backend

__all__ = ["get_gpu_count", "get_gpu_memory", "set_np_shape", "is_np_shape", "np_shape", "use_np_shape",
           "set_np_array", "is_np_array", "np_array", "use_np_array", "use_np", "set_np", "reset_np",
           "getenv", "setenv", "set_module", "get_cuda_compute_capability"]

_state = threading.local()
_logged = {"shape": False, "array": False}


def _get(kind: str) -> bool:
    return getattr(_state, kind, False)


def _set(kind: str, active: bool) -> bool:
    prev = _get(kind)
    if active and not _logged[kind]:
        logging.info("NumPy-%s semantics has been activated in your code.", kind)
        _logged[kind] = True
    setattr(_state, kind, bool(active))
    return prev


def get_gpu_count() -> int:
    """The number of GPUs hybridgraph can use (through cupy; 0 without one)."""
    return _backend.num_gpus()


def get_gpu_memory(gpu_dev_id: int) -> tuple[int, int]:
    """(free, total) bytes of GPU `gpu_dev_id`, from cupy."""
    if gpu_dev_id >= get_gpu_count():
        raise ValueError(f"GPU {gpu_dev_id} does not exist: {get_gpu_count()} GPU(s) are visible")
    import cupy  # noqa: PLC0415 - only with a GPU
    with cupy.cuda.Device(gpu_dev_id):
        free, total = cupy.cuda.runtime.memGetInfo()
    return int(free), int(total)


def get_cuda_compute_capability(ctx: Any) -> int:
    """The compute capability (e.g. 70) of the GPU of `ctx`; ValueError for a CPU context."""
    if getattr(ctx, "device_type", "cpu") != "gpu":
        raise ValueError(f"Expecting a gpu context to get cuda compute capability, while received ctx {ctx}")
    import cupy  # noqa: PLC0415 - only with a GPU
    return int(cupy.cuda.Device(ctx.device_id).compute_capability)


def set_np_shape(active: bool) -> bool:
    """Turn NumPy shape semantics on or off for this thread; returns the previous state."""
    if not active and is_np_array():
        raise ValueError("Deactivating NumPy shape semantics while NumPy array semantics is still active is "
                         "not allowed. Please consider calling `npx.reset_np()` to deactivate both of them.")
    return _set("shape", active)


def is_np_shape() -> bool:
    """Whether NumPy shape semantics is on in this thread."""
    return getattr(_state, "shape", False)      # inline: asked on every hybridized call


def set_np_array(active: bool) -> bool:
    """Turn NumPy array semantics on or off for this thread; returns the previous state."""
    return _set("array", active)


def is_np_array() -> bool:
    """Whether NumPy array semantics is on in this thread."""
    return getattr(_state, "array", False)      # inline: asked on every block call


@contextmanager
def _scope(kind: str, active: bool) -> Iterator[None]:
    prev = _set(kind, active)
    try:
        yield
    finally:
        setattr(_state, kind, prev)


def np_shape(active: bool = True):
    """A `with` scope in which NumPy shape semantics is `active` (restored on exit)."""
    return _scope("shape", active)


def np_array(active: bool = True):
    """A `with` scope in which NumPy array semantics is `active` (restored on exit)."""
    return _scope("array", active)


def _decorate(func: Any, scope: Callable, name: str) -> Any:
    if inspect.isclass(func):
        pred = lambda f: inspect.isfunction(f) or inspect.ismethod(f) or isinstance(f, property)  # noqa: E731
        for attr, method in inspect.getmembers(func, predicate=pred):
            if isinstance(method, property):
                setattr(func, attr, property(_decorate(method.__get__, scope, name), method.__set__,
                                             method.__delattr__, method.__doc__))
            else:
                setattr(func, attr, _decorate(method, scope, name))
        return func
    if callable(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            with scope(active=True):
                return func(*args, **kwargs)
        return wrapped
    raise TypeError(f"{name} can only decorate classes and callable objects, while received a {type(func)}")


def use_np_shape(func: Any) -> Any:
    """Run a function (or every method and property of a class) with NumPy shape semantics."""
    return _decorate(func, np_shape, "use_np_shape")


def use_np_array(func: Any) -> Any:
    """Run a function (or every method and property of a class) with NumPy array semantics."""
    return _decorate(func, np_array, "use_np_array")


def use_np(func: Any) -> Any:
    """Both `use_np_shape` and `use_np_array`."""
    return use_np_shape(use_np_array(func))


def set_np(shape: bool = True, array: bool = True) -> None:
    """Set NumPy shape and array semantics together (array semantics needs shape semantics)."""
    if not shape and array:
        raise ValueError("NumPy Shape semantics is required in using NumPy array semantics.")
    set_np_array(array)
    set_np_shape(shape)


def reset_np() -> None:
    """Turn both NumPy semantics off."""
    set_np(shape=False, array=False)


def getenv(name: str) -> str | None:
    """The value of environment variable `name` (None when unset)."""
    return os.environ.get(name)


def setenv(name: str, value: str | None) -> None:
    """Set (or, with None, unset) environment variable `name`."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = value


def set_module(module: str) -> Callable:
    """Decorator that sets a function's or class's `__module__` (MXNet uses it for its np API)."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


class _NumpyArrayScope:
    """MXNet's (private) scope object of NumPy array semantics: ``with _NumpyArrayScope(True):``
    turns the semantics on for this thread and restores it on exit, like `np_array`.
    `_current` is the scope made current by the last `__enter__` (old code assigns it too);
    the state itself is per thread, as `is_np_array` reads it."""

    _current: Any = threading.local()

    def __init__(self, is_np_array: bool):  # noqa: A002 - MXNet's name
        self._is_np_array = bool(is_np_array)
        self._prev: bool | None = None

    def __enter__(self) -> "_NumpyArrayScope":
        self._prev = set_np_array(self._is_np_array)
        return self

    def __exit__(self, *exc: Any) -> None:
        set_np_array(bool(self._prev))
