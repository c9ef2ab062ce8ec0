"""Reductions, ordering and broadcasting operators, and the unbroadcast helper.

* reductions over axes (`sum`, `mean`, `prod`, `max`, `min`, `nansum`, `nanprod`)
  with MXNet's `axis` / `keepdims` / `exclude`, plus `norm`;
* index reductions (`argmax`, `argmin`, `argmax_channel`);
* ordering (`topk`, `sort`, `argsort`);
* broadcasting (`broadcast_to`, `broadcast_like`, `broadcast_axis`) and `add_n`;
* hidden helpers the gradient rules use: `_sum_to_like` (unbroadcast),
  `_unreduce` (a reduction's head gradient broadcast back to the input),
  `_fill_nan`, and `_ordering_gather` / `_ordering_scatter` (sort/topk).

Shapes follow MXNet's legacy NDArray: a reduction over every axis without
`keepdims` gives shape `(1,)`, never a 0-d array.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import AttrError, ShapeError
from ..registry import ZERO_GRAD, OpDef, add_op, register, same_shape

# ---------------------------------------------------------------------------
# unbroadcast (used by every broadcasting gradient)


def sum_to_shape(xp, g, shape: tuple):
    """Sum a broadcast result back to `shape` (the single unbroadcast routine)."""
    if g.shape == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape) if d == 1 and g.shape[i + lead] != 1)
    out = g.sum(axis=axes, keepdims=True) if axes else g
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
    return xp.sum(x, axis=axes, keepdims=True, dtype=_accumulator(x)).astype(x.dtype, copy=False)


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
    return xp.mean(x, axis=axes, keepdims=True, dtype=_accumulator(x)).astype(x.dtype, copy=False)


def _k_prod(xp, x, axes):
    return xp.prod(x, axis=axes, keepdims=True, dtype=_accumulator(x)).astype(x.dtype, copy=False)


def _k_max(xp, x, axes):
    _need_nonempty("max", x, axes)
    return xp.max(x, axis=axes, keepdims=True)


def _k_min(xp, x, axes):
    _need_nonempty("min", x, axes)
    return xp.min(x, axis=axes, keepdims=True)


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
    p = _unreduce(F, a, F.elemwise_mul(g, F.prod(nonzero, **kw)), x)
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
    add_op(OpDef(_name, aliases=_aliases, inputs=("data",), attrs=_reduce_attrs(),
                 forward=_reduce_forward(_name, _kernel), infer_shape=_reduce_shape_rule(_name),
                 gradient=_reduce_gradient(_rule),
                 doc=f"Computes {_what} of array elements over given axes."))


# -- _unreduce: the backward broadcast of every reduction ---------------------


def _unreduce_shape(a, data, like):
    if like is None:
        return None
    axes = reduce_axes("_unreduce", like, a.axis, a.exclude)
    return [reduced_shape(like, axes, a.keepdims), like], [like]


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
    return (xp.broadcast_to(r.astype(like.dtype, copy=False), like.shape).copy(),)


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


@register("norm", attrs={
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
    add_op(OpDef(_name, attrs=dict(_ARG_ATTRS), forward=_arg_forward(_name, _fn),
                 infer_shape=_arg_shape(_name), gradient=ZERO_GRAD,
                 doc=f"Indices of the {_name[3:]}imum values along an axis, in the input's dtype "
                     "(the first one on ties; NaN counts as the extremum)."))


def _argmax_channel_shape(a, data):
    if data is None:
        return None
    _check_axis("argmax_channel", 1, len(data))
    return [data], [reduced_shape(data, (1,), False)]


@register("argmax_channel", infer_shape=_argmax_channel_shape)
def argmax_channel(xp, a, x):
    """Indices of the maxima along axis 1 (the channel axis), in the input's dtype."""
    _check_axis("argmax_channel", 1, x.ndim)
    if x.shape[1] == 0:
        raise ShapeError(f"operator argmax_channel: cannot take argmax over an empty axis (shape {x.shape})")
    return (xp.argmax(x, axis=1).astype(x.dtype).reshape(reduced_shape(x.shape, (1,), False)),)


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


@register("topk", inputs=("data",), outputs=_topk_names,
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


@register("sort", outputs=("output0", "output1"), num_visible_outputs=1,
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


@register("argsort",
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


# ---------------------------------------------------------------------------
# broadcasting


def _broadcast_check(op: str, ishape: Sequence[int], oshape: Sequence[int]) -> None:
    for i, o in zip(ishape, oshape):
        if i not in (o, 1) and 0 not in (i, o):
            raise ShapeError(f"operator {op}: array cannot be broadcast from {tuple(ishape)} to {tuple(oshape)}")


def _broadcast_copy(xp, x, shape: tuple):
    """A contiguous (writable) broadcast of x to shape."""
    return xp.broadcast_to(x, shape).copy()


def _broadcast_to_shape(a, data):
    if data is None:
        return None
    if len(data) != len(a.shape):
        raise ShapeError(f"operator broadcast_to: operand of shape {tuple(data)} cannot be broadcast to "
                         f"{tuple(a.shape)} (the number of dimensions differs)")
    out = tuple(d if s == 0 else s for d, s in zip(data, a.shape))
    _broadcast_check("broadcast_to", data, out)
    return [data], [out]


@register("broadcast_to", attrs={"shape": Attr("shape", (), "The shape of the desired array; a 0 keeps "
                                               "the input's size on that axis.")},
          infer_shape=_broadcast_to_shape)
def broadcast_to(xp, a, x):
    """Broadcast the input to a new shape (axes of size 1 are repeated)."""
    return (_broadcast_copy(xp, x, _broadcast_to_shape(a, x.shape)[1][0]),)


@broadcast_to.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._sum_to_like(ograds[0], inputs[0])]


def _broadcast_axis_shape(a, data):
    if data is None:
        return None
    if len(a.axis) != len(a.size):
        raise AttrError(f"operator broadcast_axis: axis {tuple(a.axis)} and size {tuple(a.size)} "
                        "must have the same length")
    out = list(data)
    for ax, size in zip(a.axis, a.size):
        if not 0 <= ax < len(data):
            raise ShapeError(f"operator broadcast_axis: axis {ax} must be in range [0, {len(data)})")
        if data[ax] not in (1, 0):
            raise ShapeError(f"operator broadcast_axis: broadcasting axis {ax} must have size 1, "
                             f"input shape {tuple(data)}")
        out[ax] = size
    return [data], [tuple(out)]


@register("broadcast_axis", aliases=("broadcast_axes",),
          attrs={"axis": Attr("shape", (), "The axes to perform the broadcasting."),
                 "size": Attr("shape", (), "Target sizes of the broadcasting axes.")},
          infer_shape=_broadcast_axis_shape)
def broadcast_axis(xp, a, x):
    """Broadcast the input along the given axes of size 1 to the given sizes."""
    return (_broadcast_copy(xp, x, _broadcast_axis_shape(a, x.shape)[1][0]),)


@broadcast_axis.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._sum_to_like(ograds[0], inputs[0])]


def _broadcast_like_out(a, lhs: tuple, rhs: tuple) -> tuple:
    """MXNet's BroadcastLikeShape; additionally an lhs with fewer dimensions than rhs
    (no axes given) is padded with leading 1s, numpy-style (the unbroadcast gradient needs it)."""
    if a.lhs_axes is None or a.rhs_axes is None:
        if len(lhs) > len(rhs):
            raise ShapeError(f"operator broadcast_like: operand of shape {lhs} cannot be broadcast to {rhs}")
        padded = (1,) * (len(rhs) - len(lhs)) + lhs
        out = tuple(p if r == 0 else r for p, r in zip(padded, rhs))
        _broadcast_check("broadcast_like", padded, out)
        return out
    if len(a.lhs_axes) != len(a.rhs_axes):
        raise AttrError(f"operator broadcast_like: lhs_axes {a.lhs_axes} and rhs_axes {a.rhs_axes} "
                        "must have the same length")
    if not a.lhs_axes:
        raise AttrError("operator broadcast_like: empty lhs_axes / rhs_axes are not allowed")
    out = list(lhs)
    for la, ra in zip(a.lhs_axes, a.rhs_axes):
        if not -len(lhs) <= la < len(lhs):
            raise ShapeError(f"operator broadcast_like: invalid dimension {la} in lhs_axes for lhs {lhs}")
        if not -len(rhs) <= ra < len(rhs):
            raise ShapeError(f"operator broadcast_like: invalid dimension {ra} in rhs_axes for rhs {rhs}")
        if lhs[la] != 1:
            raise ShapeError(f"operator broadcast_like: lhs axis {la} has size {lhs[la]}, not 1, and "
                             f"cannot be broadcast to {rhs[ra]}")
        out[la % len(lhs)] = rhs[ra]
    return tuple(out)


def _broadcast_like_shape(a, lhs, rhs):
    if lhs is None or rhs is None:
        return None
    return [lhs, rhs], [_broadcast_like_out(a, tuple(lhs), tuple(rhs))]


def _broadcast_like_type(a, lhs, rhs):
    if lhs is None:
        return None
    return [lhs, rhs], [lhs]


@register("broadcast_like", inputs=("lhs", "rhs"),
          attrs={"lhs_axes": Attr("shape", None, "Axes of lhs to broadcast (default: all)."),
                 "rhs_axes": Attr("shape", None, "Axes of rhs whose sizes are copied (default: all).")},
          infer_shape=_broadcast_like_shape, infer_type=_broadcast_like_type)
def broadcast_like(xp, a, lhs, rhs):
    """Broadcast lhs to the shape of rhs (or only the given axes)."""
    shape = _broadcast_like_out(a, tuple(lhs.shape), tuple(rhs.shape))
    return (_broadcast_copy(xp, lhs.reshape((1,) * (len(shape) - lhs.ndim) + lhs.shape), shape),)


@broadcast_like.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._sum_to_like(ograds[0], inputs[0]), F.zeros_like(inputs[1])]


# ---------------------------------------------------------------------------
# add_n


def _add_n_inputs(a) -> tuple[str, ...]:
    n = a.num_args if a.num_args is not None else 0
    return tuple(f"arg{i}" for i in range(n))


def _add_n_type(a, *dtypes):
    t = next((d for d in dtypes if d is not None), None)
    if t is None:
        return None
    for i, d in enumerate(dtypes):
        if d is not None and d != t:
            raise AttrError(f"operator add_n: input arg{i} has dtype {d}, expected {t}")
    return [t] * len(dtypes), [t]


def _add_n_shape(a, *shapes):
    try:
        return same_shape(a, *shapes)
    except ShapeError as exc:
        raise ShapeError(f"operator add_n: inputs must share one shape: {exc}") from None


@register("add_n", aliases=("ElementWiseSum",), inputs=_add_n_inputs, key_var_num_args="num_args",
          attrs={"num_args": Attr("int", doc="Number of inputs to be summed.")},
          infer_shape=_add_n_shape, infer_type=_add_n_type)
def add_n(xp, a, *arrays: Any):
    """Adds all input arguments elementwise (inputs must share shape and dtype)."""
    if len(arrays) != a.num_args or a.num_args < 1:
        raise AttrError(f"operator add_n: num_args={a.num_args} but {len(arrays)} inputs were given "
                        "(at least one is needed)")
    _add_n_shape(a, *(x.shape for x in arrays))
    _add_n_type(a, *(x.dtype for x in arrays))
    out = arrays[0].copy()
    for x in arrays[1:]:
        out += x
    return (out,)


@add_n.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [ograds[0]] * len(inputs)
