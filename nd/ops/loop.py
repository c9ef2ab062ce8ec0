"""`_while_loop` and its gradient `_backward_while_loop`: symbolic `contrib.while_loop` as one
node that runs its body graphs per iteration.

The body graphs, the loop and the rules live with the Symbol code that builds them
(symbol/loop_op.py, imported on first use: nd sits below symbol); the node's `loop`
attribute names its body in that module's table.
"""
from __future__ import annotations

from ..attrs import Attr
from ..registry import register


def _impl():
    from hybridgraph.symbol import loop_op  # noqa: PLC0415 - nd sits below symbol
    return loop_op


def _inputs(a) -> tuple:
    return tuple(f"data{i}" for i in range(a.num_args or 0))


def _outputs(a) -> tuple:
    return tuple(f"output{i}" for i in range(_impl().num_results(a)))


def _shape(a, *shapes):
    return _impl().infer_shape(a, *shapes)


def _type(a, *dtypes):
    return _impl().infer_type(a, *dtypes)


_ATTRS = {"loop": Attr("str", doc="The key of the loop body (made by symbol.contrib.while_loop)."),
          "num_args": Attr("int", doc="Number of inputs: the loop variables, then the free inputs.")}


@register("_while_loop", inputs=_inputs, outputs=_outputs, attrs=dict(_ATTRS), key_var_num_args="num_args",
          infer_shape=_shape, infer_type=_type, train_aware=True, fluent=False, public=False)
def _while_loop(xp, a, *arrays, is_train: bool = False):
    """Run a while loop whose cond and body are graphs (made by symbol.contrib.while_loop):
    outputs are the step outputs stacked to `max_iterations` rows, then the final loop
    variables."""
    return _impl().forward(xp, a, arrays, is_train)


@_while_loop.def_gradient
def _(F, a, inputs, outputs, ograds):   # noqa: N803
    ograds = [F.zeros_like(o) if g is None else g for g, o in zip(ograds, outputs)]
    res = F._backward_while_loop(*ograds, *inputs, **dict(a.given))
    n = len(inputs)
    return [res] if n == 1 and not isinstance(res, (list, tuple)) else [res[i] for i in range(n)]


def _bw_inputs(a) -> tuple:
    return tuple(f"ograd{i}" for i in range(_impl().num_results(a))) + _inputs(a)


def _bw_outputs(a) -> tuple:
    return tuple(f"{n}_grad" for n in _inputs(a))


@register("_backward_while_loop", inputs=_bw_inputs, outputs=_bw_outputs, attrs=dict(_ATTRS),
          infer_shape=lambda a, *s: _impl().bw_shape(a, *s), infer_type=lambda a, *t: _impl().bw_type(a, *t),
          differentiable=False, fluent=False, public=False)
def _backward_while_loop(xp, a, *arrays):
    """The input gradients of `_while_loop`: the loop replayed on the autograd tape from the
    same inputs, then back-propagated from the head gradients."""
    return _impl().backward(xp, a, arrays)
