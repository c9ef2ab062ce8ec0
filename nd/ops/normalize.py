"""Normalization without learned scale or shift: L2Normalization, LRN and
moments.

As in norm.py, each operator returns its statistics as (hidden) extra outputs
and a hidden `_backward_<Op>` operator computes the input gradient from them.
Statistics of float16 data are computed in float32 (MXNet's AccReal).
"""
from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import AttrError, ShapeError
from ..registry import merge_shape, register
from .norm import _acc_dtype, _check_float, _f32, _float_types, _grad_types, _mean_center

Shape = tuple


# ---------------------------------------------------------------------------
# L2Normalization

_L2_ATTRS = {
    "eps": Attr("float", 1e-10, "A small constant for numerical stability."),
    "mode": Attr("str", "instance", "instance: one norm per sample; channel: one norm across "
                                    "channels at each position; spatial: one norm per channel.",
                 choices=("channel", "instance", "spatial")),
}


def _l2_axes(a: Attrs, ndim: int) -> tuple:
    """The axes the L2 norm sums over, per mode."""
    if a.mode != "instance" and ndim < 3:
        raise ShapeError(f"operator L2Normalization: mode={a.mode!r} needs data with at least "
                         f"3 dimensions, got {ndim}")
    if a.mode == "instance":
        return tuple(range(1, ndim))
    if a.mode == "channel":
        return (1,)
    return tuple(range(2, ndim))


def _l2_norm_shape(a: Attrs, data: Shape) -> Shape:
    """Shape of the hidden norm output: (N,), data with 1 at axis 1, or (N, C)."""
    _l2_axes(a, len(data))
    if a.mode == "instance":
        return (data[0],)
    if a.mode == "channel":
        return (data[0], 1) + tuple(data[2:])
    return tuple(data[:2])


def _l2_shape(a: Attrs, data):
    if data is None:
        return None
    if len(data) < 1:
        raise ShapeError("operator L2Normalization: input 'data' must have at least 1 dimension")
    return [data], [data, _l2_norm_shape(a, data)]


@register("L2Normalization", inputs=("data",), outputs=("output", "norm"), num_visible_outputs=1,
          attrs=_L2_ATTRS, infer_shape=_l2_shape,
          infer_type=_float_types("L2Normalization", ("data",), 2))
def l2_normalization(xp, a: Attrs, data):
    """Divide data by its L2 norm sqrt(sum(data**2) + eps), taken per sample
    (instance), across channels at each position (channel) or per channel over
    the spatial positions (spatial). The hidden output is the norm."""
    _check_float("L2Normalization", "data", data.dtype)
    acc = _acc_dtype(data.dtype)
    axes = _l2_axes(a, data.ndim)
    x = data.astype(acc, copy=False)
    norm = xp.sqrt((x * x).sum(axis=axes, keepdims=True) + acc.type(_f32(a.eps)))
    out = (x / norm).astype(data.dtype, copy=False)
    return out, norm.reshape(_l2_norm_shape(a, data.shape)).astype(data.dtype, copy=False)


@l2_normalization.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_L2Normalization(ograds[0], outputs[0], outputs[1], **a.given)]


def _l2_backward_shape(a: Attrs, ograd, output, norm):
    data = merge_shape(ograd, output)
    if data is None:
        return None
    return [data, data, _l2_norm_shape(a, data)], [data]


@register("_backward_L2Normalization", inputs=("ograd", "output", "norm"), outputs=("data_grad",),
          attrs=_L2_ATTRS, infer_shape=_l2_backward_shape, infer_type=_grad_types(1, (1,)))
def _backward_l2_normalization(xp, a: Attrs, ograd, output, norm):
    """d(data) = (g - y * sum(g * y)) / norm, sums over the normalized axes."""
    acc = _acc_dtype(output.dtype)
    axes = _l2_axes(a, output.ndim)
    keep = tuple(1 if i in axes else d for i, d in enumerate(output.shape))
    g, y = ograd.astype(acc, copy=False), output.astype(acc, copy=False)
    dx = (g - y * (g * y).sum(axis=axes, keepdims=True)) / norm.astype(acc, copy=False).reshape(keep)
    return (dx.astype(output.dtype, copy=False),)


# ---------------------------------------------------------------------------
# LRN

_LRN_ATTRS = {
    "alpha": Attr("float", 1e-4, "The variance scaling parameter alpha in the LRN expression."),
    "beta": Attr("float", 0.75, "The power parameter beta in the LRN expression."),
    "knorm": Attr("float", 2.0, "The parameter k in the LRN expression."),
    "nsize": Attr("int", doc="Normalization window width in elements (odd)."),
}


def _lrn_check(a: Attrs, ndim: int) -> None:
    if a.nsize < 1 or a.nsize % 2 == 0:
        raise AttrError(f"operator LRN: attribute 'nsize' must be a positive odd number "
                        f"(LRN only supports odd window widths), got {a.nsize}")
    if ndim < 2:
        raise ShapeError(f"operator LRN: input 'data' needs a channel axis (at least 2 dimensions), "
                         f"got {ndim}")


def _lrn_shape(a: Attrs, data):
    if data is None:
        return None
    _lrn_check(a, len(data))
    return [data], [data, data]


def _channel_window_sum(xp, x, nsize: int):
    """Sum of x over the window [c - nsize//2, c + nsize//2] of channels (axis 1),
    zero outside; one vector op per window offset."""
    half = nsize // 2
    c = x.shape[1]
    out = x.copy()
    for k in range(1, min(half, c - 1) + 1):
        out[:, k:] += x[:, :c - k]
        out[:, :c - k] += x[:, k:]
    return out


@register("LRN", inputs=("data",), outputs=("output", "tmp_norm"), num_visible_outputs=1,
          attrs=_LRN_ATTRS, infer_shape=_lrn_shape, infer_type=_float_types("LRN", ("data",), 2))
def lrn(xp, a: Attrs, data):
    """Local response normalization across channels (axis 1):
    out = data * (knorm + alpha / nsize * sum_window(data**2)) ** -beta; the
    hidden output tmp_norm is the bracketed term.

    MXNet 1.9.1 runs only float32 4-d data; any float dtype and ndim >= 2 work here."""
    _check_float("LRN", "data", data.dtype)
    _lrn_check(a, data.ndim)
    acc = _acc_dtype(data.dtype)
    x = data.astype(acc, copy=False)
    norm = _channel_window_sum(xp, x * x, a.nsize) * acc.type(_f32(a.alpha) / a.nsize) + acc.type(_f32(a.knorm))
    out = x * norm ** acc.type(-_f32(a.beta))
    return out.astype(data.dtype, copy=False), norm.astype(data.dtype, copy=False)


@lrn.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_LRN(ograds[0], inputs[0], outputs[1], **a.given)]


@register("_backward_LRN", inputs=("ograd", "data", "tmp_norm"), outputs=("data_grad",),
          attrs=_LRN_ATTRS, infer_shape=lambda a, *s: _same_as_data(s, 3),
          infer_type=_grad_types(1, (1,)))
def _backward_lrn(xp, a: Attrs, ograd, data, tmp_norm):
    """d(data) = g * n**-beta - 2 * beta * alpha / nsize * data * sum_window(g * data * n**(-beta-1))."""
    acc = _acc_dtype(data.dtype)
    g, x, norm = (v.astype(acc, copy=False) for v in (ograd, data, tmp_norm))
    scaled = norm ** acc.type(-_f32(a.beta))
    inner = _channel_window_sum(xp, g * x * scaled / norm, a.nsize)
    dx = g * scaled - acc.type(2.0 * _f32(a.beta) * _f32(a.alpha) / a.nsize) * x * inner
    return (dx.astype(data.dtype, copy=False),)


def _same_as_data(shapes: Sequence[Shape | None], n: int):
    """Shape rule: n inputs and the single output share one shape."""
    s = None
    for x in shapes:
        s = merge_shape(s, x)
    return None if s is None else ([s] * n, [s])


# ---------------------------------------------------------------------------
# moments

_MOMENTS_ATTRS = {
    "axes": Attr("shape", None, "Axes along which to compute mean and variance (required "
                                "in practice: empty axes are rejected, as in MXNet)."),
    "keepdims": Attr("bool", False, "Keep the reduced axes as size-1 dimensions."),
}


def _moments_axes(a: Attrs, ndim: int) -> tuple:
    """The reduction axes as sorted non-negative indices, validated like MXNet."""
    if not a.axes:
        raise AttrError("operator moments: empty axes are not supported; to compute global "
                        "moments pass every axis in 'axes'")
    axes = []
    for ax in a.axes:
        if ax is None or not -ndim <= ax < ndim:
            raise ShapeError(f"operator moments: axis {ax} is out of range for data with {ndim} "
                             f"dimension(s)")
        axes.append(ax + ndim if ax < 0 else ax)
    if len(set(axes)) != len(axes):
        raise ShapeError(f"operator moments: reduction axes have duplicates {list(a.axes)}")
    return tuple(sorted(axes))


def _moments_out_shape(a: Attrs, data: Shape) -> Shape:
    axes = _moments_axes(a, len(data))
    if a.keepdims:
        return tuple(1 if i in axes else d for i, d in enumerate(data))
    return tuple(d for i, d in enumerate(data) if i not in axes)


def _moments_shape(a: Attrs, data):
    if data is None:
        return None
    out = _moments_out_shape(a, data)
    return [data], [out, out]


def _moments_type(a: Attrs, data):
    return None if data is None else ([data], [data, data])


def _int_mean(xp, total, count: int):
    """Integer division truncating toward zero, as C++ integer arithmetic does."""
    return xp.sign(total) * (xp.abs(total) // count)


@register("moments", inputs=("data",), outputs=("output0", "output1"), attrs=_MOMENTS_ATTRS,
          infer_shape=_moments_shape, infer_type=_moments_type)
def moments(xp, a: Attrs, data):
    """Mean and (biased) variance of data over `axes`. Integer data gives integer
    results with C-style truncating division, as in MXNet."""
    axes = _moments_axes(a, data.ndim)
    count = 1
    for ax in axes:
        count *= data.shape[ax]
    if data.dtype.kind in "iub":
        wide = data.astype(np.int64)
        mean = _int_mean(xp, wide.sum(axis=axes, keepdims=True), count)
        dev = wide - mean
        var = _int_mean(xp, (dev * dev).sum(axis=axes, keepdims=True), count)
    else:
        mean, _, var = _mean_center(xp, data, axes, _acc_dtype(data.dtype))
    shape = _moments_out_shape(a, data.shape)
    return (mean.reshape(shape).astype(data.dtype, copy=False),
            var.reshape(shape).astype(data.dtype, copy=False))


@moments.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F._backward_moments(ograds[0], ograds[1], inputs[0], outputs[0], **a.given)]


def _moments_backward_shape(a: Attrs, gmean, gvar, data, mean):
    if data is None:
        return None
    out = _moments_out_shape(a, data)
    return [out, out, data, out], [data]


@register("_backward_moments", inputs=("mean_grad", "var_grad", "data", "mean"),
          outputs=("data_grad",), attrs=_MOMENTS_ATTRS, infer_shape=_moments_backward_shape,
          infer_type=_grad_types(1, (2,)))
def _backward_moments(xp, a: Attrs, mean_grad, var_grad, data, mean):  # noqa: PLR0917 - one parameter per input
    """d(data) = mean_grad / N + var_grad * 2 * (data - mean) / N, N = reduced size."""
    axes = _moments_axes(a, data.ndim)
    keep = tuple(1 if i in axes else d for i, d in enumerate(data.shape))
    count = int(np.prod([data.shape[ax] for ax in axes]))
    acc = _acc_dtype(data.dtype) if data.dtype.kind == "f" else np.dtype(np.float64)
    x = data.astype(acc, copy=False)
    m = mean.astype(acc, copy=False).reshape(keep)
    dx = (mean_grad.astype(acc, copy=False).reshape(keep)
          + var_grad.astype(acc, copy=False).reshape(keep) * 2 * (x - m)) / count
    return (dx.astype(data.dtype, copy=False),)
