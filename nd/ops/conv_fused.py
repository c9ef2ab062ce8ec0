"""`_fused_convolution`: a Convolution whose epilogue -- a residual add, then ReLU -- runs on
each chunk of the output right after the GEMM wrote it.

Made only by the fuse_conv_epilogue graph pass (symbol/passes/fuse_conv_epilogue.py) in
inference plans, after BatchNorm was folded into the convolution's weight and bias, so
that ``relu(conv(x) * scale + shift + residual)`` becomes one node: one pass over each
chunk of the output while it is in the CPU caches, instead of the convolution writing the
whole output and two more operators reading and writing it again. Exported JSON never
contains it (export writes the unoptimised graph).

The arithmetic is the unfused one in the same order -- ``(conv + bias) + residual``, then
``maximum(., 0)`` -- so results equal the unfused operators' bit for bit.
"""
from __future__ import annotations

from ..attrs import Attr, Attrs
from ..errors import ShapeError
from ..registry import register
from .conv import CONV_ATTRS, _conv_shape, _conv_type, _prepare, conv_forward, from_cf, given_attrs, to_cf
from .conv_epilogue import epilogue
from .winograd4 import winograd4_forward

_ATTRS = {**CONV_ATTRS,
          "act_type": Attr("str", None, "Activation applied last (only 'relu').", choices=("relu",)),
          "with_residual": Attr("bool", False, "Whether an input (the output's shape) is added "
                                               "before the activation."),
          "winograd": Attr("bool", False, "Whether a last input is the weight transformed for "
                                          "Winograd F(4x4, 3x3) (winograd4.weight4), which then runs.")}


def _inputs(a: Attrs) -> tuple:
    return (("data", "weight") + (() if a.no_bias else ("bias",)) + (("residual",) if a.with_residual else ())
            + (("winograd_weight",) if a.winograd else ()))


def _split(a: Attrs, rest: list) -> tuple:
    """(bias, residual, winograd weight) from the inputs after data and weight (None if absent)."""
    rest = list(rest)
    bias = None if a.no_bias or not rest else rest.pop(0)
    residual = rest.pop(0) if a.with_residual and rest else None
    wino = rest.pop(0) if a.winograd and rest else None
    return bias, residual, wino


def _shape(a: Attrs, dshape, wshape=None, *rest):
    bshape, rshape, ushape = _split(a, rest)
    conv = _conv_shape(a, dshape, wshape, bshape)
    if conv is None:
        return None
    ins, outs = conv
    for given, want, name in ((rshape, outs[0], "residual"),
                              (ushape, (36, ins[1][1], ins[1][0]) if a.winograd else None, "winograd_weight")):
        if given is not None and want is not None and tuple(given) != tuple(want):
            raise ShapeError(f"operator _fused_convolution: {name} has shape {tuple(given)}, expected "
                             f"{tuple(want)}")
    if a.with_residual:
        ins = [*ins, outs[0]]
    if a.winograd:
        ins = [*ins, (36, ins[1][1], ins[1][0])]
    return ins, outs


def _type(a: Attrs, *dtypes):
    n = 2 if a.no_bias else 3
    res = _conv_type(a, *dtypes[:n])
    if res is None:
        return res
    extra = int(a.with_residual) + int(a.winograd)
    return [*res[0], *[res[1][0]] * extra], res[1]


@register("_fused_convolution", inputs=_inputs, attrs=_ATTRS, infer_shape=_shape, infer_type=_type,
          writes_out=True, scratch=True, hint="convolution")
def _fused_convolution(xp, a: Attrs, data, weight, *rest, out=None, scratch=None):
    """relu(Convolution(data, weight, bias) + residual), the epilogue fused into the convolution's
    output chunks (hybridgraph helper made by the fuse_conv_epilogue pass); temporaries in
    `scratch` (a plan's lent buffer)."""
    bias, residual, wino = _split(a, rest)
    geo, cl, x, w = _prepare(xp, "Convolution", a, data, weight, _conv_shape)
    relu = a.act_type == "relu"
    if wino is not None and not cl:
        n, _, h, wd = x.shape
        y = out[0] if out is not None else xp.empty((n, a.num_filter, h + 2 * geo.pad[0] - 2,
                                                     wd + 2 * geo.pad[1] - 2), dtype=x.dtype)
        winograd4_forward(xp, x, wino, bias, geo.pad, y, residual, relu, scratch)
        return (y,)
    if cl:   # channel-last runs through channel-first buffers: the epilogue on the result
        res = from_cf(xp, conv_forward(xp, x, w, bias, geo, workspace=scratch), cl)
        finish = epilogue(xp, residual, relu)
        if finish is not None:
            finish(res, Ellipsis)
        if out is None:
            return (res,)
        out[0][...] = res
        return (out[0],)
    y = conv_forward(xp, x, w, bias, geo, out=None if out is None else out[0],
                     finish=epilogue(xp, None if residual is None else to_cf(residual, cl), relu),
                     workspace=scratch)
    return (y,)


@_fused_convolution.def_gradient
def _fused_gradient(F, a, inputs, outputs, ograds):
    """Through the ReLU (its output's sign), then Convolution's own backward; the residual
    gets the gradient after the ReLU."""
    g = F._backward_relu(ograds[0], outputs[0]) if a.act_type == "relu" else ograds[0]
    conv_attrs = {k: v for k, v in given_attrs(a).items() if k not in ("act_type", "with_residual", "winograd")}
    n = 2 if a.no_bias else 3
    res = F._backward_Convolution(g, *inputs[:n], **conv_attrs)
    return [res[i] for i in range(n)] + ([g] if a.with_residual else []) + ([None] if a.winograd else [])
