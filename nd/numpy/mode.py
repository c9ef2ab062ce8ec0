"""MXNet's numpy mode switches: `npx.set_np()` / `reset_np()`, `is_np_array()`, `is_np_shape()`,
the `np_array` / `np_shape` scopes and the `use_np` decorator (mx.util's names).

With np array mode on, Gluon hands out `mx.np.ndarray`s (parameters, DataLoader batches) and
`hybrid_forward` receives `F = mx.np` (with `F.npx`). np shape mode is recorded for
compatibility (hybridgraph's np arrays always have numpy shape semantics: 0-d and
zero-size arrays work in either mode); MXNet writes `is_np_shape` into exported graphs.
"""
from __future__ import annotations

import contextvars
import functools
import inspect
from collections.abc import Callable
from typing import Any

_ARRAY = contextvars.ContextVar("hybridgraph_np_array", default=False)
_SHAPE = contextvars.ContextVar("hybridgraph_np_shape", default=False)


def is_np_array() -> bool:
    """True while numpy array semantics are on (`npx.set_np()` or an `np_array` scope)."""
    return _ARRAY.get()


def is_np_shape() -> bool:
    """True while numpy shape semantics are on."""
    return _SHAPE.get()


def set_np_array(active: bool) -> bool:
    prev = _ARRAY.get()
    _ARRAY.set(bool(active))
    return prev


def set_np_shape(active: bool) -> bool:
    prev = _SHAPE.get()
    _SHAPE.set(bool(active))
    return prev


def set_np(shape: bool = True, array: bool = True) -> None:
    """Turn numpy semantics on (MXNet refuses array=True without shape=True)."""
    if array and not shape:
        raise ValueError("NumPy Shape semantics is required in using NumPy array semantics.")
    set_np_shape(shape)
    set_np_array(array)


def reset_np() -> None:
    """Back to the legacy NDArray semantics."""
    set_np(shape=False, array=False)


class _Scope:
    def __init__(self, var: contextvars.ContextVar, active: bool):
        self._var, self._active, self._token = var, active, None

    def __enter__(self):
        self._token = self._var.set(self._active)
        return self

    def __exit__(self, *exc):
        self._var.reset(self._token)


def np_array(active: bool = True) -> _Scope:
    """A scope with numpy array semantics on (or off)."""
    return _Scope(_ARRAY, active)


def np_shape(active: bool = True) -> _Scope:
    """A scope with numpy shape semantics on (or off)."""
    return _Scope(_SHAPE, active)


def _wrap_fn(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def run(*args, **kwargs):
        with np_shape(True), np_array(True):
            return fn(*args, **kwargs)
    return run


def use_np(obj: Any) -> Any:
    """Run a function, or every method of a class (a Block's `__init__`, `forward`,
    `hybrid_forward`...), with numpy shape and array semantics on."""
    if inspect.isclass(obj):   # every method, inherited ones included (initialize, __call__), as MXNet
        for name, member in inspect.getmembers(obj, lambda f: inspect.isfunction(f) or isinstance(f, property)):
            if name in ("__new__", "__init_subclass__", "__class_getitem__"):
                continue
            if isinstance(member, property):
                setattr(obj, name, property(member.fget and _wrap_fn(member.fget), member.fset, member.fdel,
                                            member.__doc__))
            else:
                setattr(obj, name, _wrap_fn(member))
        return obj
    if callable(obj):
        return _wrap_fn(obj)
    raise TypeError(f"use_np decorates a function or a class, not {type(obj).__name__}")


use_np_array = use_np
use_np_shape = use_np
