"""Spec for nd/ops/amp.py: amp_cast (MXNet 1.9.1's values: tests/nd/test_amp_cast.py)."""
from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from tests.op_specs import OpSpec, arr, shapes


def _case(draw):
    x = draw(arr(shapes(max_dims=3))).astype(draw(st.sampled_from([np.float32, np.float16, np.float64])))
    return [x], {"dtype": draw(st.sampled_from(["float16", "float32", "float64"]))}


def _ref(x, dtype):
    return x.astype(dtype) if x.dtype in (np.float16, np.float32) else x


SPECS = [OpSpec("amp_cast", case=_case, ref=_ref, rtol=1e-3, atol=1e-3,
                nondiff="a cast: its gradient (the head gradient cast back) is checked in tests/nd/test_amp_cast.py")]
