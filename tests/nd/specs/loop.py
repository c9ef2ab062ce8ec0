"""Specs for nd/ops/loop.py: `_while_loop` (a loop built here once with symbol.contrib.while_loop:
three doublings of x) and its gradient `_backward_while_loop`."""
from __future__ import annotations

import numpy as np

import hybridgraph as mx
from tests.op_specs import OpSpec, arr, shapes


def _loop_key() -> str:
    _, (final,) = mx.sym.contrib.while_loop(lambda v: mx.sym.sum(v * 0) == 0, lambda v: (v * 2, [v * 2]),
                                            [mx.sym.var("x")], max_iterations=3)
    return final._outputs[0][0].attrs.get("loop")


_KEY = _loop_key()


def _case(draw, backward=False):
    shape = draw(shapes(max_dims=3))
    x = draw(arr(shape))
    attrs = {"loop": _KEY, "num_args": 1}
    if not backward:
        return [x], attrs
    return [draw(arr((3, *shape))), draw(arr(shape)), x], attrs


def _ref(x, loop, num_args):
    return np.stack([x * 2, x * 4, x * 8]), x * 8


def _back_ref(g_steps, g_final, x, loop, num_args):
    return g_steps[0] * 2 + g_steps[1] * 4 + g_steps[2] * 8 + g_final * 8


SPECS = [
    OpSpec("_while_loop", case=_case, ref=_ref),
    OpSpec("_backward_while_loop", case=lambda draw: _case(draw, backward=True), ref=_back_ref,
           nondiff="hidden backward operator (its own gradient is not defined)"),
]
