"""arange with an integer dtype casts start and step to that dtype first, as MXNet 1.9.1's
range kernel does (values printed by MXNet 1.9.1: mx.nd.arange(1.3, 456.6, 1.3, dtype=...))."""
from __future__ import annotations

import numpy as np
import pytest

import hybridgraph as mx
from hybridgraph import nd


@pytest.mark.parametrize("dtype, last", [("int32", [349, 350, 351]), ("uint8", [93, 94, 95])])
def test_fractional_step_truncates_before_counting(dtype, last):
    out = nd.arange(1.3, 456.6, 1.3, dtype=dtype).asnumpy()
    assert out.shape == (351,) and out.dtype == np.dtype(dtype)
    assert out[:4].tolist() == [1, 2, 3, 4] and out[-3:].tolist() == last


def test_negative_step_wraps_for_unsigned_and_repeats():
    assert nd.arange(50, -50, -2, dtype="uint8").asnumpy()[-3:].tolist() == [212, 210, 208]
    assert nd.arange(0, 3, 1.5, repeat=2, dtype="int32").asnumpy().tolist() == [0, 0, 1, 1]
    sym = mx.sym.arange(1.3, 5.0, 1.3, dtype="int32")
    assert sym.eval()[0].asnumpy().tolist() == [1, 2, 3]
