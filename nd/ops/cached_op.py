"""`_CachedOp` and its gradient `_backward_CachedOp`: a hybridized block's call recorded as
one node (what `autograd.get_symbol` shows for a block MXNet does not inline).

The block's graph and the rules live with the Symbol code (symbol/cached_op_node.py,
imported on first use: nd sits below symbol); the node's `graph` attribute names it in
that module's table and is never written (MXNet writes the node without attributes).
"""
from __future__ import annotations

from ..attrs import Attr
from ..registry import backward_op_grads, register


def _impl():
    from hybridgraph.symbol import cached_op_node  # noqa: PLC0415 - nd sits below symbol
    return cached_op_node


def _inputs(a) -> tuple:
    return tuple(f"data{i}" for i in range(_impl().num_inputs(a)))


def _outputs(a) -> tuple:
    return _impl().output_names(a)


_ATTRS = {"graph": Attr("str", "", doc="hybridgraph's key of the block's graph (not written).")}


@register("_CachedOp", inputs=_inputs, outputs=_outputs, attrs=dict(_ATTRS),
          infer_shape=lambda a, *s: _impl().infer_shape(a, *s),
          infer_type=lambda a, *t: _impl().infer_type(a, *t),
          train_aware=True, fluent=False, public=False)
def _CachedOp(xp, a, *arrays, is_train: bool = False):
    """Run a hybridized block's graph (a node made by autograd.get_symbol)."""
    return _impl().forward(xp, a, arrays, is_train)


@_CachedOp.def_gradient
def _(F, a, inputs, outputs, ograds):   # noqa: N803
    return backward_op_grads(F, "_backward_CachedOp", ograds, outputs, inputs, len(inputs), graph=a.graph)


def _bw_inputs(a) -> tuple:
    return tuple(f"ograd{i}" for i in range(_impl().num_outputs(a))) + _inputs(a)


def _bw_outputs(a) -> tuple:
    return tuple(f"{n}_grad" for n in _inputs(a))


def _bw_rule(a, *values):
    n = _impl().num_outputs(a)
    return list(values), list(values[n:])


@register("_backward_CachedOp", inputs=_bw_inputs, outputs=_bw_outputs, attrs=dict(_ATTRS),
          infer_shape=_bw_rule, infer_type=_bw_rule, differentiable=False, fluent=False, public=False)
def _backward_CachedOp(xp, a, *arrays):
    """The input gradients of `_CachedOp`: the graph replayed on the tape, then backward."""
    return _impl().backward(xp, a, arrays)
