"""The operator spec table: one `OpSpec` per registered operator.

Each family file in tests/nd/specs/ defines `SPECS = [OpSpec(...), ...]`.
tests/nd/test_op_specs.py runs the same checks on every entry:

* forward equals a numpy reference (`ref`), or the op is covered by the
  MXNet goldens (`golden=True`, checked in tests/nd/test_golden_ops.py);
* `infer_shape` on the input shapes equals the shapes the kernel produced;
* the gradient equals float64 central finite differences along a random
  direction (for `grad_inputs`), unless `nondiff` says why it cannot be;
* a meta-test fails for any registered operator without a spec.

Writing a spec::

    OpSpec("broadcast_add",
           case=lambda draw: ([draw(arr(s1)), draw(arr(s2))], {}),   # inputs, attrs
           ref=lambda a, b, **kw: a + b)

`case` receives hypothesis' `draw` and returns (list of numpy inputs, attrs
dict of Python values). Use the strategies below for inputs.
"""
from __future__ import annotations

import dataclasses
from typing import Any
from collections.abc import Callable

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@dataclasses.dataclass
class OpSpec:
    name: str
    case: Callable[[Callable], tuple[list, dict]]
    ref: Callable[..., Any] | None = None      # ref(*inputs, **attrs) -> output or tuple of outputs
    golden: bool = False                        # forward checked by MXNet goldens instead of ref
    grad_inputs: tuple[int, ...] | None = None  # inputs to differentiate (None = all float inputs)
    nondiff: str | None = None                  # why no gradient check (non-differentiable, random...)
    is_train: bool = False
    rtol: float = 1e-5
    atol: float = 1e-6
    fd_eps: float = 1e-6
    fd_rtol: float = 1e-4
    compare_outputs: int | None = None          # how many outputs to compare with ref (None = all visible)
    dynamic_shape: str | None = None            # why the output shape depends on the data (unique)

    def draw_case(self, draw: Callable) -> tuple[list, dict, tuple[int, ...]]:
        """One drawn case as numpy inputs, attrs, and the positions of the inputs to differentiate."""
        inputs, attrs = self.case(draw)
        inputs = [np.asarray(x) for x in inputs]
        wrt = self.grad_inputs if self.grad_inputs is not None else tuple(
            i for i, x in enumerate(inputs) if x.dtype.kind == "f")
        return inputs, attrs, wrt


# -- strategies for spec writers -------------------------------------------

def shapes(min_dims: int = 1, max_dims: int = 4, min_side: int = 1, max_side: int = 5):
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=max_side)


def arr(shape, low: float = -2.0, high: float = 2.0, dtype=np.float64, away_from: float | None = None):
    """Float arrays of a given shape (or shape strategy) with values in [low, high].

    `away_from` keeps values at least 0.05 away from a point (kinks such as 0
    for abs/relu), so finite differences stay valid.
    """
    elements = st.floats(low, high, allow_nan=False, allow_infinity=False, width=64)
    if away_from is not None:
        elements = elements.filter(lambda v: abs(v - away_from) > 0.05)
    return hnp.arrays(dtype, shape, elements=elements)


def ints(shape, low: int, high: int, dtype=np.int64):
    """Integer arrays (indices, labels) in [low, high]."""
    return hnp.arrays(dtype, shape, elements=st.integers(low, high))


def distinct(shape, dtype=np.float64):
    """Arrays with well-separated distinct values (max/min/sort/topk gradients)."""
    def build(s):
        n = int(np.prod(s))
        return st.permutations(list(range(n))).map(
            lambda p: (np.array(p, dtype=dtype).reshape(s) * 0.37 - n * 0.1))
    return shape.flatmap(build) if isinstance(shape, st.SearchStrategy) else build(shape)
