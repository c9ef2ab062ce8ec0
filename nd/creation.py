"""Array creation helpers with MXNet's signatures (`nd.array`, `nd.zeros`, ...)."""
from __future__ import annotations

from typing import Any

import numpy as np

from .backend import Context, as_dtype, current_context, to_numpy
from .dispatch import invoke
from .errors import ShapeError
from .ndarray import NDArray
from .registry import get_op


def array(source_array: Any, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    """An NDArray copied from any array-like (float32 unless the source is an NDArray
    or dtype says otherwise, as MXNet)."""
    ctx = ctx or current_context()
    if isinstance(source_array, NDArray):
        src = to_numpy(source_array._data)
        dtype = source_array.dtype if dtype is None else dtype
    else:
        src = source_array
        dtype = np.float32 if dtype is None else dtype
    data = np.array(src, dtype=as_dtype(dtype))
    return NDArray._wrap(ctx.xp.asarray(data), ctx)


def _creation(op: str, ctx, dtype, out: NDArray | None = None, **attrs) -> NDArray:
    attrs["ctx"] = ctx or current_context()
    attrs["dtype"] = as_dtype(dtype).name
    res = invoke(get_op(op), [], attrs)
    if out is not None:  # MXNet's `out=`: the values land in the given array, which is returned
        out[:] = res
        return out
    return res


def _shape(shape) -> tuple:
    return (int(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)


def _known(shape: tuple, fn: str) -> tuple:
    """MXNet 1.9.1's `_zeros`/`_ones` outside np-shape semantics: a 0 dimension, or no
    dimension at all, is an unknown size, and shape inference fails (checked in .mxvenv)."""
    if not shape or 0 in shape:
        from hybridgraph.util import is_np_shape  # noqa: PLC0415 - mx.util imports nd
        if is_np_shape():
            return shape
        raise ShapeError(f"nd.{fn}(shape={shape}): shape inference failed: outside numpy shape semantics "
                         "a 0 dimension (or the shape ()) means an unknown size in MXNet 1.x. Create 0-d and "
                         "zero-size arrays inside `with mx.np_shape(True):` (or after mx.npx.set_np()), "
                         "or with nd.empty / nd.full.")
    return shape


def zeros(shape, ctx: Context | None = None, dtype: Any = None, stype: str | None = None, **kwargs) -> NDArray:
    """Zeros; `stype` 'row_sparse' / 'csr' gives a sparse array (nd/sparse.py)."""
    if stype is not None and stype != "default":
        from .sparse import zeros as sparse_zeros  # noqa: PLC0415 - sparse imports this module
        return sparse_zeros(stype, shape, ctx=ctx, dtype=dtype)
    return _creation("_zeros", ctx, dtype, kwargs.get("out"), shape=_known(_shape(shape), "zeros"))


def ones(shape, ctx: Context | None = None, dtype: Any = None, **kwargs) -> NDArray:
    return _creation("_ones", ctx, dtype, kwargs.get("out"), shape=_known(_shape(shape), "ones"))


def full(shape, val, ctx: Context | None = None, dtype: Any = None, out: NDArray | None = None) -> NDArray:
    return _creation("_full", ctx, dtype, out, shape=_shape(shape), value=float(val))


def empty(shape, ctx: Context | None = None, dtype: Any = None, stype: str | None = None) -> NDArray:
    if stype is not None and stype != "default":
        return zeros(shape, ctx=ctx, dtype=dtype, stype=stype)
    return _creation("_empty", ctx, dtype, shape=_shape(shape))


def arange(start, stop=None, step=1.0, repeat=1, infer_range=None, ctx: Context | None = None,
           dtype: Any = None) -> NDArray:
    return _creation("_arange", ctx, dtype, start=start, stop=stop, step=step, repeat=repeat)


def linspace(start, stop, num, endpoint=True, ctx: Context | None = None, dtype: Any = None) -> NDArray:
    return _creation("_linspace", ctx, dtype, start=start, stop=stop, num=num, endpoint=endpoint)


def eye(N, M=0, k=0, ctx: Context | None = None, dtype: Any = None, **kwargs) -> NDArray:  # noqa: N803
    return _creation("_eye", ctx, dtype, N=N, M=M, k=k)


def from_numpy(ndarray: np.ndarray, zero_copy: bool = True) -> NDArray:
    """Wrap a numpy array. With zero_copy (MXNet's default) the memory is shared and, as in
    MXNet, the numpy array becomes read-only (writes go through the NDArray); it must be
    C-contiguous."""
    if not zero_copy:
        return NDArray._wrap(ndarray.copy(), current_context())
    if not ndarray.flags["C_CONTIGUOUS"]:
        raise ValueError("from_numpy(zero_copy=True) needs a C-contiguous numpy array; "
                         "pass np.ascontiguousarray(a) or zero_copy=False")
    if not ndarray.flags.writeable:  # frozen by an earlier from_numpy: MXNet shares it again
        ndarray.flags.writeable = True
    shared = ndarray.view()  # stays writeable after the source is frozen
    ndarray.flags.writeable = False
    return NDArray._wrap(shared, current_context())
