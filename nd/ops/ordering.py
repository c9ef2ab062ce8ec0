"""Ordering operators: `topk`, `sort`, `argsort`, and the hidden
`_ordering_gather` / `_ordering_scatter` pair their gradients use
(MXNet's src/operator/tensor/ordering_op*).

Indices are returned in the dtype MXNet uses (float32 by default), so the
index dtype is checked to represent every position exactly.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import ZERO_GRAD, register
from .reduce import _check_axis


# ---------------------------------------------------------------------------
# ordering: topk, sort, argsort

_INDEX_DTYPES = ("float16", "float32", "float64", "int32", "int64", "uint8")
#: hidden index output of topk(ret_typ='value') and sort (MXNet without large-tensor support)
_HIDDEN_INDEX = np.dtype(np.int32)
_EXACT_INDEX_LIMIT = {"float16": 2 ** 11, "float32": 2 ** 24, "uint8": 255, "int32": 2 ** 31 - 1}


def _stable_argsort(xp, x, axis: int, ascend: bool):
    """Stable argsort along `axis`; descending keeps equal elements in index order too."""
    kind = {"kind": "stable"} if xp is np else {}
    if ascend:
        return xp.argsort(x, axis=axis, **kind)
    n = x.shape[axis]
    flipped = xp.argsort(xp.flip(x, axis=axis), axis=axis, **kind)
    return (n - 1) - xp.flip(flipped, axis=axis)


def _order_axis(op: str, shape: Sequence[int], axis: int | None) -> tuple[int, int]:
    """(normalised axis, element count along it); axis None means the flattened array."""
    if axis is None:
        return 0, math.prod(shape)
    ax = _check_axis(op, axis, len(shape))
    return ax, shape[ax]


def _check_index_dtype(op: str, dtype: str, n: int) -> None:
    limit = _EXACT_INDEX_LIMIT.get(dtype)
    if limit is not None and n > limit + 1:
        raise AttrError(f"operator {op}: dtype {dtype!r} cannot represent the indices of {n} elements "
                        f"exactly; choose a wider dtype")


def _topk_k(a, n: int) -> int:
    k = n if a.k <= 0 else a.k
    if not 1 <= k <= n:
        raise ShapeError(f"operator topk: k must be in [1, {n}] for an axis of {n} elements, got k = {a.k}")
    return k


def _topk_names(a):
    return ("output",) if a.ret_typ in ("indices", "mask") else ("output0", "output1")


def _topk_shape(a, data):
    if data is None:
        return None
    ax, n = _order_axis("topk", data, a.axis)
    k = _topk_k(a, n)
    if a.ret_typ == "mask":
        return [data], [data]
    out = (k,) if a.axis is None else tuple(k if i == ax else d for i, d in enumerate(data))
    return [data], [out] * len(_topk_names(a))


def _topk_type(a, dtype):
    if dtype is None:
        return None
    idx = np.dtype(a.dtype)
    outs = {"value": [dtype, _HIDDEN_INDEX], "indices": [idx], "mask": [dtype], "both": [dtype, idx]}
    return [dtype], outs[a.ret_typ]


@register("topk", monitor_inputs="input", inputs=("data",), outputs=_topk_names,
          num_visible_outputs=lambda a: 2 if a.ret_typ == "both" else 1,
          attrs={"axis": Attr("int", -1, "Axis along which to choose the top k; None flattens the input.",
                              optional=True),
                 "k": Attr("int", 1, "Number of top elements to select; k < 1 selects all (a full sort)."),
                 "ret_typ": Attr("str", "indices", "What to return: the values, the indices, a 0/1 mask "
                                 "of the selected elements, or both values and indices.",
                                 choices=("both", "indices", "mask", "value")),
                 "is_ascend": Attr("bool", False, "Select the k smallest instead of the k largest."),
                 "dtype": Attr("dtype", "float32", "DType of the returned indices.", choices=_INDEX_DTYPES)},
          infer_shape=_topk_shape, infer_type=_topk_type)
def topk(xp, a, x):
    """The top k elements along an axis (ties: the lower index first)."""
    ax, n = _order_axis("topk", x.shape, a.axis)
    k = _topk_k(a, n)
    flat = x.reshape(-1) if a.axis is None else x
    order = _stable_argsort(xp, flat, ax, a.is_ascend)
    idx = xp.take(order, xp.arange(k), axis=ax)
    if a.ret_typ == "mask":
        mask = _ordering_scatter_kernel(xp, xp.ones(idx.shape, x.dtype), idx, flat.shape, ax)
        return (mask.reshape(x.shape),)
    if a.ret_typ == "indices":
        _check_index_dtype("topk", a.dtype, n)
        return (idx.astype(a.dtype),)
    values = xp.take_along_axis(flat, idx, axis=ax)
    if a.ret_typ == "both":
        _check_index_dtype("topk", a.dtype, n)
        return values, idx.astype(a.dtype)
    return values, idx.astype(_HIDDEN_INDEX)


@topk.def_gradient
def _(F, a, inputs, outputs, ograds):
    x = inputs[0]
    if a.ret_typ in ("indices", "mask"):
        return [F.zeros_like(x)]
    return [F._ordering_scatter(ograds[0], outputs[1], x, axis=a.axis)]


def _sort_shape(a, data):
    if data is None:
        return None
    _, n = _order_axis("sort", data, a.axis)
    out = (n,) if a.axis is None else tuple(data)
    return [data], [out, out]


@register("sort", monitor_inputs="input", outputs=("output0", "output1"), num_visible_outputs=1,
          attrs={"axis": Attr("int", -1, "Axis along which to sort; None flattens the input.", optional=True),
                 "is_ascend": Attr("bool", True, "Sort in ascending (True) or descending order.")},
          infer_shape=_sort_shape,
          infer_type=lambda a, d: None if d is None else ([d], [d, _HIDDEN_INDEX]))
def sort(xp, a, x):
    """A sorted copy of the input along an axis (stable)."""
    ax, _ = _order_axis("sort", x.shape, a.axis)
    flat = x.reshape(-1) if a.axis is None else x
    idx = _stable_argsort(xp, flat, ax, a.is_ascend)
    return xp.take_along_axis(flat, idx, axis=ax), idx.astype(_HIDDEN_INDEX)


@sort.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._ordering_scatter(ograds[0], outputs[1], inputs[0], axis=a.axis)]


def _argsort_shape(a, data):
    if data is None:
        return None
    _, n = _order_axis("argsort", data, a.axis)
    return [data], [(n,) if a.axis is None else tuple(data)]


@register("argsort", monitor_inputs="input",
          attrs={"axis": Attr("int", -1, "Axis along which to sort; None flattens the input.", optional=True),
                 "is_ascend": Attr("bool", True, "Sort in ascending (True) or descending order."),
                 "dtype": Attr("dtype", "float32", "DType of the output indices.", choices=_INDEX_DTYPES)},
          infer_shape=_argsort_shape,
          infer_type=lambda a, d: None if d is None else ([d], [np.dtype(a.dtype)]),
          gradient=ZERO_GRAD)
def argsort(xp, a, x):
    """The indices that sort the input along an axis (stable; ties keep index order)."""
    ax, n = _order_axis("argsort", x.shape, a.axis)
    _check_index_dtype("argsort", a.dtype, n)
    flat = x.reshape(-1) if a.axis is None else x
    return (_stable_argsort(xp, flat, ax, a.is_ascend).astype(a.dtype),)


# -- gather / scatter along an axis: the differentiable pair behind sort/topk gradients


def _ordering_scatter_kernel(xp, data, index, shape: tuple, axis: int):
    """zeros(shape) with `data` written at `index` along `axis` (indices unique per line)."""
    moved_shape = tuple(d for i, d in enumerate(shape) if i != axis) + (shape[axis],)
    out = xp.zeros(moved_shape, dtype=data.dtype)
    idx = xp.moveaxis(index, axis, -1).astype(np.int64)
    vals = xp.moveaxis(data, axis, -1)
    rows = xp.arange(math.prod(moved_shape[:-1]), dtype=np.int64).reshape(moved_shape[:-1] + (1,))
    out.reshape(-1)[(rows * shape[axis] + idx).reshape(-1)] = vals.reshape(-1)
    return xp.ascontiguousarray(xp.moveaxis(out, -1, axis))


def _gather_shape(a, data, index):
    return [data, index], [index]


def _gather_type(a, data, index):
    return [data, index], [data]


_AXIS_OPT = Attr("int", None, "The axis along which to gather/scatter; None means the flattened array.")


@register("_ordering_gather", inputs=("data", "index"), attrs={"axis": _AXIS_OPT},
          infer_shape=_gather_shape, infer_type=_gather_type, hint="_ordering_gather")
def _ordering_gather(xp, a, data, index):
    """`take_along_axis(data, index, axis)` (hybridgraph helper: sort/topk gradients)."""
    flat = data.reshape(-1) if a.axis is None else data
    return (xp.take_along_axis(flat, index.astype(np.int64), axis=0 if a.axis is None else a.axis),)


@_ordering_gather.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._ordering_scatter(ograds[0], inputs[1], inputs[0], axis=a.axis), None]


def _scatter_shape(a, data, index, like):
    return [index, index, like], [like]


def _scatter_type(a, data, index, like):
    return [data, index, like], [data]


@register("_ordering_scatter", inputs=("data", "index", "like"), attrs={"axis": _AXIS_OPT},
          infer_shape=_scatter_shape, infer_type=_scatter_type, hint="_ordering_scatter")
def _ordering_scatter(xp, a, data, index, like):
    """Zeros shaped like `like` with `data` placed at `index` along `axis` (the adjoint of
    `_ordering_gather`; indices must be unique along the axis, as sort/topk give)."""
    if a.axis is None:
        out = _ordering_scatter_kernel(xp, data.reshape(-1), index.reshape(-1), (like.size,), 0)
        return (out.reshape(like.shape),)
    axis = _check_axis("_ordering_scatter", a.axis, like.ndim)
    return (_ordering_scatter_kernel(xp, data, index, like.shape, axis),)


@_ordering_scatter.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._ordering_gather(ograds[0], inputs[1], axis=a.axis), None, None]
