"""Specs for nd/ops/fused.py: `_fused_elemwise` running a few representative programs
(a chain, a tree with a reused input, a broadcasting step) against numpy."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from hybridgraph.nd.ops.fused import encode_program
from tests.op_specs import OpSpec, arr, shapes

# program -> (input shapes from one drawn shape, numpy reference)
PROGRAMS = {
    encode_program([("exp", {}, [0]), ("_mul_scalar", {"scalar": "2"}, [2]), ("elemwise_add", {}, [3, 1]),
                    ("sigmoid", {}, [4])]):
        (lambda s: [s, s], lambda a, b: 1 / (1 + np.exp(-(np.exp(a) * 2 + b)))),
    encode_program([("sin", {}, [0]), ("cos", {}, [1]), ("elemwise_mul", {}, [2, 3]), ("tanh", {}, [0]),
                    ("elemwise_sub", {}, [4, 5])]):
        (lambda s: [s, s], lambda a, b: np.sin(a) * np.cos(b) - np.tanh(a)),
    encode_program([("sin", {}, [0]), ("broadcast_mul", {}, [2, 1]), ("_plus_scalar", {"scalar": "0.5"}, [3])]):
        (lambda s: [s, (1,) + s[1:]], lambda a, b: np.sin(a) * b + 0.5),
}


def _case(draw):
    program = draw(st.sampled_from(sorted(PROGRAMS)))
    s = draw(shapes(min_dims=1, max_dims=3))
    inputs = [draw(arr(x)) for x in PROGRAMS[program][0](s)]
    return inputs, {"program": program, "num_args": len(inputs)}


SPECS = [
    OpSpec("_fused_elemwise", case=_case, ref=lambda *xs, program, num_args: PROGRAMS[program][1](*xs)),
]
