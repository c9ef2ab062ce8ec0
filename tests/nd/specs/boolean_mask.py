"""Specs for nd/ops/boolean_mask.py: contrib.boolean_mask against numpy's boolean indexing, and its
hidden backward against a scatter into zeros (MXNet 1.9.1's rules: axis 0, a 1-D index)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, ints

_DYN = "the output's first dimension is the number of non-zero index entries"


def _case(draw):
    rows = draw(st.integers(1, 4))
    shape = (rows, *draw(st.lists(st.integers(1, 3), max_size=2)))
    return [draw(arr(shape)), draw(ints((rows,), 0, 2)).astype(np.float64)], {}


def _backward_case(draw):
    (data, index), _ = _case(draw)
    return [draw(arr((int((index != 0).sum()), *data.shape[1:]))), data, index], {}


def _backward_ref(ograd, data, index):
    out = np.zeros_like(data)
    out[index != 0] = ograd
    return out


SPECS = [
    OpSpec("_contrib_boolean_mask", case=_case, ref=lambda data, index: data[index != 0], grad_inputs=(0,),
           dynamic_shape=_DYN),
    OpSpec("_backward_contrib_boolean_mask", case=_backward_case, ref=_backward_ref,
           nondiff="hidden backward op without a gradient of its own (as MXNet)", dynamic_shape=_DYN),
]
