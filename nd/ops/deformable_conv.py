"""DeformableConvolution (MXNet 1.9.1, src/operator/contrib/deformable_convolution*; Dai et al.,
"Deformable Convolutional Networks", 2017): a 2-D convolution whose kernel taps are moved by
learned, per-position fractional offsets.

`offset` (N, 2 * kh * kw * num_deformable_group, out_h, out_w) holds, per deformable group and
tap k = i * kw + j, the (dy, dx) added to the tap's position (oh * stride - pad + i * dilate,
ow * stride - pad + j * dilate); channels split evenly over the deformable groups. A tap
reads the input by bilinear interpolation (MXNet's rule: zero unless 0 <= y < H and
0 <= x < W; at the last row / column it does not interpolate). The sampled columns are then
multiplied by the weight as in a grouped convolution (num_group). The gradients are those of
this function: data by scattering the column gradient over the four neighbours, offsets by
the interpolation's slope (zero along an axis clamped at the border), weight and bias as a
convolution's. MXNet implements 2-D kernels and the NCHW layout only, and so does this.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import register, shape_known
from .indexing_ops import scatter_add

_FLOATS = (np.dtype("float16"), np.dtype("float32"), np.dtype("float64"))
_ATTRS = {
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


def _pair(name: str, value, default: int, low: int) -> tuple:
    if not value:
        return (default, default)
    value = tuple(int(v) for v in value)
    if len(value) != 2 or any(v < low for v in value):
        raise AttrError(f"operator {_OP}: {name} must be two entries >= {low} like the 2-D kernel, got {value}")
    return value


def _geometry(a):
    """(kernel, stride, dilate, pad), validated."""
    kernel = tuple(int(k) for k in a.kernel)
    if len(kernel) != 2:
        raise NotImplementedError(f"operator {_OP}: a {len(kernel)}-d kernel {kernel} is not supported (MXNet "
                                  "1.9.1 implements 2-d deformable convolution only)")
    if a.layout not in (None, "NCHW"):
        raise NotImplementedError(f"operator {_OP}: layout {a.layout!r} is not supported with a 2-d kernel "
                                  "(MXNet 1.9.1 implements NCHW only); transpose the data to NCHW")
    if min(kernel) < 1 or a.num_filter < 1 or a.num_group < 1 or a.num_deformable_group < 1:
        raise AttrError(f"operator {_OP}: kernel, num_filter, num_group and num_deformable_group must be "
                        f"positive, got kernel={kernel}, num_filter={a.num_filter}, num_group={a.num_group}, "
                        f"num_deformable_group={a.num_deformable_group}")
    return kernel, _pair("stride", a.stride, 1, 1), _pair("dilate", a.dilate, 1, 1), _pair("pad", a.pad, 0, 0)


def _shape(a, d, o, w, b=None):
    if len(a.kernel) != 2 or a.layout not in (None, "NCHW"):
        return None                     # not implemented: the kernel says so (a rule's error is wrapped)
    (kh, kw), stride, dilate, pad = _geometry(a)
    if d is None or not shape_known(d):
        return None
    if len(d) != 4:
        raise ShapeError(f"operator {_OP}: data should be a 4D tensor (N, C, H, W), got {tuple(d)}")
    n, c, h, wd = d
    if c % a.num_group or c % a.num_deformable_group or a.num_filter % a.num_group:
        raise ShapeError(f"operator {_OP}: data's {c} channels must divide by num_group ({a.num_group}) and "
                         f"num_deformable_group ({a.num_deformable_group}), and num_filter ({a.num_filter}) by "
                         f"num_group")
    oh = (h + 2 * pad[0] - (dilate[0] * (kh - 1) + 1)) // stride[0] + 1
    ow = (wd + 2 * pad[1] - (dilate[1] * (kw - 1) + 1)) // stride[1] + 1
    if oh < 1 or ow < 1:
        raise ShapeError(f"operator {_OP}: kernel size exceeds the padded input {tuple(d)}")
    want = (n, 2 * kh * kw * a.num_deformable_group, oh, ow)
    if o is not None and not _fits(want, o):
        raise ShapeError(f"operator {_OP}: offset must have shape {want} (N, 2 * kh * kw * num_deformable_group, "
                         f"out_h, out_w), got {tuple(o)}")
    wshape = (a.num_filter, c // a.num_group, kh, kw)
    if w is not None and not _fits(wshape, w):
        raise ShapeError(f"operator {_OP}: weight must have shape {wshape}, got {tuple(w)}")
    if b is not None and not _fits((a.num_filter,), b):
        raise ShapeError(f"operator {_OP}: bias must have shape ({a.num_filter},), got {tuple(b)}")
    ins = [tuple(d), want, wshape] + ([] if a.no_bias else [(a.num_filter,)])
    return ins, [(n, a.num_filter, oh, ow)]


def _fits(want: tuple, got) -> bool:
    """Whether a partially known shape (0 = unknown dim) can be `want`."""
    return len(got) == len(want) and all(g in (0, w) for w, g in zip(want, got))


def _type(a, *ts):
    t = ts[0]
    if t is None:
        return None
    if t not in _FLOATS:
        raise DTypeError(f"operator {_OP}: expected a floating-point dtype, got {t}")
    for name, other in zip(_inputs(a), ts):
        if other is not None and other != t:
            raise DTypeError(f"operator {_OP}: input {name!r} has dtype {other}, expected {t} like data")
    return [t] * len(ts), [t]


def _taps(xp, a, data, offset):
    """Sampling of every tap: corners [(flat index, weight)] (N, G, K*P), the corner order
    (ll, lh, hl, hh), plus (ly, lx, y unclamped, x unclamped, valid) for the offset gradient."""
    (kh, kw), stride, dilate, pad = _geometry(a)
    n, _, h, w = data.shape
    g, (oh, ow) = a.num_deformable_group, offset.shape[2:]
    off = offset.astype(np.float64).reshape(n, g, kh * kw, 2, oh * ow)
    iy = (xp.arange(kh) * dilate[0])[:, None].repeat(kw, 1).reshape(-1)
    ix = (xp.arange(kw) * dilate[1])[None, :].repeat(kh, 0).reshape(-1)
    oy = (xp.arange(oh) * stride[0] - pad[0])[:, None].repeat(ow, 1).reshape(-1)
    ox = (xp.arange(ow) * stride[1] - pad[1])[None, :].repeat(oh, 0).reshape(-1)
    y = (iy[:, None] + oy[None, :])[None, None] + off[:, :, :, 0]          # (N, G, K, P)
    x = (ix[:, None] + ox[None, :])[None, None] + off[:, :, :, 1]
    valid = ((y >= 0) & (x >= 0) & (y < h) & (x < w)).astype(np.float64)

    def axis(v, size):
        lo = xp.clip(xp.floor(v), 0, size - 1).astype(np.int64)
        free = lo < size - 1                     # interpolates along this axis (not at the border)
        return lo, xp.where(free, lo + 1, lo), xp.where(free, v - lo, 0.0), free
    y0, y1, ly, fy = axis(y, h)
    x0, x1, lx, fx = axis(x, w)
    corners = [(y0 * w + x0, (1 - ly) * (1 - lx)), (y0 * w + x1, (1 - ly) * lx),
               (y1 * w + x0, ly * (1 - lx)), (y1 * w + x1, ly * lx)]
    shape = (n, g, -1)
    corners = [(i.reshape(shape), (wt * valid).reshape(shape)) for i, wt in corners]
    return corners, (ly.reshape(shape), lx.reshape(shape), fy.reshape(shape), fx.reshape(shape), valid.reshape(shape))


def _gather(xp, data, a, index):
    """data's values at flat positions index (N, G, K*P): (N, G, C/G, K*P), float64."""
    n, c, h, w = data.shape
    g = a.num_deformable_group
    planes = data.astype(np.float64).reshape(n, g, c // g, h * w)
    return xp.take_along_axis(planes, index[:, :, None, :], axis=3)


def _columns(xp, a, data, corners):
    n, c = data.shape[:2]
    cols = sum(_gather(xp, data, a, i) * wt[:, :, None, :] for i, wt in corners)
    return cols.reshape(n, a.num_group, -1, corners[0][0].shape[-1] // _kk(a))   # (N, ng, C/ng*K, P)


def _kk(a) -> int:
    return int(a.kernel[0]) * int(a.kernel[1])


@register(_OP, hint="deformableconvolution", inputs=_inputs, learnable=("weight", "bias"), attrs=dict(_ATTRS),
          infer_shape=_shape, infer_type=_type)
def DeformableConvolution(xp, a, data, offset, weight, bias=None):  # noqa: N802
    """Convolution of data sampled at offset kernel taps (see the module doc)."""
    _geometry(a)
    _, (oshape,) = _shape(a, data.shape, offset.shape, weight.shape, None if bias is None else bias.shape)
    corners, _ = _taps(xp, a, data, offset)
    cols = _columns(xp, a, data, corners)
    wg = weight.astype(np.float64).reshape(a.num_group, a.num_filter // a.num_group, -1)
    out = xp.einsum("gfk,ngkp->ngfp", wg, cols).reshape(oshape)
    if bias is not None:
        out = out + bias.astype(np.float64).reshape(1, -1, 1, 1)
    return (out.astype(data.dtype),)


@DeformableConvolution.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_DeformableConvolution(ograds[0], *inputs, **a.given))


def _backward_outputs(a) -> tuple:
    return ("data_grad", "offset_grad", "weight_grad") + (() if a.no_bias else ("bias_grad",))


@register("_backward_DeformableConvolution", inputs=lambda a: ("ograd",) + _inputs(a), outputs=_backward_outputs,
          attrs=dict(_ATTRS),
          infer_shape=lambda a, g, *s: None if _shape(a, *s) is None else (
              [_shape(a, *s)[1][0]] + _shape(a, *s)[0], _shape(a, *s)[0]),
          infer_type=lambda a, tg, *ts: None if ts[0] is None else ([ts[0]] * (1 + len(ts)), [ts[0]] * len(ts)))
def _backward_DeformableConvolution(xp, a, ograd, data, offset, weight, bias=None):  # noqa: N802
    """Gradients of DeformableConvolution for data, offset, weight (and bias)."""
    n, c, h, w = data.shape
    ng, g = a.num_group, a.num_deformable_group
    corners, (ly, lx, fy, fx, valid) = _taps(xp, a, data, offset)
    cols = _columns(xp, a, data, corners)
    og = ograd.astype(np.float64).reshape(n, ng, a.num_filter // ng, -1)
    wg = weight.astype(np.float64).reshape(ng, a.num_filter // ng, -1)
    grad_w = xp.einsum("ngfp,ngkp->gfk", og, cols).reshape(weight.shape)
    gcols = xp.einsum("gfk,ngfp->ngkp", wg, og).reshape(n, g, c // g, -1)     # (N, G, C/G, K*P)
    grad_d = xp.zeros(n * c * h * w)
    base = (xp.arange(n * c).reshape(n, g, c // g, 1)) * (h * w)
    for index, wt in corners:
        scatter_add(xp, grad_d, (base + index[:, :, None, :]).reshape(-1), (gcols * wt[:, :, None, :]).reshape(-1))
    v = [_gather(xp, data, a, i) for i, _ in corners]                           # ll, lh, hl, hh
    ly_, lx_ = ly[:, :, None, :], lx[:, :, None, :]
    dy = ((1 - lx_) * (v[2] - v[0]) + lx_ * (v[3] - v[1])) * gcols
    dx = ((1 - ly_) * (v[1] - v[0]) + ly_ * (v[3] - v[2])) * gcols
    dy = dy.sum(axis=2) * (valid * fy)
    dx = dx.sum(axis=2) * (valid * fx)
    kk = _kk(a)
    grad_o = xp.stack([dy.reshape(n, g, kk, -1), dx.reshape(n, g, kk, -1)], axis=3).reshape(offset.shape)
    out = [grad_d.reshape(data.shape).astype(data.dtype), grad_o.astype(offset.dtype), grad_w.astype(weight.dtype)]
    if bias is not None:
        out.append(ograd.astype(np.float64).sum(axis=(0, 2, 3)).astype(bias.dtype))
    return tuple(out)
