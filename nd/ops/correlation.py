"""Correlation (MXNet 1.9.1, FlowNet's correlation layer): compares patches of data1 with
patches of data2 displaced within `max_displacement`, one output channel per displacement.

Both inputs are zero-padded by `pad_size`. Output pixel (i, j) reads the kernel_size x
kernel_size patch whose top-left corner is (i*stride1 + max_displacement, j*stride1 +
max_displacement) in padded data1, and the same patch shifted by ((c // width - r) * stride2,
(c % width - r) * stride2) in padded data2 for output channel c (r = max_displacement //
stride2, width = 2r + 1). The values are the mean over patch and channels of the products
(`is_multiply`) or of the absolute differences. Like MXNet's, the two hidden outputs hold
the padded inputs (batch, padded height, padded width, channel).
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr
from ..errors import DTypeError, ShapeError
from ..registry import register

_FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))

_CORR_ATTRS = {
    "kernel_size": Attr("int", 1, "kernel size for Correlation must be an odd number"),
    "max_displacement": Attr("int", 1, "Max displacement of Correlation "),
    "stride1": Attr("int", 1, "stride1 quantize data1 globally"),
    "stride2": Attr("int", 1, "stride2 quantize data2 within the neighborhood centered around data1"),
    "pad_size": Attr("int", 0, "pad for Correlation"),
    "is_multiply": Attr("bool", True, "operation type is either multiplication or subduction"),
}


def _geometry(a, shape):
    """(top_h, top_w, grid radius, grid width) of the output, checked as MXNet does."""
    if a.kernel_size < 1 or a.stride1 < 1 or a.stride2 < 1 or a.max_displacement < 0 or a.pad_size < 0:
        raise ShapeError(f"operator Correlation: kernel_size, stride1 and stride2 must be positive and "
                         f"max_displacement, pad_size non-negative, got kernel_size={a.kernel_size}, "
                         f"stride1={a.stride1}, stride2={a.stride2}, "
                         f"max_displacement={a.max_displacement}, pad_size={a.pad_size}")
    border = a.max_displacement + (a.kernel_size - 1) // 2
    top_h = math.ceil((shape[2] + 2 * a.pad_size - 2 * border) / a.stride1)
    top_w = math.ceil((shape[3] + 2 * a.pad_size - 2 * border) / a.stride1)
    if top_h < 1 or top_w < 1:
        raise ShapeError(f"operator Correlation: cannot be done with these settings: the neighborhood "
                         f"and kernel (kernel_size={a.kernel_size}, max_displacement="
                         f"{a.max_displacement}, pad_size={a.pad_size}) do not fit in data of shape "
                         f"{tuple(shape)}")
    radius = a.max_displacement // a.stride2
    return top_h, top_w, radius, 2 * radius + 1


def _corr_shape(a, s1, s2):
    if s1 is None and s2 is None:
        return None
    shape = tuple(s1 if s1 is not None else s2)
    for name, s in (("data1", s1), ("data2", s2)):
        if s is not None and len(s) != 4:
            raise ShapeError(f"operator Correlation: input {name!r} should be a 4D tensor, got {tuple(s)}")
    top_h, top_w, _, width = _geometry(a, shape)
    n, c, h, w = shape
    padded = (n, h + 2 * a.pad_size, w + 2 * a.pad_size, c)
    return [shape, shape], [(n, width * width, top_h, top_w), padded, padded]


def _corr_type(a, t1, t2):
    t = t1 if t1 is not None else t2
    if t is None:
        return None
    if t not in _FLOATS:
        raise DTypeError(f"operator Correlation: expected a floating-point dtype, got {t}")
    return [t, t], [t, t, t]


def _windows(a, top_h: int, top_w: int, radius: int, width: int):
    """For every output channel and kernel offset: (channel, data1 window, data2 window), the
    windows as (row slice, column slice) of the padded inputs."""
    md, s1 = a.max_displacement, a.stride1
    for ch in range(width * width):          # over displacements
        dy, dx = (ch // width - radius) * a.stride2, (ch % width - radius) * a.stride2
        for h in range(a.kernel_size):       # over kernel offsets
            for w in range(a.kernel_size):
                y1, x1 = md + h, md + w
                rows1 = slice(y1, y1 + (top_h - 1) * s1 + 1, s1)
                cols1 = slice(x1, x1 + (top_w - 1) * s1 + 1, s1)
                rows2 = slice(y1 + dy, y1 + dy + (top_h - 1) * s1 + 1, s1)
                cols2 = slice(x1 + dx, x1 + dx + (top_w - 1) * s1 + 1, s1)
                yield ch, (rows1, cols1), (rows2, cols2)


def _padded(xp, x, pad: int):
    return xp.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))


@register("Correlation", inputs=("data1", "data2"), outputs=("output", "tmp1", "tmp2"), num_visible_outputs=1,
          attrs=dict(_CORR_ATTRS), infer_shape=_corr_shape, infer_type=_corr_type)
def Correlation(xp, a, data1, data2):  # noqa: N802
    """Correlation of data1's patches with data2's displaced patches (see the module doc)."""
    _corr_shape(a, data1.shape, data2.shape)
    if a.kernel_size % 2 == 0:
        raise ShapeError(f"operator Correlation: kernel size should be an odd number, got {a.kernel_size}")
    top_h, top_w, radius, width = _geometry(a, data1.shape)
    t1, t2 = _padded(xp, data1, a.pad_size), _padded(xp, data2, a.pad_size)
    out = xp.zeros((data1.shape[0], width * width, top_h, top_w))
    for ch, (r1, c1), (r2, c2) in _windows(a, top_h, top_w, radius, width):
        p1, p2 = t1[:, :, r1, c1], t2[:, :, r2, c2]
        out[:, ch] += (p1 * p2 if a.is_multiply else xp.abs(p1 - p2)).sum(axis=1)
    out /= a.kernel_size * a.kernel_size * data1.shape[1]
    dt = data1.dtype
    return (out.astype(dt), xp.moveaxis(t1, 1, -1).astype(dt), xp.moveaxis(t2, 1, -1).astype(dt))


@Correlation.def_gradient
def _(F, a, inputs, outputs, ograds):
    grads = F._backward_Correlation(ograds[0], inputs[0], inputs[1], **a.given)
    return [grads[0], grads[1]]


@register("_backward_Correlation", inputs=("ograd", "data1", "data2"), outputs=("data1_grad", "data2_grad"),
          attrs=dict(_CORR_ATTRS),
          infer_shape=lambda a, g, s1, s2: None if s1 is None or s2 is None else ([g, s1, s2], [s1, s2]),
          infer_type=lambda a, g, t1, t2: None if t1 is None else ([t1, t1, t1], [t1, t1]))
def _backward_Correlation(xp, a, ograd, data1, data2):  # noqa: N802
    """Gradients of Correlation; the absolute difference's sign counts ties as positive for
    data1 (MXNet's rule)."""
    top_h, top_w, radius, width = _geometry(a, data1.shape)
    t1, t2 = _padded(xp, data1, a.pad_size), _padded(xp, data2, a.pad_size)
    g1, g2 = xp.zeros_like(t1), xp.zeros_like(t2)
    g = ograd.astype(np.float64) / (a.kernel_size * a.kernel_size * data1.shape[1])
    for ch, (r1, c1), (r2, c2) in _windows(a, top_h, top_w, radius, width):
        p1, p2, gc = t1[:, :, r1, c1], t2[:, :, r2, c2], g[:, ch][:, None]
        if a.is_multiply:
            g1[:, :, r1, c1] += gc * p2
            g2[:, :, r2, c2] += gc * p1
        else:
            sign = xp.where(p1 >= p2, 1.0, -1.0)
            g1[:, :, r1, c1] += gc * sign
            g2[:, :, r2, c2] -= gc * sign
    p, (h, w) = a.pad_size, data1.shape[2:]
    return (g1[:, :, p:p + h, p:p + w].astype(data1.dtype), g2[:, :, p:p + h, p:p + w].astype(data2.dtype))
