"""Specs for nd/ops/init.py (creation operators) and the unbroadcast helper in reduce.py."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes

_NOGRAD = "creation op: no inputs to differentiate"


def _shape_case(extra=None):
    def case(draw):
        attrs = {"shape": draw(shapes(max_dims=3)), "dtype": draw(st.sampled_from(["float32", "float64", "int32"]))}
        attrs.update(extra(draw) if extra else {})
        return [], attrs
    return case


SPECS = [
    OpSpec("_zeros", case=_shape_case(), ref=np.zeros, nondiff=_NOGRAD),
    OpSpec("_ones", case=_shape_case(), ref=np.ones, nondiff=_NOGRAD),
    OpSpec("_empty", case=_shape_case(), ref=None, golden=False, nondiff=_NOGRAD + "; values undefined"),
    OpSpec("_full", case=_shape_case(lambda draw: {"value": draw(st.sampled_from([0.5, -2.0, 3.0]))}),
           ref=lambda shape, dtype, value: np.full(shape, value, dtype), nondiff=_NOGRAD),
    OpSpec("_arange", case=lambda draw: ([], {"start": draw(st.integers(-3, 3)), "stop": draw(st.integers(4, 9)),
                                              "step": draw(st.sampled_from([1.0, 0.5, 2.0])),
                                              "repeat": draw(st.integers(1, 3))}),
           ref=lambda start, stop, step, repeat: np.repeat(np.arange(start, stop, step), repeat).astype(np.float32),
           nondiff=_NOGRAD),
    OpSpec("_linspace", case=lambda draw: ([], {"start": draw(st.integers(-3, 3)), "stop": draw(st.integers(4, 9)),
                                                "num": draw(st.integers(1, 7)), "endpoint": draw(st.booleans())}),
           ref=lambda start, stop, num, endpoint: np.linspace(start, stop, num, endpoint=endpoint).astype(np.float32),
           nondiff=_NOGRAD),
    OpSpec("_eye", case=lambda draw: ([], {"N": draw(st.integers(1, 5)), "M": draw(st.integers(0, 5)),
                                           "k": draw(st.integers(-2, 2))}),
           ref=lambda N, M, k: np.eye(N, M or N, k, dtype=np.float32), nondiff=_NOGRAD),
    OpSpec("zeros_like", case=lambda draw: ([draw(arr(shapes()))], {}), ref=np.zeros_like,
           nondiff="zero gradient"),
    OpSpec("ones_like", case=lambda draw: ([draw(arr(shapes()))], {}), ref=np.ones_like,
           nondiff="zero gradient"),
    OpSpec("_sum_to_like", case=lambda draw: ([draw(arr((3, 4, 5))), draw(arr((4, 1)))], {}),
           ref=lambda a, b: a.sum(axis=(0, 2), keepdims=True).reshape(4, 1), grad_inputs=(0,)),
]
