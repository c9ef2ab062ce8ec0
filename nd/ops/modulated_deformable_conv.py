"""ModulatedDeformableConvolution (MXNet 1.9.1, src/operator/contrib/modulated_deformable_convolution*;
Zhu et al., "Deformable ConvNets v2", 2018): DeformableConvolution whose sampled taps are also
scaled by a learned per-tap `mask` (N, kh * kw * num_deformable_group, out_h, out_w).

Sampling, convolution and gradients are nd/ops/deformable_conv.py's, under the "v2" border
rule (a tap reads zero unless -1 < y < H and -1 < x < W, and each neighbour outside the image
reads zero). The mask's gradient is the column gradient times the sampled value, summed over
the channels of its deformable group. `im2col_step` only chunks MXNet's batch loop (the values
do not depend on it); a batch larger than it must divide by it, as MXNet checks.
MXNet 1.9.1 computes the gradients on GPU only; here they run on every device.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import ShapeError
from ..registry import register
from .deformable_conv import ATTRS, conv_shapes, conv_types, deform_backward, deform_forward, geometry, sample_taps

_OP = "_contrib_ModulatedDeformableConvolution"
_ATTRS = dict(ATTRS, im2col_step=Attr(
    "int", 64, "Maximum number of images per im2col computation; The total batch size should be divisable by "
               "this value or smaller than this value; if you face out of memory problem, you can try to use a "
               "smaller value here."))


def _inputs(a) -> tuple:
    return ("data", "offset", "mask", "weight") + (() if a.no_bias else ("bias",))


def _shape(a, d, o, m, w, b=None):
    res = conv_shapes(_OP, a, d, {"offset": (o, 2), "mask": (m, 1)}, w, b)
    if res is not None:
        if a.num_filter % a.num_deformable_group:
            raise ShapeError(f"operator {_OP}: num_filter ({a.num_filter}) must divide by num_deformable_group "
                             f"({a.num_deformable_group})")
        if a.im2col_step < 1 or (d[0] > a.im2col_step and d[0] % a.im2col_step):
            raise ShapeError(f"operator {_OP}: the batch size {d[0]} must be at most im2col_step "
                             f"({a.im2col_step}) or divide by it")
    return res


def _mask(a, mask):
    n = mask.shape[0]
    return mask.astype(np.float64).reshape(n, a.num_deformable_group, -1)        # (N, G, K*P)


@register(_OP, hint="modulateddeformableconvolution", inputs=_inputs, learnable=("weight", "bias"),
          attrs=_ATTRS, infer_shape=_shape, infer_type=lambda a, *ts: conv_types(_OP, _inputs(a), ts))
def ModulatedDeformableConvolution(xp, a, data, offset, mask, weight, bias=None):  # noqa: N802
    """Convolution of data sampled at offset kernel taps, each tap scaled by mask (see the module doc)."""
    geometry(a, _OP)
    _, (oshape,) = _shape(a, data.shape, offset.shape, mask.shape, weight.shape,
                          None if bias is None else bias.shape)
    corners = sample_taps(xp, a, data, offset, "v2", _OP)
    return (deform_forward(xp, a, data, corners, weight, bias, oshape, _mask(a, mask)),)


@ModulatedDeformableConvolution.def_gradient
def _(F, a, inputs, outputs, ograds):
    return list(F._backward_ModulatedDeformableConvolution(ograds[0], *inputs, **a.given))


def _backward_outputs(a) -> tuple:
    return tuple(f"{name}_grad" for name in _inputs(a))


def _backward_shape(a, g, *s):
    res = _shape(a, *s)
    return None if res is None else ([res[1][0]] + res[0], res[0])


@register("_backward_ModulatedDeformableConvolution", inputs=lambda a: ("ograd",) + _inputs(a),
          outputs=_backward_outputs, attrs=dict(_ATTRS), infer_shape=_backward_shape,
          infer_type=lambda a, tg, *ts: None if ts[0] is None else ([ts[0]] * (1 + len(ts)), [ts[0]] * len(ts)))
def _backward_ModulatedDeformableConvolution(xp, a, ograd, data, offset, mask, weight, bias=None):  # noqa: N802
    """Gradients of ModulatedDeformableConvolution for data, offset, mask, weight (and bias)."""
    corners = sample_taps(xp, a, data, offset, "v2", _OP)
    grads = deform_backward(xp, a, ograd, data, corners, offset, weight, bias, _mask(a, mask))
    grads[2] = grads[2].reshape(mask.shape).astype(mask.dtype)
    return tuple(grads)
