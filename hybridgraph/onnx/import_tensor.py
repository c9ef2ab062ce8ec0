"""Import rules for ONNX's shape, index, resize and reduction ops (the rest are in import_rules.py).

Each rule writes the node with the MXNet op the exporter lowers to that ONNX op, so every
op type the exporter writes imports back (tests/onnx/test_onnx_import.py checks the set).
A form with no MXNet equivalent fails naming the node, the ONNX op and the limit.
"""
from __future__ import annotations

import numpy as np

from hybridgraph import symbol as S  # noqa: N812 - the symbol namespace, as MXNet code writes F
from hybridgraph.onnx.import_rules import _axes, op, rule, scalar_out


def _axis(r, axis: int, i: int = 0) -> int:
    shape = r.shape(i)
    if axis < 0:
        if shape is None:
            raise r.fail(f"axis {axis} needs the rank of input {i}")
        axis += len(shape)
    return axis


@rule("TopK")
def _topk(r):
    k = int(r.need_const(1, "k").reshape(-1)[0])
    out = S.topk(r.sym(0), axis=_axis(r, r.attr("axis", -1)), k=k, ret_typ="both",
                 is_ascend=not r.attr("largest", 1), dtype="int64", name=r.name())
    return [out[0], out[1]]


@rule("OneHot")
def _one_hot(r):
    depth = int(r.need_const(1, "depth").reshape(-1)[0])
    values = r.need_const(2, "values")
    idx = r.sym(0)
    idx = idx + (idx < 0) * depth  # ONNX counts a negative index from the end; MXNet's is all-off
    y = S.one_hot(idx, depth=depth, on_value=float(values[1]), off_value=float(values[0]),
                  dtype=values.dtype.name, name=r.name())
    rank = len(r.shape(0) or ())
    axis = r.attr("axis", -1)
    axis = axis + rank + 1 if axis < 0 else axis
    if axis != rank:
        perm = list(range(rank))
        perm.insert(axis, rank)
        y = S.transpose(y, axes=tuple(perm))
    return y


@rule("GatherND")
def _gather_nd(r):
    if r.attr("batch_dims", 0):
        raise r.fail("batch_dims > 0 (MXNet's gather_nd has no batch dims)")
    k = len(r.shape(1) or r.fail("the rank of its indices must be known"))
    idx = S.transpose(r.sym(1), axes=(k - 1, *range(k - 1)))  # ONNX's index tuples are last, MXNet's first
    return S.gather_nd(r.sym(0), idx, name=r.name())


@rule("GatherElements")
def _gather_elements(r):
    ishape = r.shape(1)
    axis = _axis(r, r.attr("axis", 0))
    if ishape is not None and (ishape[axis] in (1, None) or isinstance(ishape[axis], str)):
        # one index along the axis: MXNet's pick (squeeze checks at run time that a symbolic dim is 1)
        return S.pick(r.sym(0), S.squeeze(r.sym(1), axis=axis), axis=axis, keepdims=True, mode="wrap",
                      name=r.name())
    if ishape is None:
        raise r.fail("GatherElements needs the rank of its indices")
    return _take_along_axis(r.sym(0), r.sym(1), axis, len(ishape), r.name())


def _take_along_axis(data, idx, axis: int, rank: int, name: str):
    """GatherElements as gather_nd: the index along `axis` (negative ones counted from the end),
    the position itself along every other axis."""
    idx = S.cast(idx, dtype="int64")
    size = S.sum(S.ones_like(S.contrib.arange_like(data, axis=axis)), axis=0, keepdims=True)
    idx = S.where(idx < 0, S.broadcast_add(idx, S.cast(size, dtype="int64")), idx)
    coords = []
    for d in range(rank):
        if d == axis:
            coords.append(idx)
            continue
        pos = S.reshape(S.contrib.arange_like(idx, axis=d), shape=tuple(-1 if i == d else 1 for i in range(rank)))
        coords.append(S.broadcast_like(S.cast(pos, dtype="int64"), idx))
    return S.gather_nd(data, S.stack(*coords, axis=0), name=name)


@rule("ScatterElements")
def _scatter_elements(r):
    raise r.fail("ScatterElements is imported only where it edits a shape vector that a Reshape/Expand "
                 "reads (the exporter's use); MXNet has no scatter along an axis")


@rule("Resize")
def _resize(r):
    mode, ctm = r.attr("mode", "nearest"), r.attr("coordinate_transformation_mode", "half_pixel")
    shape = r.shape(0)
    sizes = r.const(3) if r.has(3) else None
    scales = r.const(2) if r.has(2) else None
    scales = scales if scales is not None and scales.size else None
    if shape is None or len(shape) != 4 or (sizes is None) == (scales is None):
        raise r.fail("Resize of other than 4-D (NCHW) data with constant sizes or scales")
    if sizes is not None:
        if all(isinstance(d, int) for d in shape[:2]) and tuple(sizes[:2]) != tuple(shape[:2]):
            raise r.fail("Resize of the batch or channel dims")
        if all(isinstance(d, int) for d in shape[2:]):
            scales = np.asarray([1, 1, sizes[2] / shape[2], sizes[3] / shape[3]])
    elif tuple(scales[:2]) != (1, 1):
        raise r.fail("Resize of the batch or channel dims")
    nearest = mode == "nearest" and ctm == "asymmetric" and r.attr("nearest_mode", "round_prefer_floor") == "floor"
    if nearest and scales is not None and scales[2] == scales[3] and float(scales[2]).is_integer():
        return S.UpSampling(r.sym(0), scale=int(scales[2]), sample_type="nearest", num_args=1, name=r.name())
    if mode == "linear" and ctm == "align_corners" and sizes is not None:
        return S.contrib.BilinearResize2D(r.sym(0), height=int(sizes[2]), width=int(sizes[3]),
                                          align_corners=True, name=r.name())
    raise r.fail(f"Resize mode={mode!r} coordinate_transformation_mode={ctm!r}: MXNet has nearest upsampling "
                 "by an integer factor (asymmetric, floor) and bilinear resizing with align_corners")


@rule("DepthToSpace", "SpaceToDepth")
def _depth_space(r):
    if r.node.op_type == "DepthToSpace" and r.attr("mode", "DCR") != "DCR":
        raise r.fail("DepthToSpace mode CRD (MXNet's depth_to_space is DCR)")
    fn = S.depth_to_space if r.node.op_type == "DepthToSpace" else S.space_to_depth
    return fn(r.sym(0), block_size=r.attr("blocksize"), name=r.name())


@rule("HardSigmoid")
def _hard_sigmoid(r):
    return S.hard_sigmoid(r.sym(0), alpha=r.attr("alpha", 0.2), beta=r.attr("beta", 0.5), name=r.name())


@rule("ReduceL1", "ReduceL2")
def _norm(r):
    axes = _axes(r)
    if not axes and r.attr("noop_with_empty_axes", 0):
        return S.identity(r.sym(0), name=r.name())
    keep = bool(r.attr("keepdims", 1))
    y = S.norm(r.sym(0), ord=1 if r.node.op_type == "ReduceL1" else 2, axis=axes or None, keepdims=keep,
               name=r.name())
    return scalar_out(r, y, axes, keep)


@rule("Tile")
def _tile(r):
    reps = tuple(int(v) for v in r.need_const(1, "repeats"))
    y = S.tile(r.sym(0), reps=tuple(max(v, 1) for v in reps), name=r.name())
    for axis, v in enumerate(reps):  # ONNX's 0 repeats give an empty axis; MXNet's tile wants >= 1
        if v == 0:
            y = S.slice(y, begin=(None,) * axis + (0,), end=(None,) * axis + (0,))
    return y


@rule("Mod")
def _mod(r):
    x, y = r.sym(0), r.sym(1)
    if not r.attr("fmod", 0):  # the divisor's sign, as Python and MXNet's mod
        return S.broadcast_mod(x, y, name=r.name())
    return S.broadcast_sub(x, S.broadcast_mul(S.trunc(S.broadcast_div(x, y)), y), name=r.name())


@rule("Pad")
def _pad(r):
    pads = [int(v) for v in r.need_const(1, "pads")]
    if r.has(3):
        raise r.fail("Pad with an axes input")
    n = len(pads) // 2
    width = tuple(v for pair in zip(pads[:n], pads[n:]) for v in pair)
    value = r.const(2) if r.has(2) else None
    mode = r.attr("mode", "constant")
    if mode not in ("constant", "edge", "reflect"):
        raise r.fail(f"Pad mode {mode!r}")
    return S.Pad(r.sym(0), mode=mode, pad_width=width,
                 constant_value=float(value) if value is not None else 0.0, name=r.name())


@rule("Shape")
def _shape(r):
    y = S.shape_array(r.sym(0), name=r.name())
    start, end = r.attr("start"), r.attr("end")
    if start is None and end is None:
        return y
    return S.slice_axis(y, axis=0, begin=start or 0, end=end, name=r.name("_slice"))


@rule("Size")
def _size(r):
    return op("_np_reshape", [S.size_array(r.sym(0), name=r.name("_size"))], newshape=(), name=r.name())


@rule("ConstantOfShape")
def _constant_of_shape(r):
    from onnx import numpy_helper
    value = r.attr("value")
    value = numpy_helper.to_array(value).reshape(-1) if value is not None else np.zeros(1, np.float32)
    dtype, fill = value.dtype.name, value[0].item()
    target = r.shape_value(0)
    if target is not None and all(isinstance(d, int) for d in target):
        return S.full(shape=tuple(target), val=fill, dtype=dtype, name=r.name())
    src = r.producers.get(r.node.input[0])
    if src is not None and src.op_type == "Shape" and not any(a.name in ("start", "end") for a in src.attribute):
        like = r.sym_named(src.input[0])
        return S.Cast(S.zeros_like(like), dtype=dtype) + fill
    if target is None or any(d is None for d in target):
        raise r.fail("its shape must be computed from constants and the dims of the graph's tensors")
    # symbolic dims (a dynamic batch): a size-1 axis there, broadcast like a tensor that has the dim
    y = S.full(shape=tuple(d if isinstance(d, int) else 1 for d in target), val=fill, dtype=dtype, name=r.name())
    for i, d in enumerate(target):
        if not isinstance(d, int):
            like, axis = r.dim_source(d)
            y = S.broadcast_like(y, like, lhs_axes=(i,), rhs_axes=(axis,))
    return y


@rule("Expand")
def _expand(r):
    target = r.shape_value(1)
    if target is None:
        raise r.fail("its shape must be computed from constants and tensor shapes")
    x, xshape = r.sym(0), list(r.shape(0) or ())
    src = r.producers.get(r.node.input[1])
    like = r.shapes.get(src.input[0]) if src is not None and src.op_type == "Shape" else None
    if like is not None and len(like) == len(xshape) and not any(a.name in ("start", "end") for a in src.attribute):
        return S.broadcast_like(x, r.sym_named(src.input[0]), name=r.name())  # the shape of one tensor
    for _ in range(len(target) - len(xshape)):
        x, xshape = S.expand_dims(x, axis=0), [1] + xshape
    lead = len(xshape) - len(target)
    out = []
    for i, d in enumerate(target):  # 0 keeps the input's dim: ONNX's 1, or the same symbolic dim
        xd = xshape[lead + i]
        out.append(0 if d == 1 or (d is not None and d == xd) else d)
    if any(not isinstance(d, int) for d in out):
        raise r.fail(f"target shape {target} has a dim known only at run time that the data does not have")
    if lead:
        raise r.fail("a target shape of lower rank than the data")
    return S.broadcast_to(x, shape=tuple(out), name=r.name())


@rule("ReverseSequence")
def _reverse_sequence(r):
    if (r.attr("time_axis", 0), r.attr("batch_axis", 1)) != (0, 1):
        raise r.fail("time_axis/batch_axis other than 0/1 (MXNet's SequenceReverse)")
    return S.SequenceReverse(r.sym(0), r.sym(1), use_sequence_length=True, name=r.name())


@rule("RandomUniform", "RandomNormal")
def _random(r):
    from onnx import helper
    dtype = np.dtype(helper.tensor_dtype_to_np_dtype(r.attr("dtype", 1))).name
    shape = tuple(r.attr("shape"))
    if r.node.op_type == "RandomUniform":
        return op("_random_uniform", [], low=r.attr("low", 0.0), high=r.attr("high", 1.0), shape=shape,
                  dtype=dtype, name=r.name())
    return op("_random_normal", [], loc=r.attr("mean", 0.0), scale=r.attr("scale", 1.0), shape=shape,
              dtype=dtype, name=r.name())


@rule("RandomUniformLike", "RandomNormalLike")
def _random_like(r):
    from onnx import helper
    if r.node.op_type == "RandomUniformLike":
        y = op("_random_uniform_like", [r.sym(0)], low=r.attr("low", 0.0), high=r.attr("high", 1.0), name=r.name())
    else:
        y = op("_random_normal_like", [r.sym(0)], loc=r.attr("mean", 0.0), scale=r.attr("scale", 1.0),
               name=r.name())
    to = r.attr("dtype")
    return y if to is None else S.Cast(y, dtype=np.dtype(helper.tensor_dtype_to_np_dtype(to)).name)


@rule("Multinomial")
def _multinomial(r):
    src = r.producers.get(r.node.input[0])
    if src is not None and src.op_type == "Log":  # the exporter's Log(probabilities): use them directly
        p = r.sym_named(src.input[0])
        probs = S.broadcast_div(p, S.sum(p, axis=-1, keepdims=True))
    else:  # ONNX's input holds unnormalised log-probabilities
        probs = S.softmax(r.sym(0), axis=-1)
    y = op("_sample_multinomial", [probs], shape=(r.attr("sample_size", 1),), dtype="int32", name=r.name())
    return y if r.attr("dtype", 6) == 6 else S.Cast(y, dtype="int64")


@rule("Det")
def _det(r):
    y = op("_linalg_det", [r.sym(0)], name=r.name())
    rank = len(r.shape(0) or ())
    return op("_np_reshape", [y], newshape=(), name=r.name("_scalar")) if rank == 2 else y


@rule("IsInf")
def _isinf(r):
    if r.attr("detect_negative", 1) != 1 or r.attr("detect_positive", 1) != 1:
        raise r.fail("IsInf detecting one sign only")
    return S.abs(r.sym(0)) == np.inf


@rule("IsNaN")
def _isnan(r):
    x = r.sym(0)
    return S.broadcast_not_equal(x, x, name=r.name())  # NaN is the one value unequal to itself


@rule("Range")
def _range(r):
    start, delta = r.const(0), r.const(2)
    if start is None or delta is None:
        raise r.fail("its start and delta must be constants")
    limit = r.const(1)
    if limit is not None:
        n = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
        return S.arange(start=float(start), stop=float(start) + n * float(delta), step=float(delta),
                        dtype=start.dtype.name, name=r.name())
    # a length known at run time: the size of a tensor, or one of its dims (the exporter's arange_like)
    src, axis = r.producers.get(r.node.input[1]), None
    if src is not None and src.op_type == "Squeeze":
        src = r.producers.get(src.input[0])
        attrs = {a.name: a.i for a in src.attribute} if src is not None else {}
        if src is None or src.op_type != "Shape" or attrs.get("end", attrs.get("start", 0) + 1) != \
                attrs.get("start", 0) + 1:
            raise r.fail("its limit must be a constant, a tensor's Size or one dim of its Shape")
        axis = attrs.get("start", 0)
    elif src is None or src.op_type != "Size":
        raise r.fail("its limit must be a constant, a tensor's Size or one dim of its Shape")
    y = op("_contrib_arange_like", [r.sym_named(src.input[0])], start=float(start), step=float(delta),
           axis=axis, name=r.name())
    y = S.Cast(y, dtype=start.dtype.name)
    return y if axis is not None else S.reshape(y, shape=(-1,))
