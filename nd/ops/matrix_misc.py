"""Small shape and value operators: shape_array, size_array, diag, Cast and
clip (MXNet's src/operator/tensor/matrix_op*, elemwise_unary_op_basic.cc).

Shared helpers and conventions are those of nd/ops/matrix.py.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr, parse_dtype
from ..errors import ShapeError
from ..registry import ZERO_GRAD, register, same_shape, shape_known
from .matrix import _axis, _copy, _first_dtype, _grad_of_shape_donor, _like_data_shape


# ---------------------------------------------------------------------------
# shape_array, size_array, diag


def _int64_out(a, data):
    return [data], [np.dtype(np.int64)]


@register("shape_array", monitor_inputs="input", infer_type=_int64_out, gradient=ZERO_GRAD,
          ignored_attrs=("lhs_begin", "lhs_end", "rhs_begin", "rhs_end"),
          infer_shape=lambda a, data: None if data is None else ([data], [(len(data),)]))
def shape_array(xp, a, x):
    """The input's shape as a 1-D int64 array."""
    return (xp.asarray(x.shape, dtype=np.int64).reshape(x.ndim),)


@register("size_array", monitor_inputs="input", infer_type=_int64_out, gradient=ZERO_GRAD,
          infer_shape=lambda a, data: ([data], [(1,)]))
def size_array(xp, a, x):
    """The input's size as a 1-element int64 array."""
    return (xp.asarray([x.size], dtype=np.int64),)


def _diag_shape(a, data: tuple) -> tuple:
    if len(data) == 1:
        s = data[0] + abs(a.k)
        return s, s
    x1, x2 = _axis("diag", a.axis1, len(data), "axis1"), _axis("diag", a.axis2, len(data), "axis2")
    if x1 == x2:
        raise ShapeError(f"diag: axis1 and axis2 cannot refer to the same axis {x1}")
    h, w = data[x1] + min(a.k, 0), data[x2] - max(a.k, 0)
    if min(h, w) < 0:
        raise ShapeError(f"diag: diagonal k={a.k} does not exist for axes ({x1}, {x2}) of shape {tuple(data)}")
    return tuple(d for i, d in enumerate(data) if i not in (x1, x2)) + (min(h, w),)


_DIAG_ATTRS = {
    "k": Attr("int", 0, "Diagonal in question: k>0 above the main diagonal, k<0 below."),
    "axis1": Attr("int", 0, "The first axis of the sub-arrays (ignored for 1-D input)."),
    "axis2": Attr("int", 1, "The second axis of the sub-arrays (ignored for 1-D input)."),
}


@register("diag", attrs=dict(_DIAG_ATTRS),
          infer_shape=lambda a, data: ([data], [_diag_shape(a, data)]) if shape_known(data) else None)
def diag(xp, a, x):
    """1-D input: a matrix with it on diagonal k; N-D input: diagonal k of axes (axis1, axis2)."""
    _diag_shape(a, x.shape)
    if x.ndim == 1:
        return (xp.diag(x, a.k),)
    return (_copy(xp.diagonal(x, a.k, a.axis1, a.axis2)),)


@diag.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_diag(ograds[0], inputs[0], k=a.k, axis1=a.axis1, axis2=a.axis2)]


@register("_backward_diag", inputs=("ograd", "data"), attrs=dict(_DIAG_ATTRS),
          infer_shape=_like_data_shape, infer_type=_first_dtype,
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F.diag(gg, k=a.k, axis1=a.axis1, axis2=a.axis2)))
def backward_diag(xp, a, g, data):
    """diag's gradient: the head gradient's diagonal (1-D input), or zeros with g on the diagonal."""
    if data.ndim == 1:
        return (_copy(xp.diagonal(g, a.k)),)
    x1, x2 = a.axis1 % data.ndim, a.axis2 % data.ndim
    out = xp.zeros(data.shape, dtype=g.dtype)
    i = xp.arange(g.shape[-1])
    view = xp.moveaxis(out, (x1, x2), (-2, -1))
    view[..., i + max(-a.k, 0), i + max(a.k, 0)] = g
    return (out,)


# ---------------------------------------------------------------------------
# Cast, clip

_CAST_TYPES = ("bool", "float16", "float32", "float64", "int32", "int64", "int8", "uint8")


def _cast_dtype(v) -> str:
    if str(v).strip() == "bfloat16":
        raise ValueError("bfloat16 is not supported (numpy has no bfloat16 type)")
    return parse_dtype(v)


def _cast_array(x, dtype: str):
    """x.astype(dtype) with C's wrap-around for out-of-range floats to small ints."""
    if x.dtype.kind == "f" and np.dtype(dtype).kind in "iu" and np.dtype(dtype).itemsize < 8:
        with np.errstate(invalid="ignore"):
            return x.astype(np.int64).astype(dtype)
    return x.astype(dtype)


@register("Cast", monitor_inputs="input", aliases=("cast",), infer_shape=same_shape,
          infer_type=lambda a, data: ([data], [np.dtype(a.dtype)]),
          attrs={"dtype": Attr(_cast_dtype, doc="Output data type.", choices=_CAST_TYPES)})
def cast(xp, a, x):
    """Cast the elements to another dtype."""
    return (_cast_array(x, a.dtype),)


@cast.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_cast(ograds[0], inputs[0])]


@register("_backward_cast", inputs=("ograd", "data"), infer_shape=_like_data_shape,
          infer_type=lambda a, g, data: ([g, data], [data]),
          gradient=_grad_of_shape_donor(lambda F, a, gg, g: F._backward_cast(gg, g)))
def backward_cast(xp, a, g, data):
    """Cast's gradient: the head gradient cast back to the input's dtype."""
    return (_cast_array(g, data.dtype.name),)


def _clip_bounds(a) -> tuple[float, float]:
    """MXNet keeps a_min/a_max as float32 (real_t)."""
    return float(np.float32(a.a_min)), float(np.float32(a.a_max))


@register("clip", monitor_inputs="input", aliases=("_sparse_clip",), infer_shape=same_shape, elementwise=True,
          inplace=((0, 0),), writes_out=True, cexpr="x0 > a_max ? a_max : (x0 < a_min ? a_min : x0)",
          attrs={"a_min": Attr("float", doc="Minimum value."),
                 "a_max": Attr("float", doc="Maximum value.")})
def clip(xp, a, x, out=None):
    """Limit values to [a_min, a_max]: above a_max -> a_max, else below a_min -> a_min."""
    lo, hi = _clip_bounds(a)
    if x.dtype.kind == "f" and lo <= hi:
        # ordered bounds: MXNet's test equals xp.clip (one pass, NaN stays NaN)
        dt = x.dtype.type
        return (xp.clip(x, dt(lo), dt(hi), out=None if out is None else out[0]),)
    if x.dtype.kind in "iu":   # a bound outside the integer type's range cannot bind (uint8, a_min=-120)
        info = np.iinfo(x.dtype)
        lo, hi = (float(np.clip(v, info.min, info.max)) for v in (lo, hi))
    res = xp.where(x > hi, x.dtype.type(hi), xp.where(x < lo, x.dtype.type(lo), x)).astype(x.dtype, copy=False)
    if out is None:
        return (res,)
    out[0][...] = res
    return (out[0],)


@clip.def_gradient
def _(F, a, inputs, outputs, ograds):
    lo, hi = _clip_bounds(a)
    x = inputs[0]
    inside = F.elemwise_mul(F._greater_equal_scalar(x, scalar=lo), F._lesser_equal_scalar(x, scalar=hi))
    return [F.elemwise_mul(ograds[0], inside)]
