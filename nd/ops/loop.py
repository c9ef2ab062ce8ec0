"""`_while_loop` and its gradient `_backward_while_loop`: symbolic `contrib.while_loop` as one
node that runs its body graphs per iteration.

The body graphs, the loop and the rules live with the Symbol code that builds them
(symbol/loop_op.py, imported on first use: nd sits below symbol); the node's `loop`
attribute names its body in that module's table.
"""
from __future__ import annotations

from ..attrs import Attr
from ..registry import backward_op_grads, register


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
    return backward_op_grads(F, "_backward_while_loop", ograds, outputs, inputs, len(inputs), **dict(a.given))


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


# -- _foreach: symbolic contrib.foreach as one node holding its body (MXNet's subgraph) -------

def _fe_impl():
    from hybridgraph.symbol import foreach_op  # noqa: PLC0415 - nd sits below symbol
    return foreach_op


def _fe_inputs(a) -> tuple:
    # MXNet counts the subgraph among num_args: the node has num_args - 1 inputs
    return tuple(f"data{i}" for i in range(max((a.num_args or 1) - 1, 0)))


def _fe_outputs(a) -> tuple:
    return tuple(f"output{i}" for i in range(a.num_outputs))


_FE_ATTRS = {
    "num_args": Attr("int", doc="Number of inputs, plus one for the subgraph (MXNet's count)."),
    "num_outputs": Attr("int", doc="Number of outputs: the step outputs, then the final states."),
    "num_out_data": Attr("int", doc="Number of step outputs (stacked along a new first axis)."),
    "in_data_locs": Attr("shape", doc="Where each data input sits among the subgraph's inputs."),
    "in_state_locs": Attr("shape", doc="Where each state input sits among the subgraph's inputs."),
    "remain_locs": Attr("shape", doc="Where each other input sits among the subgraph's inputs."),
    "loop": Attr("str", "", doc="hybridgraph's key of the body (not written: the body is the "
                                "node's subgraph)."),
}


@register("_foreach", inputs=_fe_inputs, outputs=_fe_outputs, attrs=dict(_FE_ATTRS),
          infer_shape=lambda a, *s: _fe_impl().infer_shape(a, *s),
          infer_type=lambda a, *t: _fe_impl().infer_type(a, *t),
          train_aware=True, fluent=False, public=False)
def _foreach(xp, a, *arrays, is_train: bool = False):
    """Run the node's body graph over the first axis of the data inputs (symbolic
    contrib.foreach): outputs are the step outputs stacked, then the final states."""
    return _fe_impl().forward(xp, a, arrays, is_train)


@_foreach.def_gradient
def _(F, a, inputs, outputs, ograds):   # noqa: N803
    return backward_op_grads(F, "_backward_foreach", ograds, outputs, inputs, len(inputs),
                             **dict(a.given, loop=a.loop))


def _fe_bw_inputs(a) -> tuple:
    return tuple(f"ograd{i}" for i in range(a.num_outputs)) + _fe_inputs(a)


def _fe_bw_outputs(a) -> tuple:
    return tuple(f"{n}_grad" for n in _fe_inputs(a))


@register("_backward_foreach", inputs=_fe_bw_inputs, outputs=_fe_bw_outputs, attrs=dict(_FE_ATTRS),
          infer_shape=lambda a, *s: (list(s), list(s[a.num_outputs:])),
          infer_type=lambda a, *t: (list(t), list(t[a.num_outputs:])),
          differentiable=False, fluent=False, public=False)
def _backward_foreach(xp, a, *arrays):
    """The input gradients of `_foreach`: the loop replayed on the autograd tape, then
    back-propagated from the head gradients."""
    return _fe_impl().backward(xp, a, arrays)
