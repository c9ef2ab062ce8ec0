"""Convolution (MXNet 1.9.1 semantics), 1-D, 2-D and 3-D, and the GEMM kernels
and geometry helpers shared with Deconvolution (deconv.py), pool.py and
spatial.py.

Kernels are GEMMs over an im2col matrix built from a strided window view of the
padded input, so there is no Python loop over pixels or batch:

* forward: `cols` has layout (C, *kernel, N, *out) -- contiguous, with the
  input channels outermost so groups are a free reshape to (G, C/G*K, N*P);
  the output is one (batched-over-groups) matmul `W (G, O/G, C/G*K) @ cols`;
* weight gradient: one matmul `ograd (G, O/G, N*P) @ cols^T`;
* data gradient: one matmul `W^T @ ograd`, then col2im, which loops only over
  the kernel offsets (kh*kw, small) accumulating strided slices.

Deconvolution (deconv.py) is the adjoint of Convolution and reuses these
kernels. Channel-last layouts (NWC/NHWC/NDHWC) are computed by transposing to
channel-first and back (MXNet 1.9.1 runs them only on GPU).

Deliberate differences from MXNet 1.9.1: 3-D dilation runs on CPU (MXNet
refuses it without cuDNN).
"""
from __future__ import annotations

import itertools

import numpy as np

from ..attrs import Attr, Attrs
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register

Shape = tuple

_CHANNEL_LAST = {"NWC", "NHWC", "NDHWC"}
_LAYOUTS = {1: ("NCW", "NWC"), 2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}


# ---------------------------------------------------------------------------
# geometry helpers (shared with pool.py and spatial.py)


def prod(dims) -> int:
    """Product of a sequence of ints (1 for an empty one)."""
    out = 1
    for d in dims:
        out *= int(d)
    return out


def given_attrs(a: Attrs) -> dict:
    """The attributes a call gave (MXNet strings), without hidden `__x__` ones."""
    return {k: v for k, v in a.given.items() if not (k.startswith("__") and k.endswith("__"))}


def spatial_tuple(op: str, name: str, value: tuple, nsp: int, default: int, low: int) -> tuple:
    """An attribute tuple per spatial dim (empty = `default`), validated against `low`."""
    if not value:
        return (default,) * nsp
    value = tuple(int(v) for v in value)
    if len(value) != nsp:
        raise AttrError(f"operator {op}: attribute {name!r} must have {nsp} entries like the kernel, "
                        f"got {value}")
    if any(v < low for v in value):
        raise AttrError(f"operator {op}: attribute {name!r} entries must be >= {low}, got {value}")
    return value


def is_channel_last(layout: str | None) -> bool:
    return layout in _CHANNEL_LAST


def check_layout(op: str, layout: str | None, ndim: int) -> None:
    """The layout (if given) must match the data's number of dimensions."""
    if layout is not None and layout not in _LAYOUTS.get(ndim - 2, ()):
        raise ShapeError(f"operator {op}: layout {layout} does not fit {ndim}-D data; expected one of "
                         f"{list(_LAYOUTS.get(ndim - 2, ()))}")


def to_cf_shape(shape: Shape, channel_last: bool) -> Shape:
    """(N, *sp, C) -> (N, C, *sp) when channel-last, else unchanged."""
    if not channel_last:
        return tuple(shape)
    return (shape[0], shape[-1], *shape[1:-1])


def from_cf_shape(shape: Shape, channel_last: bool) -> Shape:
    """(N, C, *sp) -> (N, *sp, C) when channel-last, else unchanged."""
    if not channel_last:
        return tuple(shape)
    return (shape[0], *shape[2:], shape[1])


def to_cf(x, channel_last: bool):
    """A channel-last array as a channel-first view."""
    return x if not channel_last else x.transpose(0, x.ndim - 1, *range(1, x.ndim - 1))


def from_cf(xp, x, channel_last: bool):
    """A channel-first array back in channel-last layout (contiguous copy)."""
    return x if not channel_last else xp.ascontiguousarray(x.transpose(0, *range(2, x.ndim), 1))


def pad_spatial(xp, x, lo: tuple, hi: tuple, value: float = 0.0):
    """Pad the spatial dims (2..) of a channel-first array by `lo` before and `hi` after."""
    if not any(lo) and not any(hi):
        return x
    shape = x.shape[:2] + tuple(s + b + e for s, b, e in zip(x.shape[2:], lo, hi))
    out = xp.full(shape, value, dtype=x.dtype) if value != 0 else xp.zeros(shape, dtype=x.dtype)
    out[(slice(None), slice(None)) + tuple(slice(b, b + s) for b, s in zip(lo, x.shape[2:]))] = x
    return out


def offset_slices(offset: tuple, stride: tuple, out_sp: tuple) -> tuple:
    """Index of the input elements that kernel offset `offset` (already times dilation)
    touches for every output position."""
    return (slice(None), slice(None)) + tuple(
        slice(o, o + s * (n - 1) + 1, s) for o, s, n in zip(offset, stride, out_sp))


def kernel_offsets(kernel: tuple, dilate: tuple):
    """Every kernel tap as (tap index tuple, input offset tuple), in row-major order."""
    for idx in itertools.product(*(range(k) for k in kernel)):
        yield idx, tuple(i * d for i, d in zip(idx, dilate))


def window_view(xp, x, out_sp: tuple, kernel: tuple, stride: tuple, dilate: tuple):
    """Strided view (N, C, *out, *kernel) of a channel-first array's sliding windows."""
    st = x.strides
    n = len(kernel)
    shape = tuple(x.shape[:2]) + tuple(out_sp) + tuple(kernel)
    strides = tuple(st[:2]) + tuple(st[2 + i] * stride[i] for i in range(n)) + \
        tuple(st[2 + i] * dilate[i] for i in range(n))
    return xp.lib.stride_tricks.as_strided(x, shape=shape, strides=strides)


# ---------------------------------------------------------------------------
# GEMM kernels (channel-first; all shapes already validated)


class Geometry:
    """Kernel, stride, dilation and (symmetric) padding of one convolution."""

    __slots__ = ("kernel", "stride", "dilate", "pad", "groups")

    def __init__(self, kernel: tuple, stride: tuple, dilate: tuple, pad: tuple, groups: int):
        self.kernel, self.stride, self.dilate, self.pad, self.groups = kernel, stride, dilate, pad, groups

    def out_size(self, in_sp: tuple) -> tuple:
        return tuple((x + 2 * p - (d * (k - 1) + 1)) // s + 1
                     for x, p, k, s, d in zip(in_sp, self.pad, self.kernel, self.stride, self.dilate))


def _im2col(xp, x, geo: Geometry, out_sp: tuple):
    """Columns (G, C/G*K, N*P) of a channel-first input, contiguous."""
    n, c = x.shape[:2]
    xpad = pad_spatial(xp, x, geo.pad, geo.pad)
    win = window_view(xp, xpad, out_sp, geo.kernel, geo.stride, geo.dilate)
    nsp = len(geo.kernel)
    perm = (1, *range(2 + nsp, 2 + 2 * nsp), 0, *range(2, 2 + nsp))
    cols = xp.ascontiguousarray(win.transpose(perm))
    return cols.reshape(geo.groups, c // geo.groups * prod(geo.kernel), n * prod(out_sp))


def _col2im(xp, cols, x_shape: tuple, geo: Geometry, out_sp: tuple):
    """Sum columns (C, *kernel, N, *out) back into an array of `x_shape` (adjoint of im2col)."""
    n, c = x_shape[:2]
    padded = (n, c) + tuple(s + 2 * p for s, p in zip(x_shape[2:], geo.pad))
    out = xp.zeros(padded, dtype=cols.dtype)
    cols = cols.reshape((c, *geo.kernel, n, *out_sp))
    for idx, off in kernel_offsets(geo.kernel, geo.dilate):
        out[offset_slices(off, geo.stride, out_sp)] += cols[(slice(None), *idx)].swapaxes(0, 1)
    if any(geo.pad):
        out = out[(slice(None), slice(None)) + tuple(slice(p, p + s) for p, s in zip(geo.pad, x_shape[2:]))]
        out = xp.ascontiguousarray(out)
    return out


def _ograd_rows(xp, g, groups: int):
    """Output-shaped (N, O, *out) array as contiguous (G, O/G, N*P) rows."""
    n, o = g.shape[:2]
    g3 = g.reshape(n, groups, o // groups, -1)
    return xp.ascontiguousarray(g3.transpose(1, 2, 0, 3)).reshape(groups, o // groups, -1)


def _is_pointwise(geo: Geometry) -> bool:
    return all(k == 1 for k in geo.kernel) and not any(geo.pad) and geo.groups == 1


def conv_forward(xp, x, w, b, geo: Geometry):
    """Channel-first convolution: (N, C, *in) x (O, C/G, *k) -> (N, O, *out)."""
    n, o = x.shape[0], w.shape[0]
    out_sp = geo.out_size(x.shape[2:])
    if _is_pointwise(geo):
        xs = x[(slice(None), slice(None)) + tuple(slice(None, None, s) for s in geo.stride)]
        # BLAS needs contiguous operands (numpy falls back to a slow loop otherwise)
        xs = xp.ascontiguousarray(xs).reshape(n, x.shape[1], -1)
        res = xp.matmul(w.reshape(o, -1), xs)
        res = res.reshape((n, o, *out_sp))
        if b is not None:
            res += b.reshape((1, o) + (1,) * len(out_sp))
        return res
    cols = _im2col(xp, x, geo, out_sp)
    prodt = xp.matmul(w.reshape(geo.groups, o // geo.groups, -1), cols)  # (G, O/G, N*P)
    prodt = prodt.reshape(o, n, -1).transpose(1, 0, 2)
    res = xp.empty((n, o, prod(out_sp)), dtype=prodt.dtype)
    if b is None:
        res[...] = prodt
    else:
        xp.add(prodt, b.reshape(1, o, 1), out=res)
    return res.reshape((n, o, *out_sp))


def conv_data_grad(xp, g, w, x_shape: tuple, geo: Geometry):
    """Gradient of conv_forward with respect to its data (the transposed convolution)."""
    g_rows = _ograd_rows(xp, g, geo.groups)  # (G, O/G, N*P)
    o = w.shape[0]
    w3 = w.reshape(geo.groups, o // geo.groups, -1)
    dcols = xp.matmul(w3.transpose(0, 2, 1), g_rows)  # (G, C/G*K, N*P)
    return _col2im(xp, dcols, x_shape, geo, tuple(g.shape[2:]))


def conv_weight_grad(xp, g, x, w_shape: tuple, geo: Geometry):
    """Gradient of conv_forward with respect to its weight."""
    out_sp = tuple(g.shape[2:])
    cols = _im2col(xp, x, geo, out_sp)
    g_rows = _ograd_rows(xp, g, geo.groups)
    # (cols @ g^T)^T rather than g @ cols^T: OpenBLAS is several times slower on the
    # latter's shape (small M and N, huge K in row-major order)
    dw_t = xp.matmul(cols, g_rows.transpose(0, 2, 1))  # (G, C/G*K, O/G)
    return xp.ascontiguousarray(dw_t.transpose(0, 2, 1)).reshape(w_shape)


def bias_grad(g):
    """Sum of an output-shaped gradient over every axis but the channels (1)."""
    return g.sum(axis=(0, *range(2, g.ndim)))


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


def _merge(op: str, name: str, got, want):
    try:
        return merge_shape(got, want)
    except ShapeError:
        raise ShapeError(f"operator {op}: input {name!r} has shape {tuple(got)}, "
                         f"expected {tuple(want)}") from None


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
          attrs=dict(CONV_ATTRS), infer_shape=_conv_shape, infer_type=_conv_type, hint="convolution")
def Convolution(xp, a: Attrs, data, weight, bias=None):
    """N-D cross-correlation of data with weight (+ bias), grouped by num_group."""
    geo, cl, x, w = _prepare(xp, "Convolution", a, data, weight, _conv_shape)
    return (from_cf(xp, conv_forward(xp, x, w, bias, geo), cl),)


@Convolution.def_gradient
def _conv_gradient(F, a, inputs, outputs, ograds):
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
    if cl:
        dw = xp.ascontiguousarray(dw.transpose(0, *range(2, dw.ndim), 1))
    out = [from_cf(xp, dx, cl), dw]
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
