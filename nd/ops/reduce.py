"""Reductions and the one unbroadcast helper (`_sum_to_like`)."""
from __future__ import annotations

from ..registry import register


def sum_to_shape(xp, g, shape: tuple):
    """Sum a broadcast result back to `shape` (the single unbroadcast routine)."""
    if g.shape == tuple(shape):
        return g
    lead = g.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(i + lead for i, d in enumerate(shape) if d == 1 and g.shape[i + lead] != 1)
    out = g.sum(axis=axes, keepdims=True) if axes else g
    return out.reshape(shape)


def _sum_to_like_shape(a, data, like):
    return [data, like], [like]


def _sum_to_like_type(a, data, like):
    t = data or like
    return [t, like], [t]


@register("_sum_to_like", inputs=("data", "like"), infer_shape=_sum_to_like_shape,
          infer_type=_sum_to_like_type, hint="_sum_to_like",
          doc="Sum `data` over broadcast axes so it has the shape of `like` "
              "(hybridgraph's unbroadcast, used by broadcast gradients; not an MXNet operator).")
def _sum_to_like(xp, a, data, like):
    return (sum_to_shape(xp, data, like.shape),)


@_sum_to_like.def_gradient
def _(F, a, inputs, outputs, ograds):
    return [F.broadcast_like(ograds[0], inputs[0]), None]
