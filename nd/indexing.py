"""NDArray indexing with MXNet semantics.

Outside autograd recording, basic indexing returns views (as MXNet's slices
do) and advanced indexing returns copies. While recording, or on symbolic
arrays, indexing is expressed with registry operators (slice, Reshape, take,
gather_nd) so gradients flow and graphs stay exportable.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import autograd
from .dispatch import invoke
from .errors import MXNetError
from .registry import get_op


def _is_basic(key: Any) -> bool:
    items = key if isinstance(key, tuple) else (key,)
    return all(isinstance(k, (int, np.integer, slice)) or k is None or k is Ellipsis for k in items)


def _raw_key(key: Any):
    """Turn NDArray indices into backend integer arrays."""
    from .ndarray import NDArray  # noqa: PLC0415
    if isinstance(key, NDArray):
        d = key._data
        return d.astype(np.int64) if d.dtype.kind == "f" else d
    if isinstance(key, tuple):
        return tuple(_raw_key(k) for k in key)
    if isinstance(key, list):
        return np.asarray(key, dtype=np.int64)
    return key


def getitem(x, key):
    """x[key]: a view for basic indices, a copy for advanced ones; ops while recording."""
    from .ndarray import NDArray  # noqa: PLC0415
    if x._is_symbolic or (x._ag is not None and autograd.is_recording()):
        return _getitem_ops(x, key)
    res = x._data[_raw_key(key)]
    if res.ndim == 0:
        res = res.reshape((1,))  # legacy MXNet has no 0-d results from indexing
    out = NDArray._wrap(res, x._ctx)
    tk = type(key)
    if tk is slice or tk is int or _is_basic(key):   # a view: its writes count as x's (autograd.share_version)
        cell = x._ver
        if cell is None:
            cell = x._ver = [0, None]
        out._ver = cell
    return out


def _gather_positions(x, key):
    """General advanced indexing while recording: the flat positions `key` selects (numpy's
    rules, on an index grid) taken from the flattened array, so the gradient is take's
    scatter-add (MXNet records gather_nd)."""
    from .ndarray import NDArray  # noqa: PLC0415
    pos = np.arange(x.size, dtype=np.int64).reshape(x.shape)[_raw_key_numpy(key)]
    if pos.ndim == 0:
        pos = pos.reshape((1,))   # legacy MXNet has no 0-d results from indexing
    flat = invoke(get_op("Reshape"), [x], {"shape": (-1,)})
    return invoke(get_op("take"), [flat, NDArray._wrap(x._ctx.xp.asarray(pos), x._ctx)], {"axis": 0})


def _raw_key_numpy(key: Any):
    """`_raw_key` with index arrays on the host (for the index grid)."""
    k = _raw_key(key)
    items = k if isinstance(k, tuple) else (k,)
    items = tuple(np.asarray(i.get() if hasattr(i, "get") else i) if hasattr(i, "shape") else i for i in items)
    return items if isinstance(k, tuple) else items[0]


def _expand_key(shape: tuple, key) -> tuple:
    items = list(key) if isinstance(key, tuple) else [key]
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexError("an index can only have a single ellipsis")
    n_real = sum(1 for k in items if k is not None and k is not Ellipsis)
    if n_real > len(shape):
        raise IndexError(f"too many indices ({n_real}) for an array of shape {shape}")
    if Ellipsis in items:
        i = items.index(Ellipsis)
        items[i:i + 1] = [slice(None)] * (len(shape) - n_real)
    else:
        items += [slice(None)] * (len(shape) - n_real)
    return tuple(items)


def _getitem_ops(x, key):
    if not _is_basic(key):
        idx = key
        if isinstance(idx, tuple) and len(idx) == 1:
            idx = idx[0]
        from .ndarray import NDArray  # noqa: PLC0415
        if isinstance(idx, (list, np.ndarray)):
            if x._is_symbolic:
                raise MXNetError("indexing a traced array with a Python list or numpy array is not supported "
                                 "inside a hybridized block; pass the indices as an input array and use "
                                 "F.take(x, indices), or use slices")
            idx = NDArray._wrap(x._ctx.xp.asarray(idx, dtype=np.int64), x._ctx)
        if hasattr(idx, "_is_symbolic"):
            return invoke(get_op("take"), [x, idx], {"axis": 0})
        if x._is_symbolic:
            raise MXNetError("advanced indexing other than a single index array on the first axis "
                             "is not supported inside a hybridized block; use take/gather_nd/pick")
        return _gather_positions(x, key)
    items = _expand_key(x.shape, key)
    begin, end, step, out_shape = [], [], [], []
    axis = 0
    for k in items:
        if k is None:
            out_shape.append(1)
            continue
        n = x.shape[axis]
        if isinstance(k, slice):
            b, e, s = k.indices(n)
            begin.append(b)
            end.append(e if e >= 0 else None)
            step.append(s)
            out_shape.append(len(range(b, e, s)))
        else:
            k = int(k)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {axis} with size {n}")
            k %= n
            begin.append(k)
            end.append(k + 1)
            step.append(1)
        axis += 1
    out = invoke(get_op("slice"), [x], {"begin": tuple(begin), "end": tuple(end), "step": tuple(step)})
    if not out_shape:
        out_shape = [1]
    if tuple(out_shape) != tuple(out.shape):
        out = invoke(get_op("Reshape"), [out], {"shape": tuple(out_shape)})
    return out


def setitem(x, key, value) -> None:
    """x[key] = value, written into x's buffer (MXNet arrays are mutable)."""
    from .ndarray import NDArray  # noqa: PLC0415
    if x._is_symbolic:
        raise MXNetError("in-place assignment into a symbolic/traced array is not supported")
    if x._ag is not None or x._ver is not None:
        autograd.check_inplace(x, "x[key] = value")
    if isinstance(value, NDArray) and autograd.is_recording() and autograd.live_entry(value) is not None:
        _record_assign(x, key, value)
        return
    if isinstance(value, NDArray):
        src = value._data if value._ctx == x._ctx else x._ctx.xp.asarray(value.asnumpy())
    else:
        src = x._ctx.xp.asarray(value, dtype=x.dtype)
    k = _raw_key(key)
    if isinstance(k, slice) and k == slice(None) and src.shape == x.shape:
        x._data[...] = src
    else:
        try:
            x._data[k] = src
        except ValueError:
            # MXNet drops a value's leading length-1 axes to fit the indexed region
            # (b[0] = np.array([v]) into a 1-d b); numpy >= 1.25 refuses that
            target = x._data[k].shape
            while src.ndim > len(target) and src.shape[0] == 1:
                src = src.reshape(src.shape[1:])
            x._data[k] = src


def _covers_all(x, key) -> bool:
    """Whether the basic index `key` selects every element of `x` in order (positive steps)."""
    flat = np.arange(x.size).reshape(x.shape)[_raw_key(key)]
    return flat.size == x.size and bool((flat.ravel() == np.arange(x.size)).all())


def _record_assign(x, key, value) -> None:
    """`x[key] = value` while recording, `value` in the graph (`x` is not: check_inplace).

    MXNet 1.9.1 copies a value that covers all of `x` (`x[:] = v`, `x[...] = v`: `copyto`,
    recorded) and writes any other region with `_slice_assign`/`_scatter_set_nd(out=x)`,
    whose recording refuses an output that is also an input. So here: the whole array is
    recorded as a copy whose gradient reaches `value` through `x[key]`, summed over the axes
    the assignment broadcast; a part of it raises MXNet's error."""
    if not _is_basic(key) or not _covers_all(x, key):
        raise autograd.AutogradError(
            "Inplace operations (+=, -=, x[:]=, etc) are not supported when recording with "
            f"autograd: x[{key!r}] = value writes part of an array of shape {x.shape} from a value "
            "in the graph. Build the result out of place instead (nd.concat, nd.where, "
            "scatter_nd), or assign the whole array (x[:] = value).")
    src = value._data if value._ctx == x._ctx else x._ctx.xp.asarray(value.asnumpy())
    x._data[_raw_key(key)] = src
    vshape = value.shape

    def grad_fn(_inputs, _outs, ograds):
        g = _getitem_ops(ograds[0], key)
        if g.shape != vshape:
            if g.size == int(np.prod(vshape)):
                return [invoke(get_op("Reshape"), [g], {"shape": vshape})]
            lead = g.ndim - len(vshape)
            axes = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(vshape)
                                              if n == 1 and g.shape[lead + i] != 1)
            g = invoke(get_op("sum"), [g], {"axis": axes, "keepdims": True})
            g = invoke(get_op("Reshape"), [g], {"shape": vshape})
        return [g]

    node = autograd.TapeNode(grad_fn, [value], [x._data], "_copyto", uses_outputs=False)
    x._ag = (node, 0)
