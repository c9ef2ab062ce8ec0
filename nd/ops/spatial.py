"""Spatial resampling operators (MXNet 1.9.1 semantics): UpSampling,
_contrib_BilinearResize2D and _contrib_AdaptiveAvgPooling2D (Crop and
ROIPooling live in crop.py).

Bilinear resizing and adaptive average pooling are separable linear maps, so
each is two small dense matrices applied along H and W (`A_h @ x @ A_w^T`,
matmuls over the whole batch); their gradients are the transposed matrices.
Bilinear UpSampling is a grouped Deconvolution (as in MXNet) and reuses the
kernels of conv.py and deconv.py. Every hidden backward here is linear in the head gradient,
so its own gradient is the forward operator again.

Deliberate differences from MXNet 1.9.1: BilinearResize2D with only one of
scale_height / scale_width set uses `height` / `width` for the other dim
(MXNet fails with "bad optional access").
"""
from __future__ import annotations

import math

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import AttrError, ShapeError
from ..registry import merge_shape, register, same_type
from .conv import Geometry, given_attrs
from .deconv import deconv_backward, deconv_forward

Shape = tuple


def _check_4d(op: str, name: str, shape) -> None:
    if shape is not None and len(shape) != 4:
        raise ShapeError(f"operator {op}: input {name!r} must be 4-D (batch, channel, height, width), "
                         f"got shape {tuple(shape)}")


def _grad_type(n_out):
    """Backward ops: every input and gradient share one dtype; `n_out(attrs)` gradients."""
    def infer_type(a: Attrs, *dtypes):
        res = same_type(a, *dtypes)
        return None if res is None else (res[0], [res[1][0]] * n_out(a))
    return infer_type


# ---------------------------------------------------------------------------
# UpSampling

UPSAMPLING_ATTRS = {
    "scale": Attr("int", doc="Up sampling scale"),
    "num_filter": Attr("int", 0, "Input filter. Only used by bilinear sample_type. Since bilinear upsampling "
                                 "uses deconvolution, num_filters is set to the number of channels."),
    "sample_type": Attr("str", doc="upsampling method", choices=("bilinear", "nearest")),
    "multi_input_mode": Attr("str", "concat", "How to handle multiple input. concat means concatenate "
                                              "upsampled images along the channel dimension. sum means add all "
                                              "images together, only available for nearest neighbor upsampling.",
                             choices=("concat", "sum")),
    "num_args": Attr("int", doc="Number of inputs to be upsampled. For nearest neighbor upsampling, this can "
                                "be 1-N; for bilinear upsampling this must be 2; 1 input and 1 weight."),
    "workspace": Attr("int", 512, "Tmp workspace for deconvolution (MB) (accepted and ignored)."),
}


def _up_inputs(a: Attrs) -> tuple:
    if a.sample_type == "bilinear":
        return ("data", "weight")
    return tuple(f"arg{i}" for i in range(a.num_args or 0))


def _up_check(a: Attrs, n_inputs: int) -> None:
    if a.scale < 1:
        raise AttrError(f"operator UpSampling: attribute 'scale' must be >= 1, got {a.scale}")
    if a.sample_type == "bilinear" and n_inputs != 2:
        raise AttrError(f"operator UpSampling: bilinear sampling takes 2 inputs (data, weight), got {n_inputs}")
    if a.sample_type == "bilinear" and a.multi_input_mode == "sum":
        raise AttrError("operator UpSampling: multi_input_mode='sum' is only available for nearest sampling")


def _bilinear_geometry(a: Attrs) -> tuple[Geometry, dict]:
    """MXNet's GetDeconvolutionParam: the Deconvolution that bilinear UpSampling runs."""
    s = a.scale
    k = int(2 * s - s % 2)
    p = int(math.ceil((s - 1) / 2.0))
    groups = max(a.num_filter, 1)
    attrs = {"kernel": (k, k), "stride": (s, s), "pad": (p, p), "num_filter": a.num_filter,
             "num_group": a.num_filter, "no_bias": True}
    return Geometry((k, k), (s, s), (1, 1), (p, p), groups), attrs


def _up_shape(a: Attrs, *shapes):
    op = "UpSampling"
    _up_check(a, len(shapes))
    dshape = shapes[0]
    if dshape is None:
        return None
    _check_4d(op, _up_inputs(a)[0], dshape)
    oh, ow = dshape[2] * a.scale, dshape[3] * a.scale
    if a.sample_type == "bilinear":
        if a.num_filter < 1:
            raise AttrError(f"operator {op}: bilinear sampling needs num_filter (the channel count) >= 1")
        if dshape[1] and dshape[1] != a.num_filter:
            raise ShapeError(f"operator {op}: bilinear sampling needs num_filter ({a.num_filter}) equal to the "
                             f"data's channels ({dshape[1]})")
        k = int(2 * a.scale - a.scale % 2)
        try:
            wshape = merge_shape(shapes[1], (dshape[1], 1, k, k))
        except ShapeError:
            raise ShapeError(f"operator {op}: input 'weight' has shape {tuple(shapes[1])}, expected "
                             f"{(dshape[1], 1, k, k)}") from None
        return [tuple(dshape), wshape], [(dshape[0], dshape[1], oh, ow)]
    if any(s is None for s in shapes):
        return None
    channels = 0
    for i, s in enumerate(shapes):
        _check_4d(op, f"arg{i}", s)
        if s[2] == 0 or s[3] == 0 or oh % s[2] or ow % s[3]:
            raise ShapeError(f"operator {op}: input arg{i} of shape {tuple(s)} does not divide the output size "
                             f"({oh}, {ow})")
        if a.multi_input_mode == "sum":
            if channels and channels != s[1]:
                raise ShapeError(f"operator {op}: multi_input_mode='sum' needs equal channels, got "
                                 f"{[t[1] for t in shapes]}")
            channels = s[1]
        else:
            channels += s[1]
    return [tuple(s) for s in shapes], [(dshape[0], channels, oh, ow)]


def _nearest(xp, x, sh: int, sw: int):
    n, c, h, w = x.shape
    return xp.broadcast_to(x[:, :, :, None, :, None], (n, c, h, sh, w, sw)).reshape(n, c, h * sh, w * sw)


@register("UpSampling", inputs=_up_inputs, key_var_num_args="num_args", learnable=("weight",),
          attrs=dict(UPSAMPLING_ATTRS), infer_shape=_up_shape, infer_type=same_type)
def UpSampling(xp, a: Attrs, *xs):
    """Nearest-neighbour (any number of inputs, concatenated or summed) or bilinear
    (a grouped Deconvolution with the given weight) upsampling of NCHW data."""
    _, (oshape,) = _up_shape(a, *[x.shape for x in xs])
    if a.sample_type == "bilinear":
        geo, _ = _bilinear_geometry(a)
        return (deconv_forward(xp, xs[0], xs[1], None, geo, oshape[2:]),)
    oh, ow = oshape[2:]
    parts = [_nearest(xp, x, oh // x.shape[2], ow // x.shape[3]) for x in xs]
    if len(parts) == 1:
        return (xp.ascontiguousarray(parts[0]),)
    if a.multi_input_mode == "sum":
        out = parts[0].copy()
        for p in parts[1:]:
            out += p
        return (out,)
    return (xp.concatenate(parts, axis=1),)


@UpSampling.def_gradient
def _up_gradient(F, a, inputs, outputs, ograds):
    if a.sample_type == "bilinear":
        _, kw = _bilinear_geometry(a)
        res = F._backward_Deconvolution(ograds[0], inputs[0], inputs[1], **kw)
        return [res[0], res[1]]
    res = F._backward_UpSampling(ograds[0], *inputs, **given_attrs(a))
    return [res] if len(inputs) == 1 else [res[i] for i in range(len(inputs))]


def _up_back_shape(a: Attrs, gshape, *shapes):
    fwd = _up_shape(a, *shapes)
    if fwd is None:
        return None
    ins, outs = fwd
    return [merge_shape(gshape, outs[0]), *ins], list(ins)


@register("_backward_UpSampling", inputs=lambda a: ("ograd",) + _up_inputs(a),
          outputs=lambda a: tuple(f"{n}_grad" for n in _up_inputs(a)), attrs=dict(UPSAMPLING_ATTRS),
          infer_shape=_up_back_shape, infer_type=_grad_type(lambda a: len(_up_inputs(a))))
def _backward_UpSampling(xp, a: Attrs, ograd, *xs):
    """Gradients of nearest UpSampling: the head gradient summed over each input's
    scale x scale blocks (its channel slice of it for concat)."""
    if a.sample_type == "bilinear":
        geo, _ = _bilinear_geometry(a)
        return deconv_backward(xp, ograd, xs[0], xs[1], geo)
    n, _, oh, ow = ograd.shape
    out, begin = [], 0
    for x in xs:
        c, h, w = x.shape[1:]
        g = ograd if a.multi_input_mode == "sum" else ograd[:, begin:begin + c]
        begin += c
        out.append(g.reshape(n, c, h, oh // h, w, ow // w).sum(axis=(3, 5)))
    return tuple(out)


@_backward_UpSampling.def_gradient
def _up_back_gradient(F, a, inputs, outputs, ograds):
    """The backward is linear in the head gradient: its gradient is UpSampling itself."""
    if a.sample_type == "bilinear":  # Deconvolution's backward: bilinear in (ograd, data / weight)
        _, kw = _bilinear_geometry(a)
        g, data, weight = inputs
        d_g = F.elemwise_add(F.Deconvolution(ograds[0], weight, **kw), F.Deconvolution(data, ograds[1], **kw))
        return [d_g, F._backward_Deconvolution(g, data, ograds[1], **kw)[0],
                F._backward_Deconvolution(g, ograds[0], weight, **kw)[1]]
    return [F.UpSampling(*ograds, **given_attrs(a))] + [None] * (len(inputs) - 1)


# ---------------------------------------------------------------------------
# _contrib_BilinearResize2D

RESIZE_MODES = ("like", "odd_scale", "size", "to_even_down", "to_even_up", "to_odd_down", "to_odd_up")
RESIZE_ATTRS = {
    "height": Attr("int", 1, "output height (required, but ignored if scale_height is defined or mode is not "
                             "\"size\")"),
    "width": Attr("int", 1, "output width (required, but ignored if scale_width is defined or mode is not "
                            "\"size\")"),
    "scale_height": Attr("float", None, "sampling scale of the height (optional, used in modes \"scale\" and "
                                        "\"odd_scale\")"),
    "scale_width": Attr("float", None, "sampling scale of the width (optional, used in modes \"scale\" and "
                                       "\"odd_scale\")"),
    "mode": Attr("str", "size", "resizing mode: size, odd_scale, like, to_even_down, to_even_up, to_odd_down, "
                                "to_odd_up", choices=RESIZE_MODES),
    "align_corners": Attr("bool", True, "With align_corners = True, the interpolating doesn't proportionally "
                                        "align the output and input pixels, and thus the output values can "
                                        "depend on the input size."),
}


def _resize_inputs(a: Attrs) -> tuple:
    return ("data", "like") if a.mode == "like" else ("data",)


def _scaled(size: int, scale: float) -> int:
    """int(scale * size) in float32 arithmetic, as MXNet's C++ (float scale times int size):
    0.7 * 10 is 7 there, 6.99999988 in float64."""
    return int(np.float32(scale) * np.float32(size))


def _resize_dim(a: Attrs, size: int, fixed: int, scale, like: int | None) -> int:
    """MXNet's output size along one dim for each resize mode."""
    mode = a.mode
    if mode == "size":
        return _scaled(size, scale) if scale is not None else fixed
    if mode == "odd_scale":
        if scale is None:
            raise AttrError("operator _contrib_BilinearResize2D: mode 'odd_scale' needs scale_height and "
                            "scale_width")
        return _scaled(size, scale) if size % 2 == 0 else _scaled(size - 1, scale) + 1
    if mode == "like":
        return like
    even = size % 2 == 0
    return {"to_even_down": size if even else size - 1, "to_even_up": size if even else size + 1,
            "to_odd_down": size - 1 if even else size, "to_odd_up": size + 1 if even else size}[mode]


def _resize_shape(a: Attrs, dshape, like=None):
    op = "_contrib_BilinearResize2D"
    _check_4d(op, "data", dshape)
    _check_4d(op, "like", like)
    if dshape is None or (a.mode == "like" and (like is None or not like[2] or not like[3])):
        return None
    if not (dshape[2] and dshape[3]):
        return None
    oh = _resize_dim(a, dshape[2], a.height, a.scale_height, like[2] if like is not None else None)
    ow = _resize_dim(a, dshape[3], a.width, a.scale_width, like[3] if like is not None else None)
    if oh < 1 or ow < 1:
        raise ShapeError(f"operator {op}: output size ({oh}, {ow}) must be positive (data {tuple(dshape)}, "
                         f"mode {a.mode})")
    ins = [tuple(dshape)] + ([tuple(like)] if like is not None else [])
    return ins, [(dshape[0], dshape[1], oh, ow)]


def interp_matrix(n_in: int, n_out: int, align_corners: bool) -> np.ndarray:
    """(n_out, n_in) float32 bilinear weights, computed as MXNet's kernel does (float32)."""
    mat = np.zeros((n_out, n_in), dtype=np.float32)
    dst = np.arange(n_out)
    if n_in == n_out:
        mat[dst, dst] = 1
        return mat
    if n_out == 1:  # MXNet samples the first row/column, with or without align_corners
        scale = np.float32(0)
    else:
        scale = np.float32((n_in - 1) / (n_out - 1)) if align_corners else np.float32(n_in / n_out)
    if align_corners:
        real = scale * dst.astype(np.float32)
    else:
        real = np.maximum(scale * (dst.astype(np.float32) + np.float32(0.5)) - np.float32(0.5), np.float32(0))
    i0 = real.astype(np.int64)
    i1 = i0 + (i0 < n_in - 1)
    lam1 = (real - i0).astype(np.float32)
    np.add.at(mat, (dst, i0), np.float32(1) - lam1)
    np.add.at(mat, (dst, i1), lam1)
    return mat


def _separable(xp, x, mat_h: np.ndarray, mat_w: np.ndarray):
    """`mat_h @ x @ mat_w^T` over the last two axes of an NCHW array."""
    ah = xp.asarray(mat_h.astype(x.dtype, copy=False))
    aw = xp.asarray(mat_w.astype(x.dtype, copy=False))
    return xp.matmul(ah, xp.matmul(x, aw.T))


def _resize_mats(a: Attrs, in_hw: tuple, out_hw: tuple):
    return (interp_matrix(in_hw[0], out_hw[0], a.align_corners),
            interp_matrix(in_hw[1], out_hw[1], a.align_corners))


@register("_contrib_BilinearResize2D", inputs=_resize_inputs, attrs=dict(RESIZE_ATTRS),
          infer_shape=_resize_shape, infer_type=lambda a, *t: None if t[0] is None else
          ([t[0]] * len(t), [t[0]]), hint="bilinearresize2d")
def BilinearResize2D(xp, a: Attrs, data, like=None):
    """Resize NCHW data to a new height and width by bilinear interpolation."""
    _, (oshape,) = _resize_shape(a, data.shape, None if like is None else like.shape)
    mh, mw = _resize_mats(a, data.shape[2:], oshape[2:])
    return (_separable(xp, data, mh, mw),)


@BilinearResize2D.def_gradient
def _resize_gradient(F, a, inputs, outputs, ograds):
    res = F._backward_contrib_BilinearResize2D(ograds[0], *inputs, **given_attrs(a))
    return [res] if len(inputs) == 1 else [res[0], res[1]]


def _resize_back_shape(a: Attrs, gshape, dshape, like=None):
    fwd = _resize_shape(a, dshape, like)
    if fwd is None:
        return None
    return [merge_shape(gshape, fwd[1][0]), *fwd[0]], list(fwd[0])


@register("_backward_contrib_BilinearResize2D", inputs=lambda a: ("ograd",) + _resize_inputs(a),
          outputs=lambda a: tuple(f"{n}_grad" for n in _resize_inputs(a)), attrs=dict(RESIZE_ATTRS),
          infer_shape=_resize_back_shape, infer_type=_grad_type(lambda a: len(_resize_inputs(a))))
def _backward_BilinearResize2D(xp, a: Attrs, ograd, data, like=None):
    """Transposed interpolation of the head gradient (zeros for `like`)."""
    mh, mw = _resize_mats(a, data.shape[2:], ograd.shape[2:])
    dx = _separable(xp, ograd, mh.T, mw.T)
    return (dx,) if like is None else (dx, xp.zeros(like.shape, dtype=like.dtype))


@_backward_BilinearResize2D.def_gradient
def _resize_back_gradient(F, a, inputs, outputs, ograds):
    resized = F._contrib_BilinearResize2D(ograds[0], inputs[0], mode="like", align_corners=a.align_corners)
    return [resized] + [None] * (len(inputs) - 1)


# ---------------------------------------------------------------------------
# _contrib_AdaptiveAvgPooling2D

ADAPTIVE_ATTRS = {"output_size": Attr("shape", (), "int (output size) or a tuple of int for output "
                                                   "(height, width).")}


def _adaptive_out(a: Attrs) -> tuple:
    size = tuple(a.output_size)
    if len(size) == 0:
        size = (1, 1)
    elif len(size) == 1:
        size = (size[0], size[0])
    elif len(size) != 2:
        raise AttrError(f"operator _contrib_AdaptiveAvgPooling2D: output_size must have 1 or 2 entries, "
                        f"got {size}")
    if any(s is None or s < 1 for s in size):
        raise AttrError(f"operator _contrib_AdaptiveAvgPooling2D: output_size entries must be >= 1, got {size}")
    return size


def _adaptive_shape(a: Attrs, dshape):
    _check_4d("_contrib_AdaptiveAvgPooling2D", "data", dshape)
    oh, ow = _adaptive_out(a)
    if dshape is None:
        return None
    return [tuple(dshape)], [(dshape[0], dshape[1], oh, ow)]


def adaptive_matrix(n_in: int, n_out: int) -> np.ndarray:
    """(n_out, n_in) averaging weights: bin o covers [floor(o*in/out), ceil((o+1)*in/out))."""
    o = np.arange(n_out)
    start = np.floor(o * n_in / n_out).astype(np.int64)
    end = np.ceil((o + 1) * n_in / n_out).astype(np.int64)
    i = np.arange(n_in)
    inside = (i[None, :] >= start[:, None]) & (i[None, :] < end[:, None])
    return inside / (end - start)[:, None].astype(np.float64)


@register("_contrib_AdaptiveAvgPooling2D",
          monitor_inputs="input", attrs=dict(ADAPTIVE_ATTRS), infer_shape=_adaptive_shape,
          infer_type=same_type, hint="adaptiveavgpooling2d")
def AdaptiveAvgPooling2D(xp, a: Attrs, data):
    """Average pooling of NCHW data into a fixed output size (bins as PyTorch/MXNet)."""
    _adaptive_shape(a, data.shape)
    oh, ow = _adaptive_out(a)
    return (_separable(xp, data, adaptive_matrix(data.shape[2], oh), adaptive_matrix(data.shape[3], ow)),)


@AdaptiveAvgPooling2D.def_gradient
def _adaptive_gradient(F, a, inputs, outputs, ograds):
    return [F._backward_contrib_AdaptiveAvgPooling2D(ograds[0], inputs[0], **given_attrs(a))]


def _adaptive_back_shape(a: Attrs, gshape, dshape):
    fwd = _adaptive_shape(a, dshape)
    if fwd is None:
        return None
    return [merge_shape(gshape, fwd[1][0]), tuple(dshape)], [tuple(dshape)]


@register("_backward_contrib_AdaptiveAvgPooling2D", inputs=("ograd", "data"), outputs=("data_grad",),
          attrs=dict(ADAPTIVE_ATTRS), infer_shape=_adaptive_back_shape, infer_type=_grad_type(lambda a: 1))
def _backward_AdaptiveAvgPooling2D(xp, a: Attrs, ograd, data):
    """Each bin's gradient spread evenly over the bin."""
    oh, ow = _adaptive_out(a)
    mh, mw = adaptive_matrix(data.shape[2], oh), adaptive_matrix(data.shape[3], ow)
    return (_separable(xp, ograd, mh.T, mw.T),)


@_backward_AdaptiveAvgPooling2D.def_gradient
def _adaptive_back_gradient(F, a, inputs, outputs, ograds):
    return [F._contrib_AdaptiveAvgPooling2D(ograds[0], **given_attrs(a)), None]
