"""Spec for nd/ops/arange_like.py (`_contrib_arange_like`)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes


def _case(draw):
    x = draw(arr(shapes(min_dims=1, max_dims=3)))
    axis = draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)))
    return [x], {"start": draw(st.sampled_from([0.0, 0.5, -2.0])), "step": draw(st.sampled_from([1.0, 0.1, -0.5])),
                 "repeat": draw(st.integers(1, 3)), "axis": axis}


def _ref(x, start, step, repeat, axis):
    shape = x.shape if axis is None else (x.shape[axis],)
    k = np.arange(int(np.prod(shape)), dtype=np.int64) // repeat
    return (start + step * k.astype(np.float64)).astype(x.dtype).reshape(shape)


SPECS = [OpSpec("_contrib_arange_like", case=_case, ref=_ref, nondiff="zero gradient (values from the shape)")]
