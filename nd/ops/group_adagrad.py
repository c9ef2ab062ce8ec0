"""`_contrib_group_adagrad_update` (MXNet 1.9.1's contrib/optimizer_op.cc): AdaGrad with one
accumulated squared-gradient history per row of the weight (the optimizer
`mx.optimizer.contrib.GroupAdaGrad`). With g = clip(rescale_grad * grad):
    history[r] += mean(g[r]^2);  weight[r] -= lr * g[r] / sqrt(history[r] + epsilon)
MXNet computes it for row_sparse gradients only, touching the rows the gradient holds; hybridgraph
holds sparse arrays densely and updates every row, which gives the same numbers (a row without
gradient adds 0 to its history and moves by 0). Weight decay is not part of this update.
"""
from __future__ import annotations

import numpy as np

from ..attrs import Attr
from ..errors import DTypeError, ShapeError
from ..registry import register
from .optim import _clip, _lr, _rescale

_ATTRS = {"lr": _lr(), "rescale_grad": _rescale(), **_clip(),
          "epsilon": Attr("float", 1e-5, "Epsilon for numerical stability")}


def _shape(a, w, g, h):
    if w is None:
        return None
    if len(w) < 1 or (g is not None and tuple(g) != tuple(w)):
        raise ShapeError(f"operator _contrib_group_adagrad_update: grad shape {g} must equal the weight's {w}")
    want = (w[0], 1)
    if h is not None and tuple(h) != want:
        raise ShapeError(f"operator _contrib_group_adagrad_update: history must have shape {want} (one entry per "
                         f"row of the weight), got {tuple(h)}")
    return [tuple(w), tuple(w), want], [tuple(w)]


def _type(a, w, g, h):
    t = w if w is not None else g
    if t is None:
        return None
    for name, x in (("weight", w), ("grad", g), ("history", h)):
        if x is not None and x != t:
            raise DTypeError(f"operator _contrib_group_adagrad_update: {name} has dtype {x}, expected {t}")
    if t.kind != "f":
        raise DTypeError(f"operator _contrib_group_adagrad_update: expected a floating dtype, got {t}")
    return [t, t, t], [t]


@register("_contrib_group_adagrad_update", hint="group_adagrad_update", inputs=("weight", "grad", "history"),
          attrs=dict(_ATTRS), mutate_inputs=(2,), fluent=False, writes_out=True, inplace=((0, 0),),
          infer_shape=_shape, infer_type=_type)
def group_adagrad_update(xp, a, w, g, history, out=None):
    """Row-wise AdaGrad step (see the module doc); history is updated in place."""
    _shape(a, w.shape, g.shape, history.shape)
    _type(a, w.dtype, g.dtype, history.dtype)
    dt = w.dtype.type
    f32 = np.float32
    r = g * dt(f32(a.rescale_grad))
    if a.clip_gradient >= 0:
        r = xp.clip(r, -dt(f32(a.clip_gradient)), dt(f32(a.clip_gradient)))
    rows = r.reshape(r.shape[0], -1)
    history += (rows * rows).mean(axis=1, keepdims=True).astype(w.dtype)
    div = (dt(f32(a.lr)) * rows / xp.sqrt(history + dt(f32(a.epsilon)))).reshape(w.shape)
    if out is None:
        return (w - div,)
    xp.subtract(w, div, out=out[0])
    return (out[0],)
