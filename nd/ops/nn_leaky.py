"""LeakyReLU (MXNet 1.9.1 semantics): leaky, prelu, rrelu, elu, selu and gelu, with its
gradient. Deliberate difference from MXNet: LeakyReLU(selu)'s backward is the true derivative
`y + lambda*alpha` for x<0, where MXNet computes `lambda*(y + alpha)` (formats.md section 3);
rrelu's mask output at inference holds the fixed slope (MXNet leaves it uninitialised), so a
backward at inference is still the right derivative.
"""
from __future__ import annotations

import math

import numpy as np

from .. import rng
from ..attrs import Attr
from ..errors import DTypeError, ShapeError
from ..registry import register, same_type
from . import special
from .nn import _positive, _select

_SELU_LAMBDA = 1.0507009873554804934193349852946
_SELU_ALPHA = 1.6732632423543772848170429916717


def _leaky_inputs(a) -> tuple:
    return ("data", "gamma") if a.act_type == "prelu" else ("data",)


def _leaky_outputs(a) -> tuple:
    return ("output", "mask") if a.act_type == "rrelu" else ("output",)


def _channel_axis(ndim: int) -> int:
    """The axis PReLU's gamma runs along: 1, or 0 for 1-D data."""
    return 1 if ndim >= 2 else 0


def _gamma_view(shape: tuple, gshape: tuple) -> tuple:
    """The shape gamma takes to broadcast against data of `shape`: a 1-D gamma runs along the
    channel axis; a higher-rank one lines up with the leading axes (MXNet 1.9.1: (N, C) gamma
    for (N, C, H, W) data)."""
    if 1 < len(gshape) <= len(shape):
        return tuple(gshape) + (1,) * (len(shape) - len(gshape))
    gamma_size = int(np.prod(gshape))
    if gamma_size == 1:
        return (1,) * len(shape)
    view = [1] * len(shape)
    view[_channel_axis(len(shape))] = gamma_size
    return tuple(view)


def _leaky_shape(a, dshape, gshape=None):
    if dshape is None or len(dshape) == 0:
        return None
    ins = [tuple(dshape)]
    if a.act_type == "prelu":
        chans = dshape[_channel_axis(len(dshape))]
        if gshape is None or gshape == (0,):
            gshape = (chans,)
        elif not ((len(gshape) == 1 and gshape[0] in (1, chans))
                  or (1 < len(gshape) <= len(dshape) and all(g in (1, d) for g, d in zip(gshape, dshape)))):
            raise ShapeError(f"operator LeakyReLU(prelu): input 'gamma' has shape {tuple(gshape)}, "
                             f"expected ({chans},), (1,) or a shape that broadcasts to the leading axes "
                             f"of the data's {tuple(dshape)}")
        ins.append(tuple(gshape))
    return ins, [tuple(dshape)] * len(_leaky_outputs(a))


def _leaky_type(a, *dtypes):
    res = same_type(a, *dtypes)
    if res is None:
        return None
    ins, outs = res
    return ins, outs * len(_leaky_outputs(a))


def _rrelu_mask(xp, a, data, is_train: bool):
    if is_train:
        r = rng.generator(xp).random(data.shape)
        return (a.lower_bound + (a.upper_bound - a.lower_bound) * r).astype(data.dtype)
    return xp.full(data.shape, (a.lower_bound + a.upper_bound) / 2, dtype=data.dtype)


@register("LeakyReLU", inputs=_leaky_inputs, outputs=_leaky_outputs, learnable=("gamma",),
          infer_shape=_leaky_shape, infer_type=_leaky_type, train_aware=True,
          is_random=lambda a: a.act_type == "rrelu", var_init={1: '["Constant", {"value": 0.25}]'},
          attrs={"act_type": Attr("str", "leaky", "Activation function to be applied.",
                                  choices=("elu", "gelu", "leaky", "prelu", "rrelu", "selu")),
                 "slope": Attr("float", 0.25, "Init slope for the activation. (For leaky and elu only)"),
                 "lower_bound": Attr("float", 0.125, "Lower bound of random slope. (For rrelu only)"),
                 "upper_bound": Attr("float", 0.334, "Upper bound of random slope. (For rrelu only)")})
def LeakyReLU(xp, a, data, gamma=None, *, is_train=False):
    """Leaky/parametric/randomized ReLU, ELU, SELU and GELU (erf form)."""
    if data.dtype.kind != "f":
        raise DTypeError(f"operator LeakyReLU: only floating point data is supported, got {data.dtype}")
    t, pos = a.act_type, data > 0
    if t == "leaky":
        return (xp.where(pos, data, data * a.slope).astype(data.dtype, copy=False),)
    if t == "prelu":
        _leaky_shape(a, data.shape, gamma.shape)
        slope = gamma.reshape(_gamma_view(data.shape, gamma.shape))
        return (xp.where(pos, data, data * slope).astype(data.dtype, copy=False),)
    if t == "rrelu":
        mask = _rrelu_mask(xp, a, data, is_train)
        return (xp.where(pos, data, data * mask), mask)
    if t == "elu":
        return (xp.where(pos, data, a.slope * xp.expm1(data)).astype(data.dtype, copy=False),)
    if t == "selu":
        return ((_SELU_LAMBDA * xp.where(pos, data, _SELU_ALPHA * xp.expm1(data))).astype(data.dtype),)
    cdf = 0.5 * (1 + special.erf(xp, data / math.sqrt(2)))
    return ((data * cdf).astype(data.dtype),)


def _gelu_derivative(F, x):
    """Phi(x) + x * phi(x) for gelu(x) = x * Phi(x)."""
    cdf = F._plus_scalar(F._mul_scalar(F.erf(F._mul_scalar(x, scalar=1 / math.sqrt(2))), scalar=0.5),
                         scalar=0.5)
    pdf = F._mul_scalar(F.exp(F._mul_scalar(F.square(x), scalar=-0.5)), scalar=1 / math.sqrt(2 * math.pi))
    return F.elemwise_add(cdf, F.elemwise_mul(x, pdf))


@LeakyReLU.def_gradient
def _leaky_gradient(F, a, inputs, outputs, ograds):
    x, y, g = inputs[0], outputs[0], ograds[0]
    t = a.act_type
    if t == "gelu":
        return [F.elemwise_mul(g, _gelu_derivative(F, x))]
    m = _positive(F, x)
    if t == "leaky":
        factor = F._plus_scalar(F._mul_scalar(m, scalar=1.0 - a.slope), scalar=a.slope)
    elif t == "elu":  # slope * exp(x) == y + slope where x <= 0
        factor = _select(F, m, F.ones_like(x), F._plus_scalar(y, scalar=a.slope))
    elif t == "selu":  # lambda * alpha * exp(x) == y + lambda * alpha where x <= 0
        factor = _select(F, m, F._mul_scalar(F.ones_like(x), scalar=_SELU_LAMBDA),
                         F._plus_scalar(y, scalar=_SELU_LAMBDA * _SELU_ALPHA))
    elif t == "rrelu":
        factor = _select(F, m, F.ones_like(x), outputs[1])
    else:  # prelu
        gamma = inputs[1]
        neg = F.elemwise_mul(g, F.elemwise_mul(x, F._rminus_scalar(m, scalar=1.0)))
        return [F.elemwise_mul(g, _select(F, m, F.ones_like(x), F._prelu_expand(gamma, x))),
                F._prelu_reduce(neg, gamma)]
    return [F.elemwise_mul(g, factor)]


@register("_prelu_expand", inputs=("gamma", "like"), infer_type=lambda a, g, like: ([g, like], [g]),
          infer_shape=lambda a, g, like: None if like is None else ([g, like], [like]),
          doc="PReLU's gamma broadcast along the channel axis of `like` (hybridgraph helper).")
def _prelu_expand(xp, a, gamma, like):
    view = gamma.reshape(_gamma_view(like.shape, gamma.shape))
    return (xp.broadcast_to(view, like.shape).copy(),)


@register("_prelu_reduce", inputs=("data", "gamma"), infer_type=lambda a, d, g: ([d, g], [d]),
          infer_shape=lambda a, d, g: None if g is None else ([d, g], [g]),
          doc="Sum `data` over every axis but PReLU's channel axis, to gamma's shape (hybridgraph helper).")
def _prelu_reduce(xp, a, data, gamma):
    view = _gamma_view(data.shape, gamma.shape)
    axes = tuple(i for i, (v, d) in enumerate(zip(view, data.shape)) if v == 1 and d != 1)
    return (data.sum(axis=axes, keepdims=True).reshape(gamma.shape),)


_prelu_expand.def_gradient(lambda F, a, inputs, outputs, ograds: [F._prelu_reduce(ograds[0], inputs[0]), None])
_prelu_reduce.def_gradient(lambda F, a, inputs, outputs, ograds: [F._prelu_expand(ograds[0], inputs[0]), None])


