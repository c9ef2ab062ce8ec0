"""Specs for nd/ops/cached_op.py: `_CachedOp` holding the graph out = 2 x * w + w (built here
once, as autograd.get_symbol builds one from a hybridized block's call) and its gradient
`_backward_CachedOp`."""
from __future__ import annotations

import hybridgraph as mx
from hybridgraph.symbol.cached_op_node import make_node
from tests.op_specs import OpSpec, arr, shapes


def _graph_key() -> str:
    x, w = mx.sym.var("x"), mx.sym.var("w")
    out = x * 2 * w + w
    node = make_node(list(out._outputs), ["x", "w"], [(x._outputs[0][0], 0), (w._outputs[0][0], 0)], "cached")
    return node.attrs.graph


_KEY = _graph_key()


def _case(draw, backward=False):
    shape = draw(shapes(max_dims=3))
    x, w = draw(arr(shape)), draw(arr(shape))
    if not backward:
        return [x, w], {"graph": _KEY}
    return [draw(arr(shape)), x, w], {"graph": _KEY}


def _ref(x, w, graph):
    return x * 2 * w + w


def _back_ref(g, x, w, graph):
    return g * 2 * w, g * (2 * x + 1)


SPECS = [
    OpSpec("_CachedOp", case=_case, ref=_ref),
    OpSpec("_backward_CachedOp", case=lambda draw: _case(draw, backward=True), ref=_back_ref,
           nondiff="hidden backward operator (its own gradient is not defined)"),
]
