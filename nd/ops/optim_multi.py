"""`multi_sgd_update` / `multi_sgd_mom_update`: SGD on several weights in one call.

MXNet's SGD optimizer updates up to MXNET_OPTIMIZER_AGGREGATION_SIZE (default 4)
weights per call of these operators. Inputs come in groups per weight —
(weight_i, grad_i) or (weight_i, grad_i, mom_i) — with one learning rate and one
weight decay per weight (`lrs`, `wds`); the outputs are the new weights (pass
`out=` the weights to update them in place) and the momenta are updated in place.
Per weight the arithmetic is MXNet's MultiSGDKernel, in the weight's dtype with the
float32 attributes: mom = momentum*mom - lr*wd*w - lr*rescale_grad*grad (the gradient
clipped first when clip_gradient >= 0); w = w + mom.
"""
from __future__ import annotations

from itertools import repeat
from operator import attrgetter, mul
from typing import Callable, Iterator

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, ShapeError
from ..registry import merge_shape, register
from .optim import _clip, _momentum, _rescale


def _attrs(momentum: bool) -> dict:
    attrs = {"lrs": Attr("floats", doc="Learning rates."), "wds": Attr("floats", doc="Weight decay augments "
             "the objective function with a regularization term that penalizes large weights. The "
             "penalty scales with the square of the magnitude of each weight.")}
    if momentum:
        attrs["momentum"] = _momentum()
    attrs.update({"rescale_grad": _rescale(), **_clip(),
                  "num_weights": Attr("int", 1, "Number of updated weights.")})
    return attrs


def _names(groups: tuple) -> Callable:
    def names(a) -> tuple:
        return tuple(f"{g}_{i}" for i in range(max(a.num_weights or 0, 0)) for g in groups)
    return names


def _check_counts(op: str, a, n_inputs: int, stride: int) -> int:
    n = a.num_weights
    if n < 1 or len(a.lrs) != n or len(a.wds) != n:
        raise AttrError(f"operator {op}: num_weights={n} needs that many lrs and wds, got "
                        f"{len(a.lrs)} lrs and {len(a.wds)} wds")
    if n_inputs != stride * n:
        raise ShapeError(f"operator {op}: expected {stride * n} inputs ({stride} per weight), got {n_inputs}")
    return n


def _merge_dtype(t, d):
    if t is not None and d is not None and t != d:
        raise ShapeError("unequal dtypes")
    return d if t is None else t


def _group_rule(op: str, stride: int, merge: Callable, what: str) -> Callable:
    """An infer_shape / infer_type rule: the inputs of each weight share one shape (dtype),
    which is also that weight's output's."""
    def infer(a, *values):
        n = _check_counts(op, a, len(values), stride)
        ins, outs = [], []
        for i in range(n):
            group = values[stride * i: stride * (i + 1)]
            unified = None
            for v in group:
                try:
                    unified = merge(unified, v)
                except ShapeError:
                    raise ShapeError(f"operator {op}: the inputs of weight {i} have {what} {list(group)}; "
                                     "they must all be equal") from None
            ins += [unified] * stride
            outs.append(unified)
        return ins, outs
    return infer


_SHAPE = attrgetter("shape")
_SCALAR_TYPE = attrgetter("dtype.type")
_cast = type.__call__  # map(_cast, dtypes, values): each value as its dtype's scalar, in C


def _check_shapes(op: str, arrays: tuple, stride: int) -> None:
    """Every input of a weight has the weight's shape (list comparisons per input kind)."""
    shapes = list(map(_SHAPE, arrays))
    weights = shapes[0::stride]
    if shapes[1::stride] != weights or shapes[stride - 1::stride] != weights:
        i = next(i for i in range(len(weights)) if shapes[i * stride: (i + 1) * stride].count(weights[i]) != stride)
        raise ShapeError(f"operator {op}: the inputs of weight {i} must have its shape {weights[i]}")


def _grad_steps(xp, a, ws: tuple, gs: tuple, lrs: list) -> Iterator:
    """Per weight (lazily), lr * (rescale_grad * grad), the gradient clipped first when
    clip_gradient >= 0, in a fresh array of the weight's dtype; rescale_grad and the clip
    bounds are scalars of the gradient's dtype."""
    dts = list(map(_SCALAR_TYPE, gs))
    rescales = map(_cast, dts, repeat(a.rescale_grad))
    if a.clip_gradient < 0:
        return map(xp.multiply, gs, map(mul, lrs, rescales), map(xp.empty_like, ws))
    lows, highs = map(_cast, dts, repeat(-a.clip_gradient)), map(_cast, dts, repeat(a.clip_gradient))
    return map(_clipped_step, repeat(xp), gs, rescales, lows, highs, lrs, map(xp.empty_like, ws))


def _clipped_step(xp, g, rescale, low, high, lr, s):
    """s = lr * clip(rescale_grad * g, low, high)."""
    xp.multiply(g, rescale, out=s)
    xp.clip(s, low, high, out=s)
    s *= lr
    return s


def _multi_forward(op: str, momentum: bool) -> Callable:
    stride = 3 if momentum else 2

    def forward(xp, a, *arrays, out=None):
        """Per weight, MultiSGDKernel's ufunc calls (`_mom_step` / `_plain_step`). Its scalars
        (lr, wd, lr*wd, momentum: the float32 attributes as the weight's dtype) come from
        C-level maps over the whole call, consumed weight by weight."""
        _check_counts(op, a, len(arrays), stride)
        _check_shapes(op, arrays, stride)
        ws = arrays[0::stride]
        dts = list(map(_SCALAR_TYPE, ws))
        lrs = list(map(_cast, dts, map(np.float32, a.lrs)))
        wds = list(map(_cast, dts, map(np.float32, a.wds)))
        steps = _grad_steps(xp, a, ws, arrays[1::stride], lrs)
        outs = map(xp.empty_like, ws) if out is None else out
        if momentum:
            moms = map(_cast, dts, repeat(a.momentum))
            return tuple(map(_mom_step, repeat(xp), ws, arrays[2::stride], moms, wds, map(mul, lrs, wds), steps, outs))
        return tuple(map(_plain_step, repeat(xp), ws, map(mul, lrs, wds), steps, outs))
    return forward


def _mom_step(xp, w, mom, momentum, wd, decay, step, out):
    """mom = momentum*mom - lr*wd*w - step; out = w + mom."""
    mom *= momentum
    if wd:
        mom -= xp.multiply(w, decay, out=xp.empty_like(w))
    mom -= step
    return xp.add(w, mom, out=out)


def _plain_step(xp, w, decay, step, out):
    """The kernel with momentum 0: mom = -lr*wd*w - step; out = w + mom."""
    mom = xp.multiply(w, decay, out=xp.empty_like(w))
    xp.negative(mom, out=mom)
    mom -= step
    return xp.add(w, mom, out=out)


def _momenta(a) -> tuple:
    return tuple(3 * i + 2 for i in range(max(a.num_weights or 0, 0)))


register("multi_sgd_update", inputs=_names(("weight", "grad")), outputs=lambda a: tuple(
             f"output_{i}" for i in range(max(a.num_weights or 0, 0))),
         attrs=_attrs(False), fluent=False, writes_out=True,
         infer_shape=_group_rule("multi_sgd_update", 2, merge_shape, "shapes"),
         infer_type=_group_rule("multi_sgd_update", 2, _merge_dtype, "dtypes"),
         doc="SGD update of several weights: w_i = w_i - lrs[i] * (rescale_grad * grad_i + wds[i] * w_i) "
             "(MXNet's aggregated update; pass out= the weights).")(_multi_forward("multi_sgd_update", False))

register("multi_sgd_mom_update", inputs=_names(("weight", "grad", "mom")), outputs=lambda a: tuple(
             f"output_{i}" for i in range(max(a.num_weights or 0, 0))),
         attrs=_attrs(True), fluent=False, writes_out=True, mutate_inputs=_momenta,
         infer_shape=_group_rule("multi_sgd_mom_update", 3, merge_shape, "shapes"),
         infer_type=_group_rule("multi_sgd_mom_update", 3, _merge_dtype, "dtypes"),
         doc="Momentum SGD update of several weights: mom_i = momentum * mom_i - lrs[i] * (rescale_grad * "
             "grad_i + wds[i] * w_i); w_i += mom_i (MXNet's aggregated update; pass out= the weights)."
         )(_multi_forward("multi_sgd_mom_update", True))
