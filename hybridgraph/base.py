"""`mx.base`: the error classes and small helpers MXNet scripts import from `mxnet.base`.

hybridgraph has no C library, so MXNet's ctypes plumbing (`check_call`,
`c_str`, handles) has no counterpart here; what scripts actually use is the
error base, the type tuples and a few conversions.
"""
from __future__ import annotations

import os
import platform
from typing import Any

import numpy as _np

from hybridgraph.nd.errors import MXNetError, NotImplementedForSymbol

__all__ = ["MXNetError", "NotImplementedForSymbol", "NotSupportedForSparseNDArray", "string_types",
           "numeric_types", "integer_types", "py_str", "mx_real_t", "data_dir", "data_dir_default",
           "classproperty", "with_metaclass"]

#: MXNet's type tuples, for `isinstance` checks in user code
integer_types = (int, _np.int32, _np.int64)
numeric_types = (float, int, _np.generic)
string_types = (str,)
#: the default real type of MXNet arrays
mx_real_t = _np.float32


def py_str(x: bytes | str) -> str:
    """Decode bytes (as returned by MXNet's C API) to `str`. A `str` comes back as is: names
    that MXNet hands over as C strings (an executor monitor's node names) are `str` here."""
    return x if isinstance(x, str) else x.decode("utf-8")


class NotSupportedForSparseNDArray(MXNetError):
    """An operation that sparse NDArrays do not support (MXNet's class of this name)."""

    def __init__(self, function: Any, alias: str | None, *args: Any):
        super().__init__()
        self.function = getattr(function, "__name__", str(function))
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self) -> str:
        msg = f"Function {self.function}"
        if self.alias:
            msg += f' (namely operator "{self.alias}")'
        if self.args:
            msg += " with arguments ({})".format(", ".join(self.args))
        return msg + " is not supported for SparseNDArray and only available in NDArray."


class _NullType:
    """Placeholder for arguments that were not given (MXNet's `_Null`)."""

    def __repr__(self) -> str:
        return "_Null"


_Null = _NullType()


def data_dir_default() -> str:
    """The default data directory: `%APPDATA%/mxnet` on Windows, `~/.mxnet` elsewhere."""
    if platform.system() == "Windows":
        return os.path.join(os.environ.get("APPDATA", ""), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir() -> str:
    """The data directory (`$MXNET_HOME`, else `data_dir_default()`), e.g. for downloaded models."""
    return os.getenv("MXNET_HOME", data_dir_default())


def _as_list(obj: Any) -> list | tuple:
    """`obj` itself if it is a list or tuple, else `[obj]`."""
    if isinstance(obj, (list, tuple)):
        return obj
    return [obj]


class _ClassPropertyDescriptor:
    def __init__(self, fget: Any):
        self.fget = fget

    def __get__(self, obj: Any, klass: type | None = None) -> Any:
        if klass is None:
            klass = type(obj)
        return self.fget.__get__(obj, klass)()


def classproperty(func: Any) -> _ClassPropertyDescriptor:
    """A read-only property on the class (MXNet's `base.classproperty`)."""
    if not isinstance(func, (classmethod, staticmethod)):
        func = classmethod(func)
    return _ClassPropertyDescriptor(func)


def with_metaclass(meta: type, *bases: type) -> type:
    """A base class with metaclass `meta` (the six-style helper MXNet exports)."""
    class _Meta(type):
        def __new__(cls, name, this_bases, d):  # noqa: ARG003 - six's signature
            return meta(name, bases, d)

        @classmethod
        def __prepare__(cls, name, this_bases):  # noqa: ARG003
            return meta.__prepare__(name, bases)
    return type.__new__(_Meta, "temporary_class", (), {})
