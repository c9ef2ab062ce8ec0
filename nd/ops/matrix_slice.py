"""Slicing and padding: slice, _slice_assign(_scalar), slice_axis, slice_like,
Pad, depth_to_space and space_to_depth (MXNet's src/operator/tensor/matrix_op*, pad.cc).

Shared helpers and conventions are those of nd/ops/matrix.py.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register, same_shape, shape_known
from .matrix import _axis, _copy, _first_dtype, _grad_of_shape_donor, _like_data_shape, _same_dtypes


# ---------------------------------------------------------------------------
# slicing: slice, _slice_assign, _slice_assign_scalar, slice_axis, slice_like


def _slice_key(op: str, shape: tuple, begin, end, step) -> tuple:
    """Python slices with MXNet's slice semantics (None entries, negative steps)."""
    if len(begin) != len(end):
        raise AttrError(f"{op}: begin={tuple(begin)} and end={tuple(end)} must have the same length")
    if step and len(step) != len(begin):
        raise AttrError(f"{op}: step={tuple(step)} must have the length of begin={tuple(begin)}")
    if len(begin) > len(shape):
        raise ShapeError(f"{op}: begin={tuple(begin)} slices more axes than the input {tuple(shape)} has")
    key = []
    for i, (b, e) in enumerate(zip(begin, end)):
        s = step[i] if step and step[i] is not None else 1
        if s == 0:
            raise AttrError(f"{op}: step[{i}] cannot be 0")
        key.append(slice(b, e, s))
    return tuple(key)


def _sliced_shape(op: str, shape: tuple, begin, end, step) -> tuple:
    key = _slice_key(op, shape, begin, end, step)
    out = [len(range(*k.indices(d))) if d else 0 for k, d in zip(key, shape)]
    return tuple(out) + tuple(shape[len(key):])


_SLICE_ATTRS = {
    "begin": Attr("shape", doc="Starting indices of the slice; None entries and negative indices allowed."),
    "end": Attr("shape", doc="Ending indices of the slice; None entries and negative indices allowed."),
    # MXNet takes step=None (the string "None": an unknown-length tuple) as no steps
    "step": Attr("shape", (), "Steps of the slice; negative values allowed.", optional=True),
}


@register("slice", monitor_inputs="input", aliases=("crop", "_sparse_slice"), attrs=dict(_SLICE_ATTRS),
          infer_shape=lambda a, data: None if data is None else
          ([data], [_sliced_shape("slice", data, a.begin, a.end, a.step)]))
def slice_op(xp, a, x):
    """x[begin:end:step] over the leading axes (MXNet's slice / crop)."""
    return (_copy(x[_slice_key("slice", x.shape, a.begin, a.end, a.step)]),)


@slice_op.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._slice_assign(F.zeros_like(inputs[0]), ograds[0], begin=a.begin, end=a.end, step=a.step)]


def _slice_assign_shape(a, lhs, rhs):
    if lhs is None:
        return None
    vshape = _sliced_shape("_slice_assign", lhs, a.begin, a.end, a.step)
    return [lhs, merge_shape(rhs, vshape, "_slice_assign: rhs ")], [lhs]


@register("_slice_assign", aliases=("_crop_assign",), inputs=("lhs", "rhs"), attrs=dict(_SLICE_ATTRS),
          infer_shape=_slice_assign_shape, inplace=((0, 0),))
def slice_assign(xp, a, lhs, rhs):
    """A copy of `lhs` with lhs[begin:end:step] = rhs."""
    _same_dtypes("_slice_assign", (lhs, rhs))
    key = _slice_key("_slice_assign", lhs.shape, a.begin, a.end, a.step)
    out = _copy(lhs)
    if out[key].shape != rhs.shape:
        raise ShapeError(f"_slice_assign: rhs has shape {rhs.shape}, the slice of lhs {lhs.shape} "
                         f"has shape {out[key].shape}")
    out[key] = rhs
    return (out,)


@slice_assign.def_gradient
def _(F, a, inputs, outputs, ograds):
    g = ograds[0]
    return [F._slice_assign_scalar(g, scalar=0.0, begin=a.begin, end=a.end, step=a.step),
            F.slice(g, begin=a.begin, end=a.end, step=a.step)]


@register("_slice_assign_scalar", monitor_inputs="input", aliases=("_crop_assign_scalar",), infer_shape=same_shape,
          inplace=((0, 0),),
          attrs={"scalar": Attr("float", 0.0, "The scalar value for assignment."), **_SLICE_ATTRS})
def slice_assign_scalar(xp, a, x):
    """A copy of the input with x[begin:end:step] = scalar."""
    out = _copy(x)
    out[_slice_key("_slice_assign_scalar", x.shape, a.begin, a.end, a.step)] = x.dtype.type(a.scalar)
    return (out,)


@slice_assign_scalar.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._slice_assign_scalar(ograds[0], scalar=0.0, begin=a.begin, end=a.end, step=a.step)]


def _slice_axis_range(a, shape: tuple) -> tuple[int, int, int]:
    """MXNet's GetSliceAxisParams: (axis, begin, end); no clamping, bad ranges are errors."""
    axis = _axis("slice_axis", a.axis, len(shape))
    size = shape[axis]
    begin = a.begin + size if a.begin < 0 else a.begin
    if not size:
        return axis, 0, 0
    end = size if a.end is None else (a.end + size if a.end < 0 else a.end)
    if not (0 <= begin < end <= size):
        raise ShapeError(f"slice_axis: invalid begin={a.begin}, end={a.end} for axis {axis} of size {size}")
    return axis, begin, end


def _slice_axis_shape(a, data):
    if data is None:
        return None
    axis, b, e = _slice_axis_range(a, data)
    return [data], [tuple(e - b if i == axis else d for i, d in enumerate(data))]


_SLICE_AXIS_ATTRS = {
    "axis": Attr("int", doc="Axis along which to slice; negative values allowed."),
    "begin": Attr("int", doc="The beginning index along the axis; negative values allowed."),
    "end": Attr("int", doc="The ending index along the axis (None: the end); negative values allowed.",
                optional=True),
}


@register("slice_axis", monitor_inputs="input", attrs=dict(_SLICE_AXIS_ATTRS), infer_shape=_slice_axis_shape)
def slice_axis(xp, a, x):
    """x[..., begin:end, ...] along one axis."""
    axis, b, e = _slice_axis_range(a, x.shape)
    return (_copy(x[(slice(None),) * axis + (slice(b, e),)]),)


@slice_axis.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_slice_axis(ograds[0], inputs[0], axis=a.axis, begin=a.begin, end=a.end)]


@register("_backward_slice_axis", inputs=("ograd", "data"), attrs=dict(_SLICE_AXIS_ATTRS),
          infer_shape=_like_data_shape, infer_type=_first_dtype,
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F.slice_axis(gg, axis=a.axis, begin=a.begin, end=a.end)))
def backward_slice_axis(xp, a, g, data):
    """slice_axis' gradient: zeros of the input's shape with the head gradient in the slice."""
    axis, b, e = _slice_axis_range(a, data.shape)
    out = xp.zeros(data.shape, dtype=g.dtype)
    out[(slice(None),) * axis + (slice(b, e),)] = g
    return (out,)


def _slice_like_out(a, ishape: tuple, fshape: tuple) -> tuple:
    if not a.axes:
        if len(ishape) != len(fshape):
            raise ShapeError(f"slice_like: by default every axis is sliced, but the inputs have "
                             f"{len(ishape)} and {len(fshape)} dims")
        axes = range(len(ishape))
    else:
        axes = [_axis("slice_like", ax, len(ishape)) for ax in a.axes]
    out = list(ishape)
    for ax in axes:
        if ax >= len(fshape):
            raise ShapeError(f"slice_like: axis {ax} exceeds the {len(fshape)} dims of shape_like")
        if ishape[ax] and fshape[ax] and fshape[ax] > ishape[ax]:
            raise ShapeError(f"slice_like: axis {ax} of shape_like has size {fshape[ax]}, more than the "
                             f"input's {ishape[ax]}")
        out[ax] = fshape[ax]
    return tuple(out)


@register("slice_like", inputs=("data", "shape_like"), infer_type=_first_dtype,
          infer_shape=lambda a, data, like: None if data is None or like is None else
          ([data, like], [_slice_like_out(a, data, like)]),
          attrs={"axes": Attr("shape", (), "Axes to slice to the size of shape_like's (default: all); "
                                           "negative values allowed.")})
def slice_like(xp, a, x, like):
    """Slice the input from the origin to the shape of `shape_like` (on some or all axes)."""
    out = _slice_like_out(a, x.shape, like.shape)
    return (_copy(x[tuple(slice(0, d) for d in out)]),)


@slice_like.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_slice_like(ograds[0], inputs[0]), None]


@register("_backward_slice_like", inputs=("ograd", "data"), infer_shape=_like_data_shape,
          infer_type=_first_dtype,
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F.slice_like(gg, g)))
def backward_slice_like(xp, a, g, data):
    """slice_like's gradient: zeros of the input's shape with the head gradient at the origin."""
    out = xp.zeros(data.shape, dtype=g.dtype)
    out[tuple(slice(0, d) for d in g.shape)] = g
    return (out,)


# ---------------------------------------------------------------------------
# Pad


def _pad_pairs(a, shape: tuple, dtype=None) -> list:
    """Validate MXNet's Pad restrictions; return ((before, after), ...) per axis."""
    nd, pw = len(shape), tuple(a.pad_width)
    if nd not in (4, 5):
        raise ShapeError(f"Pad: only 4-D and 5-D inputs are supported, got shape {tuple(shape)}")
    if len(pw) != 2 * nd:
        raise AttrError(f"Pad: pad_width needs 2*ndim = {2 * nd} entries for shape {tuple(shape)}, got {pw}")
    if any(pw[:4]) or any(p < 0 for p in pw):
        raise AttrError(f"Pad: padding must be >= 0 and zero on the first two axes, got pad_width={pw}")
    if dtype is not None and np.dtype(dtype).kind != "f":
        raise DTypeError(f"Pad: only floating point inputs are supported, got {np.dtype(dtype)}")
    pairs = list(zip(pw[::2], pw[1::2]))
    if a.mode == "reflect" and any(d and (b >= d or e >= d) for d, (b, e) in zip(shape, pairs)):
        raise ShapeError(f"Pad: reflect padding must be smaller than the input size, got "
                         f"pad_width={pw} for shape {tuple(shape)}")
    return pairs


def _pad_shape(a, data):
    if data is None:
        return None
    pairs = _pad_pairs(a, data)
    return [data], [tuple(d + b + e if d else 0 for d, (b, e) in zip(data, pairs))]


_PAD_ATTRS = {
    "mode": Attr("str", doc="constant: pad with constant_value; edge: repeat the edge values; "
                            "reflect: reflect the values about the edges.",
                 choices=("constant", "edge", "reflect")),
    "pad_width": Attr("shape", doc="(before_1, after_1, ..., before_N, after_N) padding of each axis; "
                                   "the first two axes take no padding."),
    "constant_value": Attr("float", 0.0, "The value used for padding when mode is constant."),
}


@register("Pad", aliases=("pad",), attrs=dict(_PAD_ATTRS), infer_shape=_pad_shape)
def pad(xp, a, x):
    """Pad the spatial axes of a 4-D/5-D array (numpy.pad modes constant/edge/reflect)."""
    pairs = _pad_pairs(a, x.shape, x.dtype)
    if a.mode == "constant":
        return (xp.pad(x, pairs, mode="constant", constant_values=x.dtype.type(a.constant_value)),)
    return (xp.pad(x, pairs, mode=a.mode),)


@pad.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_Pad(ograds[0], mode=a.mode, pad_width=a.pad_width)]


def _unpad_axis(xp, g, axis: int, widths: tuple[int, int], mode: str):
    """Adjoint of padding one axis: fold the padded borders back onto the input."""
    before, after = widths
    n = g.shape[axis] - before - after

    def cut(start, stop):
        return (slice(None),) * axis + (slice(start, stop),)
    out = _copy(g[cut(before, before + n)])
    if mode == "edge":
        out[cut(0, 1)] += g[cut(0, before)].sum(axis=axis, keepdims=True)
        out[cut(n - 1, n)] += g[cut(before + n, None)].sum(axis=axis, keepdims=True)
    elif mode == "reflect":
        out[cut(1, before + 1)] += xp.flip(g[cut(0, before)], axis)
        out[cut(n - 1 - after, n - 1)] += xp.flip(g[cut(before + n, None)], axis)
    return out


@register("_backward_Pad", inputs=("ograd",), attrs={k: v for k, v in _PAD_ATTRS.items() if k != "constant_value"},
          infer_shape=lambda a, g: None if g is None else
          ([g], [tuple(d - b - e if d else 0 for d, (b, e) in zip(g, _pad_pairs(a, g)))]))
def backward_pad(xp, a, g):
    """Pad's gradient: the head gradient of the padded array summed back onto the input."""
    pairs = list(zip(a.pad_width[::2], a.pad_width[1::2]))
    for axis, (b, e) in enumerate(pairs):
        if b or e:
            g = _unpad_axis(xp, g, axis, (b, e), a.mode)
    return (_copy(g),)


@backward_pad.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.Pad(ograds[0], mode=a.mode, pad_width=a.pad_width)]


# ---------------------------------------------------------------------------
# depth_to_space, space_to_depth


def _block(op: str, a, shape: tuple) -> int:
    b = a.block_size
    if b < 1:
        raise AttrError(f"{op}: block_size must be a positive integer, got {b}")
    if len(shape) != 4:
        raise ShapeError(f"{op}: needs a 4-D (N, C, H, W) input, got shape {tuple(shape)}")
    for axis in (1, 2, 3):   # MXNet 1.9.1 refuses an empty C, H or W
        if shape[axis] == 0:
            raise ShapeError(f"{op}: size of dimension {axis} of shape {tuple(shape)} cannot be 0")
    return b


def _d2s_shape(a, data: tuple) -> tuple:
    b = _block("depth_to_space", a, data)
    n, c, h, w = data
    if c % (b * b):
        raise ShapeError(f"depth_to_space: the depth dim {c} of shape {data} must be a multiple of "
                         f"block_size^2 = {b * b}")
    return n, c // (b * b), h * b, w * b


def _s2d_shape(a, data: tuple) -> tuple:
    b = _block("space_to_depth", a, data)
    n, c, h, w = data
    if h % b or w % b:
        raise ShapeError(f"space_to_depth: the spatial dims of shape {data} must be multiples of "
                         f"block_size={b}")
    return n, c * b * b, h // b, w // b


_BLOCK_ATTRS = {"block_size": Attr("int", doc="Size of the [block_size, block_size] blocks moved.")}


@register("depth_to_space", attrs=dict(_BLOCK_ATTRS),
          infer_shape=lambda a, data: ([data], [_d2s_shape(a, data)]) if shape_known(data) else None)
def depth_to_space(xp, a, x):
    """Move depth blocks into spatial blocks: (N, C, H, W) -> (N, C/b^2, H*b, W*b)."""
    n, c, h, w = x.shape
    out = _d2s_shape(a, x.shape)
    b = a.block_size
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return (_copy(y.reshape(out)),)


@depth_to_space.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.space_to_depth(ograds[0], block_size=a.block_size)]


@register("space_to_depth", attrs=dict(_BLOCK_ATTRS),
          infer_shape=lambda a, data: ([data], [_s2d_shape(a, data)]) if shape_known(data) else None)
def space_to_depth(xp, a, x):
    """Move spatial blocks into depth: (N, C, H, W) -> (N, C*b^2, H/b, W/b)."""
    n, c, h, w = x.shape
    out = _s2d_shape(a, x.shape)
    b = a.block_size
    y = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return (_copy(y.reshape(out)),)


@space_to_depth.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.depth_to_space(ograds[0], block_size=a.block_size)]
