"""Control-flow cases shared by tests/data/gen_control_flow_ref.py (run with MXNet 1.9.1)
and tests/{nd,symbol}/test_control_flow.py.

A case is (name, function, input shapes, extra). The function takes the
operator namespace `F` (`mx.nd` / `mx.sym` / `F` of a hybrid_forward, or
hybridgraph's `nd` / `symbol`) and the inputs, calls `F.contrib.cond`,
`foreach` or `while_loop`, and returns a flat list of outputs. Inputs are
drawn by `make_inputs` from a numpy RandomState seeded by the case name.
`extra["stacked"]` (while_loop cases) is how many leading outputs are stacked step
outputs; the generator records how many iterations ran (`<name>/steps`): rows
after them are undefined in MXNet, zeros in hybridgraph.
"""
from __future__ import annotations

import zlib

import numpy as np


def cond_case(F, x, w):
    """Two outputs, each branch differentiable in x and w."""
    h = F.dot(x, w)
    return F.contrib.cond(F.sum(h) > 0, lambda: [h * 2, x + 1], lambda: [F.tanh(h), x * x])


def cond_neg_case(F, x, w):
    """cond_case on -x: the other branch."""
    return cond_case(F, x * -1, w)


def foreach_case(F, x, h0, w):
    """An RNN-like loop: two stacked outputs and one state."""
    def step(xt, states):
        h = F.tanh(F.dot(xt, w) + states[0])
        return [h, h * 2], [h]
    outs, states = F.contrib.foreach(step, x, [h0])
    return list(outs) + list(states)


def foreach_multi_case(F, x, y, s0):
    """A list of data arrays, a single output Symbol/NDArray (not a list)."""
    def step(data, states):
        a, b = data
        s = states[0] * a + b
        return s, [s]
    outs, states = F.contrib.foreach(step, [x, y], [s0])
    return [outs] + list(states)


def foreach_1d_case(F, x, s0):
    """1-D data: each slice has shape (1,), as in MXNet."""
    def step(xt, states):
        return xt * states[0], [states[0] + xt]
    outs, states = F.contrib.foreach(step, x, [s0])
    return [outs] + list(states)


def while_case(F, i, s, w):
    """A data-dependent stop before max_iterations; step outputs include a loop variable."""
    def cond(i, s):
        return F.sum(F.abs(s)) < 30

    def func(i, s):
        out = F.dot(s, w)
        return [out, i * 1], [i + 1, F.tanh(out) * 2 + s]
    outs, (i_end, s_end) = F.contrib.while_loop(cond, func, [i, s], max_iterations=8)
    return list(outs) + [i_end, s_end]


def while_max_case(F, s):
    """The loop stops at max_iterations; one loop variable given as a single array."""
    outs, s_end = F.contrib.while_loop(lambda s: F.sum(s) < 1e6, lambda s: ([s * s], s * 0.5 + 1),
                                       s, max_iterations=3)
    return list(outs) + [s_end]


CASES = [
    ("cond_pos", cond_case, {"x": (2, 3), "w": (3, 3)}, {}),
    ("cond_neg", cond_neg_case, {"x": (2, 3), "w": (3, 3)}, {}),
    ("foreach", foreach_case, {"x": (4, 2, 3), "h0": (2, 3), "w": (3, 3)}, {}),
    ("foreach_multi", foreach_multi_case, {"x": (3, 4), "y": (3, 4), "s0": (4,)}, {}),
    ("foreach_1d", foreach_1d_case, {"x": (5,), "s0": (1,)}, {}),
    ("while", while_case, {"i": (1,), "s": (2, 3), "w": (3, 3)}, {"stacked": 2}),
    ("while_max", while_max_case, {"s": (2, 2)}, {"stacked": 1}),
]


def make_inputs(name: str, shapes: dict) -> dict:
    """Fixed float32 inputs of a case (positive x for cond_pos so the then-branch runs)."""
    rng = np.random.RandomState(zlib.crc32(name.encode()))
    out = {}
    for key, shape in shapes.items():
        if key == "i":
            out[key] = np.zeros(shape, np.float32)
        else:
            out[key] = rng.uniform(0.1, 1.0, size=shape).astype(np.float32)
    return out


def make_heads(name: str, shapes: list) -> list:
    """Fixed head gradients for the outputs of a case."""
    rng = np.random.RandomState(zlib.crc32(("heads:" + name).encode()))
    return [rng.standard_normal(s).astype(np.float32) for s in shapes]
