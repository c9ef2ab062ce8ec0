"""Direct ufunc calls for kernels that run on small arrays.

numpy's array functions (`np.sum`, `np.max`, `np.mean`, `np.clip`,
`np.take_along_axis`, `np.broadcast_to`) spend several microseconds in Python
wrappers before the ufunc runs. On the small arrays of losses, metrics and
their gradients (a (64, 10) batch of logits) that overhead is most of the
kernel's time. These helpers call numpy's ufuncs directly and use the array
module's ordinary functions for every other backend (cupy), so kernels keep one
code path. Results are bit-identical to the wrapped functions: the wrappers
call the same ufunc reductions.
"""
from __future__ import annotations

from typing import Any

import numpy as np

_REDUCERS = {"sum": np.add, "max": np.maximum, "min": np.minimum, "prod": np.multiply}


def reduce_keepdims(xp: Any, kind: str, x: Any, axis: int | tuple, dtype: Any = None) -> Any:
    """`xp.<kind>(x, axis, keepdims=True, dtype=dtype)` for kind in sum/max/min/prod."""
    if xp is np:
        return _REDUCERS[kind].reduce(x, axis=axis, dtype=dtype, keepdims=True)
    if dtype is None:
        return getattr(xp, kind)(x, axis=axis, keepdims=True)
    return getattr(xp, kind)(x, axis=axis, keepdims=True, dtype=dtype)


def mean_keepdims(xp: Any, x: Any, axis: tuple, count: int, dtype: Any = None) -> Any:
    """`xp.mean(x, axis, keepdims=True, dtype=dtype)` for a float x over `count` elements."""
    if xp is not np:
        return xp.mean(x, axis=axis, keepdims=True, dtype=dtype)
    s = np.add.reduce(x, axis=axis, dtype=dtype, keepdims=True)
    return np.true_divide(s, count, out=s)   # np.mean's own final step


def clip_index(xp: Any, idx: Any, high: int) -> Any:
    """Integer positions clipped into [0, high] (a new array; `idx` is left alone)."""
    if xp is not np:
        return xp.clip(idx, 0, high)
    out = np.maximum(idx, 0, out=np.empty(idx.shape, idx.dtype))   # an array even when 0-d
    return np.minimum(out, high, out=out)


def broadcast_copy(xp: Any, x: Any, shape: tuple, dtype: Any) -> Any:
    """A new array of `shape` and `dtype` holding `x` broadcast (not a view)."""
    out = xp.empty(shape, dtype=dtype)
    out[...] = x
    return out


def take_last_axis(xp: Any, data: Any, idx: Any) -> Any:
    """`data[..., idx[...]]` row by row: one element of data's last axis per index
    (idx has data's shape without the last axis; positions already in range)."""
    m = data.shape[-1]
    rows = data.reshape(-1, m)
    flat = idx.reshape(-1)
    return rows[xp.arange(flat.shape[0]), flat].reshape(idx.shape)


def scatter_last_axis(xp: Any, values: Any, idx: Any, shape: tuple, dtype: Any) -> Any:
    """Zeros of `shape` with `values` put at position idx of the last axis, row by row
    (the adjoint of `take_last_axis`)."""
    out = xp.zeros(shape, dtype=dtype)
    rows = out.reshape(-1, shape[-1])
    flat = idx.reshape(-1)
    rows[xp.arange(flat.shape[0]), flat] = values.reshape(-1)
    return out
