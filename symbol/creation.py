"""Symbol creation helpers with MXNet's signatures (`sym.zeros`, `sym.arange`, ...)."""
from __future__ import annotations

from typing import Any

from hybridgraph.nd.backend import as_dtype
from hybridgraph.nd.registry import get_op

from .symbol import Symbol, create


def _make(op: str, name: str | None, dtype: Any, attr: dict | None = None, **attrs: Any) -> Symbol:
    attrs["dtype"] = as_dtype(dtype).name
    return create(get_op(op), [], attrs, name=name, attr=attr)


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, int) else tuple(shape)


def zeros(shape, dtype: Any = None, name: str | None = None, **kwargs) -> Symbol:
    return _make("_zeros", name, dtype, shape=_shape(shape), **kwargs)


def ones(shape, dtype: Any = None, name: str | None = None, **kwargs) -> Symbol:
    return _make("_ones", name, dtype, shape=_shape(shape), **kwargs)


def full(shape, val, dtype: Any = None, name: str | None = None, **kwargs) -> Symbol:
    return _make("_full", name, dtype, shape=_shape(shape), value=float(val), **kwargs)


def arange(start, stop=None, step=1.0, repeat=1, infer_range=False, name: str | None = None,
           dtype: Any = None) -> Symbol:
    return _make("_arange", name, dtype, start=start, stop=stop, step=step, repeat=repeat,
                 infer_range=infer_range)


def linspace(start, stop, num, endpoint=True, name: str | None = None, dtype: Any = None) -> Symbol:
    return _make("_linspace", name, dtype, start=start, stop=stop, num=num, endpoint=endpoint)


def eye(N, M=0, k=0, dtype: Any = None, name: str | None = None, **kwargs) -> Symbol:  # noqa: N803
    return _make("_eye", name, dtype, N=N, M=M, k=k)
