"""Reductions and the unbroadcast helper.

* reductions over axes (`sum`, `mean`, `prod`, `max`, `min`, `nansum`, `nanprod`)
  with MXNet's `axis` / `keepdims` / `exclude`, plus `norm`;
* index reductions (`argmax`, `argmin`, `argmax_channel`);
* hidden helpers the gradient rules use: `_sum_to_like` (unbroadcast),
  `_unreduce` (a reduction's head gradient broadcast back to the input) and
  `_fill_nan`.

Ordering (`topk`, `sort`, `argsort`) lives in ordering.py, broadcasting
(`broadcast_to`, `broadcast_like`, `broadcast_axis`) and `add_n` in
broadcast.py.

Shapes follow MXNet's legacy NDArray: a reduction over every axis without
`keepdims` gives shape `(1,)`, never a 0-d array.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import ShapeError
from ..fastpath import broadcast_copy, mean_keepdims, reduce_keepdims
from ..registry import ZERO_GRAD, OpDef, add_op, register, same_shape

# ---------------------------------------------------------------------------
# unbroadcast (used by every broadcasting gradient)


def sum_to_shape(xp, g, shape: tuple):
    """Sum a broadcast result back to `shape` (the single unbroadcast routine)."""
    if g.shape == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape) if d == 1 and g.shape[i + lead] != 1)
    out = reduce_keepdims(xp, "sum", g, axes) if axes else g
    return out.reshape(shape)


def _sum_to_like_shape(a, data, like):
    return [data, like], [like]


def _sum_to_like_type(a, data, like):
    t = data or like
    return [t, like], [t]


@register("_sum_to_like", inputs=("data", "like"), infer_shape=_sum_to_like_shape,
          infer_type=_sum_to_like_type, hint="_sum_to_like",
          doc="Sum `data` over broadcast axes so it has the shape of `like` "
              "(hybridgraph's unbroadcast, used by broadcast gradients; not an MXNet operator).")
def _sum_to_like(xp, a, data, like):
    return (sum_to_shape(xp, data, like.shape),)


@_sum_to_like.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.broadcast_like(ograds[0], inputs[0]), None]


# ---------------------------------------------------------------------------
# axis bookkeeping shared by the reductions (MXNet's ReduceAxesShapeImpl)


def reduce_axes(op: str, shape: Sequence[int], axis: tuple | None, exclude: bool) -> tuple[int, ...]:
    """The sorted, non-negative axes a reduction runs over.

    `axis=None` or `()` reduces everything (even with `exclude`, as MXNet);
    otherwise negative axes count from the end, duplicates and out-of-range
    axes are errors, and `exclude` reduces the axes *not* listed.
    """
    ndim = len(shape)
    if not axis:
        return tuple(range(ndim))
    axes = sorted(ax + ndim if ax < 0 else ax for ax in axis)
    for lo, hi in zip(axes, axes[1:]):
        if lo == hi:
            raise ShapeError(f"operator {op}: reduction axes have duplicates {tuple(axis)}")
    if axes[0] < 0 or axes[-1] >= ndim:
        raise ShapeError(f"operator {op}: reduction axis {tuple(axis)} exceeds the input "
                         f"dimensions {tuple(shape)}")
    if exclude:
        return tuple(i for i in range(ndim) if i not in axes)
    return tuple(axes)


def keepdims_shape(shape: Sequence[int], axes: Sequence[int]) -> tuple:
    """`shape` with the reduced axes set to 1."""
    return tuple(1 if i in axes else d for i, d in enumerate(shape))


def reduced_shape(shape: Sequence[int], axes: Sequence[int], keepdims: bool) -> tuple:
    """The output shape of a reduction over `axes` (at least `(1,)` without keepdims)."""
    if keepdims:
        return keepdims_shape(shape, axes)
    return tuple(d for i, d in enumerate(shape) if i not in axes) or (1,)


def _reduce_shape_rule(op: str, exclude_attr: bool = True):
    def infer_shape(a, data):
        if data is None:
            return None
        axes = reduce_axes(op, data, a.axis, a.exclude if exclude_attr else False)
        return [data], [reduced_shape(data, axes, a.keepdims)]
    return infer_shape


def _accumulator(x) -> np.dtype:
    """float16 accumulates in float32; everything else in its own dtype."""
    return np.dtype(np.float32) if x.dtype == np.float16 else x.dtype


def _need_nonempty(op: str, x, axes) -> None:
    if x.size == 0 or any(x.shape[i] == 0 for i in axes):
        raise ShapeError(f"operator {op}: cannot reduce an empty axis (input shape {x.shape})")


# ---------------------------------------------------------------------------
# reduction kernels: (xp, x, axes) -> keepdims-shaped result in x's dtype


def _k_sum(xp, x, axes):
    return reduce_keepdims(xp, "sum", x, axes, _accumulator(x)).astype(x.dtype, copy=False)


def _k_mean(xp, x, axes):
    n = math.prod(x.shape[i] for i in axes)
    if x.dtype.kind in "iub":
        # MXNet divides the integer sum by the count with C (truncating) division
        _need_nonempty("mean", x, axes)
        s = xp.sum(x, axis=axes, keepdims=True, dtype=x.dtype)
        q = s // x.dtype.type(n)
        return q + ((s % x.dtype.type(n) != 0) & (s < 0)).astype(x.dtype)
    if n == 0:  # the mean of nothing is NaN (numpy would also warn)
        return xp.full(keepdims_shape(x.shape, axes), np.nan, dtype=x.dtype)
    return mean_keepdims(xp, x, axes, n, _accumulator(x)).astype(x.dtype, copy=False)


def _k_prod(xp, x, axes):
    return reduce_keepdims(xp, "prod", x, axes, _accumulator(x)).astype(x.dtype, copy=False)


def _k_max(xp, x, axes):
    _need_nonempty("max", x, axes)
    return reduce_keepdims(xp, "max", x, axes)


def _k_min(xp, x, axes):
    _need_nonempty("min", x, axes)
    return reduce_keepdims(xp, "min", x, axes)


def _k_nansum(xp, x, axes):
    if x.dtype.kind != "f":
        return _k_sum(xp, x, axes)
    return xp.nansum(x, axis=axes, keepdims=True, dtype=_accumulator(x)).astype(x.dtype, copy=False)


def _k_nanprod(xp, x, axes):
    if x.dtype.kind != "f":
        return _k_prod(xp, x, axes)
    return xp.nanprod(x, axis=axes, keepdims=True, dtype=_accumulator(x)).astype(x.dtype, copy=False)


# ---------------------------------------------------------------------------
# reduction gradients (registry ops only)


def _reduce_kw(a: Attrs, exclude: bool | None = None) -> dict:
    """The axis attributes of a reduction, to hand to `_unreduce` / another reduction."""
    return {"axis": a.axis, "keepdims": a.keepdims,
            "exclude": a.get("exclude", False) if exclude is None else exclude}


def _unreduce(F, a: Attrs, y, x, **extra):
    """A reduced-shape value `y` broadcast back to the shape of `x`."""
    return F._unreduce(y, x, **_reduce_kw(a), **extra)


def _g_sum(F, a, x, y, g):
    return _unreduce(F, a, g, x)


def _g_mean(F, a, x, y, g):
    return _unreduce(F, a, g, x, normalize=True)


def _g_extremum(F, a, x, y, g):
    # MXNet: every element equal to the extremum receives the full head gradient
    return F.elemwise_mul(_unreduce(F, a, g, x), F._equal(x, _unreduce(F, a, y, x)))


def _prod_others(F, a, x, g):
    """g times the product of the *other* reduced elements, exact when x has zeros.

    With z = (x == 0), p = prod(x + z) (product of the non-zeros) and c = sum(z):
    an element's cofactor is p / x when c == 0, p at the single zero when c == 1,
    and 0 otherwise (MXNet's out / x gives NaN at zeros).
    """
    z = F._equal_scalar(x, scalar=0.0)
    nonzero = F.elemwise_add(x, z)
    kw = _reduce_kw(a)
    # broadcast_mul: a 0-d head gradient of np.prod meets the legacy (1,) product
    p = _unreduce(F, a, F.broadcast_mul(g, F.prod(nonzero, **kw)), x)
    c = _unreduce(F, a, F.sum(z, **kw), x)
    pick = F.elemwise_add(F.elemwise_mul(F._equal_scalar(c, scalar=0.0), F._rminus_scalar(z, scalar=1.0)),
                          F.elemwise_mul(F._equal_scalar(c, scalar=1.0), z))
    return F.elemwise_mul(F.elemwise_div(p, nonzero), pick)


def _g_prod(F, a, x, y, g):
    return _prod_others(F, a, x, g)


def _g_nansum(F, a, x, y, g):
    return F.elemwise_mul(_unreduce(F, a, g, x), F._equal(x, x))


def _g_nanprod(F, a, x, y, g):
    # NaNs count as 1 in the product and receive no gradient
    return F.elemwise_mul(_prod_others(F, a, F._fill_nan(x, value=1.0), g), F._equal(x, x))


_AXES_DOC = ("The axis or axes along which to perform the reduction. The default, axis=(), "
             "reduces over all elements into shape (1,). Negative values index from the end.")
_KEEPDIMS_DOC = "If True, the reduced axes are left in the result as dimensions of size one."


def _reduce_attrs() -> dict:
    return {"axis": Attr("shape", None, _AXES_DOC),
            "keepdims": Attr("bool", False, _KEEPDIMS_DOC),
            "exclude": Attr("bool", False, "Whether to reduce over the axes NOT in axis instead.")}


# name -> (kernel, gradient(F, a, x, y, g), aliases, what)
REDUCTIONS = {
    "sum": (_k_sum, _g_sum, ("sum_axis",), "the sum"),
    "mean": (_k_mean, _g_mean, (), "the mean"),
    "prod": (_k_prod, _g_prod, (), "the product"),
    "max": (_k_max, _g_extremum, ("max_axis",), "the maximum"),
    "min": (_k_min, _g_extremum, ("min_axis",), "the minimum"),
    "nansum": (_k_nansum, _g_nansum, (), "the sum, treating NaN as zero,"),
    "nanprod": (_k_nanprod, _g_nanprod, (), "the product, treating NaN as one,"),
}


def _reduce_forward(name: str, kernel):
    def forward(xp, a, x):
        axes = reduce_axes(name, x.shape, a.axis, a.exclude)
        r = kernel(xp, x, axes)
        return (r.reshape(reduced_shape(x.shape, axes, a.keepdims)),)
    return forward


def _reduce_gradient(rule):
    def gradient(F, a, inputs, outputs, ograds):
        return [rule(F, a, inputs[0], outputs[0], ograds[0])]
    return gradient


for _name, (_kernel, _rule, _aliases, _what) in REDUCTIONS.items():
    add_op(OpDef(_name, monitor_inputs="input", aliases=_aliases, inputs=("data",), attrs=_reduce_attrs(),
                 forward=_reduce_forward(_name, _kernel), infer_shape=_reduce_shape_rule(_name),
                 gradient=_reduce_gradient(_rule),
                 doc=f"Computes {_what} of array elements over given axes."))


# -- _unreduce: the backward broadcast of every reduction ---------------------


def _unreduce_shape(a, data, like):
    if like is None:
        return None
    axes = reduce_axes("_unreduce", like, a.axis, a.exclude)
    reduced = reduced_shape(like, axes, a.keepdims)
    if data is not None and tuple(data) == () and reduced == (1,):
        reduced = ()   # a numpy-front-end full reduction is 0-d (np.sum's head gradient)
    return [reduced, like], [like]


def _unreduce_type(a, data, like):
    return [data, like], [like]


@register("_unreduce", inputs=("data", "like"), infer_shape=_unreduce_shape, infer_type=_unreduce_type,
          attrs={**_reduce_attrs(),
                 "normalize": Attr("bool", False, "Divide by the number of reduced elements (mean).")},
          hint="_unreduce")
def _unreduce_op(xp, a, data, like):
    """Broadcast a reduction's result (or head gradient) `data` back to the shape and dtype
    of `like`, the reduction's input; the attributes are the reduction's. (hybridgraph helper.)"""
    axes = reduce_axes("_unreduce", like.shape, a.axis, a.exclude)
    kshape = keepdims_shape(like.shape, axes)
    if data.size != math.prod(kshape):
        raise ShapeError(f"operator _unreduce: input 'data' of shape {data.shape} is not the reduction "
                         f"of 'like' {like.shape} over axes {axes}")
    r = data.reshape(kshape)
    if a.normalize:
        n = math.prod(like.shape[i] for i in axes)
        r = r / r.dtype.type(max(n, 1)) if r.dtype.kind == "f" else r // max(n, 1)
    return (broadcast_copy(xp, r.astype(like.dtype, copy=False), like.shape, like.dtype),)


@_unreduce_op.def_gradient
def _(F, a, inputs, outputs, ograds):
    kw = _reduce_kw(a)
    back = F.mean(ograds[0], **kw) if a.normalize else F.sum(ograds[0], **kw)
    return [back, None]


@register("_fill_nan", attrs={"value": Attr("float", 0.0, "The value that replaces NaN.")},
          infer_shape=same_shape, elementwise=True, hint="_fill_nan")
def _fill_nan(xp, a, x):
    """Replace NaN elements by `value` (hybridgraph helper for nanprod's gradient)."""
    if x.dtype.kind != "f":
        return (x.copy(),)
    return (xp.where(xp.isnan(x), x.dtype.type(a.value), x),)


@_fill_nan.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.elemwise_mul(ograds[0], F._equal(inputs[0], inputs[0]))]


# ---------------------------------------------------------------------------
# norm


def _norm_type(a, dtype):
    if dtype is None:
        return None
    return [dtype], [np.dtype(a.out_dtype) if a.out_dtype else dtype]


def _norm_compute_dtype(x) -> np.dtype:
    return np.dtype(np.float32) if x.dtype == np.float16 else (
        x.dtype if x.dtype.kind == "f" else np.dtype(np.float64))


@register("norm", monitor_inputs="input", attrs={
    "ord": Attr("int", 2, "Order of the norm; ord=1 and ord=2 are supported.", choices=(1, 2)),
    "axis": Attr("shape", None, _AXES_DOC + " Two axes give the (Frobenius / entrywise) matrix norm."),
    "out_dtype": Attr("dtype", None, "The data type of the output (default: the input's).",
                      choices=("float16", "float32", "float64", "int32", "int64", "int8")),
    "keepdims": Attr("bool", False, _KEEPDIMS_DOC)},
    infer_shape=_reduce_shape_rule("norm", exclude_attr=False), infer_type=_norm_type)
def norm(xp, a, x):
    """The L1 (`ord=1`) or L2 (`ord=2`) norm of the elements over `axis`."""
    axes = reduce_axes("norm", x.shape, a.axis, False)
    xf = xp.abs(x.astype(_norm_compute_dtype(x), copy=False))
    if a.ord == 1:
        r = xp.sum(xf, axis=axes, keepdims=True)
    else:
        # scaled like BLAS nrm2 so squares of large values do not overflow
        m = xp.max(xf, axis=axes, keepdims=True) if xf.size else xp.zeros(keepdims_shape(x.shape, axes), xf.dtype)
        scale = xp.where(m == 0, xf.dtype.type(1), m)
        r = m * xp.sqrt(xp.sum(xp.square(xf / scale), axis=axes, keepdims=True))
    out = r.astype(a.out_dtype or x.dtype)
    return (out.reshape(reduced_shape(x.shape, axes, a.keepdims)),)


@norm.def_gradient
def _(F, a, inputs, outputs, ograds):
    x, y, g = inputs[0], outputs[0], ograds[0]
    kw = {"axis": a.axis, "keepdims": a.keepdims}
    if a.ord == 1:
        return [F.elemwise_mul(F._unreduce(g, x, **kw), F.sign(x))]
    # x / ||x||, with 0 (a subgradient) where the norm is 0 (MXNet gives NaN there)
    safe = F.elemwise_add(y, F._equal_scalar(y, scalar=0.0))
    return [F.elemwise_mul(F._unreduce(F.elemwise_div(g, safe), x, **kw), x)]


# ---------------------------------------------------------------------------
# argmax / argmin / argmax_channel


def _check_axis(op: str, axis: int, ndim: int) -> int:
    if not -ndim <= axis < ndim:
        raise ShapeError(f"operator {op}: axis {axis} exceeds the input dimension of {ndim}")
    return axis % ndim


def _arg_shape(op: str):
    def infer_shape(a, data):
        if data is None:
            return None
        if a.axis is None or len(data) == 1:
            out = (1,) * len(data) if a.keepdims else (1,)
            if a.axis is not None:
                _check_axis(op, a.axis, len(data))
            return [data], [out]
        ax = _check_axis(op, a.axis, len(data))
        return [data], [reduced_shape(data, (ax,), a.keepdims)]
    return infer_shape


def _arg_forward(op: str, fn: str):
    def forward(xp, a, x):
        if x.size == 0:
            raise ShapeError(f"operator {op}: cannot take {fn} of an empty array (shape {x.shape})")
        out_shape = _arg_shape(op)(a, x.shape)[1][0]
        if a.axis is None:
            r = getattr(xp, fn)(x.reshape(-1))
        else:
            r = getattr(xp, fn)(x, axis=_check_axis(op, a.axis, x.ndim))
        return (xp.asarray(r).astype(x.dtype).reshape(out_shape),)
    return forward


_ARG_ATTRS = {"axis": Attr("int", None, "The axis along which to reduce; None flattens the input."),
              "keepdims": Attr("bool", False, "If True, the reduced axis is left as a dimension of size one.")}

for _name, _fn in (("argmax", "argmax"), ("argmin", "argmin")):
    add_op(OpDef(_name, monitor_inputs="input", attrs=dict(_ARG_ATTRS), forward=_arg_forward(_name, _fn),
                 infer_shape=_arg_shape(_name), gradient=ZERO_GRAD,
                 doc=f"Indices of the {_name[3:]}imum values along an axis, in the input's dtype "
                     "(the first one on ties; NaN counts as the extremum)."))


def _argmax_channel_shape(a, data):
    if data is None:
        return None
    _check_axis("argmax_channel", 1, len(data))
    return [data], [reduced_shape(data, (1,), False)]


@register("argmax_channel", monitor_inputs="input", infer_shape=_argmax_channel_shape)
def argmax_channel(xp, a, x):
    """Indices of the maxima along axis 1 (the channel axis), in the input's dtype."""
    _check_axis("argmax_channel", 1, x.ndim)
    if x.shape[1] == 0:
        raise ShapeError(f"operator argmax_channel: cannot take argmax over an empty axis (shape {x.shape})")
    return (xp.argmax(x, axis=1).astype(x.dtype).reshape(reduced_shape(x.shape, (1,), False)),)
