"""Spec for nd/ops/allclose.py (MXNet 1.9.1's results: tests/nd/test_allclose.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes


def _case(draw):
    a = draw(arr(shapes(max_dims=3)))
    b = a + draw(arr(a.shape, -1e-3, 1e-3)) * draw(st.sampled_from([0.0, 1e-4, 1.0]))
    return [a, b], {"rtol": draw(st.sampled_from([1e-5, 1e-3])), "atol": draw(st.sampled_from([1e-8, 1e-4]))}


def _ref(a, b, rtol, atol):
    return np.array(np.allclose(a, b, rtol=float(np.float32(rtol)), atol=float(np.float32(atol))), dtype=np.uint8)


SPECS = [OpSpec("_contrib_allclose", case=_case, ref=_ref, nondiff="a comparison (MXNet registers no gradient)")]
