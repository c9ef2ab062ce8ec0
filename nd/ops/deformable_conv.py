"""DeformableConvolution (MXNet 1.9.1, src/operator/contrib/deformable_convolution*; Dai et al.,
"Deformable Convolutional Networks", 2017): a 2-D convolution whose kernel taps are moved by
learned, per-position fractional offsets. This module also holds the sampling shared with the
modulated version (nd/ops/modulated_deformable_conv.py).

`offset` (N, 2 * kh * kw * num_deformable_group, out_h, out_w) holds, per deformable group and
tap k = i * kw + j, the (dy, dx) added to the tap's position (oh * stride - pad + i * dilate,
ow * stride - pad + j * dilate); channels split evenly over the deformable groups. A tap
reads the input by bilinear interpolation under one of two border rules:

* "v1" (DeformableConvolution): zero unless 0 <= y < H and 0 <= x < W; at the last row /
  column it does not interpolate (and has no slope along that axis);
* "v2" (ModulatedDeformableConvolution, modulated_deformable_im2col.h): zero unless
  -1 < y < H and -1 < x < W; each of the four neighbours outside the image reads zero.

The sampled columns are then multiplied by the weight as in a grouped convolution
(num_group). The gradients are those of this function: data by scattering the column gradient
over the four neighbours, offsets by the interpolation's slope, weight and bias as a
convolution's. MXNet implements 2-D kernels and the NCHW layout only, and so does this.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import register, shape_known
from .indexing_ops import scatter_add

_FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
ATTRS = {
    "kernel": Attr("shape", doc="Convolution kernel size: (h, w) or (d, h, w)"),
    "stride": Attr("shape", (), "Convolution stride: (h, w) or (d, h, w). Defaults to 1 for each dimension."),
    "dilate": Attr("shape", (), "Convolution dilate: (h, w) or (d, h, w). Defaults to 1 for each dimension."),
    "pad": Attr("shape", (), "Zero pad for convolution: (h, w) or (d, h, w). Defaults to no padding."),
    "num_filter": Attr("int", doc="Convolution filter(channel) number"),
    "num_group": Attr("int", 1, "Number of group partitions."),
    "num_deformable_group": Attr("int", 1, "Number of deformable group partitions."),
    "workspace": Attr("int", 1024, "Maximum temperal workspace allowed for convolution (MB) (accepted and "
                                   "ignored)."),
    "no_bias": Attr("bool", False, "Whether to disable bias parameter."),
    "layout": Attr("str", None, "Set layout for input, output and weight. Empty for default layout: NCW for 1d, "
                                "NCHW for 2d and NCDHW for 3d.", choices=("NCW", "NCHW", "NCDHW")),
}
_OP = "_contrib_DeformableConvolution"


def _inputs(a) -> tuple:
    return ("data", "offset", "weight") if a.no_bias else ("data", "offset", "weight", "bias")


def _pair(op: str, name: str, value, default: int, low: int) -> tuple:
    if not value:
        return (default, default)
    value = tuple(int(v) for v in value)
    if len(value) != 2 or any(v < low for v in value):
        raise AttrError(f"operator {op}: {name} must be two entries >= {low} like the 2-D kernel, got {value}")
    return value


def geometry(a, op: str = _OP):
    """(kernel, stride, dilate, pad), validated for operator `op`."""
    kernel = tuple(int(k) for k in a.kernel)
    if len(kernel) != 2:
        raise NotImplementedError(f"operator {op}: a {len(kernel)}-d kernel {kernel} is not supported (MXNet "
                                  "1.9.1 implements 2-d deformable convolution only)")
    if a.layout not in (None, "NCHW"):
        raise NotImplementedError(f"operator {op}: layout {a.layout!r} is not supported with a 2-d kernel "
                                  "(MXNet 1.9.1 implements NCHW only); transpose the data to NCHW")
    if min(kernel) < 1 or a.num_filter < 1 or a.num_group < 1 or a.num_deformable_group < 1:
        raise AttrError(f"operator {op}: kernel, num_filter, num_group and num_deformable_group must be "
                        f"positive, got kernel={kernel}, num_filter={a.num_filter}, num_group={a.num_group}, "
                        f"num_deformable_group={a.num_deformable_group}")
    return (kernel, _pair(op, "stride", a.stride, 1, 1), _pair(op, "dilate", a.dilate, 1, 1),
            _pair(op, "pad", a.pad, 0, 0))


def conv_shapes(op: str, a, d, maps: dict, w, b=None):
    """Shapes of a deformable convolution: ([data, *maps, weight, (bias)], [out]), or None while
    data's shape is unknown. `maps` names each per-tap input (offset, mask) with its given shape
    and its channels per deformable group and tap (2 for offset, 1 for mask)."""
    if len(a.kernel) != 2 or a.layout not in (None, "NCHW"):
        return None                     # not implemented: the kernel says so (a rule's error is wrapped)
    (kh, kw), stride, dilate, pad = geometry(a, op)
    if d is None or not shape_known(d):
        return None
    if len(d) != 4:
        raise ShapeError(f"operator {op}: data should be a 4D tensor (N, C, H, W), got {tuple(d)}")
    n, c, h, wd = d
    if c % a.num_group or c % a.num_deformable_group or a.num_filter % a.num_group:
        raise ShapeError(f"operator {op}: data's {c} channels must divide by num_group ({a.num_group}) and "
                         f"num_deformable_group ({a.num_deformable_group}), and num_filter ({a.num_filter}) by "
                         f"num_group")
    oh = (h + 2 * pad[0] - (dilate[0] * (kh - 1) + 1)) // stride[0] + 1
    ow = (wd + 2 * pad[1] - (dilate[1] * (kw - 1) + 1)) // stride[1] + 1
    if oh < 1 or ow < 1:
        raise ShapeError(f"operator {op}: kernel size exceeds the padded input {tuple(d)}")
    ins = [tuple(d)]
    for name, (got, per_tap) in maps.items():
        want = (n, per_tap * kh * kw * a.num_deformable_group, oh, ow)
        if got is not None and not _fits(want, got):
            raise ShapeError(f"operator {op}: {name} must have shape {want} (N, {per_tap} * kh * kw * "
                             f"num_deformable_group, out_h, out_w), got {tuple(got)}")
        ins.append(want)
    wshape = (a.num_filter, c // a.num_group, kh, kw)
    if w is not None and not _fits(wshape, w):
        raise ShapeError(f"operator {op}: weight must have shape {wshape}, got {tuple(w)}")
    if b is not None and not _fits((a.num_filter,), b):
        raise ShapeError(f"operator {op}: bias must have shape ({a.num_filter},), got {tuple(b)}")
    ins += [wshape] + ([] if a.no_bias else [(a.num_filter,)])
    return ins, [(n, a.num_filter, oh, ow)]


def _shape(a, d, o, w, b=None):
    return conv_shapes(_OP, a, d, {"offset": (o, 2)}, w, b)


def _fits(want: tuple, got) -> bool:
    """Whether a partially known shape (0 = unknown dim) can be `want`."""
    return len(got) == len(want) and all(g in (0, w) for w, g in zip(want, got))


def conv_types(op: str, names: tuple, ts):
    """All inputs float and of data's dtype; the output too."""
    t = ts[0]
    if t is None:
        return None
    if t not in _FLOATS:
        raise DTypeError(f"operator {op}: expected a floating-point dtype, got {t}")
    for name, other in zip(names, ts):
        if other is not None and other != t:
            raise DTypeError(f"operator {op}: input {name!r} has dtype {other}, expected {t} like data")
    return [t] * len(ts), [t]


def _axis(xp, v, size: int, rule: str):
    """One axis of the bilinear sampling at coordinates v: (valid, low index, high index,
    low weight, high weight, d low weight / dv, d high weight / dv); indices clipped in range."""
    if rule == "v1":
        valid = (v >= 0) & (v < size)
        lo = xp.clip(xp.floor(v), 0, size - 1).astype(np.int64)
        free = lo < size - 1                     # interpolates along this axis (not at the border)
        frac = xp.where(free, v - lo, 0.0)
        slope = free.astype(np.float64)
        return valid, lo, xp.where(free, lo + 1, lo), 1 - frac, frac, -slope, slope
    valid = (v > -1) & (v < size)
    low = xp.floor(v)
    frac = v - low
    in_lo = ((low >= 0) & valid).astype(np.float64)           # a neighbour outside the image reads 0
    in_hi = ((low + 1 <= size - 1) & valid).astype(np.float64)
    lo = xp.clip(low, 0, size - 1).astype(np.int64)
    hi = xp.clip(low + 1, 0, size - 1).astype(np.int64)
    return valid, lo, hi, (1 - frac) * in_lo, frac * in_hi, -in_lo, in_hi


def sample_taps(xp, a, data, offset, rule: str, op: str = _OP):
    """The four neighbours of every tap, in the order (ll, lh, hl, hh), as
    [(flat index, weight, d weight / dy, d weight / dx)], each (N, G, K*P) over deformable
    groups G, taps K and output positions P; weights are zero where the tap reads nothing."""
    (kh, kw), stride, dilate, pad = geometry(a, op)
    n, _, h, w = data.shape
    g, (oh, ow) = a.num_deformable_group, offset.shape[2:]
    off = offset.astype(np.float64).reshape(n, g, kh * kw, 2, oh * ow)
    iy = (xp.arange(kh) * dilate[0])[:, None].repeat(kw, 1).reshape(-1)
    ix = (xp.arange(kw) * dilate[1])[None, :].repeat(kh, 0).reshape(-1)
    oy = (xp.arange(oh) * stride[0] - pad[0])[:, None].repeat(ow, 1).reshape(-1)
    ox = (xp.arange(ow) * stride[1] - pad[1])[None, :].repeat(oh, 0).reshape(-1)
    y = (iy[:, None] + oy[None, :])[None, None] + off[:, :, :, 0]          # (N, G, K, P)
    x = (ix[:, None] + ox[None, :])[None, None] + off[:, :, :, 1]
    vy, y0, y1, wy0, wy1, dy0, dy1 = _axis(xp, y, h, rule)
    vx, x0, x1, wx0, wx1, dx0, dx1 = _axis(xp, x, w, rule)
    valid = (vy & vx).astype(np.float64)
    shape = (n, g, -1)
    corners = []
    for yi, wy, dy in ((y0, wy0, dy0), (y1, wy1, dy1)):
        for xi, wx, dx in ((x0, wx0, dx0), (x1, wx1, dx1)):
            corners.append(tuple(t.reshape(shape) for t in (yi * w + xi, wy * wx * valid, dy * wx * valid,
                                                            wy * dx * valid)))
    return corners


def gather(xp, data, a, index):
    """data's values at flat positions index (N, G, K*P): (N, G, C/G, K*P), float64."""
    n, c, h, w = data.shape
    g = a.num_deformable_group
    planes = data.astype(np.float64).reshape(n, g, c // g, h * w)
    return xp.take_along_axis(planes, index[:, :, None, :], axis=3)


def _kk(a) -> int:
    return int(a.kernel[0]) * int(a.kernel[1])


def deform_forward(xp, a, data, corners, weight, bias, oshape, mask=None):
    """The convolution of the sampled columns (times mask (N, G, K*P) when given)."""
    n = data.shape[0]
    cols = sum(gather(xp, data, a, c[0]) * c[1][:, :, None, :] for c in corners)
    if mask is not None:
        cols = cols * mask[:, :, None, :]
    cols = cols.reshape(n, a.num_group, -1, corners[0][0].shape[-1] // _kk(a))   # (N, ng, C/ng*K, P)
    wg = weight.astype(np.float64).reshape(a.num_group, a.num_filter // a.num_group, -1)
    out = xp.einsum("gfk,ngkp->ngfp", wg, cols).reshape(oshape)
    if bias is not None:
        out = out + bias.astype(np.float64).reshape(1, -1, 1, 1)
    return out.astype(data.dtype)


def deform_backward(xp, a, ograd, data, corners, offset, weight, bias, mask=None):
    """Gradients of `deform_forward`: [data, offset, (mask when given), weight, (bias)]."""
    n, c, h, w = data.shape
    ng, g, kk = a.num_group, a.num_deformable_group, _kk(a)
    v = [gather(xp, data, a, i) for i, *_ in corners]                          # (N, G, C/G, K*P) each
    sampled = sum(vi * ci[1][:, :, None, :] for vi, ci in zip(v, corners))
    scale = 1.0 if mask is None else mask[:, :, None, :]
    cols = (sampled * scale).reshape(n, ng, -1, sampled.shape[-1] // kk)
    og = ograd.astype(np.float64).reshape(n, ng, a.num_filter // ng, -1)
    wg = weight.astype(np.float64).reshape(ng, a.num_filter // ng, -1)
    grad_w = xp.einsum("ngfp,ngkp->gfk", og, cols).reshape(weight.shape)
    gcols = xp.einsum("gfk,ngfp->ngkp", wg, og).reshape(n, g, c // g, -1)     # (N, G, C/G, K*P)
    gscaled = gcols * scale
    grad_d = xp.zeros(n * c * h * w)
    base = (xp.arange(n * c).reshape(n, g, c // g, 1)) * (h * w)
    for index, wt, _, _ in corners:
        scatter_add(xp, grad_d, (base + index[:, :, None, :]).reshape(-1), (gscaled * wt[:, :, None, :]).reshape(-1))
    dy = sum(vi * ci[2][:, :, None, :] for vi, ci in zip(v, corners))
    dx = sum(vi * ci[3][:, :, None, :] for vi, ci in zip(v, corners))
    dy, dx = (dy * gscaled).sum(axis=2), (dx * gscaled).sum(axis=2)
    grad_o = xp.stack([dy.reshape(n, g, kk, -1), dx.reshape(n, g, kk, -1)], axis=3).reshape(offset.shape)
    out = [grad_d.reshape(data.shape).astype(data.dtype), grad_o.astype(offset.dtype)]
    if mask is not None:
        out.append((sampled * gcols).sum(axis=2))
    out.append(grad_w.astype(weight.dtype))
    if bias is not None:
        out.append(ograd.astype(np.float64).sum(axis=(0, 2, 3)).astype(bias.dtype))
    return out


@register(_OP, hint="deformableconvolution", inputs=_inputs, learnable=("weight", "bias"), attrs=dict(ATTRS),
          infer_shape=_shape, infer_type=lambda a, *ts: conv_types(_OP, _inputs(a), ts))
def DeformableConvolution(xp, a, data, offset, weight, bias=None):  # noqa: N802
    """Convolution of data sampled at offset kernel taps (see the module doc)."""
    geometry(a)
    _, (oshape,) = _shape(a, data.shape, offset.shape, weight.shape, None if bias is None else bias.shape)
    corners = sample_taps(xp, a, data, offset, "v1")
    return (deform_forward(xp, a, data, corners, weight, bias, oshape),)


@DeformableConvolution.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_DeformableConvolution(ograds[0], *inputs, **a.given))


def _backward_outputs(a) -> tuple:
    return ("data_grad", "offset_grad", "weight_grad") + (() if a.no_bias else ("bias_grad",))


@register("_backward_DeformableConvolution", inputs=lambda a: ("ograd",) + _inputs(a), outputs=_backward_outputs,
          attrs=dict(ATTRS),
          infer_shape=lambda a, g, *s: None if _shape(a, *s) is None else (
              [_shape(a, *s)[1][0]] + _shape(a, *s)[0], _shape(a, *s)[0]),
          infer_type=lambda a, tg, *ts: None if ts[0] is None else ([ts[0]] * (1 + len(ts)), [ts[0]] * len(ts)))
def _backward_DeformableConvolution(xp, a, ograd, data, offset, weight, bias=None):  # noqa: N802
    """Gradients of DeformableConvolution for data, offset, weight (and bias)."""
    corners = sample_taps(xp, a, data, offset, "v1")
    return tuple(deform_backward(xp, a, ograd, data, corners, offset, weight, bias))
