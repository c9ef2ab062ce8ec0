"""`mx.np.ndarray` indexing: numpy's rules (integer indices drop axes, 0-d results,
boolean masks, integer-array indices), as MXNet 1.9's np front end.

Outside autograd recording the backend array is indexed directly (basic indices give
views, as MXNet's contiguous slices do). While recording, or on traced arrays, the
index becomes registry ops (slice + reshape, take) so gradients flow and graphs export;
advanced forms other than one integer or boolean index array on the first axis raise a
clear error there.
"""
from __future__ import annotations

from typing import Any

import numpy as onp

from .. import autograd
from ..dispatch import invoke
from ..errors import MXNetError
from ..indexing import _getitem_ops, _is_basic
from ..ndarray import NDArray
from ..registry import get_op
from .multiarray import array_from, as_np


def np_key(key: Any) -> Any:
    """Array indices as backend arrays: bool masks stay bool, floats become int64 (MXNet)."""
    if isinstance(key, NDArray):
        d = key._data
        return d.astype(onp.int64) if d.dtype.kind == "f" else d
    if isinstance(key, tuple):
        return tuple(np_key(k) for k in key)
    if isinstance(key, list):
        a = onp.asarray(key)
        return a if a.dtype == onp.bool_ else a.astype(onp.int64)
    return key


def _result_shape(shape: tuple, key: Any) -> tuple:
    """numpy's result shape of a basic index (no data touched)."""
    probe = onp.lib.stride_tricks.as_strided(onp.zeros(1, dtype=onp.int8), shape=shape,
                                             strides=(0,) * len(shape))
    return probe[key].shape


def _is_index_array(k: Any) -> bool:
    if isinstance(k, NDArray):
        return not k._is_symbolic and k.dtype != onp.bool_
    return isinstance(k, (list, range, onp.ndarray))


def _gather(x, key: tuple):
    """Integer arrays on the leading axes, broadcast together, through `gather_nd` (differentiable)."""
    parts = [k.asnumpy() if isinstance(k, NDArray) else onp.asarray(list(k) if isinstance(k, range) else k)
             for k in key]
    parts = onp.broadcast_arrays(*[p.astype(onp.int64) for p in parts])
    for axis, p in enumerate(parts):
        n = x.shape[axis]
        if p.size and (p.min() < -n or p.max() >= n):
            raise IndexError(f"index out of bounds for axis {axis} with size {n}")
    indices = array_from(onp.stack([p % x.shape[i] for i, p in enumerate(parts)]), x._ctx)
    return as_np(invoke(get_op("gather_nd"), [x, indices], {}))


def getitem(x, key):
    """x[key] with numpy semantics."""
    if x._is_symbolic or (x._ag is not None and autograd.is_recording()):
        return _getitem_recorded(x, key)
    res = x._data[np_key(key)]
    return array_from(res, x._ctx)


def _getitem_recorded(x, key):
    if not x._is_symbolic and x.size == 0:   # the slice ops' reshape reads 0 as "keep" (legacy)
        return _take_positions(x, key)
    if _is_basic(key):
        out = as_np(_getitem_ops(x, key))
        try:
            want = _result_shape(tuple(x.shape), key)
        except (TypeError, AttributeError):   # a traced array of unknown shape
            return out
        if tuple(out.shape) != want:
            out = as_np(invoke(get_op("_np_reshape"), [out], {"newshape": want}))
        return out
    if isinstance(key, tuple) and len(key) > 1 and all(_is_index_array(k) for k in key) and not x._is_symbolic:
        return _gather(x, key)   # x[rows, cols]: d2l's y_hat[range(len(y_hat)), y]
    idx = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    if isinstance(idx, (list, onp.ndarray)):
        idx = onp.asarray(idx)
        if not x._is_symbolic:
            idx = array_from(idx if idx.dtype == onp.bool_ else idx.astype(onp.int64), x._ctx)
    if isinstance(idx, NDArray) and not idx._is_symbolic and idx.dtype == onp.bool_:
        if tuple(idx.shape) != tuple(x.shape[:idx.ndim]):
            raise MXNetError(f"boolean index of shape {idx.shape} does not match the leading dimensions "
                             f"of the indexed array {x.shape}")
        if idx.ndim > 1:   # an N-d mask selects from the leading axes flattened into one
            x = as_np(invoke(get_op("_np_reshape"), [x], {"newshape": (-1,) + tuple(x.shape[idx.ndim:])}))
        pos = onp.flatnonzero(idx.asnumpy()).astype(onp.int64)
        idx = array_from(pos, x._ctx)
    if isinstance(idx, NDArray) and not idx._is_symbolic:   # numpy's negative indices, bounds checked
        pos = idx.asnumpy().astype(onp.int64)
        n = x.shape[0]
        if pos.size and (pos.min() < -n or pos.max() >= n):
            raise IndexError(f"index out of bounds for axis 0 with size {n}")
        idx = array_from(pos % max(n, 1), x._ctx)
    if hasattr(idx, "_is_symbolic"):
        return as_np(invoke(get_op("take"), [x, idx], {"axis": 0}))
    if not x._is_symbolic:
        return _take_positions(x, key)
    raise MXNetError("advanced indexing other than one integer or boolean index array on the first "
                     "axis is not supported while recording or tracing; use np.take or npx.pick")


def _take_positions(x, key):
    """Any numpy index of a recorded array: numpy indexes the array of flat positions, and `take`
    gathers them (its gradient scatters back, adding where positions repeat)."""
    pos = onp.arange(x.size, dtype=onp.int64).reshape(x.shape)[np_key(key)]
    flat = invoke(get_op("_np_reshape"), [x], {"newshape": (-1,)})
    return as_np(invoke(get_op("take"), [flat, array_from(onp.array(pos, order="C"), x._ctx)], {"axis": 0}))
