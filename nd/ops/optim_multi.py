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

from typing import Callable

import numpy as np

from ..attrs import Attr
from ..errors import AttrError, DTypeError, ShapeError
from ..registry import merge_shape, register
from . import optim_jit
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
        raise DTypeError("unequal dtypes")
    return d if t is None else t


def _group_rule(op: str, stride: int, merge: Callable, what: str) -> Callable:
    """An infer_shape / infer_type rule: the inputs of each weight share one shape (dtype),
    which is also that weight's output's."""
    def infer(a, *values):
        return merge_groups(op, values, _check_counts(op, a, len(values), stride), stride, merge, what)
    return infer


def merge_groups(op: str, values, n: int, stride: int, merge: Callable = merge_shape,
                 what: str = "shapes") -> tuple[list, list]:
    """(inputs, outputs) of a rule whose first `n` groups of `stride` inputs each share one
    shape (dtype): every input and the group's output get the group's merged value."""
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


def _scaled_grad(xp, a, lr, g, s):
    """lr * (rescale_grad * grad), clipped when clip_gradient >= 0, into scratch `s`."""
    dt = g.dtype.type
    if a.clip_gradient >= 0:
        xp.multiply(g, dt(a.rescale_grad), out=s)
        xp.clip(s, dt(-a.clip_gradient), dt(a.clip_gradient), out=s)
        s *= lr
        return s
    return xp.multiply(g, lr * dt(a.rescale_grad), out=s)


def _scalars(a, dtypes: tuple) -> list:
    """Per weight, in its dtype: (lr, wd, lr*wd, lr*rescale_grad, momentum) as MXNet's kernel
    computes them (float32 attributes). Memoised on the parsed attributes, which the eager
    cache and compiled plans reuse call after call."""
    try:
        memo = a._sgd_scalars
    except AttributeError:
        memo = a._sgd_scalars = {}
    got = memo.get(dtypes)
    if got is None:
        f32, got = np.float32, []
        for i, dtype in enumerate(dtypes):
            dt = dtype.type
            lr, wd = dt(f32(a.lrs[i])), dt(f32(a.wds[i]))
            got.append((lr, wd, lr * wd, lr * dt(a.rescale_grad), dt(a.get("momentum", 0.0))))
        memo[dtypes] = got
    return got


def _multi_forward(op: str, momentum: bool) -> Callable:
    stride = 3 if momentum else 2

    def forward(xp, a, *arrays, out=None):
        n = _check_counts(op, a, len(arrays), stride)
        compiled = optim_jit.kernels() if momentum and xp is np and a.clip_gradient < 0 else None
        scalars = _scalars(a, tuple(arrays[stride * i].dtype for i in range(n)))
        results = []
        for i in range(n):
            w, g = arrays[stride * i], arrays[stride * i + 1]
            mom = arrays[stride * i + 2] if momentum else None
            if g.shape != w.shape or (momentum and mom.shape != w.shape):
                raise ShapeError(f"operator {op}: the inputs of weight {i} must have its shape {w.shape}")
            lr, wd, lr_wd, lr_rescale, mu = scalars[i]
            dst = xp.empty_like(w) if out is None else out[i]
            if compiled is not None and optim_jit.applies(w, g, mom, dst):
                optim_jit.sgd_mom(compiled, w, g, mom, dst, mu, lr_wd, lr_rescale, bool(wd))
                results.append(dst)
                continue
            step = _scaled_grad(xp, a, lr, g, xp.empty_like(w))
            if momentum:
                mom *= mu
                if wd:
                    mom -= xp.multiply(w, lr_wd, out=xp.empty_like(w))
            else:             # the kernel's momentum is 0: mom = -lr*wd*w - step
                mom = xp.multiply(w, lr_wd, out=xp.empty_like(w))
                xp.negative(mom, out=mom)
            mom -= step
            results.append(xp.add(w, mom, out=dst))
        return tuple(results)
    return forward


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
