"""Deconvolution (MXNet 1.9.1 semantics), 1-D, 2-D and 3-D: the adjoint of
Convolution (conv.py), whose GEMM kernels it reuses.

Its forward is Convolution's data gradient, its data gradient is
Convolution's forward and its weight gradient is Convolution's weight
gradient with the roles of data and ograd swapped. Channel-last layouts are
computed by transposing to channel-first and back.

Deliberate differences from MXNet 1.9.1: 3-D Deconvolution runs on CPU (MXNet
refuses it without cuDNN); a `target_shape` entry of 0 keeps that dimension's
`pad`/`adj`.
"""
from __future__ import annotations

from ..attrs import Attr, Attrs
from ..errors import AttrError, ShapeError
from ..registry import register
from .conv import (Geometry, _TAIL_ATTRS, _backward_shape, _check_data, _conv_geometry, _grad_outputs, _grads_out,
                   _inputs, _merge, _prepare, _same_types, _weight_cf, _weight_layout, conv_data_grad,
                   conv_forward, conv_weight_grad, from_cf, from_cf_shape, given_attrs, spatial_tuple, to_cf,
                   to_cf_shape)

Shape = tuple


# ---------------------------------------------------------------------------
# Deconvolution


DECONV_ATTRS = {
    "kernel": Attr("shape", doc="Deconvolution kernel size: (w,), (h, w) or (d, h, w). This is same as the "
                                "kernel size used for the corresponding convolution"),
    "stride": Attr("shape", (), "The stride used for the corresponding convolution: (w,), (h, w) or "
                                "(d, h, w). Defaults to 1 for each dimension."),
    "dilate": Attr("shape", (), "Dilation factor for each dimension of the input: (w,), (h, w) or "
                                "(d, h, w). Defaults to 1 for each dimension."),
    "pad": Attr("shape", (), "The amount of implicit zero padding added during convolution for each "
                             "dimension of the input. Ignored when target_shape is set."),
    "adj": Attr("shape", (), "Adjustment for output shape: (w,), (h, w) or (d, h, w). Ignored when "
                             "target_shape is set."),
    "target_shape": Attr("shape", (), "Shape of the output tensor: (w,), (h, w) or (d, h, w)."),
    "num_filter": Attr("int", doc="Number of output filters."),
    "num_group": Attr("int", 1, "Number of groups partition."),
    "workspace": Attr("int", 512, "Maximum temporary workspace allowed (MB) in deconvolution (accepted "
                                  "and ignored)."),
    "no_bias": Attr("bool", True, "Whether to disable bias parameter."),
    **_TAIL_ATTRS,
}


def _deconv_pad_adj(op: str, a: Attrs, geo: Geometry, in_sp: tuple) -> tuple[tuple, tuple]:
    """MXNet's DeconvolutionParam::InferPad: (pad, adj) per spatial dim, from target_shape
    when it is set, else from the attributes."""
    nsp = len(geo.kernel)
    adj = spatial_tuple(op, "adj", a.adj, nsp, 0, 0)
    target = tuple(a.target_shape)
    if not any(target):
        return geo.pad, adj
    if len(target) != nsp:
        raise AttrError(f"operator {op}: target_shape must have {nsp} entries like the kernel, got {target}")
    pads, adjs = list(geo.pad), list(adj)
    for i, t in enumerate(target):
        if t == 0 or not in_sp[i]:
            continue
        full = geo.stride[i] * (in_sp[i] - 1) + geo.dilate[i] * (geo.kernel[i] - 1) + 1
        if full < t:
            raise ShapeError(f"operator {op}: target_shape {target} is too big for input {tuple(in_sp)} "
                             f"(at most {full} in dim {i})")
        pads[i], adjs[i] = (full - t + 1) // 2, (full - t) % 2
    return tuple(pads), tuple(adjs)


def _deconv_out_size(op: str, a: Attrs, geo: Geometry, in_sp: tuple) -> tuple:
    pad, adj = _deconv_pad_adj(op, a, geo, in_sp)
    out = []
    for i, x in enumerate(in_sp):
        if adj[i] >= geo.stride[i]:
            raise AttrError(f"operator {op}: adj {adj} must be smaller than stride {geo.stride}")
        dk = geo.dilate[i] * (geo.kernel[i] - 1) + 1
        size = geo.stride[i] * (x - 1) + dk - 2 * pad[i] + adj[i] if x else 0
        if x and size < 1:
            raise ShapeError(f"operator {op}: output size {size} < 1 in spatial dim {i} "
                             f"(input {tuple(in_sp)}, pad {pad})")
        out.append(size)
    return tuple(out)


def _deconv_shape(a: Attrs, dshape, wshape=None, bshape=None):
    """weight (C, num_filter/num_group, *kernel) and bias (num_filter,) from the data."""
    op = "Deconvolution"
    geo = _conv_geometry(op, a)
    nsp = len(geo.kernel)
    if dshape is None:
        return None
    cl = _check_data(op, a, dshape, nsp)
    d_cf = list(to_cf_shape(dshape, cl))
    if d_cf[1] == 0 and wshape is not None:
        d_cf[1] = _weight_cf(wshape, cl)[0]
    c, g = d_cf[1], geo.groups
    if c and c % g:
        raise ShapeError(f"operator {op}: data has {c} channels, not divisible by num_group {g}")
    wshape = _merge(op, "weight", wshape, _weight_layout((c, a.num_filter // g, *geo.kernel), cl))
    ins = [from_cf_shape(tuple(d_cf), cl), wshape]
    if not a.no_bias:
        ins.append(_merge(op, "bias", bshape, (a.num_filter,)))
    out_sp = _deconv_out_size(op, a, geo, tuple(d_cf[2:]))
    return ins, [from_cf_shape((d_cf[0], a.num_filter, *out_sp), cl)]


def _deconv_geometry(a: Attrs, in_sp: tuple) -> tuple[Geometry, tuple]:
    """The adjoint convolution's geometry (with the inferred pad) and the output size."""
    op = "Deconvolution"
    geo = _conv_geometry(op, a)
    pad, _ = _deconv_pad_adj(op, a, geo, in_sp)
    return Geometry(geo.kernel, geo.stride, geo.dilate, pad, geo.groups), _deconv_out_size(op, a, geo, in_sp)


def _deconv_type(a: Attrs, *dtypes):
    return _same_types("Deconvolution", _inputs(a))(a, *dtypes)


def deconv_forward(xp, x, w, b, geo: Geometry, out_sp: tuple):
    """Channel-first transposed convolution: (N, C, *in) x (C, F/G, *k) -> (N, F, *out)."""
    n = x.shape[0]
    f = w.shape[1] * geo.groups
    res = conv_data_grad(xp, x, w, (n, f, *out_sp), geo)
    if b is not None:
        res += b.reshape((1, f) + (1,) * len(out_sp))
    return res


@register("Deconvolution", aliases=("_npx_deconvolution",), inputs=_inputs, learnable=("weight", "bias"),
          attrs=dict(DECONV_ATTRS), infer_shape=_deconv_shape, infer_type=_deconv_type, hint="deconvolution")
def Deconvolution(xp, a: Attrs, data, weight, bias=None):
    """Transposed convolution (the gradient of Convolution with respect to its data)."""
    _, cl, x, w = _prepare(xp, "Deconvolution", a, data, weight, _deconv_shape)
    geo, out_sp = _deconv_geometry(a, tuple(x.shape[2:]))
    return (from_cf(xp, deconv_forward(xp, x, w, bias, geo, out_sp), cl),)


@Deconvolution.def_gradient
def _deconv_gradient(F, a, inputs, outputs, ograds):
    res = F._backward_Deconvolution(ograds[0], *inputs, **given_attrs(a))
    return [res[i] for i in range(len(inputs))]


def deconv_backward(xp, g, x, w, geo: Geometry):
    """(data grad, weight grad) of deconv_forward, channel-first."""
    dx = conv_forward(xp, g, w, None, geo)
    if tuple(dx.shape) != tuple(x.shape):
        raise ShapeError(f"operator Deconvolution: ograd shape {tuple(g.shape)} does not map back to the "
                         f"data shape {tuple(x.shape)}")
    dw = conv_weight_grad(xp, x, g, w.shape, geo)
    return dx, dw


def _deconv_backward_type(a: Attrs, *dtypes):
    return _same_types("_backward_Deconvolution", ("ograd",) + _inputs(a))(a, *dtypes)


@register("_backward_Deconvolution", inputs=lambda a: ("ograd",) + _inputs(a), outputs=_grad_outputs,
          attrs=dict(DECONV_ATTRS), infer_shape=_backward_shape(_deconv_shape),
          infer_type=_deconv_backward_type)
def _backward_Deconvolution(xp, a: Attrs, ograd, data, weight, bias=None):
    """Gradients of Deconvolution with respect to data, weight (and bias)."""
    _, cl, x, w = _prepare(xp, "Deconvolution", a, data, weight, _deconv_shape)
    geo, _ = _deconv_geometry(a, tuple(x.shape[2:]))
    g = to_cf(ograd, cl)
    dx, dw = deconv_backward(xp, g, x, w, geo)
    return _grads_out(xp, dx, dw, g, bias, cl)


@_backward_Deconvolution.def_gradient
def _deconv_backward_gradient(F, a, inputs, outputs, ograds):
    """Bilinear, as Convolution's backward: its gradients are deconvolutions again."""
    g, data, weight = inputs[:3]
    kw = given_attrs(a)
    kw_nb = {**kw, "no_bias": True}
    from_dx = (F.Deconvolution(ograds[0], weight, **kw_nb) if a.no_bias
               else F.Deconvolution(ograds[0], weight, ograds[2], **kw))
    d_g = F.elemwise_add(from_dx, F.Deconvolution(data, ograds[1], **kw_nb))
    d_data = F._backward_Deconvolution(g, data, ograds[1], **kw_nb)[0]
    d_weight = F._backward_Deconvolution(g, ograds[0], weight, **kw_nb)[1]
    return [d_g, d_data, d_weight] + ([] if a.no_bias else [None])
