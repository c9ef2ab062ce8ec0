"""The Convolution operator (MXNet 1.9.1 semantics, 1-D to 3-D, channel-first and
channel-last layouts) and its hidden backward operator; the kernels and geometry
helpers they share with Deconvolution, pooling and spatial operators live in
conv_kernels.py (and are re-exported here for those modules)."""
from __future__ import annotations

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import register
from .conv_kernels import (  # noqa: F401 - re-exported for deconv/pool/spatial/crop
    Geometry, bias_grad, check_layout, conv_data_grad, conv_forward, conv_weight_grad, from_cf,
    from_cf_shape, given_attrs, is_channel_last, prod, spatial_tuple, to_cf, to_cf_shape,
)
from .nn import _merge

Shape = tuple


# ---------------------------------------------------------------------------
# Convolution


_COMMON_ATTRS = {
    "kernel": Attr("shape", doc="Convolution kernel size: (w,), (h, w) or (d, h, w)"),
    "stride": Attr("shape", (), "Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1 for each "
                                "dimension."),
    "dilate": Attr("shape", (), "Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1 for each "
                                "dimension."),
    "pad": Attr("shape", (), "Zero pad for convolution: (w,), (h, w) or (d, h, w). Defaults to no padding."),
    "num_filter": Attr("int", doc="Convolution filter(channel) number"),
    "num_group": Attr("int", 1, "Number of group partitions."),
}
_TAIL_ATTRS = {
    "cudnn_tune": Attr("str", None, "Whether to pick convolution algo by running performance test "
                                    "(accepted and ignored).",
                       choices=("off", "limited_workspace", "fastest")),
    "cudnn_off": Attr("bool", False, "Turn off cudnn for this layer (accepted and ignored)."),
    "layout": Attr("str", None, "Set layout for input, output and weight. Empty for default layout: NCW for "
                                "1d, NCHW for 2d and NCDHW for 3d.",
                   choices=("NCW", "NCHW", "NCDHW", "NHWC", "NDHWC")),
}
CONV_ATTRS = {
    **_COMMON_ATTRS,
    "workspace": Attr("int", 1024, "Maximum temporary workspace allowed (MB) in convolution (accepted and "
                                   "ignored)."),
    "no_bias": Attr("bool", False, "Whether to disable bias parameter."),
    **_TAIL_ATTRS,
}


def _inputs(a: Attrs) -> tuple:
    return ("data", "weight") if a.no_bias else ("data", "weight", "bias")


def _conv_geometry(op: str, a: Attrs) -> Geometry:
    """Validated kernel/stride/dilate/pad/groups of a (de)convolution."""
    nsp = len(a.kernel)
    if nsp not in (1, 2, 3):
        raise AttrError(f"operator {op}: kernel must have 1, 2 or 3 entries, got {a.kernel}")
    kernel = spatial_tuple(op, "kernel", a.kernel, nsp, 1, 1)
    if a.num_filter < 1:
        raise AttrError(f"operator {op}: attribute 'num_filter' must be >= 1, got {a.num_filter}")
    if a.num_group < 1:
        raise AttrError(f"operator {op}: attribute 'num_group' must be >= 1, got {a.num_group}")
    if a.num_filter % a.num_group:
        raise AttrError(f"operator {op}: num_filter ({a.num_filter}) must be divisible by num_group "
                        f"({a.num_group})")
    return Geometry(kernel, spatial_tuple(op, "stride", a.stride, nsp, 1, 1),
                    spatial_tuple(op, "dilate", a.dilate, nsp, 1, 1),
                    spatial_tuple(op, "pad", a.pad, nsp, 0, 0), a.num_group)


def _check_data(op: str, a: Attrs, dshape: Shape, nsp: int) -> bool:
    if len(dshape) != nsp + 2:
        raise ShapeError(f"operator {op}: data must be {nsp + 2}-D for a {nsp}-D kernel {tuple(a.kernel)}, "
                         f"got shape {tuple(dshape)}")
    check_layout(op, a.layout, len(dshape))
    return is_channel_last(a.layout)


def _weight_layout(shape_cf: Shape, channel_last: bool) -> Shape:
    """A (O, I, *k) weight shape in the op's layout ((O, *k, I) for channel-last)."""
    return (shape_cf[0], *shape_cf[2:], shape_cf[1]) if channel_last else tuple(shape_cf)


def _weight_cf(shape: Shape, channel_last: bool) -> Shape:
    return (shape[0], shape[-1], *shape[1:-1]) if channel_last else tuple(shape)


def _conv_shape(a: Attrs, dshape, wshape=None, bshape=None):
    """weight (num_filter, C/num_group, *kernel) and bias (num_filter,) from the data;
    the data's channels from the weight; the output from both."""
    op = "Convolution"
    geo = _conv_geometry(op, a)
    nsp = len(geo.kernel)
    if dshape is None:
        return None
    cl = _check_data(op, a, dshape, nsp)
    d_cf = list(to_cf_shape(dshape, cl))
    g = geo.groups
    if d_cf[1] == 0 and wshape is not None and _weight_cf(wshape, cl)[1]:
        d_cf[1] = _weight_cf(wshape, cl)[1] * g
    c = d_cf[1]
    if c and c % g:
        raise ShapeError(f"operator {op}: data has {c} channels, not divisible by num_group {g}")
    wshape = _merge(op, "weight", wshape, _weight_layout((a.num_filter, c // g, *geo.kernel), cl))
    ins = [from_cf_shape(tuple(d_cf), cl), wshape]
    if not a.no_bias:
        ins.append(_merge(op, "bias", bshape, (a.num_filter,)))
    out_sp = []
    for i, x in enumerate(d_cf[2:]):
        dk = geo.dilate[i] * (geo.kernel[i] - 1) + 1
        if x and dk > x + 2 * geo.pad[i]:
            raise ShapeError(f"operator {op}: dilated kernel size {dk} exceeds the padded input size "
                             f"{x + 2 * geo.pad[i]} (data {tuple(dshape)}, pad {geo.pad})")
        out_sp.append((x + 2 * geo.pad[i] - dk) // geo.stride[i] + 1 if x else 0)
    out = from_cf_shape((d_cf[0], a.num_filter, *out_sp), cl)
    return ins, [out]


def _conv_data_from_output(a: Attrs, ins, outs):
    """The data's batch from the output's, and each spatial size from the output's where the
    stride is 1 (MXNet's ConvolutionShape back-inference)."""
    dshape, oshape = ins[0], outs[0]
    geo = _conv_geometry("Convolution", a)
    nsp = len(geo.kernel)
    if dshape is None or oshape is None or len(dshape) != nsp + 2 or len(oshape) != nsp + 2:
        return None
    cl = is_channel_last(a.layout)
    o_cf = to_cf_shape(oshape, cl)
    d_cf = [o_cf[0], 0]
    for i, o in enumerate(o_cf[2:]):
        dk = geo.dilate[i] * (geo.kernel[i] - 1) + 1
        d_cf.append(o + dk - 1 - 2 * geo.pad[i] if o and geo.stride[i] == 1 else 0)
    return [from_cf_shape(tuple(d_cf), cl)] + [None] * (len(ins) - 1)


def _same_types(op: str, names: tuple):
    """MXNet's (de)convolution typing: every input takes the first input's dtype."""

    def infer_type(a: Attrs, *dtypes):
        first = dtypes[0]
        if first is None:
            return None
        for name, d in zip(names, dtypes):
            if d is not None and d != first:
                raise DTypeError(f"operator {op}: input {name!r} has dtype {np.dtype(d).name}, "
                                 f"expected {np.dtype(first).name} (the data's)")
        return [first] * len(dtypes), [first] * (len(dtypes) - 1 if names[0] == "ograd" else 1)

    return infer_type


def _conv_type(a: Attrs, *dtypes):
    return _same_types("Convolution", _inputs(a))(a, *dtypes)


def _prepare(xp, op: str, a: Attrs, data, weight, shape_fn):
    """Validate shapes, then return (geometry, channel_last, data_cf, weight_cf)."""
    shape_fn(a, data.shape, weight.shape)
    geo = _conv_geometry(op, a)
    cl = is_channel_last(a.layout)
    w_cf = weight if not cl else weight.transpose(0, weight.ndim - 1, *range(1, weight.ndim - 1))
    return geo, cl, to_cf(data, cl), w_cf


@register("Convolution", aliases=("_npx_convolution",), inputs=_inputs, learnable=("weight", "bias"),
          affine_channel=lambda a: (-1 if is_channel_last(a.layout) else 1, 0),
          attrs=dict(CONV_ATTRS), infer_shape=_conv_shape, infer_type=_conv_type, hint="convolution",
          writes_out=True, scratch=True)
def Convolution(xp, a: Attrs, data, weight, bias=None, out=None, scratch=None):
    """N-D cross-correlation of data with weight (+ bias), grouped by num_group; written into
    `out[0]` when the memory planner hands a buffer, with temporaries in `scratch` (a plan's lent buffer)."""
    geo, cl, x, w = _prepare(xp, "Convolution", a, data, weight, _conv_shape)
    if out is None:
        return (from_cf(xp, conv_forward(xp, x, w, bias, geo, workspace=scratch), cl),)
    if not cl:
        return (conv_forward(xp, x, w, bias, geo, out=out[0], workspace=scratch),)
    out[0][...] = from_cf(xp, conv_forward(xp, x, w, bias, geo, workspace=scratch), cl)
    return (out[0],)


Convolution.shape_from_outputs = _conv_data_from_output


@Convolution.def_gradient
def _conv_gradient(F, a, inputs, outputs, ograds, wanted=None):
    """One `_backward_Convolution` node (MXNet's), or the weight (and bias) gradient alone when
    the data's gradient is not `wanted` (the first layer's data: no transposed convolution
    of the whole batch for nothing)."""
    if wanted is not None and 0 not in wanted:
        res = F._backward_Convolution_weight(ograds[0], inputs[0], *inputs[2:], **given_attrs(a))
        return [None, res] if a.no_bias else [None, res[0], res[1]]
    res = F._backward_Convolution(ograds[0], *inputs, **given_attrs(a))
    return [res[i] for i in range(len(inputs))]


def _grad_outputs(a: Attrs) -> tuple:
    return ("data_grad", "weight_grad") if a.no_bias else ("data_grad", "weight_grad", "bias_grad")


def _backward_shape(forward_shape):
    def infer_shape(a: Attrs, gshape, dshape, wshape=None, bshape=None):
        fwd = forward_shape(a, dshape, wshape, *([] if a.no_bias else [bshape]))
        if fwd is None:
            return None
        ins, outs = fwd
        return [_merge("backward", "ograd", gshape, outs[0]), *ins], list(ins)
    return infer_shape


def _conv_backward_type(a: Attrs, *dtypes):
    return _same_types("_backward_Convolution", ("ograd",) + _inputs(a))(a, *dtypes)


@register("_backward_Convolution", inputs=lambda a: ("ograd",) + _inputs(a), outputs=_grad_outputs,
          attrs=dict(CONV_ATTRS), infer_shape=_backward_shape(_conv_shape), infer_type=_conv_backward_type)
def _backward_Convolution(xp, a: Attrs, ograd, data, weight, bias=None):
    """Gradients of Convolution with respect to data, weight (and bias)."""
    geo, cl, x, w = _prepare(xp, "Convolution", a, data, weight, _conv_shape)
    g = to_cf(ograd, cl)
    dx = conv_data_grad(xp, g, w, x.shape, geo)
    dw = conv_weight_grad(xp, g, x, w.shape, geo)
    return _grads_out(xp, dx, dw, g, bias, cl)


def _grads_out(xp, dx, dw, g, bias, cl: bool) -> tuple:
    """(data, weight[, bias]) gradients in the caller's layout, from the channels-first
    data and weight gradients and the channels-first head gradient `g`."""
    if cl:
        dw = xp.ascontiguousarray(dw.transpose(0, *range(2, dw.ndim), 1))
    out = [None if dx is None else from_cf(xp, dx, cl), dw]
    if bias is not None:
        out.append(bias_grad(g).astype(bias.dtype, copy=False))
    return tuple(out)


@_backward_Convolution.def_gradient
def _conv_backward_gradient(F, a, inputs, outputs, ograds):
    """The backward is bilinear in (ograd, data) and (ograd, weight): its gradients are
    convolutions again (see nn.FullyConnected for the same construction)."""
    g, data, weight = inputs[:3]
    kw = given_attrs(a)
    kw_nb = {**kw, "no_bias": True}
    from_dx = (F.Convolution(ograds[0], weight, **kw_nb) if a.no_bias
               else F.Convolution(ograds[0], weight, ograds[2], **kw))
    d_g = F.elemwise_add(from_dx, F.Convolution(data, ograds[1], **kw_nb))
    d_data = F._backward_Convolution(g, data, ograds[1], **kw_nb)[0]
    d_weight = F._backward_Convolution(g, ograds[0], weight, **kw_nb)[1]
    return [d_g, d_data, d_weight] + ([] if a.no_bias else [None])


# -- the weight gradient alone (the data's gradient is not wanted)


def _weight_grad_inputs(a: Attrs) -> tuple:
    return ("ograd", "data") if a.no_bias else ("ograd", "data", "bias")


def _weight_grad_outputs(a: Attrs) -> tuple:
    return ("weight_grad",) if a.no_bias else ("weight_grad", "bias_grad")


def _weight_grad_shape(a: Attrs, gshape, dshape, bshape=None):
    fwd = _conv_shape(a, dshape, None, bshape)
    if fwd is None:
        return None
    ins, outs = fwd
    return [_merge("_backward_Convolution_weight", "ograd", gshape, outs[0]), ins[0], *ins[2:]], list(ins[1:])


def _weight_grad_type(a: Attrs, *dtypes):
    return _same_types("_backward_Convolution_weight", _weight_grad_inputs(a))(a, *dtypes)


@register("_backward_Convolution_weight", inputs=_weight_grad_inputs, outputs=_weight_grad_outputs,
          attrs=dict(CONV_ATTRS), infer_shape=_weight_grad_shape, infer_type=_weight_grad_type,
          doc="Convolution's weight (and bias) gradients without the data's (hybridgraph helper: "
              "the gradient rule uses it where the data's gradient is not wanted).")
def _backward_Convolution_weight(xp, a: Attrs, ograd, data, bias=None):
    """Gradients of Convolution with respect to weight (and bias) only."""
    ins, _ = _conv_shape(a, data.shape, None, None if bias is None else bias.shape)
    geo = _conv_geometry("Convolution", a)
    cl = is_channel_last(a.layout)
    g = to_cf(ograd, cl)
    dw = conv_weight_grad(xp, g, to_cf(data, cl), _weight_cf(ins[1], cl), geo)
    return _grads_out(xp, None, dw, g, bias, cl)[1:]


@_backward_Convolution_weight.def_gradient
def _conv_weight_grad_gradient(F, a, inputs, outputs, ograds):
    """Bilinear in (ograd, data): the adjoints are a forward convolution with the weight
    gradient's cotangent (plus its bias part) and the data gradient of that cotangent."""
    g, data = inputs[:2]
    kw_nb = {**given_attrs(a), "no_bias": True}
    d_g = (F.Convolution(data, ograds[0], **kw_nb) if a.no_bias
           else F.Convolution(data, ograds[0], ograds[1], **given_attrs(a)))
    d_data = F._backward_Convolution(g, data, ograds[0], **kw_nb)[0]
    return [d_g, d_data] + ([] if a.no_bias else [None])
