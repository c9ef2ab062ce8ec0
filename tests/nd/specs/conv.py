"""Specs for nd/ops/conv.py: Convolution, Deconvolution and their hidden backward operators.

The float64 numpy references loop over kernel taps only (tiny shapes); the
backward references are vector-Jacobian products of the forward references
(`vjp_ref`), so they check the kernels against an independent formula. They are
also used by tests/nd/test_conv_ops.py.
"""
from __future__ import annotations

import itertools

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr

# ---------------------------------------------------------------------------
# numpy references


def _tup(v, n, default):
    return tuple(v) if v else (default,) * n


def _to_cf(x, layout):
    return np.moveaxis(x, -1, 1) if layout in ("NWC", "NHWC", "NDHWC") else x


def _from_cf(x, layout):
    return np.moveaxis(x, 1, -1) if layout in ("NWC", "NHWC", "NDHWC") else x


def conv_ref(data, weight, bias=None, *, kernel, num_filter, stride=(), dilate=(), pad=(), num_group=1,
             no_bias=False, layout=None, **_):
    """Direct grouped N-d cross-correlation: a sum over kernel taps of einsums."""
    x, w = _to_cf(data, layout), _to_cf(weight, layout)
    n = len(kernel)
    s, d, p = _tup(stride, n, 1), _tup(dilate, n, 1), _tup(pad, n, 0)
    xp_ = np.pad(x, [(0, 0), (0, 0)] + [(q, q) for q in p])
    out_sp = [(xp_.shape[2 + i] - d[i] * (kernel[i] - 1) - 1) // s[i] + 1 for i in range(n)]
    cg, og = x.shape[1] // num_group, num_filter // num_group
    out = np.zeros((x.shape[0], num_filter, *out_sp))
    for g in range(num_group):
        for tap in itertools.product(*(range(k) for k in kernel)):
            sl = tuple(slice(t * d[i], t * d[i] + s[i] * (out_sp[i] - 1) + 1, s[i]) for i, t in enumerate(tap))
            patch = xp_[(slice(None), slice(g * cg, (g + 1) * cg)) + sl]
            out[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...", patch, w[(slice(g * og, (g + 1) * og),
                                                                                   slice(None)) + tap])
    if bias is not None and not no_bias:
        out += bias.reshape((1, -1) + (1,) * n)
    return _from_cf(out, layout)


def deconv_pad_adj(in_sp, kernel, stride, dilate, pad, adj, target_shape):
    n = len(kernel)
    s, d = _tup(stride, n, 1), _tup(dilate, n, 1)
    p, a = list(_tup(pad, n, 0)), list(_tup(adj, n, 0))
    if target_shape and any(target_shape):
        for i, t in enumerate(target_shape):
            if t:
                full = s[i] * (in_sp[i] - 1) + d[i] * (kernel[i] - 1) + 1
                p[i], a[i] = (full - t + 1) // 2, (full - t) % 2
    return s, d, p, a


def deconv_ref(data, weight, bias=None, *, kernel, num_filter, stride=(), dilate=(), pad=(), adj=(),
               target_shape=(), num_group=1, no_bias=True, layout=None, **_):
    """Direct transposed convolution: scatter every input pixel through the kernel."""
    x, w = _to_cf(data, layout), _to_cf(weight, layout)
    n = len(kernel)
    s, d, p, a = deconv_pad_adj(x.shape[2:], kernel, stride, dilate, pad, adj, target_shape)
    out_sp = [s[i] * (x.shape[2 + i] - 1) + d[i] * (kernel[i] - 1) + 1 - 2 * p[i] + a[i] for i in range(n)]
    full = [o + 2 * q for o, q in zip(out_sp, p)]
    cg, fg = x.shape[1] // num_group, num_filter // num_group
    out = np.zeros((x.shape[0], num_filter, *full))
    for g in range(num_group):
        for tap in itertools.product(*(range(k) for k in kernel)):
            sl = tuple(slice(t * d[i], t * d[i] + s[i] * (x.shape[2 + i] - 1) + 1, s[i]) for i, t in enumerate(tap))
            contrib = np.einsum("nc...,cf->nf...", x[:, g * cg:(g + 1) * cg],
                                w[(slice(g * cg, (g + 1) * cg), slice(None)) + tap])
            out[(slice(None), slice(g * fg, (g + 1) * fg)) + sl] += contrib
    out = out[(slice(None), slice(None)) + tuple(slice(q, q + o) for q, o in zip(p, out_sp))]
    if bias is not None and not no_bias:
        out = out + bias.reshape((1, -1) + (1,) * n)
    return _from_cf(out, layout)


def vjp_ref(forward, inputs, ograd, wrt, eps=1e-6, **attrs):
    """Vector-Jacobian products of a float64 reference by central differences, one
    column per input element (tiny inputs only). Exact for (piecewise) linear maps."""
    out = []
    for i in wrt:
        grad = np.zeros(inputs[i].shape)
        for j in range(inputs[i].size):
            moved = [np.array(v, dtype=np.float64, copy=True) for v in inputs]
            moved[i].flat[j] += eps
            hi = np.array(forward(*moved, **attrs), dtype=np.float64, copy=True)
            moved[i].flat[j] -= 2 * eps
            lo = forward(*moved, **attrs)
            grad.flat[j] = ((hi - lo) * ograd).sum() / (2 * eps)
        out.append(grad)
    return tuple(out)


# ---------------------------------------------------------------------------
# cases


@st.composite
def _geometry(draw, nsp=None):
    nsp = nsp or draw(st.sampled_from([1, 2, 2, 3]))
    kernel = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    stride = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    dilate = tuple(draw(st.integers(1, 2)) for _ in range(nsp))
    pad = tuple(draw(st.integers(0, 1)) for _ in range(nsp))
    return nsp, kernel, stride, dilate, pad


def conv_case(draw, *, with_ograd=False):
    nsp, kernel, stride, dilate, pad = draw(_geometry())
    groups = draw(st.sampled_from([1, 1, 2]))
    cin, fil = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    batch = draw(st.integers(1, 2))
    side = 3 if nsp == 3 else 5
    sp = tuple(max(draw(st.integers(2, side)), dilate[i] * (kernel[i] - 1) + 1 - 2 * pad[i]) for i in range(nsp))
    no_bias = draw(st.booleans())
    layout = draw(st.sampled_from([None, None, {1: "NCW", 2: "NHWC", 3: "NDHWC"}[nsp]])) if nsp > 1 else None
    cl = layout in ("NHWC", "NDHWC")
    dshape = (batch, *sp, cin) if cl else (batch, cin, *sp)
    wshape = (fil, *kernel, cin // groups) if cl else (fil, cin // groups, *kernel)
    inputs = [draw(arr(dshape)), draw(arr(wshape))] + ([] if no_bias else [draw(arr((fil,)))])
    attrs = {"kernel": kernel, "stride": stride, "dilate": dilate, "pad": pad, "num_filter": fil,
             "num_group": groups, "no_bias": no_bias}
    if layout:
        attrs["layout"] = layout
    if with_ograd:
        inputs = [draw(arr(conv_ref(*inputs, **attrs).shape))] + inputs
    return inputs, attrs


def deconv_case(draw, *, with_ograd=False):
    nsp, kernel, stride, dilate, pad = draw(_geometry(draw(st.sampled_from([1, 2, 2, 3]))))
    groups = draw(st.sampled_from([1, 1, 2]))
    cin, fil = groups * draw(st.integers(1, 2)), groups * draw(st.integers(1, 2))
    sp = tuple(draw(st.integers(1, 3)) for _ in range(nsp))
    attrs = {"kernel": kernel, "stride": stride, "dilate": dilate, "num_filter": fil, "num_group": groups,
             "no_bias": draw(st.booleans())}
    full = [stride[i] * (sp[i] - 1) + dilate[i] * (kernel[i] - 1) + 1 for i in range(nsp)]
    if draw(st.booleans()):
        cut = [draw(st.integers(0, 2)) for _ in full]
        # adj = (full - target) % 2 must stay below the stride
        cut = [min(c, f - 1) for c, f in zip(cut, full)]
        attrs["target_shape"] = tuple(f - (c if s > 1 else c - c % 2) for f, c, s in zip(full, cut, stride))
    else:
        attrs["pad"] = tuple(min(p, (f - 1) // 2) for p, f in zip(pad, full))
        attrs["adj"] = tuple(draw(st.integers(0, s - 1)) for s in stride)
    inputs = [draw(arr((draw(st.integers(1, 2)), cin, *sp))), draw(arr((cin, fil // groups, *kernel)))]
    if not attrs["no_bias"]:
        inputs.append(draw(arr((fil,))))
    if with_ograd:
        inputs = [draw(arr(deconv_ref(*inputs, **attrs).shape))] + inputs
    return inputs, attrs


def _backward_ref(forward):
    def ref(ograd, *inputs, **attrs):
        grads = vjp_ref(forward, list(inputs[:2]), ograd, (0, 1), **attrs)
        if len(inputs) == 3:
            grads = (*grads, ograd.sum(axis=tuple(i for i in range(ograd.ndim) if i != _chan(attrs, ograd))))
        return grads
    return ref


def _weight_grad_case(draw):
    """A `_backward_Convolution` case without the weight (its gradient does not need it)."""
    inputs, attrs = conv_case(draw, with_ograd=True)
    return [inputs[0], inputs[1]] + inputs[3:], attrs


def _weight_grad_ref(ograd, data, bias=None, **attrs):
    """Convolution's weight (and bias) gradients, by central differences of the reference."""
    cl = attrs.get("layout") in ("NWC", "NHWC", "NDHWC")
    kernel, groups = tuple(attrs["kernel"]), attrs.get("num_group", 1)
    cin = data.shape[-1 if cl else 1] // groups
    wshape = (attrs["num_filter"], *kernel, cin) if cl else (attrs["num_filter"], cin, *kernel)
    inputs = [data, np.zeros(wshape)] + ([] if bias is None else [bias])
    grads = _backward_ref(conv_ref)(ograd, *inputs, **attrs)
    return grads[1] if bias is None else grads[1:]


def _chan(attrs, g):
    return g.ndim - 1 if attrs.get("layout") in ("NWC", "NHWC", "NDHWC") else 1


def fused_conv_case(draw):
    """A Convolution case plus an optional residual (the output's shape) and ReLU. With the
    ReLU, the residual keeps the sum at least 0.05 away from the kink, so that finite
    differences stay valid (the ReLU alone is covered by the pass tests)."""
    inputs, attrs = conv_case(draw)
    relu = draw(st.booleans())
    if relu or draw(st.booleans()):
        conv = conv_ref(*inputs, **attrs)
        res = draw(arr(conv.shape))
        if relu:
            attrs["act_type"] = "relu"
            total = conv + res
            res = np.where(np.abs(total) < 0.05, res + np.where(total < 0, -0.1, 0.1), res)
        attrs["with_residual"] = True
        inputs.append(res)
    return inputs, attrs


def fused_conv_ref(*inputs, act_type=None, with_residual=False, **attrs):
    y = conv_ref(*(inputs[:-1] if with_residual else inputs), **attrs)
    if with_residual:
        y = y + inputs[-1]
    return np.maximum(y, 0) if act_type == "relu" else y


SPECS = [
    OpSpec("Convolution", case=conv_case, ref=conv_ref),
    OpSpec("_fused_convolution", case=fused_conv_case, ref=fused_conv_ref),
    OpSpec("_backward_Convolution", case=lambda draw: conv_case(draw, with_ograd=True),
           ref=_backward_ref(conv_ref), rtol=1e-5, atol=1e-6),
    OpSpec("_backward_Convolution_weight", case=_weight_grad_case, ref=_weight_grad_ref, rtol=1e-5,
           atol=1e-6, grad_inputs=(0, 1)),
    OpSpec("Deconvolution", case=deconv_case, ref=deconv_ref),
    OpSpec("_backward_Deconvolution", case=lambda draw: deconv_case(draw, with_ograd=True),
           ref=_backward_ref(deconv_ref), rtol=1e-5, atol=1e-6),
]
