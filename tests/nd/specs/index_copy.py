"""Specs for nd/ops/index_copy.py (MXNet 1.9.1's values: tests/nd/test_index_copy.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes


def _case(draw):
    rest = draw(shapes(min_dims=0, max_dims=2))
    n = draw(st.integers(1, 5))
    rows = draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=n, unique=True))
    return [draw(arr((n,) + rest)), np.array(rows, dtype=np.float64), draw(arr((len(rows),) + rest))], {}


def _ref(old, index, new):
    out = old.copy()
    out[index.astype(int)] = new
    return out


def _backward_case(draw):
    (old, index, new), _ = _case(draw)
    return [draw(arr(old.shape)), index, new], {}


def _backward_ref(g, index, new):
    rows = index.astype(int)
    old_grad = g.copy()
    old_grad[rows] = 0
    return old_grad, g[rows]


SPECS = [
    OpSpec("_contrib_index_copy", case=_case, ref=_ref, grad_inputs=(0, 2)),
    OpSpec("_contrib_backward_index_copy", case=_backward_case, ref=_backward_ref,
           nondiff="hidden backward op without a gradient of its own (as MXNet)"),
]
