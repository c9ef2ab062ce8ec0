"""ONNX lowerings of the layout and indexing ops: transpose, expand/squeeze, slicing and splitting,
stacking, broadcasting, tiling, gathers (Embedding, take, pick, gather_nd), where, one_hot,
sorting (topk, sort, argsort, argmax/argmin), reductions and the sequence ops.
"""
from __future__ import annotations

import numpy as np

from ..lowering import onnx_lowering
from .crop import _crop_window
from . import (broadcast, indexing_ops, linalg, matrix, matrix_join, matrix_slice, ordering,  # noqa: F401
               reduce, sequence)

_BIG = 2 ** 63 - 1


def _axis(axis: int, ndim: int) -> int:
    return int(axis) + ndim if int(axis) < 0 else int(axis)


@onnx_lowering("transpose")
def _transpose(g, node):
    ndim = len(g.in_shapes[0])
    axes = node.attrs.axes or tuple(reversed(range(ndim)))
    return [g.op("Transpose", [g.inputs[0]], perm=[_axis(x, ndim) for x in axes])]


@onnx_lowering("SwapAxis")
def _swap_axis(g, node):
    ndim = len(g.in_shapes[0])
    perm = list(range(ndim))
    d1, d2 = _axis(node.attrs.dim1, ndim), _axis(node.attrs.dim2, ndim)
    perm[d1], perm[d2] = perm[d2], perm[d1]
    return [g.op("Transpose", [g.inputs[0]], perm=perm)]


@onnx_lowering("expand_dims")
def _expand_dims(g, node):
    ndim = len(g.in_shapes[0])
    return [g.axes_op("Unsqueeze", g.inputs[0], [_axis(node.attrs.axis, ndim + 1)])]


@onnx_lowering("squeeze")
def _squeeze(g, node):
    shape, axis = g.in_shapes[0], node.attrs.axis
    axes = [i for i, d in enumerate(shape) if d == 1] if axis is None else \
        [_axis(a, len(shape)) for a in (axis if isinstance(axis, tuple) else (axis,))]
    if len(axes) == len(shape):  # MXNet keeps one dim when everything is squeezed
        return [g.reshape(g.inputs[0], [1])]
    return [g.axes_op("Squeeze", g.inputs[0], axes)]


def _slice(g, x: str, starts, ends, axes, steps=None) -> str:
    ins = [x, g.ints(starts, "starts"), g.ints(ends, "ends"), g.ints(axes, "axes")]
    if steps is not None:
        ins.append(g.ints(steps, "steps"))
    return g.op("Slice", ins)


@onnx_lowering("slice")
def _slice_op(g, node):
    a = node.attrs
    starts, ends, axes, steps = [], [], [], []
    step = a.step or ()  # None: MXNet's step=None, no steps
    for i, b in enumerate(a.begin):
        e = a.end[i] if i < len(a.end) else None
        s = step[i] if i < len(step) and step[i] is not None else 1
        starts.append((0 if s > 0 else -1) if b is None else b)
        ends.append((_BIG if s > 0 else -_BIG - 1) if e is None else e)
        axes.append(i)
        steps.append(s)
    return [_slice(g, g.inputs[0], starts, ends, axes, steps)]


@onnx_lowering("slice_axis")
def _slice_axis(g, node):
    a = node.attrs
    axis = _axis(a.axis, len(g.in_shapes[0]))
    return [_slice(g, g.inputs[0], [a.begin], [_BIG if a.end is None else a.end], [axis])]


@onnx_lowering("slice_like")
def _slice_like(g, node):
    ndim = len(g.in_shapes[0])
    axes = [_axis(x, ndim) for x in node.attrs.axes] or list(range(ndim))
    ends = g.op("Gather", [g.op("Shape", [g.inputs[1]]), g.ints(axes, "axes")], axis=0)
    return [g.op("Slice", [g.inputs[0], g.ints([0] * len(axes)), ends, g.ints(axes, "axes")])]


def _split(g, x: str, sizes: list[int], axis: int, squeeze: bool) -> list[str]:
    outs = g.op("Split", [x, g.ints(sizes, "split")], n_out=len(sizes), axis=axis)
    outs = outs if isinstance(outs, list) else [outs]
    return [g.axes_op("Squeeze", o, [axis]) for o in outs] if squeeze else outs


@onnx_lowering("SliceChannel")
def _slice_channel(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    axis = _axis(a.axis, len(shape))
    n = int(a.num_outputs)
    return _split(g, g.inputs[0], [shape[axis] // n] * n, axis, a.squeeze_axis)


@onnx_lowering("_split_v2")
def _split_v2(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    axis = _axis(a.axis, len(shape))
    sizes = [s[axis] for s in g.out_shapes] if not a.squeeze_axis else [1] * len(g.out_shapes)
    return _split(g, g.inputs[0], sizes, axis, a.squeeze_axis)


@onnx_lowering("stack")
def _stack(g, node):
    axis = _axis(node.attrs.axis, len(g.in_shapes[0]) + 1)
    return [g.op("Concat", [g.axes_op("Unsqueeze", x, [axis]) for x in g.inputs], axis=axis)]


def _index(g, idx: str, size: int, mode: str = "clip") -> str:
    """Indices as int64, clipped (or wrapped) to [0, size) as MXNet does."""
    idx = g.cast(idx, "int64")
    if mode == "wrap":
        return g.op("Mod", [idx, g.ints([size])])
    return g.op("Clip", [idx, g.const(np.int64(0)), g.const(np.int64(size - 1))])


@onnx_lowering("Embedding")
def _embedding(g, node):
    idx = _index(g, g.inputs[0], g.in_shapes[1][0])
    return [g.op("Gather", [g.inputs[1], idx], axis=0)]


@onnx_lowering("take")
def _take(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    axis = _axis(a.axis, len(shape))
    if a.mode == "raise":  # the runtime's Gather rejects out-of-range indices, as MXNet raises
        return [g.op("Gather", [g.inputs[0], g.cast(g.inputs[1], "int64")], axis=axis)]
    return [g.op("Gather", [g.inputs[0], _index(g, g.inputs[1], shape[axis], a.mode)], axis=axis)]


@onnx_lowering("pick")
def _pick(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    axis = _axis(a.axis, len(shape))
    idx = _index(g, g.inputs[1], shape[axis], a.mode)
    if len(g.in_shapes[1]) < len(shape):
        idx = g.axes_op("Unsqueeze", idx, [axis])
    y = g.op("GatherElements", [g.inputs[0], idx], axis=axis)
    return [y if a.keepdims else g.reshape_out(y)]


@onnx_lowering("gather_nd")
def _gather_nd(g, node):
    k = len(g.in_shapes[1])
    idx = g.op("Transpose", [g.cast(g.inputs[1], "int64")], perm=[*range(1, k), 0])
    return [g.op("GatherND", [g.inputs[0], idx])]


@onnx_lowering("where")
def _where(g, node):
    cond, x = g.inputs[0], g.inputs[1]
    cshape, xshape = g.in_shapes[0], g.in_shapes[1]
    c = g.cast(cond, "bool")
    if len(cshape) < len(xshape):  # MXNet's 1-D condition selects along the first axis
        c = g.axes_op("Unsqueeze", c, list(range(1, len(xshape))))
    return [g.op("Where", [c, x, g.inputs[2]])]


@onnx_lowering("one_hot")
def _one_hot(g, node):
    a = node.attrs
    # onnxruntime's OneHot computes float32/int64/int32 values: cast to other dtypes after
    dt = np.dtype(a.dtype)
    calc = dt if dt in (np.dtype("float32"), np.dtype("int64")) else np.dtype("float32")
    values = g.const(np.asarray([a.off_value, a.on_value], dtype=calc), hint="onoff")
    idx = g.cast(g.inputs[0], "int64")
    # MXNet gives an all-off row for an index outside [0, depth); ONNX wraps negatives
    depth = int(a.depth)
    idx = g.op("Where", [g.op("Less", [idx, g.const(np.int64(0))]), g.const(np.int64(depth)), idx])
    y = g.op("OneHot", [idx, g.ints([depth], "depth"), values], axis=-1)
    return [y if calc == dt else g.cast(y, dt)]


@onnx_lowering("broadcast_to", "broadcast_axis", "broadcast_like")
def _broadcast(g, node):
    if node.op.name == "broadcast_like" and node.attrs.lhs_axes is None:
        return [g.op("Expand", [g.inputs[0], g.op("Shape", [g.inputs[1]])])]
    return [g.op("Expand", [g.inputs[0], g.out_shape_tensor(0)])]


@onnx_lowering("tile")
def _tile(g, node):
    shape, reps = g.in_shapes[0], list(node.attrs.reps)
    x = g.inputs[0]
    if len(reps) > len(shape):
        x = g.axes_op("Unsqueeze", x, list(range(len(reps) - len(shape))))
    reps = [1] * (max(len(shape), len(reps)) - len(reps)) + reps
    return [g.op("Tile", [x, g.ints(reps, "reps")])]


@onnx_lowering("repeat")
def _repeat(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    x = g.inputs[0]
    if a.axis is None:
        x, shape, axis = g.reshape(x, [-1]), (int(np.prod(shape)),), 0
    else:
        axis = _axis(a.axis, len(shape))
    x = g.axes_op("Unsqueeze", x, [axis + 1])
    reps = [1] * (len(shape) + 1)
    reps[axis + 1] = int(a.repeats)
    return [g.reshape_out(g.op("Tile", [x, g.ints(reps, "reps")]))]


@onnx_lowering("reverse")
def _reverse(g, node):
    ndim = len(g.in_shapes[0])
    axes = node.attrs.axis if isinstance(node.attrs.axis, tuple) else (node.attrs.axis,)
    axes = [_axis(x, ndim) for x in axes]
    return [_slice(g, g.inputs[0], [-1] * len(axes), [-_BIG - 1] * len(axes), axes, [-1] * len(axes))]


# -- reductions and sorting ---------------------------------------------------------------------

def _reduce_axes(a, ndim: int) -> list[int]:
    axis = a.axis
    if axis is None or axis == ():  # every axis, with or without exclude (as MXNet)
        return list(range(ndim))
    axes = [_axis(x, ndim) for x in (axis if isinstance(axis, tuple) else (axis,))]
    return [i for i in range(ndim) if i not in axes] if a.get("exclude") else axes


_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin",
           "prod": "ReduceProd", "nansum": None, "nanprod": None}


def _reducer(op_type: str):
    def lower(g, node):
        axes = _reduce_axes(node.attrs, len(g.in_shapes[0]))
        if not axes:
            return [g.op("Identity", [g.inputs[0]])]
        y = g.axes_op(op_type, g.inputs[0], axes, keepdims=int(bool(node.attrs.keepdims)))
        return [g.reshape_out(y) if g.out_shapes[0] == (1,) else y]  # MXNet's full reduction is (1,)
    return lower


for _name, _op_type in _REDUCE.items():
    if _op_type:
        onnx_lowering(_name)(_reducer(_op_type))


@onnx_lowering("norm")
def _norm(g, node):
    a = node.attrs
    if a.ord not in (1, 2):
        raise g.fail(f"norm ord={a.ord}")
    axes = _reduce_axes(a, len(g.in_shapes[0]))
    y = g.axes_op("ReduceL1" if a.ord == 1 else "ReduceL2", g.inputs[0], axes, keepdims=int(bool(a.keepdims)))
    y = g.reshape_out(y) if g.out_shapes[0] == (1,) else y
    return [g.cast(y, a.out_dtype) if a.out_dtype is not None else y]


@onnx_lowering("argmax", "argmin")
def _argmax(g, node):
    a, x = node.attrs, g.inputs[0]
    op_type = "ArgMax" if node.op.name == "argmax" else "ArgMin"
    if a.axis is None:
        y = g.reshape_out(g.op(op_type, [g.reshape(x, [-1])], axis=0, keepdims=0))
    else:
        y = g.op(op_type, [x], axis=_axis(a.axis, len(g.in_shapes[0])), keepdims=int(bool(a.keepdims)))
        y = g.reshape_out(y) if g.out_shapes[0] == (1,) and len(g.in_shapes[0]) == 1 else y
    return [g.cast(y, g.out_dtypes[0])]


def _topk_call(g, x: str, axis: int, k: int, ascend: bool):
    return g.op("TopK", [x, g.ints([k], "k")], n_out=2, axis=axis, largest=int(not ascend), sorted=1)


@onnx_lowering("topk", note="ret_typ value/indices/both; ties may order differently")
def _topk(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    axis = _axis(a.axis, len(shape)) if a.axis is not None else None
    x = g.inputs[0]
    if axis is None:
        x, axis, shape = g.reshape(x, [-1]), 0, (int(np.prod(shape)),)
    if a.ret_typ == "mask":
        raise g.fail("topk ret_typ='mask'", "use ret_typ='indices' and one_hot")
    k = int(a.k) if a.k > 0 else shape[axis]
    values, idx = _topk_call(g, x, axis, k, a.is_ascend)
    idx = g.cast(idx, a.dtype)
    return {"value": [values], "indices": [idx], "both": [values, idx]}[a.ret_typ]


@onnx_lowering("sort", "argsort")
def _sort(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    x, axis = g.inputs[0], a.axis
    if axis is None:
        x, axis = g.reshape(x, [-1]), 0
    axis = _axis(axis, len(shape) if a.axis is not None else 1)
    values, idx = _topk_call(g, x, axis, (shape[axis] if a.axis is not None else int(np.prod(shape))),
                             a.is_ascend)
    return [values] if node.op.name == "sort" else [g.cast(idx, a.dtype)]


@onnx_lowering("shape_array")
def _shape_array(g, node):
    return [g.op("Shape", [g.inputs[0]])]


@onnx_lowering("size_array")
def _size_array(g, node):
    return [g.reshape(g.op("Size", [g.inputs[0]]), [1])]


# -- sequences --------------------------------------------------------------------------------

def _lengths(g, node) -> str | None:
    return g.cast(g.inputs[1], "int64") if node.attrs.use_sequence_length else None


@onnx_lowering("SequenceMask")
def _sequence_mask(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    lengths = _lengths(g, node)
    if lengths is None:
        return [g.op("Identity", [g.inputs[0]])]
    axis = _axis(a.axis, len(shape))
    steps = g.const(np.arange(shape[axis], dtype=np.int64), hint="steps")
    if axis == 0:  # (T, 1) < (1, N) -> (T, N)
        mask = g.op("Less", [g.axes_op("Unsqueeze", steps, [1]), g.axes_op("Unsqueeze", lengths, [0])])
    else:  # (1, T) < (N, 1) -> (N, T)
        mask = g.op("Less", [g.axes_op("Unsqueeze", steps, [0]), g.axes_op("Unsqueeze", lengths, [1])])
    if len(shape) > 2:
        mask = g.axes_op("Unsqueeze", mask, list(range(2, len(shape))))
    return [g.op("Where", [mask, g.inputs[0], g.scalar(a.value, g.in_dtypes[0])])]


@onnx_lowering("SequenceReverse")
def _sequence_reverse(g, node):
    lengths = _lengths(g, node)
    if lengths is None:
        return [_slice(g, g.inputs[0], [-1], [-_BIG - 1], [0], [-1])]
    return [g.op("ReverseSequence", [g.inputs[0], lengths], time_axis=0, batch_axis=1)]


@onnx_lowering("SequenceLast")
def _sequence_last(g, node):
    a, shape = node.attrs, g.in_shapes[0]
    axis = _axis(a.axis, len(shape))
    lengths = _lengths(g, node)
    if lengths is None:
        return [g.axes_op("Squeeze", _slice(g, g.inputs[0], [-1], [_BIG], [axis]), [axis])]
    last = g.op("Clip", [g.op("Sub", [lengths, g.const(np.int64(1))]), g.const(np.int64(0)),
                         g.const(np.int64(shape[axis] - 1))])  # (N,), clipped as MXNet does
    idx = g.axes_op("Unsqueeze", last, [axis] + list(range(2, len(shape))))
    target = g.op("Shape", [g.inputs[0]])
    idx = g.op("Expand", [idx, g.op("ScatterElements", [target, g.ints([axis]), g.ints([1])], axis=0)])
    y = g.op("GatherElements", [g.inputs[0], idx], axis=axis)
    return [g.axes_op("Squeeze", y, [axis])]


# -- products ---------------------------------------------------------------------------------

@onnx_lowering("dot")
def _dot(g, node):
    """MXNet's dot: lhs as (rest, k) or, transposed, (k, rest)^T; rhs as (k, rest) or (rest, k)^T."""
    a = node.attrs
    lhs, rhs = g.inputs[:2]
    ls, rs = g.in_shapes[:2]
    if len(ls) == 2 and len(rs) == 2:
        lm = g.op("Transpose", [lhs], perm=[1, 0]) if a.transpose_a else lhs
        rm = g.op("Transpose", [rhs], perm=[1, 0]) if a.transpose_b else rhs
        return [g.op("MatMul", [lm, rm])]
    lm = g.reshape(lhs, [ls[0], -1] if a.transpose_a else [-1, ls[-1]])
    rm = g.reshape(rhs, [-1, rs[-1]] if a.transpose_b else [rs[0], -1])
    lm = g.op("Transpose", [lm], perm=[1, 0]) if a.transpose_a else lm
    rm = g.op("Transpose", [rm], perm=[1, 0]) if a.transpose_b else rm
    return [g.reshape_out(g.op("MatMul", [lm, rm]))]


@onnx_lowering("_linalg_gemm2")
def _linalg_gemm2(g, node):
    a = node.attrs
    nd_ = len(g.in_shapes[0])
    if a.axis not in (-2, nd_ - 2):
        raise g.fail(f"linalg_gemm2 axis={a.axis}", "transpose the matrices to the last two axes first")
    swap = [*range(nd_ - 2), nd_ - 1, nd_ - 2]
    lhs = g.op("Transpose", [g.inputs[0]], perm=swap) if a.transpose_a else g.inputs[0]
    rhs = g.op("Transpose", [g.inputs[1]], perm=swap) if a.transpose_b else g.inputs[1]
    y = g.op("MatMul", [lhs, rhs])
    return [y if a.alpha == 1.0 else g.op("Mul", [y, g.scalar(a.alpha, g.in_dtypes[0])])]


@onnx_lowering("Crop")
def _crop(g, node):
    top, left, h, w = _crop_window(node.attrs, tuple(g.in_shapes[0]),
                                   tuple(g.in_shapes[1]) if len(g.inputs) > 1 else None)
    return [_slice(g, g.inputs[0], [top, left], [top + h, left + w], [2, 3])]


@onnx_lowering("batch_dot")
def _batch_dot(g, node):
    a = node.attrs
    lhs, rhs = g.inputs[:2]
    nd_ = len(g.in_shapes[0])
    swap = [*range(nd_ - 2), nd_ - 1, nd_ - 2]
    if a.transpose_a:
        lhs = g.op("Transpose", [lhs], perm=swap)
    if a.transpose_b:
        rhs = g.op("Transpose", [rhs], perm=swap)
    return [g.op("MatMul", [lhs, rhs])]
