"""Specs for nd/ops/loop.py: `_while_loop` (a loop built here once with symbol.contrib.while_loop:
three doublings of x) and its gradient `_backward_while_loop`; `_foreach` (built once with
symbol.contrib.foreach: out_t = 2 x_t + s_t, s_t+1 = s_t + x_t) and `_backward_foreach`."""
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


def _foreach_attrs() -> dict:
    outs, _ = mx.sym.contrib.foreach(lambda x, st: (x * 2 + st[0], [st[0] + x]), mx.sym.var("data"),
                                     [mx.sym.var("s")])
    a = outs._outputs[0][0].attrs
    return {**a.given, "loop": a.loop}


_FE = _foreach_attrs()


def _fe_case(draw, backward=False):
    shape = draw(shapes(min_dims=1, max_dims=3))
    length = draw(shapes(min_dims=1, max_dims=1))[0]
    data, state = draw(arr((length, *shape))), draw(arr(shape))
    if not backward:
        return [data, state], dict(_FE)
    return [draw(arr((length, *shape))), draw(arr(shape)), data, state], dict(_FE)


def _fe_ref(data, s, **_):
    outs = []
    for x in data:
        outs.append(2 * x + s)
        s = s + x
    return np.stack(outs), s


def _fe_back_ref(g_out, g_s, data, s, **_):
    later = np.cumsum(g_out[::-1], axis=0)[::-1]          # sum over t' >= t
    after = later - g_out                                  # sum over t' > t
    return 2 * g_out + after + g_s, g_out.sum(axis=0) + g_s


SPECS = [
    OpSpec("_foreach", case=_fe_case, ref=_fe_ref),
    OpSpec("_backward_foreach", case=lambda draw: _fe_case(draw, backward=True), ref=_fe_back_ref,
           nondiff="hidden backward operator (its own gradient is not defined)"),
    OpSpec("_while_loop", case=_case, ref=_ref),
    OpSpec("_backward_while_loop", case=lambda draw: _case(draw, backward=True), ref=_back_ref,
           nondiff="hidden backward operator (its own gradient is not defined)"),
]
